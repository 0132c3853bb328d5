/**
 * The byte-stream port of the extension IPC: connect to a path, write bytes, read chunks.
 * Guarantees every implementation must keep: chunks arrive in order on `chunks`, which fails
 * with {@link IpcDisconnectedError} once the stream ends (after the chunks already received);
 * `write` fails with it when the peer is gone; closing the scope destroys the socket.
 */
import * as Context from "effect/Context"
import type { Effect, Queue, Scope } from "effect"
import type { IpcConnectError, IpcDisconnectedError } from "./errors.js"

/** One connected byte stream. */
export interface IpcSocket {
  /** Writes all bytes; fails when the peer is gone. */
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, IpcDisconnectedError>
  /** Incoming chunks in order; fails with the disconnect reason at the end. */
  readonly chunks: Queue.Dequeue<Uint8Array, IpcDisconnectedError>
  /** Destroys the socket (idempotent). */
  readonly close: Effect.Effect<void>
}

/** Opens byte streams to unix sockets or named pipes. */
export interface IpcSocketConnectorShape {
  /** Connects; the socket is destroyed when the scope closes. */
  readonly connect: (path: string) => Effect.Effect<IpcSocket, IpcConnectError, Scope.Scope>
}

/** Service key for the socket connector. */
export class IpcSocketConnector extends Context.Service<
  IpcSocketConnector,
  IpcSocketConnectorShape
>()("@baton/ipc-codex/extension/IpcSocketConnector") {}

/**
 * Node `net` adapter for {@link IpcSocketConnector}: unix sockets and Windows named pipes.
 * Tiny on purpose: it maps socket events to the port's queue and errno codes to tagged errors
 * and holds no protocol rules.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { createConnection } from "node:net"
import type { Socket } from "node:net"
import { IpcConnectError, IpcDisconnectedError } from "./errors.js"
import { IpcSocketConnector } from "./socket-connector.js"
import type { IpcSocket } from "./socket-connector.js"

const errnoCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : "EUNKNOWN"

const open = (path: string): Effect.Effect<Socket, IpcConnectError> =>
  Effect.callback<Socket, IpcConnectError>((resume) => {
    const socket = createConnection({ path })
    const onError = (error: unknown) => {
      socket.destroy()
      resume(Effect.fail(new IpcConnectError({ path, code: errnoCode(error) })))
    }
    socket.once("error", onError)
    socket.once("connect", () => {
      socket.off("error", onError)
      resume(Effect.succeed(socket))
    })
    return Effect.sync(() => {
      socket.destroy()
    })
  })

const wrap = (socket: Socket): Effect.Effect<IpcSocket> =>
  Effect.gen(function* () {
    const chunks = yield* Queue.unbounded<Uint8Array, IpcDisconnectedError>()
    let lastError: string | undefined
    const end = () => {
      const reason = lastError === undefined ? "socket-closed" : "socket-error"
      const detail =
        lastError === undefined ? "the peer closed the socket" : `socket error ${lastError}`
      Queue.failCauseUnsafe(chunks, Cause.fail(new IpcDisconnectedError({ reason, detail })))
    }
    socket.on("data", (chunk: Buffer) => {
      Queue.offerUnsafe(chunks, new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    })
    socket.on("error", (error: unknown) => {
      lastError = errnoCode(error)
    })
    socket.on("close", end)
    if (socket.destroyed) end()
    const write = (bytes: Uint8Array): Effect.Effect<void, IpcDisconnectedError> =>
      Effect.callback<void, IpcDisconnectedError>((resume) => {
        if (socket.destroyed || !socket.writable) {
          resume(
            Effect.fail(
              new IpcDisconnectedError({ reason: "socket-closed", detail: "write after close" }),
            ),
          )
          return
        }
        socket.write(bytes, (error) => {
          resume(
            error === undefined || error === null
              ? Effect.void
              : Effect.fail(
                  new IpcDisconnectedError({
                    reason: "socket-error",
                    detail: `write failed: ${errnoCode(error)}`,
                  }),
                ),
          )
        })
      })
    return {
      write,
      chunks,
      close: Effect.sync(() => {
        socket.destroy()
      }),
    }
  })

/** The real connector, over `node:net`. */
export const nodeIpcSocketConnector: IpcSocketConnector["Service"] = {
  connect: (path) =>
    Effect.acquireRelease(open(path), (socket) =>
      Effect.sync(() => {
        socket.destroy()
      }),
    ).pipe(Effect.flatMap(wrap)),
}

/** Layer providing {@link nodeIpcSocketConnector}. */
export const nodeIpcSocketConnectorLayer: Layer.Layer<IpcSocketConnector> = Layer.succeed(
  IpcSocketConnector,
  nodeIpcSocketConnector,
)

/**
 * The `CodexTransport` port: how Baton reaches a live Codex app-server. Each adapter (daemon
 * socket, private stdio process, in-memory twin, later the VS Code extension) provides one
 * `connect` that yields an initialised `CodexConnection`; everything above the wire is shared.
 * Connections are scoped: closing the scope closes the socket or stops the process.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type { Scope } from "effect"
import type { CodexConnection } from "./codex-connection.js"
import type { CodexConnectError, CodexRequestError, TransportKind } from "./errors.js"

/** A way to open connections to one app-server. */
export interface CodexTransportShape {
  readonly kind: TransportKind
  /** A human-readable description of the endpoint (socket path, binary path, …). */
  readonly endpoint: string
  /** Opens and initialises a connection; it closes when the scope closes. */
  readonly connect: Effect.Effect<CodexConnection, CodexConnectError, Scope.Scope>
}

/** The transport service Baton's domain packages depend on. */
export class CodexTransport extends Context.Service<CodexTransport, CodexTransportShape>()(
  "@baton/ipc-codex/CodexTransport",
) {}

/** A layer providing `CodexTransport` from a transport value. */
export const codexTransportLayer = (transport: CodexTransportShape): Layer.Layer<CodexTransport> =>
  Layer.succeed(CodexTransport, transport)

/** Backoff for `retryWhenOverloaded`. */
export interface OverloadRetryOptions {
  /** Attempts after the first (default 4). */
  readonly retries?: number
  /** First delay (default 100 ms); doubles each time, with jitter. */
  readonly baseDelayMs?: number
}

/**
 * Retries an operation only while it fails with `OverloadedError` (`-32001`: the server did not
 * process it), with exponential backoff and jitter on the Effect clock. Every other error,
 * including timeouts whose outcome is unknown, passes through untouched.
 */
export const retryWhenOverloaded = <A, E extends CodexRequestError, R>(
  effect: Effect.Effect<A, E, R>,
  options: OverloadRetryOptions = {},
): Effect.Effect<A, E, R> =>
  Effect.retry(effect, {
    schedule: Schedule.exponential(`${options.baseDelayMs ?? 100} millis`).pipe(Schedule.jittered),
    times: options.retries ?? 4,
    while: (error: E) => error._tag === "OverloadedError",
  })

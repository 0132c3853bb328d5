/**
 * Every failure @baton/ipc-codex can report, as tagged data. Each error carries what a caller
 * needs to act (method, thread, path, whether the outcome is unknown) and a readable `message`.
 * Nothing here throws; match on `_tag`.
 */
import * as Data from "effect/Data"

/** Which transport a connection runs over. */
export type TransportKind = "daemon" | "stdio" | "extension" | "in-memory"

/**
 * The connection is gone (socket closed, process exited, never opened). When a request was
 * already written, `outcomeMayBeUnknown` is true: the server may have acted on it.
 */
export class DisconnectedError extends Data.TaggedError("DisconnectedError")<{
  readonly transport: TransportKind
  readonly reason: string
  readonly method?: string
  readonly outcomeMayBeUnknown: boolean
}> {
  override get message(): string {
    const what = this.method === undefined ? "" : ` during ${this.method}`
    const unknown = this.outcomeMayBeUnknown
      ? " (the request was sent: its outcome is unknown)"
      : ""
    return `${this.transport} connection lost${what}: ${this.reason}${unknown}`
  }
}

/**
 * Another app-server process is the thread's single writer (`-32600 … already has an active
 * writer`): the owner is elsewhere, so back off or reach the thread through its owner.
 */
export class ActiveWriterError extends Data.TaggedError("ActiveWriterError")<{
  readonly threadId: string
  readonly method: string
  readonly detail: string
}> {
  override get message(): string {
    return `thread ${this.threadId} is owned by another Codex process (${this.detail}); reach it through its owner`
  }
}

/** The server does not know the thread (`thread not found`, `no rollout found`). */
export class ThreadNotFoundError extends Data.TaggedError("ThreadNotFoundError")<{
  readonly threadId: string
  readonly method: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.method}: thread ${this.threadId} is not available here (${this.detail})`
  }
}

/**
 * The server spoke a different protocol than the one Baton was built against: an unknown method,
 * rejected parameters, or a result/notification whose shape no longer matches.
 */
export class ProtocolMismatchError extends Data.TaggedError("ProtocolMismatchError")<{
  readonly method: string
  readonly expected: string
  readonly seen: string
  readonly serverVersion?: string
}> {
  override get message(): string {
    const version = this.serverVersion === undefined ? "" : ` (server ${this.serverVersion})`
    return `protocol mismatch on ${this.method}${version}: expected ${this.expected}; saw ${this.seen}`
  }
}

/**
 * A request got no answer in time. It was written to the wire, so its outcome may be unknown;
 * it is never retried automatically.
 */
export class RequestTimeoutError extends Data.TaggedError("RequestTimeoutError")<{
  readonly method: string
  readonly timeoutMs: number
  readonly outcomeMayBeUnknown: boolean
}> {
  override get message(): string {
    return `${this.method} got no answer within ${this.timeoutMs} ms; its outcome may be unknown, do not resend blindly`
  }
}

/** The server's ingress is saturated (`-32001`); the request was not processed and may be retried. */
export class OverloadedError extends Data.TaggedError("OverloadedError")<{
  readonly method: string
  readonly detail: string
  readonly retryable: true
}> {
  override get message(): string {
    return `${this.method}: server overloaded (${this.detail}); retry with backoff`
  }
}

/** The request needs a ChatGPT sign-in (`-32600 codex account authentication required …`). */
export class NotAuthenticatedError extends Data.TaggedError("NotAuthenticatedError")<{
  readonly method: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.method} needs a signed-in ChatGPT account: ${this.detail}`
  }
}

/** `turn/start` or `turn/steer` hit a running review or manual-compaction turn (`ActiveTurnNotSteerable`). */
export class TurnNotSteerableError extends Data.TaggedError("TurnNotSteerableError")<{
  readonly threadId: string
  readonly method: string
  readonly turnKind: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.method} on thread ${this.threadId} refused: a ${this.turnKind} turn is running; wait for turn/completed`
  }
}

/** Any other JSON-RPC error answer, with the server's code and message. */
export class RpcError extends Data.TaggedError("RpcError")<{
  readonly method: string
  readonly code: number
  readonly detail: string
  readonly data?: unknown
}> {
  override get message(): string {
    return `${this.method} failed with ${this.code}: ${this.detail}`
  }
}

/**
 * No daemon answers on the control socket (missing socket, dangling link, nobody listening).
 * `listener` says when something does listen there but is not a working daemon: `foreign` (it
 * answered the WebSocket upgrade with plain HTTP), `unresponsive` (it never completed the upgrade).
 */
export class DaemonNotRunningError extends Data.TaggedError("DaemonNotRunningError")<{
  readonly socketPath: string
  readonly reason: string
  readonly listener?: "foreign" | "unresponsive"
}> {
  override get message(): string {
    const listener: "foreign" | "unresponsive" | undefined = this.listener
    switch (listener) {
      case "foreign":
        return `no Codex app-server daemon at ${this.socketPath}: ${this.reason}; something else is listening on that socket (check the socket path and CODEX_HOME)`
      case "unresponsive":
        return `no working Codex app-server daemon at ${this.socketPath}: ${this.reason}; something is listening but did not complete the WebSocket upgrade (a hung daemon or another program; restart the daemon or check the socket path)`
      case undefined:
        return `Codex app-server daemon not running at ${this.socketPath}: ${this.reason} (start it with \`codex app-server daemon start\`)`
    }
  }
}

/** The control socket (or its link, or a directory on the way) is not private to the current user. */
export class SocketTrustError extends Data.TaggedError("SocketTrustError")<{
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `refusing to use ${this.path}: ${this.reason}`
  }
}

/** No usable `codex` binary was found; `searched` lists every place looked at and why it was rejected. */
export class CodexBinaryNotFoundError extends Data.TaggedError("CodexBinaryNotFoundError")<{
  readonly searched: ReadonlyArray<string>
}> {
  override get message(): string {
    return `no usable codex binary: ${this.searched.join("; ")}`
  }
}

/** Starting a child process failed (missing binary, permission denied). */
export class SpawnError extends Data.TaggedError("SpawnError")<{
  readonly command: string
  readonly reason: string
}> {
  override get message(): string {
    return `could not start ${this.command}: ${this.reason}`
  }
}

/** Running `codex app-server generate-json-schema` (or reading its output) failed. */
export class SchemaGenerationError extends Data.TaggedError("SchemaGenerationError")<{
  readonly binary: string
  readonly reason: string
}> {
  override get message(): string {
    return `could not read the app-server schema from ${this.binary}: ${this.reason}`
  }
}

/**
 * The operation exists on the common `ThreadController` surface but this transport cannot do it
 * (e.g. rate limits, account or thread listing over the VS Code extension IPC). Nothing was sent.
 */
export class TransportUnsupportedError extends Data.TaggedError("TransportUnsupportedError")<{
  readonly transport: TransportKind
  readonly operation: string
}> {
  override get message(): string {
    return `${this.operation} is not supported on the ${this.transport} transport; use the daemon or a private app-server for it`
  }
}

/** The process that owned the thread is gone and nobody owns it now (e.g. its VS Code window closed). */
export class ThreadOwnerGoneError extends Data.TaggedError("ThreadOwnerGoneError")<{
  readonly threadId: string
  readonly transport: TransportKind
  readonly detail: string
}> {
  override get message(): string {
    return `thread ${this.threadId} has no owner on the ${this.transport} transport any more: ${this.detail}`
  }
}

/** A thread's rollout file could not be read (missing, unreadable). */
export class RolloutReadError extends Data.TaggedError("RolloutReadError")<{
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `cannot read the rollout ${this.path}: ${this.reason}`
  }
}

/** A value given as a Codex thread id is not one (Codex thread ids are UUIDs). */
export class InvalidThreadIdError extends Data.TaggedError("InvalidThreadIdError")<{
  readonly value: string
}> {
  override get message(): string {
    return `'${this.value.slice(0, 80)}' is not a Codex thread id (a UUID such as 019a…-…); pass the thread's id, e.g. $CODEX_THREAD_ID inside Codex`
  }
}

/** An error a JSON-RPC request can end with, after classification. */
export type CodexRequestError =
  | DisconnectedError
  | ActiveWriterError
  | ThreadNotFoundError
  | ProtocolMismatchError
  | RequestTimeoutError
  | OverloadedError
  | NotAuthenticatedError
  | TurnNotSteerableError
  | RpcError

/** An error opening a connection can end with. */
export type CodexConnectError =
  | CodexRequestError
  | DaemonNotRunningError
  | SocketTrustError
  | CodexBinaryNotFoundError
  | SpawnError

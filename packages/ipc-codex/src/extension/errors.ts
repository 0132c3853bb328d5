/**
 * Tagged errors of the VS Code extension IPC client. Convention: the class is `<Thing>Error`
 * and its `_tag` is the class name. Each error's message is derived from its fields and says
 * what to do next. Guarantee: no error carries user text, conversation content or patch
 * values; ids, paths, method names, versions and counts only.
 */
import * as Data from "effect/Data"

/** Which filesystem entry an endpoint check was about. */
export type EndpointRole = "codex-home" | "ipc-directory" | "socket"

/** What kind of filesystem entry was found. */
export type FileKind = "file" | "directory" | "socket" | "symlink" | "other"

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, "0")}`

// ---------------------------------------------------------------------------------------------
// Endpoint resolution and trust
// ---------------------------------------------------------------------------------------------

/** The platform has no known extension IPC endpoint; raised before any filesystem access. */
export class EndpointUnsupportedPlatformError extends Data.TaggedError(
  "EndpointUnsupportedPlatformError",
)<{ readonly platform: string }> {
  override get message(): string {
    return (
      `The Codex extension IPC is not supported on platform "${this.platform}" ` +
      "(only win32, darwin and linux). Use the app-server transport instead."
    )
  }
}

/** An environment setting needed to locate the endpoint is unusable (e.g. relative CODEX_HOME). */
export class EndpointConfigError extends Data.TaggedError("EndpointConfigError")<{
  readonly variable: string
  readonly value: string
  readonly problem: string
}> {
  override get message(): string {
    return `${this.variable}=${JSON.stringify(this.value)} ${this.problem}. Set it to an absolute path.`
  }
}

/** No socket at the expected path(s); Baton never creates one or falls back to a shared path. */
export class EndpointMissingError extends Data.TaggedError("EndpointMissingError")<{
  readonly path: string
  readonly checked: ReadonlyArray<string>
}> {
  override get message(): string {
    return (
      `No Codex extension IPC socket at ${this.checked.join(" or ")}. Open the thread in a ` +
      "VS Code window with the Codex extension running (and the same CODEX_HOME), then retry."
    )
  }
}

/** A symlink sits where the IPC directory or socket must be; refused to prevent redirection. */
export class EndpointSymlinkError extends Data.TaggedError("EndpointSymlinkError")<{
  readonly path: string
  readonly role: EndpointRole
}> {
  override get message(): string {
    return (
      `Refusing the Codex IPC endpoint: ${this.path} (${this.role}) is a symlink. ` +
      "Remove the link; the extension recreates the real socket when VS Code restarts."
    )
  }
}

/** The IPC directory or socket belongs to another user. */
export class EndpointOwnerError extends Data.TaggedError("EndpointOwnerError")<{
  readonly path: string
  readonly role: EndpointRole
  readonly expectedUid: number
  readonly actualUid: number
}> {
  override get message(): string {
    return (
      `Refusing the Codex IPC endpoint: ${this.path} (${this.role}) is owned by uid ` +
      `${this.actualUid}, not by you (uid ${this.expectedUid}). Another user's process could ` +
      "read or inject messages; check CODEX_HOME and who created this path."
    )
  }
}

/** The IPC directory or socket grants group or other permissions (mode & 0o077 != 0). */
export class EndpointPermissionError extends Data.TaggedError("EndpointPermissionError")<{
  readonly path: string
  readonly role: EndpointRole
  readonly mode: number
}> {
  override get message(): string {
    const fix = this.role === "socket" ? "chmod 600" : "chmod 700"
    return (
      `Refusing the Codex IPC endpoint: ${this.path} (${this.role}) has mode ` +
      `${octal(this.mode)}, which lets other users in. Run \`${fix} ${this.path}\` ` +
      "or restart VS Code so the extension recreates it privately."
    )
  }
}

/** The entry at the path is not the expected kind (directory for `ipc`, socket for `ipc.sock`). */
export class EndpointKindError extends Data.TaggedError("EndpointKindError")<{
  readonly path: string
  readonly role: EndpointRole
  readonly expected: FileKind
  readonly actual: FileKind
}> {
  override get message(): string {
    return (
      `Refusing the Codex IPC endpoint: ${this.path} (${this.role}) is a ${this.actual}, ` +
      `expected a ${this.expected}.`
    )
  }
}

/** A filesystem check failed for a reason other than absence (e.g. EACCES). */
export class EndpointAccessError extends Data.TaggedError("EndpointAccessError")<{
  readonly path: string
  readonly role: EndpointRole
  readonly code: string
}> {
  override get message(): string {
    return `Cannot inspect the Codex IPC endpoint ${this.path} (${this.role}): ${this.code}.`
  }
}

/** The socket was replaced between the trust check and the connect (different inode). */
export class EndpointReplacedError extends Data.TaggedError("EndpointReplacedError")<{
  readonly path: string
}> {
  override get message(): string {
    return `The Codex IPC socket ${this.path} changed while connecting; the connection was dropped and will be re-checked.`
  }
}

/** Any refusal or failure while resolving and checking the endpoint. */
export type EndpointError =
  | EndpointUnsupportedPlatformError
  | EndpointConfigError
  | EndpointMissingError
  | EndpointSymlinkError
  | EndpointOwnerError
  | EndpointPermissionError
  | EndpointKindError
  | EndpointAccessError

// ---------------------------------------------------------------------------------------------
// Framing
// ---------------------------------------------------------------------------------------------

/** A frame's declared (incoming) or encoded (outgoing) length exceeds the configured cap. */
export class FrameTooLargeError extends Data.TaggedError("FrameTooLargeError")<{
  readonly bytes: number
  readonly maxBytes: number
  readonly direction: "incoming" | "outgoing"
}> {
  override get message(): string {
    return `IPC frame of ${this.bytes} bytes (${this.direction}) exceeds the ${this.maxBytes}-byte cap; the connection is closed.`
  }
}

/** A frame declared length 0, which the protocol forbids; the stream is treated as broken. */
export class FrameEmptyError extends Data.TaggedError("FrameEmptyError") {
  override get message(): string {
    return "IPC frame with length 0 received; the protocol forbids it, so the connection is closed."
  }
}

/** A frame body was not UTF-8 JSON; the frame is skipped, the stream stays in sync. */
export class FrameInvalidJsonError extends Data.TaggedError("FrameInvalidJsonError")<{
  readonly bytes: number
  readonly problem: string
}> {
  override get message(): string {
    return `Skipped an IPC frame of ${this.bytes} bytes that is not UTF-8 JSON (${this.problem}).`
  }
}

/** An outgoing message could not be serialised as JSON (cycle, BigInt). */
export class FrameEncodeError extends Data.TaggedError("FrameEncodeError")<{
  readonly problem: string
}> {
  override get message(): string {
    return `Cannot encode an IPC message as JSON: ${this.problem}.`
  }
}

/** A fatal framing problem: the connection must be closed. */
export type FrameFatalError = FrameTooLargeError | FrameEmptyError

// ---------------------------------------------------------------------------------------------
// Connection and requests
// ---------------------------------------------------------------------------------------------

/** Connecting to the socket or pipe failed or timed out. */
export class IpcConnectError extends Data.TaggedError("IpcConnectError")<{
  readonly path: string
  readonly code: string
}> {
  override get message(): string {
    const hint =
      this.code === "ECONNREFUSED"
        ? " Nothing is listening: the socket is stale; reopen the VS Code window."
        : ""
    return `Cannot connect to the Codex extension IPC at ${this.path}: ${this.code}.${hint}`
  }
}

/** Why a connection ended. */
export type DisconnectReason =
  | "socket-closed"
  | "socket-error"
  | "frame-too-large"
  | "frame-empty"
  | "connection-reset"
  | "closed-by-client"

/** The connection ended (window reload, router re-election, extension restart, framing fault). */
export class IpcDisconnectedError extends Data.TaggedError("IpcDisconnectedError")<{
  readonly reason: DisconnectReason
  readonly detail: string
}> {
  override get message(): string {
    return `Codex extension IPC connection ended (${this.reason}): ${this.detail}`
  }
}

/** `initialize` failed or returned no client id. */
export class IpcHandshakeError extends Data.TaggedError("IpcHandshakeError")<{
  readonly problem: string
}> {
  override get message(): string {
    return `Codex extension IPC handshake failed: ${this.problem}`
  }
}

/** A request got no response in time. For writes the outcome is unknown: never resend blindly. */
export class IpcRequestTimeoutError extends Data.TaggedError("IpcRequestTimeoutError")<{
  readonly method: string
  readonly requestId: string
  readonly timeoutMs: number
  readonly outcomeMayBeUnknown: boolean
}> {
  override get message(): string {
    const unknown = this.outcomeMayBeUnknown
      ? " The request may have been applied; do not resend it blindly, check the thread state."
      : ""
    return `No response to ${this.method} within ${this.timeoutMs} ms.${unknown}`
  }
}

/** The router answered `no-client-found`: no client accepted the request, so nothing was delivered. */
export class NoClientFoundError extends Data.TaggedError("NoClientFoundError")<{
  readonly method: string
  readonly targetClientId: string | undefined
}> {
  override get message(): string {
    const target = this.targetClientId === undefined ? "" : ` (target ${this.targetClientId})`
    return `The IPC router found no client to handle ${this.method}${target}.`
  }
}

/** The router or owner answered with another error string. */
export class IpcRouterError extends Data.TaggedError("IpcRouterError")<{
  readonly method: string
  readonly error: string
  readonly retryable: boolean
}> {
  override get message(): string {
    return `${this.method} failed on the Codex side: ${this.error}${this.retryable ? " (retryable)" : ""}.`
  }
}

/** Any failure of a single request on one connection. */
export type IpcRequestError =
  | IpcDisconnectedError
  | IpcRequestTimeoutError
  | NoClientFoundError
  | IpcRouterError
  | FrameTooLargeError
  | FrameEncodeError

// ---------------------------------------------------------------------------------------------
// Thread session
// ---------------------------------------------------------------------------------------------

/** No client owns the conversation (after bounded retries); the thread is not open in VS Code. */
export class OwnerNotFoundError extends Data.TaggedError("OwnerNotFoundError")<{
  readonly conversationId: string
  readonly attempts: number
  readonly previousOwnerId: string | undefined
}> {
  override get message(): string {
    const gone =
      this.previousOwnerId === undefined ? "" : ` Its previous owner ${this.previousOwnerId} left.`
    return (
      `No VS Code window owns thread ${this.conversationId} (${this.attempts} discovery attempts).` +
      `${gone} Open the thread in VS Code and retry.`
    )
  }
}

/** A method's version differs between Baton and the extension; names method and versions. */
export class MethodVersionMismatchError extends Data.TaggedError("MethodVersionMismatchError")<{
  readonly method: string
  readonly expected: number
  /** The version seen on the wire (broadcasts), or undefined when the router only refused. */
  readonly seen: number | undefined
  readonly direction: "request" | "broadcast"
  readonly evidence: string
}> {
  override get message(): string {
    const seen = this.seen === undefined ? "" : ` (saw ${this.seen})`
    return (
      `Protocol version mismatch on ${this.method}${seen}: Baton speaks version ${this.expected}. ` +
      `${this.evidence} The extension build probably changed this method; set a per-method ` +
      "version override only after confirming the new shape."
    )
  }
}

/** No snapshot arrived after following; names the stream versions seen on the wire. */
export class SnapshotTimeoutError extends Data.TaggedError("SnapshotTimeoutError")<{
  readonly conversationId: string
  readonly ownerId: string
  readonly timeoutMs: number
  readonly expectedVersion: number
  readonly versionsSeen: ReadonlyArray<number>
}> {
  override get message(): string {
    const seen =
      this.versionsSeen.length === 0
        ? "no thread-stream-state-changed for this thread was seen"
        : `thread-stream-state-changed versions seen: ${this.versionsSeen.join(", ")}`
    return (
      `No snapshot of thread ${this.conversationId} from owner ${this.ownerId} within ` +
      `${this.timeoutMs} ms (expected stream version ${this.expectedVersion}; ${seen}).`
    )
  }
}

/** The conversation state does not have the layout Baton relies on (extension drift). */
export class StateLayoutError extends Data.TaggedError("StateLayoutError")<{
  readonly problem: string
}> {
  override get message(): string {
    return `Unsupported extension state layout: ${this.problem}`
  }
}

/** A state patch could not be applied; the held state is untouched and a resnapshot follows. */
export class StatePatchError extends Data.TaggedError("StatePatchError")<{
  readonly index: number
  readonly op: string
  readonly path: ReadonlyArray<string | number>
  readonly problem: string
}> {
  override get message(): string {
    return `State patch #${this.index} (${this.op} ${JSON.stringify(this.path)}) does not apply: ${this.problem}.`
  }
}

/** A write was sent but no answer came (timeout or disconnect): its outcome is unknown. */
export class WriteOutcomeUnknownError extends Data.TaggedError("WriteOutcomeUnknownError")<{
  readonly method: string
  /** The request id sent, to correlate with journals and the thread state. */
  readonly requestId: string
  readonly reason: "timeout" | "disconnected"
  readonly outcomeMayBeUnknown: true
}> {
  override get message(): string {
    return (
      `${this.method} was sent but ${this.reason === "timeout" ? "no reply came" : "the connection dropped"}; ` +
      "it may or may not have been applied. Check the thread state; never resend it blindly."
    )
  }
}

/** The owner answered a write with an error or an unusable acknowledgement. */
export class WriteRejectedError extends Data.TaggedError("WriteRejectedError")<{
  readonly method: string
  readonly problem: string
  readonly outcomeMayBeUnknown: boolean
}> {
  override get message(): string {
    const unknown = this.outcomeMayBeUnknown ? " It may still have taken effect." : ""
    return `${this.method} was not accepted: ${this.problem}.${unknown}`
  }
}

/** No connection with a known owner became available in time; nothing was sent. */
export class WriteNotReadyError extends Data.TaggedError("WriteNotReadyError")<{
  readonly method: string
  readonly waitedMs: number
  readonly lastProblem: string
  readonly outcomeMayBeUnknown: false
}> {
  override get message(): string {
    return `${this.method} was not sent: no owner connection within ${this.waitedMs} ms (${this.lastProblem}).`
  }
}

/** Reconnect and rediscovery gave up after a bounded number of consecutive attempts. */
export class RecoveryExhaustedError extends Data.TaggedError("RecoveryExhaustedError")<{
  readonly attempts: number
  readonly reasons: ReadonlyArray<string>
}> {
  override get message(): string {
    const last = this.reasons[this.reasons.length - 1] ?? "unknown"
    return `Gave up on the Codex extension IPC after ${this.attempts} consecutive recovery attempts; last reason: ${last}`
  }
}

/** The thread session was closed by its user; pending operations end with this. */
export class ThreadSessionClosedError extends Data.TaggedError("ThreadSessionClosedError") {
  override get message(): string {
    return "The extension thread session is closed."
  }
}

/** A terminal failure of a thread session (it stops recovering after one of these). */
export type ThreadSessionFatalError =
  | EndpointError
  | IpcConnectError
  | OwnerNotFoundError
  | MethodVersionMismatchError
  | StateLayoutError
  | RecoveryExhaustedError
  | ThreadSessionClosedError

/** Any failure of a write operation (compact, start-turn). */
export type ThreadWriteError =
  | WriteOutcomeUnknownError
  | WriteRejectedError
  | WriteNotReadyError
  | OwnerNotFoundError
  | MethodVersionMismatchError
  | ThreadSessionFatalError

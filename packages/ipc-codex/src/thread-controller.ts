/**
 * `ThreadController`: the one surface Baton's domain code drives a live thread through, whatever
 * the transport (daemon socket, private stdio app-server, VS Code extension IPC). It is narrower
 * than `CodexConnection` on purpose: one thread, observed as the common typed `ThreadState`, with
 * compaction, a follow-up turn, interrupting a turn and close. Operations a transport cannot do
 * fail with `TransportUnsupportedError` instead of pretending. The daemon/stdio adapter here is
 * tiny: it subscribes with `thread/resume` and forwards to the connection; it holds no rules.
 */
import * as Effect from "effect/Effect"
import type { Stream } from "effect"
import type {
  AccountInfo,
  CodexConnection,
  CompactionRequested,
  RateLimitsReadResult,
  ThreadListQuery,
  ThreadPage,
  TurnStarted,
} from "./codex-connection.js"
import type {
  CodexConnectError,
  CodexRequestError,
  ThreadOwnerGoneError,
  TransportKind,
  TransportUnsupportedError,
} from "./errors.js"
import type {
  EndpointError,
  IpcConnectError,
  StateLayoutError,
  WriteNotReadyError,
  WriteRejectedError,
} from "./extension/errors.js"
import type { ThreadState } from "./thread-state.js"

/** A follow-up turn: text only (the thread's settings are inherited). */
export interface ControllerTurnInput {
  readonly text: string
  /**
   * Idempotency handle, sent where the transport supports one (the extension IPC's
   * `clientUserMessageId`); the app-server `turn/start` has no counterpart and ignores it.
   */
  readonly clientUserMessageId?: string
}

/**
 * An acknowledged interrupt. The stop itself arrives as state: the turn ends `interrupted`.
 * `interruptedTurnId` is the turn the transport reports stopping: the requested turn over the
 * app-server (`turn/interrupt` answers `{}`), the extension owner's `interruptedTurnId` (null:
 * that turn was not running).
 */
export interface TurnInterruptAcknowledged {
  readonly threadId: string
  readonly turnId: string
  readonly interruptedTurnId: string | null
}

/** Extension-only failures that have no app-server counterpart (see `src/extension/errors.ts`). */
export type ExtensionOnlyError =
  EndpointError | IpcConnectError | StateLayoutError | WriteRejectedError | WriteNotReadyError

/** Every failure a `ThreadController` operation can end with. */
export type ThreadControllerError =
  CodexConnectError | ThreadOwnerGoneError | TransportUnsupportedError | ExtensionOnlyError

/** One live thread, driven the same way over every transport. */
export interface ThreadController {
  readonly transport: TransportKind
  readonly threadId: string
  /** The thread's current state. */
  readonly state: Effect.Effect<ThreadState>
  /** The current state, then every change; fails when the transport is lost for good. */
  readonly observe: Stream.Stream<ThreadState, ThreadControllerError>
  /** Asks for a compaction; success is the acknowledgement, completion arrives as state. */
  readonly compact: Effect.Effect<CompactionRequested, ThreadControllerError>
  /** Starts one follow-up turn with text only, inheriting the thread's settings. */
  readonly startTurn: (
    input: ControllerTurnInput,
  ) => Effect.Effect<TurnStarted, ThreadControllerError>
  /**
   * Stops turn `turnId` (a write: sent once, never resent). Success is the acknowledgement; the
   * turn's `interrupted` status arrives as state.
   */
  readonly interrupt: (
    turnId: string,
  ) => Effect.Effect<TurnInterruptAcknowledged, ThreadControllerError>
  /** `account/rateLimits/read` (unsupported over the extension IPC). */
  readonly readRateLimits: Effect.Effect<RateLimitsReadResult, ThreadControllerError>
  /** `account/read` (unsupported over the extension IPC). */
  readonly readAccount: Effect.Effect<AccountInfo, ThreadControllerError>
  /** One page of `thread/list` (unsupported over the extension IPC). */
  readonly listThreads: (
    query?: ThreadListQuery,
  ) => Effect.Effect<ThreadPage, ThreadControllerError>
  /** Ends the session (unsubscribe/unfollow best effort); idempotent. Scope closing does the same. */
  readonly close: Effect.Effect<void>
}

/**
 * The daemon/stdio adapter: subscribes to (or loads) the thread with `thread/resume` and returns
 * a controller over the connection. Closing it unsubscribes; the connection stays the caller's.
 */
export const connectionThreadController = (
  connection: CodexConnection,
  threadId: string,
): Effect.Effect<ThreadController, CodexRequestError> =>
  Effect.map(connection.resumeThread(threadId), (): ThreadController => ({
    transport: connection.transport,
    threadId,
    state: connection.threadState(threadId),
    observe: connection.observeThread(threadId),
    compact: connection.compactThread(threadId),
    startTurn: (input) => connection.startTurn(threadId, input.text),
    interrupt: (turnId) =>
      Effect.as(connection.interruptTurn(threadId, turnId), {
        threadId,
        turnId,
        interruptedTurnId: turnId,
      }),
    readRateLimits: connection.readRateLimits,
    readAccount: connection.readAccount,
    listThreads: (query) => connection.listThreads(query),
    close: Effect.ignore(connection.unsubscribeThread(threadId)),
  }))

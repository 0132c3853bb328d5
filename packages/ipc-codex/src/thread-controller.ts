/**
 * `ThreadController`: the one surface Baton's domain code drives a live thread through, whatever
 * the transport (daemon socket, private stdio app-server, VS Code extension IPC). It is narrower
 * than `CodexConnection` on purpose: one thread, observed as the common typed `ThreadState`, with
 * compaction, a follow-up turn, interrupting a turn and close. Operations a transport cannot do
 * fail with `TransportUnsupportedError` instead of pretending. The daemon/stdio adapter here is
 * tiny: it subscribes with `thread/resume` and forwards to the connection; it holds no rules.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type {
  AccountInfo,
  CodexConnection,
  CompactionRequested,
  RateLimitsReadResult,
  ThreadListQuery,
  ThreadPage,
  TurnStarted,
} from "./codex-connection.js"
import { DisconnectedError } from "./errors.js"
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
  /**
   * Ends the session (unsubscribe/unfollow once, best effort); idempotent. Final: afterwards every
   * operation but `state` fails with `DisconnectedError` and `observe` ends. Scope closing does
   * the same (extension).
   */
  readonly close: Effect.Effect<void>
}

/** Why every operation of a closed controller fails (the same reason on every transport). */
export const CONTROLLER_CLOSED_REASON = "the thread controller is closed"

/**
 * The daemon/stdio adapter: subscribes to (or loads) the thread with `thread/resume` and returns
 * a controller over the connection. Closing it unsubscribes (once); the connection stays the
 * caller's. Close is final: afterwards every operation but `state` fails with `DisconnectedError`
 * without sending anything, and `observe` streams end with it.
 */
export const connectionThreadController = (
  connection: CodexConnection,
  threadId: string,
): Effect.Effect<ThreadController, CodexRequestError> =>
  Effect.gen(function* () {
    yield* connection.resumeThread(threadId)
    const closed = yield* Deferred.make<never, DisconnectedError>()
    const closedError = new DisconnectedError({
      transport: connection.transport,
      reason: CONTROLLER_CLOSED_REASON,
      outcomeMayBeUnknown: false,
    })
    let isClosed = false
    // Checked when the operation runs, not when it was built: nothing is sent after close.
    const open = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | DisconnectedError> =>
      Effect.suspend((): Effect.Effect<A, E | DisconnectedError> =>
        isClosed ? Effect.fail(closedError) : effect,
      )
    const controller: ThreadController = {
      transport: connection.transport,
      threadId,
      state: connection.threadState(threadId),
      observe: Stream.unwrap(
        Effect.sync(() =>
          isClosed
            ? Stream.fail(closedError)
            : connection.observeThread(threadId).pipe(Stream.interruptWhen(Deferred.await(closed))),
        ),
      ),
      compact: open(connection.compactThread(threadId)),
      startTurn: (input) => open(connection.startTurn(threadId, input.text)),
      interrupt: (turnId) =>
        open(
          Effect.as(connection.interruptTurn(threadId, turnId), {
            threadId,
            turnId,
            interruptedTurnId: turnId,
          }),
        ),
      readRateLimits: open(connection.readRateLimits),
      readAccount: open(connection.readAccount),
      listThreads: (query) => open(connection.listThreads(query)),
      close: Effect.suspend(() => {
        if (isClosed) return Effect.void
        isClosed = true
        return Effect.ignore(connection.unsubscribeThread(threadId)).pipe(
          Effect.ensuring(Deferred.fail(closed, closedError)),
        )
      }),
    }
    return controller
  })

/**
 * The VS Code extension transport behind the common `ThreadController`: an adapter over
 * `openExtensionThread`. It translates, and holds no rules of its own:
 * - state: every Live view becomes the next `ThreadState` (extension-thread-state.ts); the
 *   stream fails when the session closes for good;
 * - compaction: `thread-follower-compact-thread`, recorded as a compaction request like the
 *   app-server path, so the same waiting code works; start turn: `thread-follower-start-turn`
 *   with `clientUserMessageId` (the caller's, else a fresh one); interrupt:
 *   `thread-follower-interrupt-turn` with `expectedTurnId`;
 * - errors: owner gone → `ThreadOwnerGoneError`, version drift → `ProtocolMismatchError` naming
 *   method and versions, a write whose reply never came → `RequestTimeoutError` /
 *   `DisconnectedError` with `outcomeMayBeUnknown: true`, a closed or exhausted session →
 *   `DisconnectedError`; rate limits, account and thread listing → `TransportUnsupportedError`.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Scope } from "effect"
import { randomUUID } from "node:crypto"
import {
  DisconnectedError,
  ProtocolMismatchError,
  RequestTimeoutError,
  ThreadOwnerGoneError,
  TransportUnsupportedError,
} from "./errors.js"
import type { IpcFileSystem, EndpointEnvironment } from "./extension/endpoint.js"
import type { ThreadSessionFatalError, ThreadWriteError } from "./extension/errors.js"
import { DEFAULT_EXTENSION_TIMEOUTS, openExtensionThread } from "./extension/extension-thread.js"
import type { ExtensionThreadOptions } from "./extension/extension-thread.js"
import type { IpcSocketConnector } from "./extension/socket-connector.js"
import { threadStateFromView } from "./extension-thread-state.js"
import type { ThreadController, ThreadControllerError } from "./thread-controller.js"
import type { ThreadState } from "./thread-state.js"
import {
  emptyThreadState,
  recordCompactionRequest,
  settleCompactionRequest,
} from "./thread-state.js"

/** Options of {@link openExtensionController}. */
export interface ExtensionControllerOptions {
  readonly threadId: string
  readonly environment: EndpointEnvironment
  /** Passed to `openExtensionThread` (timeouts, recovery, version overrides, …). */
  readonly session?: Omit<ExtensionThreadOptions, "conversationId" | "environment">
  /** Source of `clientUserMessageId` when the caller gives none (default: random UUID). */
  readonly newClientUserMessageId?: () => string
}

/** Maps an extension session or write failure to the common error it corresponds to. */
export const extensionErrorToControllerError = (
  threadId: string,
  requestTimeoutMs: number,
  error: ThreadWriteError | ThreadSessionFatalError,
): ThreadControllerError => {
  switch (error._tag) {
    case "WriteOutcomeUnknownError":
      return error.reason === "timeout"
        ? new RequestTimeoutError({
            method: error.method,
            timeoutMs: requestTimeoutMs,
            outcomeMayBeUnknown: true,
          })
        : new DisconnectedError({
            transport: "extension",
            reason: error.message,
            method: error.method,
            outcomeMayBeUnknown: true,
          })
    case "OwnerNotFoundError":
      return new ThreadOwnerGoneError({ threadId, transport: "extension", detail: error.message })
    case "MethodVersionMismatchError":
      return new ProtocolMismatchError({
        method: error.method,
        expected: `version ${error.expected}`,
        seen:
          error.seen === undefined
            ? `a refusal of version ${error.expected} (${error.evidence})`
            : `version ${error.seen}`,
      })
    case "RecoveryExhaustedError":
    case "ThreadSessionClosedError":
      return new DisconnectedError({
        transport: "extension",
        reason: error.message,
        outcomeMayBeUnknown: false,
      })
    // No app-server counterpart: passed through as the extension's own tagged errors.
    case "EndpointAccessError":
    case "EndpointConfigError":
    case "EndpointKindError":
    case "EndpointMissingError":
    case "EndpointOwnerError":
    case "EndpointPermissionError":
    case "EndpointSymlinkError":
    case "EndpointUnsupportedPlatformError":
    case "IpcConnectError":
    case "StateLayoutError":
    case "WriteNotReadyError":
    case "WriteRejectedError":
      return error
  }
}

/**
 * Opens an extension session on `threadId`, waits for its first snapshot, and returns the
 * thread's controller. The session ends when the scope closes (unfollow, best effort).
 */
export const openExtensionController = (
  options: ExtensionControllerOptions,
): Effect.Effect<
  ThreadController,
  ThreadControllerError,
  Scope.Scope | IpcFileSystem | IpcSocketConnector
> =>
  Effect.gen(function* () {
    const { threadId } = options
    const requestMs = options.session?.timeouts?.requestMs ?? DEFAULT_EXTENSION_TIMEOUTS.requestMs
    const mapError = (error: ThreadWriteError | ThreadSessionFatalError) =>
      extensionErrorToControllerError(threadId, requestMs, error)
    const newId = options.newClientUserMessageId ?? randomUUID
    const session = yield* openExtensionThread({
      ...options.session,
      conversationId: threadId,
      environment: options.environment,
    })
    const live = yield* session.awaitLive.pipe(Effect.mapError(mapError))
    const stateRef = yield* SubscriptionRef.make<ThreadState>(
      threadStateFromView(emptyThreadState(threadId), live.view, yield* Clock.currentTimeMillis),
    )
    const ended = yield* Deferred.make<never, ThreadControllerError>()
    let lastView = live.view
    yield* Effect.forkScoped(
      Stream.runForEach(session.changes, (status) => {
        if (status._tag === "Closed") return Deferred.fail(ended, mapError(status.error))
        if (status._tag !== "Live" || status.view === lastView) return Effect.void
        lastView = status.view
        return Effect.flatMap(Clock.currentTimeMillis, (at) =>
          SubscriptionRef.update(stateRef, (s) => threadStateFromView(s, status.view, at)),
        )
      }),
    )

    const unsupported = (operation: string) =>
      Effect.fail(new TransportUnsupportedError({ transport: "extension", operation }))

    const compact = Effect.gen(function* () {
      const requestedAtMs = yield* Clock.currentTimeMillis
      const requestRevision = yield* SubscriptionRef.modify(stateRef, (s) => {
        const recorded = recordCompactionRequest(s, requestedAtMs)
        return [recorded.revision, recorded] as const
      })
      yield* session.compact.pipe(
        Effect.tapError((error) =>
          // Only a definite refusal settles the request; an unknown outcome stays pending.
          error._tag === "WriteOutcomeUnknownError"
            ? Effect.void
            : SubscriptionRef.update(stateRef, (s) =>
                settleCompactionRequest(s, requestRevision, "rejected"),
              ),
        ),
        Effect.mapError(mapError),
      )
      yield* SubscriptionRef.update(stateRef, (s) =>
        settleCompactionRequest(s, requestRevision, "accepted"),
      )
      return { threadId, requestedAtMs, requestRevision }
    })

    const controller: ThreadController = {
      transport: "extension",
      threadId,
      state: SubscriptionRef.get(stateRef),
      observe: SubscriptionRef.changes(stateRef).pipe(Stream.interruptWhen(Deferred.await(ended))),
      compact,
      startTurn: (input) =>
        session
          .startTurn({
            text: input.text,
            clientUserMessageId: input.clientUserMessageId ?? newId(),
          })
          .pipe(
            Effect.map((started) => ({ threadId, turnId: started.turnId })),
            Effect.mapError(mapError),
          ),
      interrupt: (turnId) =>
        session.interruptTurn(turnId).pipe(
          Effect.map(({ interruptedTurnId }) => ({ threadId, turnId, interruptedTurnId })),
          Effect.mapError(mapError),
        ),
      readRateLimits: unsupported("account/rateLimits/read"),
      readAccount: unsupported("account/read"),
      listThreads: () => unsupported("thread/list"),
      close: session.close,
    }
    return controller
  })

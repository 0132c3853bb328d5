/**
 * Waiting helpers for tests of code built on `CodexConnection`: wait until a thread's state
 * satisfies a predicate (checked on the current state first, then on every change).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { CodexConnection } from "../codex-connection.js"
import type { DisconnectedError } from "../errors.js"
import type { ThreadState } from "../thread-state.js"

/**
 * Waits (on the Effect clock, default 5 s) for the first state of `threadId` satisfying
 * `predicate`. On timeout the error message carries a summary of the last state seen, so a
 * failing end-to-end test says what the thread was doing instead of only "timed out".
 */
export const waitForThreadState = (
  connection: CodexConnection,
  threadId: string,
  predicate: (state: ThreadState) => boolean,
  options: { readonly timeoutMs?: number } = {},
): Effect.Effect<ThreadState, DisconnectedError | Cause.TimeoutError | Cause.NoSuchElementError> =>
  Effect.suspend(() => {
    let last: ThreadState | undefined
    const timeoutMs = options.timeoutMs ?? 5_000
    return connection.observeThread(threadId).pipe(
      Stream.tap((state) => Effect.sync(() => void (last = state))),
      Stream.filter(predicate),
      Stream.runHead,
      Effect.flatMap(Effect.fromOption),
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () =>
          Effect.fail(
            new Cause.TimeoutError(
              `thread ${threadId}: no state matched within ${timeoutMs} ms; last state: ${describeState(last)}`,
            ),
          ),
      }),
    )
  })

const describeState = (state: ThreadState | undefined): string =>
  state === undefined
    ? "none seen"
    : JSON.stringify({
        status: state.status,
        turns: state.turns.slice(-3).map((t) => ({ id: t.id, status: t.status })),
        pendingServerRequests: state.pendingServerRequests.map((r) => r.method),
        lastError: state.lastError,
      })

/** True once the state holds a completed turn with this id. */
export const turnCompleted =
  (turnId: string) =>
  (state: ThreadState): boolean =>
    state.turns.some((t) => t.id === turnId && t.status !== "inProgress")

/** Collects the first `count` states of a thread (including the current one). */
export const collectStates = (
  connection: CodexConnection,
  threadId: string,
  count: number,
): Effect.Effect<ReadonlyArray<ThreadState>, DisconnectedError> =>
  connection.observeThread(threadId).pipe(
    Stream.take(count),
    Stream.runCollect,
    Effect.map((chunk) => [...chunk]),
  )

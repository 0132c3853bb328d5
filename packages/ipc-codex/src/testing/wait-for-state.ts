/**
 * Waiting helpers for tests of code built on `CodexConnection`: wait until a thread's state
 * satisfies a predicate (checked on the current state first, then on every change).
 */
import { Effect, Stream } from "effect"
import type { Cause } from "effect"
import type { CodexConnection } from "../codex-connection.js"
import type { DisconnectedError } from "../errors.js"
import type { ThreadState } from "../thread-state.js"

/** Waits (on the Effect clock, default 5 s) for the first state of `threadId` satisfying `predicate`. */
export const waitForThreadState = (
  connection: CodexConnection,
  threadId: string,
  predicate: (state: ThreadState) => boolean,
  options: { readonly timeoutMs?: number } = {},
): Effect.Effect<ThreadState, DisconnectedError | Cause.TimeoutError | Cause.NoSuchElementError> =>
  connection
    .observeThread(threadId)
    .pipe(
      Stream.filter(predicate),
      Stream.runHead,
      Effect.flatMap(Effect.fromOption),
      Effect.timeout(options.timeoutMs ?? 5_000),
    )

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

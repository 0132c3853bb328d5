/**
 * The `original_thread` delivery port: one turn on the job's original thread, only when that
 * thread is loaded and idle in the app-server daemon (the single writer that holds it). "Idle"
 * includes `systemError`: the real 0.169.0 daemon reports that status, with no turn running, for a
 * thread whose last turn failed — exactly the thread a usage limit left behind — and accepts a new
 * turn on it (pinned by tests/wake-daemon.e2e.test.ts). It never
 * resumes a thread another process holds, never steers or interrupts a busy turn it did not
 * start, and says why it did not deliver (the launcher then falls back to a new thread). The run
 * ends when the thread is no longer active; the outcome comes from the thread's rollout, like any
 * other continuation's. Adapters hold no job rules.
 */
import type { CodexConnection, CodexConnectError } from "@baton/ipc-codex"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Scope } from "effect"

/** The result of asking for a turn. */
export type SameThreadStart =
  | { readonly _tag: "Started"; readonly turnId: string }
  | { readonly _tag: "Unavailable"; readonly detail: string }

/** Turns on an existing thread in the daemon. */
export interface SameThreadTurnsShape {
  /** Starts a turn carrying `text` when the thread is loaded and idle; else why not. */
  readonly start: (threadId: string, text: string) => Effect.Effect<SameThreadStart>
  /** Whether the thread is running a turn: true, false, or null when it cannot be read. */
  readonly isActive: (threadId: string) => Effect.Effect<boolean | null>
  /** Interrupts the turn Baton started (stop, watchdog). */
  readonly interrupt: (threadId: string, turnId: string) => Effect.Effect<void>
}

/** The same-thread turns service. */
export class SameThreadTurns extends Context.Service<SameThreadTurns, SameThreadTurnsShape>()(
  "@baton/wake/SameThreadTurns",
) {}

/** No daemon channel: every request falls back to a new thread. */
export const unavailableSameThreadTurns: SameThreadTurnsShape = {
  start: () =>
    Effect.succeed({ _tag: "Unavailable", detail: "no app-server daemon channel is configured" }),
  isActive: () => Effect.succeed(null),
  interrupt: () => Effect.void,
}

/** Layer: no channel. */
export const unavailableSameThreadTurnsLayer: Layer.Layer<SameThreadTurns> = Layer.succeed(
  SameThreadTurns,
  unavailableSameThreadTurns,
)

/** Thread statuses that accept a new turn: loaded, no turn running (`systemError`: the last failed). */
export const acceptsTurn = (status: string): boolean =>
  status === "idle" || status === "systemError"

const describe = (error: { readonly _tag: string; readonly message?: string }) =>
  `${error._tag}${error.message === undefined ? "" : `: ${error.message}`}`

/** Turns through the daemon reached by `connect` (one short connection per call). */
export const makeDaemonSameThreadTurns = (
  connect: Effect.Effect<CodexConnection, CodexConnectError, Scope.Scope>,
): SameThreadTurnsShape => ({
  start: (threadId, text) =>
    Effect.scoped(
      Effect.gen(function* () {
        const connection = yield* connect
        const thread = yield* connection.readThread(threadId)
        const status = thread.status?.type ?? "unknown"
        if (!acceptsTurn(status))
          return {
            _tag: "Unavailable",
            detail: `the original thread is ${status} in the daemon (a turn needs it idle and loaded)`,
          } as const
        yield* connection.resumeThread(threadId)
        const started = yield* connection.startTurn(threadId, text)
        return { _tag: "Started", turnId: started.turnId } as const
      }),
    ).pipe(
      Effect.catch((error) =>
        Effect.succeed({ _tag: "Unavailable", detail: describe(error) } as const),
      ),
    ),
  isActive: (threadId) =>
    Effect.scoped(Effect.flatMap(connect, (connection) => connection.readThread(threadId))).pipe(
      Effect.map((thread) =>
        thread.status === undefined ? null : thread.status.type === "active",
      ),
      Effect.orElseSucceed(() => null),
    ),
  interrupt: (threadId, turnId) =>
    Effect.scoped(
      Effect.gen(function* () {
        const connection = yield* connect
        yield* connection.resumeThread(threadId)
        yield* connection.interruptTurn(threadId, turnId)
      }),
    ).pipe(Effect.ignore),
})

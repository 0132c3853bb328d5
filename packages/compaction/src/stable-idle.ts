/**
 * Idle and stable idle. A thread is idle when its status is `idle` (or `systemError`: its last
 * turn failed, nothing runs) with no active flags, no
 * pending approval or user-input request and no unconfirmed submission; it is stably idle when
 * it stayed idle for the debounce (default 250 ms). Repeated idle samples never re-arm the
 * debounce; any non-idle sample resets it (flapping). The tracker is pure; `awaitStableIdle`
 * runs it over a stream of samples on the Effect Clock (tests use TestClock, never sleeps).
 * It must never treat "no news" as idle: only samples move it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { ThreadState } from "@baton/ipc-codex"

/** Default debounce before idle counts as stable. */
export const DEFAULT_IDLE_DEBOUNCE_MS = 100

/** What idleness is judged on; built from a `ThreadState` or from an extension snapshot. */
export interface IdleSample {
  readonly status: string
  readonly activeFlags: ReadonlyArray<string>
  /** Pending server→client requests (approvals, user input). */
  readonly pendingRequests: number
  /** Turn submissions the host has not confirmed yet (extension IPC). */
  readonly unconfirmedSubmissions: number
}

/** Why a sample is not idle. */
export type IdleBlocker =
  "status_not_idle" | "active_flags" | "pending_request" | "unconfirmed_submission"

/**
 * Thread statuses with no turn running. `systemError` is a loaded thread whose last turn failed —
 * what a usage limit leaves behind (codex 0.169.0 daemon) — and Codex compacts it as it does an
 * idle one; counting it as busy left a job waiting for an idle that only a new user turn brings.
 */
const idleStatuses: ReadonlySet<string> = new Set(["idle", "systemError"])

/** Every reason the sample is not idle (empty when idle). */
export const idleBlockers = (sample: IdleSample): ReadonlyArray<IdleBlocker> => [
  ...(idleStatuses.has(sample.status) ? [] : (["status_not_idle"] as const)),
  ...(sample.activeFlags.length === 0 ? [] : (["active_flags"] as const)),
  ...(sample.pendingRequests === 0 ? [] : (["pending_request"] as const)),
  ...(sample.unconfirmedSubmissions === 0 ? [] : (["unconfirmed_submission"] as const)),
]

/** True when nothing blocks idleness right now. */
export const isIdleSample = (sample: IdleSample): boolean => idleBlockers(sample).length === 0

/** The idle sample of an app-server thread state (it has no unconfirmed submissions of its own). */
export const idleSampleOf = (state: ThreadState, unconfirmedSubmissions = 0): IdleSample => ({
  status:
    state.status.type === "unknown" ? (state.status.unknownType ?? "unknown") : state.status.type,
  activeFlags: state.status.activeFlags,
  pendingRequests: state.pendingServerRequests.length,
  unconfirmedSubmissions,
})

/** Pure debounce state: when the current idle run began, and how often idle was lost. */
export interface StableIdleTracker {
  readonly idleSince: number | null
  readonly flaps: number
}

/** Nothing seen yet. */
export const initialStableIdle: StableIdleTracker = { idleSince: null, flaps: 0 }

/** Feeds one sample observed at `atMs`; an idle sample during an idle run does not re-arm. */
export const observeIdle = (
  tracker: StableIdleTracker,
  idle: boolean,
  atMs: number,
): StableIdleTracker => {
  if (idle) return tracker.idleSince === null ? { ...tracker, idleSince: atMs } : tracker
  return tracker.idleSince === null ? tracker : { idleSince: null, flaps: tracker.flaps + 1 }
}

/** True when the current idle run has lasted at least `debounceMs` by `nowMs`. */
export const isStablyIdle = (
  tracker: StableIdleTracker,
  nowMs: number,
  debounceMs: number,
): boolean => tracker.idleSince !== null && nowMs - tracker.idleSince >= debounceMs

/** The machine event an idle sample implies, given the previous judgement (edges only). */
export const idleEdge = (
  previouslyIdle: boolean | null,
  idle: boolean,
): "IdleObserved" | "IdleLost" | null =>
  previouslyIdle === idle ? null : idle ? "IdleObserved" : "IdleLost"

/**
 * Completes with the Clock time at which the samples became stably idle. Only changes of
 * idleness count (so idle→idle never re-arms). A source that ends is not flushed early: the
 * debounce still runs its full length, and the wait never ends by itself otherwise, so bound it
 * with the job's idle budget.
 */
export const awaitStableIdle = <E, R>(
  samples: Stream.Stream<IdleSample, E, R>,
  options: { readonly debounceMs?: number } = {},
): Effect.Effect<number, E, R> =>
  samples.pipe(
    Stream.map(isIdleSample),
    Stream.concat(Stream.never),
    Stream.changes,
    Stream.debounce(options.debounceMs ?? DEFAULT_IDLE_DEBOUNCE_MS),
    Stream.filter((idle) => idle),
    Stream.runHead,
    Effect.flatMap(() => Clock.currentTimeMillis),
  )

/**
 * The wake job as one transition table: `transition(job, event) → {job, effects, refusal}`.
 *
 * Guarantees:
 * - pure: no clock (events carry `at`), no IO; effects are data the watcher runs in order, and
 *   `Persist` always comes first, so a crash after a launch still finds the job `running`;
 * - total: an event a state does not handle returns the same job reference and no effects;
 *   a user command a state refuses also says why (`refusal`);
 * - only `quota_waiting` (usage explicitly allowed) and a due `retry_waiting` may launch, and
 *   only within the job's bounds; `unknown` usage never launches and escalates to
 *   needs_attention only after `bounds.unknownUsageLimit` readings in a row;
 * - `completed` is final for every event; `stopped` is final for automation (only a user
 *   resume leaves it).
 * It must never infer recovery from time or from percentages: only `allowed: true` does.
 */
import type { JobRecord, JobState } from "./job-record.js"
import type { PressureBand } from "./pressure.js"
import { bandSeals } from "./pressure.js"

/** How a continuation ended, from structured events only (never a scan of raw log text). */
export type RunFailure = "none" | "usage_limit" | "connection" | "stream" | "overloaded" | "other"

/** Every run failure class. */
export const runFailures: ReadonlyArray<RunFailure> = [
  "none",
  "usage_limit",
  "connection",
  "stream",
  "overloaded",
  "other",
]

/** Failures retried with backoff inside a quota window. */
export const isTransientFailure = (failure: RunFailure): boolean =>
  failure === "connection" || failure === "stream" || failure === "overloaded"

/** Bounds the watcher checks from outside the table (deadline timers). */
export type JobBound = "max_generations" | "max_wall_clock"

/** Everything the watcher, the CLI or the agent reports; `at` is the Clock time in ms. */
export type JobEvent =
  /** `baton wake arm`: the checkpoint was validated and the capsule projected. */
  | { readonly _tag: "Armed"; readonly at: number; readonly capsuleReady: boolean }
  | {
      readonly _tag: "PressureObserved"
      readonly at: number
      readonly band: PressureBand
      readonly usedPercent: number | null
      /** When the reading was taken (ms); one older than the job's `pressureAt` changes nothing. */
      readonly sampleAt?: number | null
      /**
       * True for a reading from history (the rollout as it was when the watcher started, before
       * any live reading): it establishes the band, and asks the agent only for a rise no watcher
       * has acted on (taken after the job was armed and after its last checkpoint request).
       */
      readonly replay?: boolean
    }
  /** A quota reading: `allowed` is `ordinaryUsageAllowed` (null = unknown). */
  | {
      readonly _tag: "UsageObserved"
      readonly at: number
      readonly allowed: boolean | null
      readonly resetsAt: number | null
      /** False when the global concurrent-run limit is reached: launching waits. */
      readonly launchSlotFree: boolean
    }
  /** A structured usage-limit error seen on the live thread (not from a continuation's exit). */
  | { readonly _tag: "UsageLimitHit"; readonly at: number; readonly resetsAt: number | null }
  /** The retry timer fired; carries a fresh quota reading. */
  | {
      readonly _tag: "RetryDue"
      readonly at: number
      readonly allowed: boolean | null
      readonly launchSlotFree: boolean
    }
  | {
      readonly _tag: "RunStarted"
      readonly at: number
      readonly generation: number
      readonly pid: number | null
      readonly threadId: string | null
    }
  | {
      readonly _tag: "LaunchFailed"
      readonly at: number
      readonly generation: number
      readonly detail: string
    }
  | {
      readonly _tag: "RunExited"
      readonly at: number
      readonly generation: number
      readonly failure: RunFailure
      readonly detail: string | null
      /** For a usage-limit exit: the reset time (ms) the run's own 429 carried, when known. */
      readonly resetsAt?: number | null
    }
  /** `wake_complete` / `baton wake complete <job>`. */
  | { readonly _tag: "CompleteSignalled"; readonly at: number }
  | { readonly _tag: "StopRequested"; readonly at: number; readonly reason: string }
  | { readonly _tag: "PauseRequested"; readonly at: number; readonly reason: string }
  | { readonly _tag: "ResumeRequested"; readonly at: number }
  | { readonly _tag: "BoundsExceeded"; readonly at: number; readonly bound: JobBound }

/** The tag of a job event. */
export type JobEventTag = JobEvent["_tag"]

/** Every event tag, for exhaustive tables and tests. */
export const jobEventTags: ReadonlyArray<JobEventTag> = [
  "Armed",
  "PressureObserved",
  "UsageObserved",
  "UsageLimitHit",
  "RetryDue",
  "RunStarted",
  "LaunchFailed",
  "RunExited",
  "CompleteSignalled",
  "StopRequested",
  "PauseRequested",
  "ResumeRequested",
  "BoundsExceeded",
]

/** Why a job asks for a notification. */
export type NotifyKind = "needs_attention" | "waiting_user" | "completed"

/** What the watcher must do, in order, after a transition. */
export type JobEffect =
  /** Write the new record (compare-and-set on the revision the caller holds, under the job lock). */
  | { readonly _tag: "Persist" }
  /** Write an immutable sealed copy of the capsule projected from this checkpoint. */
  | { readonly _tag: "SealCapsule"; readonly checkpointSha256: string }
  /** Ask the live agent to update its checkpoint (where a channel exists; else status shows it). */
  | { readonly _tag: "RequestCheckpoint"; readonly band: PressureBand }
  /** Start continuation `generation` (a new thread reading the capsule). */
  | { readonly _tag: "LaunchContinuation"; readonly generation: number }
  | { readonly _tag: "ScheduleRetry"; readonly at: number; readonly attempt: number }
  | { readonly _tag: "CancelRetry" }
  /** Stop the running continuation (process group). */
  | { readonly _tag: "TerminateRun"; readonly generation: number }
  | { readonly _tag: "Notify"; readonly kind: NotifyKind; readonly detail: string }

/** The outcome of one event. */
export interface Transition {
  readonly job: JobRecord
  readonly effects: ReadonlyArray<JobEffect>
  /** Set when a user command was refused in this state; the job is unchanged. */
  readonly refusal: string | null
}

/** First retry delay. */
export const RETRY_BASE_MS = 60_000
/** Longest retry delay. */
export const RETRY_MAX_MS = 900_000

/** Delay before transient retry `attempt` (1-based): 60 s doubling, capped at 900 s. */
export const retryDelayMs = (attempt: number): number =>
  Math.min(RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1), RETRY_MAX_MS)

/** States no event leaves. */
export const terminalStates: ReadonlyArray<JobState> = ["completed"]

/** States automation never leaves (only a user command does). */
export const parkedStates: ReadonlyArray<JobState> = [
  "draft",
  "waiting_user",
  "needs_attention",
  "stopped",
  "completed",
]

const unchanged = (job: JobRecord): Transition => ({ job, effects: [], refusal: null })
const refuse = (job: JobRecord, refusal: string): Transition => ({ job, effects: [], refusal })

const moved = (
  job: JobRecord,
  at: number,
  patch: Partial<JobRecord>,
  effects: ReadonlyArray<JobEffect> = [],
): Transition => ({
  job: { ...job, ...patch, updatedAt: at },
  effects: [{ _tag: "Persist" }, ...effects],
  refusal: null,
})

const cancelRetry = (job: JobRecord): ReadonlyArray<JobEffect> =>
  job.state === "retry_waiting" ? [{ _tag: "CancelRetry" }] : []

const terminateRun = (job: JobRecord): ReadonlyArray<JobEffect> =>
  job.run === null ? [] : [{ _tag: "TerminateRun", generation: job.run.generation }]

const needsAttention = (job: JobRecord, at: number, detail: string): Transition =>
  moved(job, at, { state: "needs_attention", lastError: detail, run: null, nextRetryAt: null }, [
    ...cancelRetry(job),
    ...terminateRun(job),
    { _tag: "Notify", kind: "needs_attention", detail },
  ])

const enterQuotaWaiting = (
  job: JobRecord,
  at: number,
  resetsAt: number | null,
  extra: Partial<JobRecord> = {},
): Transition =>
  moved(
    job,
    at,
    {
      ...extra,
      state: "quota_waiting",
      retryCount: 0,
      nextRetryAt: null,
      unknownUsageCount: 0,
      windows: job.windows + 1,
      quotaBlockedAt: at,
      resetsAt,
      run: null,
      lastError: null,
    },
    cancelRetry(job),
  )

const boundReached = (job: JobRecord, at: number): string | null => {
  if (job.generation >= job.bounds.maxGenerations)
    return `bound max_generations reached: ${job.generation} of ${job.bounds.maxGenerations} continuations launched`
  if (at - job.createdAt >= job.bounds.maxWallClockMs)
    return `bound max_wall_clock reached: ${job.bounds.maxWallClockMs} ms since the job was created`
  return null
}

/** Launches the next generation from quota_waiting or a due retry_waiting, within bounds. */
const launch = (job: JobRecord, at: number, launchSlotFree: boolean): Transition => {
  const bound = boundReached(job, at)
  if (bound !== null) return needsAttention(job, at, bound)
  if (!launchSlotFree) return unchanged(job)
  const generation = job.generation + 1
  return moved(
    job,
    at,
    {
      state: "running",
      generation,
      retryCount: job.state === "quota_waiting" ? 0 : job.retryCount,
      nextRetryAt: null,
      unknownUsageCount: 0,
      lastError: null,
      run: { generation, launchedAt: at, startedAt: null, pid: null, threadId: null },
      cooldownUntil: null,
    },
    [{ _tag: "LaunchContinuation", generation }],
  )
}

/** An unknown usage reading while waiting: count it, escalate at the limit. */
const unknownUsage = (job: JobRecord, at: number): Transition => {
  const count = job.unknownUsageCount + 1
  return count >= job.bounds.unknownUsageLimit
    ? needsAttention(
        { ...job, unknownUsageCount: count },
        at,
        `usage allowance unknown ${count} times in a row; check the Codex login and version`,
      )
    : moved(job, at, { unknownUsageCount: count })
}

const isDue = (job: JobRecord, at: number): boolean =>
  job.state === "retry_waiting" && (job.nextRetryAt === null || at >= job.nextRetryAt)

const onUsage = (
  job: JobRecord,
  at: number,
  allowed: boolean | null,
  resetsAt: number | null,
  launchSlotFree: boolean,
): Transition => {
  switch (job.state) {
    case "monitoring":
      return allowed === false ? enterQuotaWaiting(job, at, resetsAt) : unchanged(job)
    case "quota_waiting":
      // A continuation's own usage-limit exit outranks an `allowed` reading until the cooldown ends.
      if (allowed === true && at < (job.cooldownUntil ?? 0)) return unchanged(job)
      if (allowed === true) return launch(job, at, launchSlotFree)
      if (allowed === null) return unknownUsage(job, at)
      // Still blocked: persist only news (a new reset hint, a broken run of unknowns), so a
      // waiting job is not rewritten on every read.
      return job.resetsAt === resetsAt && job.unknownUsageCount === 0
        ? unchanged(job)
        : moved(job, at, { resetsAt, unknownUsageCount: 0 })
    case "retry_waiting":
      if (allowed === false) return enterQuotaWaiting(job, at, resetsAt)
      if (allowed === null) return unknownUsage(job, at)
      if (isDue(job, at)) return launch(job, at, launchSlotFree)
      return job.unknownUsageCount === 0 ? unchanged(job) : moved(job, at, { unknownUsageCount: 0 })
    case "draft":
    case "running":
    case "waiting_user":
    case "needs_attention":
    case "stopped":
    case "completed":
      return unchanged(job)
  }
}

const rank: Readonly<Record<PressureBand, number>> = {
  unknown: 0,
  normal: 1,
  prepare: 2,
  high: 3,
  final: 4,
}

const onPressure = (
  job: JobRecord,
  event: Extract<JobEvent, { _tag: "PressureObserved" }>,
): Transition => {
  const { at, band, usedPercent } = event
  const sampleAt = event.sampleAt ?? null
  const known = job.pressureAt ?? null
  // An older reading than the one the job already acts on (history read again after a restart).
  if (sampleAt !== null && known !== null && sampleAt < known) return unchanged(job)
  switch (job.state) {
    case "draft":
    case "stopped":
    case "completed":
      return unchanged(job)
    case "monitoring":
    case "running":
    case "quota_waiting":
    case "retry_waiting":
    case "waiting_user":
    case "needs_attention": {
      const effects: Array<JobEffect> = []
      const liveAgent = job.state === "monitoring" || job.state === "running"
      const actedOnBefore = Math.max(job.armedAt ?? 0, job.checkpointRequest?.requestedAt ?? 0)
      const pastRise = event.replay === true && (sampleAt === null || sampleAt <= actedOnBefore)
      if (liveAgent && !pastRise && rank[band] >= rank.prepare && rank[job.pressure] < rank.prepare)
        effects.push({ _tag: "RequestCheckpoint", band })
      const sha = job.memory.checkpointSha256
      if (bandSeals(band) && sha !== null && job.seal?.checkpointSha256 !== sha)
        effects.push({ _tag: "SealCapsule", checkpointSha256: sha })
      if (band === job.pressure && usedPercent === job.usedPercent && effects.length === 0)
        return unchanged(job)
      // Falling below prepare ends the rise: an undelivered request is no longer offered again.
      const request = job.checkpointRequest ?? null
      const riseEnded = rank[band] < rank.prepare && request?.retryPending === true
      return moved(
        job,
        at,
        {
          pressure: band,
          usedPercent,
          ...(sampleAt === null ? {} : { pressureAt: Math.max(sampleAt, known ?? 0) }),
          ...(riseEnded ? { checkpointRequest: { ...request, retryPending: false } } : {}),
        },
        effects,
      )
    }
  }
}

/**
 * Whether the watcher should offer the checkpoint request of the current rise again: it was not
 * delivered, a channel may still carry it (`retryPending`), the job still has a live agent and is
 * still at `prepare` or above. At most one request is delivered per rise: delivery clears it.
 */
export const checkpointRetryDue = (job: JobRecord): boolean => {
  const request = job.checkpointRequest ?? null
  return (
    request !== null &&
    request.retryPending === true &&
    !request.delivered &&
    (job.state === "monitoring" || job.state === "running") &&
    rank[job.pressure] >= rank.prepare
  )
}

const onRunExited = (
  job: JobRecord,
  event: Extract<JobEvent, { _tag: "RunExited" }>,
): Transition => {
  if (job.run === null || job.run.generation !== event.generation || job.state === "completed")
    return unchanged(job)
  // The continuation already moved the job (pause, stop, complete): only forget the run.
  if (job.state !== "running") return moved(job, event.at, { run: null })
  const at = event.at
  const detail = event.detail ?? event.failure
  if (event.failure !== "usage_limit" && (job.usageLimitStreak ?? 0) > 0)
    return onRunExited({ ...job, usageLimitStreak: 0 }, event)
  switch (event.failure) {
    case "usage_limit": {
      // The run hit the limit although usage read allowed: wait for its reset, and at least a
      // backoff that grows with every such exit in a row, before launching again.
      const streak = (job.usageLimitStreak ?? 0) + 1
      const resetsAt = event.resetsAt ?? null
      const cooldownUntil = Math.max(resetsAt ?? 0, at + retryDelayMs(streak))
      return enterQuotaWaiting(job, at, resetsAt, { cooldownUntil, usageLimitStreak: streak })
    }
    case "connection":
    case "stream":
    case "overloaded": {
      const attempt = job.retryCount + 1
      if (attempt > job.bounds.maxRetriesPerWindow)
        return needsAttention(
          job,
          at,
          `transient retry limit exceeded (${job.bounds.maxRetriesPerWindow}): ${detail}`,
        )
      const nextRetryAt = at + retryDelayMs(attempt)
      return moved(
        job,
        at,
        { state: "retry_waiting", retryCount: attempt, nextRetryAt, run: null, lastError: detail },
        [{ _tag: "ScheduleRetry", at: nextRetryAt, attempt }],
      )
    }
    case "other":
      return needsAttention(job, at, detail)
    case "none":
      return needsAttention(
        job,
        at,
        "continuation exited without marking the job complete or waiting for the user",
      )
  }
}

/** Applies one event to a job. */
export const transition = (job: JobRecord, event: JobEvent): Transition => {
  const at = event.at
  switch (event._tag) {
    case "Armed":
      if (job.state === "completed") return refuse(job, "completed jobs are immutable")
      if (job.state !== "draft") return refuse(job, "the job is already armed; use resume")
      if (!event.capsuleReady)
        return refuse(job, "the checkpoint is not ready: fill Objective and Next actions")
      return moved(job, at, { state: "monitoring", armedAt: at, lastError: null })
    case "PressureObserved":
      return onPressure(job, event)
    case "UsageObserved":
      return onUsage(job, at, event.allowed, event.resetsAt, event.launchSlotFree)
    case "UsageLimitHit":
      return job.state === "monitoring" || job.state === "retry_waiting"
        ? enterQuotaWaiting(job, at, event.resetsAt)
        : unchanged(job)
    case "RetryDue":
      return job.state === "retry_waiting" && isDue(job, at)
        ? onUsage(job, at, event.allowed, null, event.launchSlotFree)
        : unchanged(job)
    case "RunStarted":
      return job.state === "running" && job.run?.generation === event.generation
        ? moved(job, at, {
            run: { ...job.run, startedAt: at, pid: event.pid, threadId: event.threadId },
          })
        : unchanged(job)
    case "LaunchFailed":
      // Nothing started, so the generation the launch took is given back (bounds count runs).
      return job.state === "running" && job.run?.generation === event.generation
        ? needsAttention(
            { ...job, generation: Math.max(0, event.generation - 1) },
            at,
            `launch failed: ${event.detail}`,
          )
        : unchanged(job)
    case "RunExited":
      return onRunExited(job, event)
    case "CompleteSignalled":
      if (job.state === "completed") return unchanged(job)
      return moved(
        job,
        at,
        { state: "completed", completedAt: at, run: null, nextRetryAt: null, pauseReason: null },
        [...cancelRetry(job), { _tag: "Notify", kind: "completed", detail: "job completed" }],
      )
    case "StopRequested":
      if (job.state === "completed") return refuse(job, "completed jobs are immutable")
      if (job.state === "stopped") return unchanged(job)
      return moved(
        job,
        at,
        { state: "stopped", pauseReason: event.reason, run: null, nextRetryAt: null },
        [...cancelRetry(job), ...terminateRun(job)],
      )
    case "PauseRequested":
      switch (job.state) {
        case "completed":
          return refuse(job, "completed jobs are immutable")
        case "draft":
          return refuse(job, "the job is not armed")
        case "stopped":
          return refuse(job, "the job is stopped; arm it again first (baton wake arm)")
        case "waiting_user":
          // Paused again for another reason: the newer reason is the one the user must see.
          return event.reason === job.pauseReason
            ? unchanged(job)
            : moved(job, at, { pauseReason: event.reason }, [
                { _tag: "Notify", kind: "waiting_user", detail: event.reason },
              ])
        case "monitoring":
        case "quota_waiting":
        case "running":
        case "retry_waiting":
        case "needs_attention":
          return moved(
            job,
            at,
            { state: "waiting_user", pauseReason: event.reason, nextRetryAt: null },
            [...cancelRetry(job), { _tag: "Notify", kind: "waiting_user", detail: event.reason }],
          )
      }
      return unchanged(job)
    case "ResumeRequested":
      switch (job.state) {
        case "completed":
          return refuse(job, "completed jobs are immutable")
        case "draft":
          return refuse(job, "the job is not armed; arm it first")
        case "waiting_user":
        case "needs_attention":
        case "stopped":
          return moved(job, at, {
            // A job stopped before it was ever armed goes back to draft, not to monitoring.
            state: job.armedAt === null ? "draft" : "monitoring",
            pauseReason: null,
            lastError: null,
            retryCount: 0,
            nextRetryAt: null,
            unknownUsageCount: 0,
            // The user re-armed: a usage-limit cooldown no longer holds the job back.
            cooldownUntil: null,
            usageLimitStreak: 0,
          })
        case "monitoring":
        case "quota_waiting":
        case "running":
        case "retry_waiting":
          return unchanged(job)
      }
      return unchanged(job)
    case "BoundsExceeded":
      switch (job.state) {
        case "monitoring":
        case "quota_waiting":
        case "running":
        case "retry_waiting":
          return needsAttention(job, at, `bound ${event.bound} reached`)
        case "draft":
        case "waiting_user":
        case "needs_attention":
        case "stopped":
        case "completed":
          return unchanged(job)
      }
      return unchanged(job)
  }
}

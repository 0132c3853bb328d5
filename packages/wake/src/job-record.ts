/**
 * The wake job record: what `state.json` holds (inside the store's revisioned envelope) and what
 * the transition table reads and returns. All times are epoch milliseconds from the Effect Clock.
 * The schema is the only way a record enters the package from disk. Pure data, no IO.
 */
import * as Schema from "effect/Schema"

/** The job's states (wake v0.5's nine). */
export const jobStates = [
  "draft",
  "monitoring",
  "quota_waiting",
  "running",
  "retry_waiting",
  "waiting_user",
  "needs_attention",
  "stopped",
  "completed",
] as const

/** One job state. */
export type JobState = (typeof jobStates)[number]

const PressureBandSchema = Schema.Literals(["unknown", "normal", "prepare", "high", "final"])
const Int = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))
const NullableInt = Schema.NullOr(Int)
const NullableString = Schema.NullOr(Schema.String)

/** Per-job limits on automation. */
export const JobBoundsSchema = Schema.Struct({
  /** Continuations this job may launch in total. */
  maxGenerations: Int,
  /** Wall-clock budget from creation; no launch after it. */
  maxWallClockMs: Int,
  /** Transient-failure retries per quota window. */
  maxRetriesPerWindow: Int,
  /** Consecutive "usage allowed: unknown" readings while waiting before needs_attention. */
  unknownUsageLimit: Int,
})

/** Per-job limits on automation. */
export type JobBounds = typeof JobBoundsSchema.Type

/** Defaults: 12 continuations, 7 days, 8 retries per window, 10 unknown readings. */
export const defaultJobBounds: JobBounds = {
  maxGenerations: 12,
  maxWallClockMs: 7 * 24 * 60 * 60 * 1000,
  maxRetriesPerWindow: 8,
  unknownUsageLimit: 10,
}

/** How a continuation reaches the model: a new `codex exec` thread (default), the job's own
 * continuation thread (`codex exec resume`), or a turn on the original thread when it sits idle
 * in the app-server daemon. */
export const deliveryModes = ["new_thread", "job_thread", "original_thread"] as const

/** One delivery mode. */
export type DeliveryMode = (typeof deliveryModes)[number]

/** The continuation currently launched for the job. */
export const JobRunSchema = Schema.Struct({
  generation: Int,
  launchedAt: Int,
  startedAt: NullableInt,
  pid: NullableInt,
  threadId: NullableString,
  /** Process start time (clock ticks since boot) that, with the pid, identifies the process. */
  startTicks: Schema.optionalKey(NullableInt),
  /** How this continuation was delivered. */
  mode: Schema.optionalKey(Schema.Literals(deliveryModes)),
})

/** The continuation currently launched for the job. */
export type JobRun = typeof JobRunSchema.Type

/** The last capsule projection: hashes let status tell a stale or hand-edited capsule. */
export const JobMemorySchema = Schema.Struct({
  /** SHA-256 of the checkpoint text the capsule was projected from. */
  checkpointSha256: NullableString,
  capsuleSha256: NullableString,
  capsuleBytes: NullableInt,
  projectedAt: NullableInt,
  /** Projections written so far. */
  projections: Int,
  /** True when the checkpoint has no placeholders and names an objective and next actions. */
  ready: Schema.Boolean,
  /** Likely secrets masked in the capsule (absent: older records, none counted). */
  maskedSecrets: Schema.optionalKey(Int),
})

/** The last capsule projection. */
export type JobMemory = typeof JobMemorySchema.Type

/** The latest immutable sealed capsule copy. */
export const JobSealSchema = Schema.Struct({
  checkpointSha256: Schema.String,
  capsuleSha256: Schema.String,
  sealedAt: Int,
  /** File name under the job's `sealed/` directory. */
  file: Schema.String,
})

/** The latest immutable sealed capsule copy. */
export type JobSeal = typeof JobSealSchema.Type

/** The last request to the live agent to update its checkpoint (raised at `prepare` or above). */
export const CheckpointRequestSchema = Schema.Struct({
  band: PressureBandSchema,
  requestedAt: Int,
  /** True when a live channel carried it (an idle thread in the daemon); false: status only. */
  delivered: Schema.Boolean,
  detail: Schema.String,
  /**
   * True while the request is undelivered and a channel may still carry it in this rise (e.g. the
   * thread was busy): the watcher offers it again once the thread is idle. The rise ends, and this
   * turns false, when the pressure falls below `prepare`. Absent (older records): no retry.
   */
  retryPending: Schema.optionalKey(Schema.Boolean),
})

/** The last request to the live agent to update its checkpoint. */
export type CheckpointRequest = typeof CheckpointRequestSchema.Type

/** How the last continuation ended (from its exit and structured events). */
export const LastRunSchema = Schema.Struct({
  generation: Int,
  mode: Schema.Literals(deliveryModes),
  threadId: NullableString,
  endedAt: Int,
  exitCode: Schema.NullOr(Schema.Number),
  signal: NullableString,
  failure: Schema.Literals(["none", "usage_limit", "connection", "stream", "overloaded", "other"]),
  detail: NullableString,
})

/** How the last continuation ended. */
export type LastRun = typeof LastRunSchema.Type

/** The job record. */
export const JobRecordSchema = Schema.Struct({
  jobId: Schema.String,
  /**
   * The conversation that created the job. Only `original_thread` delivery runs continuations on
   * it (as new turns while it is idle); for the other modes it is provenance only.
   */
  originalThreadId: NullableString,
  cwd: Schema.String,
  model: NullableString,
  reasoningEffort: NullableString,
  /** The rate-limit bucket that applies to the job, when known. */
  limitId: NullableString,
  state: Schema.Literals(jobStates),
  createdAt: Int,
  updatedAt: Int,
  armedAt: NullableInt,
  completedAt: NullableInt,
  /** Continuations launched so far; the next one is `generation + 1`. */
  generation: Int,
  /** Transient retries in the current quota window. */
  retryCount: Int,
  nextRetryAt: NullableInt,
  unknownUsageCount: Int,
  /** Quota windows the job has waited through. */
  windows: Int,
  quotaBlockedAt: NullableInt,
  /** The server's reset hint: only schedules checks, never authorises a launch. */
  resetsAt: NullableInt,
  pressure: PressureBandSchema,
  usedPercent: Schema.NullOr(Schema.Number),
  /**
   * When the reading behind `pressure` was taken (ms: a rollout line's timestamp or the quota
   * read's time). A watcher (re)starting reads the rollout history again: an older reading never
   * moves the job back. Absent (older records): unknown.
   */
  pressureAt: Schema.optionalKey(NullableInt),
  run: Schema.NullOr(JobRunSchema),
  pauseReason: NullableString,
  lastError: NullableString,
  bounds: JobBoundsSchema,
  memory: JobMemorySchema,
  seal: Schema.NullOr(JobSealSchema),
  /** Delivery preference (absent: `new_thread`). */
  delivery: Schema.optionalKey(Schema.Literals(deliveryModes)),
  /** The thread of the latest continuation (what `job_thread` delivery resumes). */
  continuationThreadId: Schema.optionalKey(NullableString),
  checkpointRequest: Schema.optionalKey(Schema.NullOr(CheckpointRequestSchema)),
  lastRun: Schema.optionalKey(Schema.NullOr(LastRunSchema)),
  /**
   * No launch before this time (ms) even when usage reads allowed: set when a continuation itself
   * hit the usage limit (the signals disagree), from the 429's reset time, at least a growing
   * backoff. Absent (older records): none.
   */
  cooldownUntil: Schema.optionalKey(NullableInt),
  /** Continuations in a row that ended with a usage limit (grows the cooldown backoff). */
  usageLimitStreak: Schema.optionalKey(Int),
})

/** The job record. */
export type JobRecord = typeof JobRecordSchema.Type

/** What creating a job needs. */
export interface NewJobInput {
  readonly jobId: string
  readonly originalThreadId: string | null
  readonly cwd: string
  readonly model: string | null
  readonly reasoningEffort: string | null
  readonly limitId: string | null
  readonly bounds: JobBounds
  readonly createdAt: number
}

/** A fresh draft job. */
export const newJobRecord = (input: NewJobInput): JobRecord => ({
  jobId: input.jobId,
  originalThreadId: input.originalThreadId,
  cwd: input.cwd,
  model: input.model,
  reasoningEffort: input.reasoningEffort,
  limitId: input.limitId,
  state: "draft",
  createdAt: input.createdAt,
  updatedAt: input.createdAt,
  armedAt: null,
  completedAt: null,
  generation: 0,
  retryCount: 0,
  nextRetryAt: null,
  unknownUsageCount: 0,
  windows: 0,
  quotaBlockedAt: null,
  resetsAt: null,
  pressure: "unknown",
  usedPercent: null,
  run: null,
  pauseReason: null,
  lastError: null,
  bounds: input.bounds,
  memory: {
    checkpointSha256: null,
    capsuleSha256: null,
    capsuleBytes: null,
    projectedAt: null,
    projections: 0,
    ready: false,
  },
  seal: null,
})

/**
 * The compaction job record: the state the job machine works on and the journal stores. One
 * schema (effect/Schema) is both the TypeScript type and the decoder used on every read from
 * disk. Times are epoch milliseconds stamped by the caller from the Effect Clock; the record
 * never holds handoff text, user text or continuation text (only digests and ids).
 */
import * as Schema from "effect/Schema"

/** States a job passes through before it ends. */
export const activeJobStatuses = [
  "scheduled",
  "waiting_for_idle",
  "idle_settling",
  "compaction_requested",
  "compaction_accepted",
  "compacting",
  "finishing_compaction",
  "waiting_for_resume_idle",
  "resume_idle_settling",
  "verifying_handoff",
  "continuation_requested",
  "continuation_running",
] as const

/** Final states: no event leaves them, nothing is retried automatically. */
export const terminalJobStatuses = [
  "completed",
  "resumed",
  "cancelled",
  "failed",
  "expired",
  "outcome_may_be_unknown",
] as const

/** Every job state, in lifecycle order. */
export const jobStatuses = [...activeJobStatuses, ...terminalJobStatuses] as const

/** A state a job can still leave. */
export type ActiveJobStatus = (typeof activeJobStatuses)[number]
/** A final state. */
export type TerminalJobStatus = (typeof terminalJobStatuses)[number]
/** Any job state. */
export type JobStatus = ActiveJobStatus | TerminalJobStatus

const terminalSet: ReadonlySet<string> = new Set(terminalJobStatuses)

/** True for the final states. */
export const isTerminalStatus = (status: JobStatus): status is TerminalJobStatus =>
  terminalSet.has(status)

/** Why a job ended (the `detail` field carries the human sentence). */
export const endReasons = [
  "compacted",
  "continued",
  "explicit_cancellation",
  "new_user_input",
  "user_turn_stopped",
  "compaction_rejected",
  "compaction_turn_failed",
  "compaction_turn_interrupted",
  "handoff_rejected",
  "continuation_rejected",
  "worker_lost_before_dispatch",
  "thread_owned_elsewhere",
  "compaction_outcome_unknown",
  "compaction_turn_ended_without_item",
  "compaction_budget_exceeded",
  "continuation_outcome_unknown",
  "continuation_budget_exceeded",
  "worker_lost_after_send",
  "idle_wait_budget_exceeded",
] as const

/** Why a job ended. */
export type EndReason = (typeof endReasons)[number]

/** Why the automatic continuation was not sent although the handoff asked for it. */
export type ResumeSkipped =
  "insufficient_headroom" | "compaction_turn_not_completed" | "worker_lost"

/** Why the headroom guard refused the continuation. */
export type HeadroomProblem =
  "missing_token_telemetry" | "stale_or_unreclaimed_token_telemetry" | "above_headroom_threshold"

/** What happened to the continuation turn once it was accepted. */
export type ContinuationOutcome = "completed" | "failed" | "interrupted" | "unfollowed"

const NonNegativeInt = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))
const Millis = NonNegativeInt
const NullableMillis = Schema.NullOr(Millis)

/** Budgets and thresholds of one job, fixed when it is scheduled. */
export const JobSettingsSchema = Schema.Struct({
  /** Debounce before idle counts as stable. */
  idleDebounceMs: NonNegativeInt,
  /** Longest wait for stable idle before the compaction request. */
  idleWaitMs: NonNegativeInt,
  /** Compaction request sent → compaction turn ended. */
  compactionMs: NonNegativeInt,
  /** Compaction turn ended → continuation turn accepted. */
  continuationMs: NonNegativeInt,
  /** How long the continuation turn is followed to its end. */
  continuationTurnMs: NonNegativeInt,
  /** Highest fraction of the context window in use that still allows the continuation. */
  headroomThreshold: Schema.Number.check(
    Schema.isGreaterThanOrEqualTo(0),
    Schema.isLessThanOrEqualTo(1),
  ),
})

/** Budgets and thresholds of one job. */
export type JobSettings = typeof JobSettingsSchema.Type

/** Defaults: 100 ms debounce, 60 min idle wait, 15 min compaction and continuation, 60 % headroom. */
export const defaultJobSettings: JobSettings = {
  idleDebounceMs: 100,
  idleWaitMs: 60 * 60_000,
  compactionMs: 15 * 60_000,
  continuationMs: 15 * 60_000,
  continuationTurnMs: 60 * 60_000,
  headroomThreshold: 0.6,
}

/** One token-usage observation (`thread/tokenUsage/updated`), reduced to what the guard needs. */
export const TokenUsageSampleSchema = Schema.Struct({
  turnId: Schema.String,
  totalTokens: Schema.NullOr(Schema.Number),
  modelContextWindow: Schema.NullOr(Schema.Number),
  at: Millis,
})

/** One token-usage observation. */
export type TokenUsageSample = typeof TokenUsageSampleSchema.Type

const ResumeCheckSchema = Schema.Struct({
  at: Millis,
  totalTokens: Schema.NullOr(Schema.Number),
  modelContextWindow: Schema.NullOr(Schema.Number),
  usedFraction: Schema.NullOr(Schema.Number),
  problem: Schema.NullOr(
    Schema.Literals([
      "missing_token_telemetry",
      "stale_or_unreclaimed_token_telemetry",
      "above_headroom_threshold",
    ]),
  ),
})

/** The job record: identity, settings, every timestamp the metrics need, and the ending. */
export const JobRecordSchema = Schema.Struct({
  jobId: Schema.String,
  threadId: Schema.String,
  jobNumber: NonNegativeInt,
  status: Schema.Literals(jobStatuses),
  createdAt: Millis,
  updatedAt: Millis,
  /** User-boundary fingerprint recorded at schedule time (hash only). */
  userFingerprint: Schema.String,
  /** True only when a verified handoff says `resume: true`. */
  resume: Schema.Boolean,
  /** SHA-256 of the stored handoff text, when a handoff was given. */
  handoffDigest: Schema.NullOr(Schema.String),
  settings: JobSettingsSchema,
  /** Token of the newest idle-debounce timer; an older timer's firing is ignored. */
  debounceToken: NonNegativeInt,
  workerPid: Schema.NullOr(NonNegativeInt),
  workerStartedAt: NullableMillis,
  usageBefore: Schema.NullOr(TokenUsageSampleSchema),
  compactionRequestedAt: NullableMillis,
  compactionAcceptedAt: NullableMillis,
  compactionTurnId: Schema.NullOr(Schema.String),
  compactionTurnStartedAt: NullableMillis,
  compactionItemId: Schema.NullOr(Schema.String),
  compactionCompletedAt: NullableMillis,
  compactionTurnEndedAt: NullableMillis,
  /** Fresh usage: reported for our compaction turn after its compaction item completed. */
  usageAfter: Schema.NullOr(TokenUsageSampleSchema),
  resumeCheck: Schema.NullOr(ResumeCheckSchema),
  continuationRequestedAt: NullableMillis,
  continuationTurnId: Schema.NullOr(Schema.String),
  continuationAcceptedAt: NullableMillis,
  continuationEndedAt: NullableMillis,
  continuationOutcome: Schema.NullOr(
    Schema.Literals(["completed", "failed", "interrupted", "unfollowed"]),
  ),
  endedAt: NullableMillis,
  reason: Schema.NullOr(Schema.Literals(endReasons)),
  detail: Schema.NullOr(Schema.String),
  /** True when a request was sent and what it did is not known; never retried. */
  outcomeMayBeUnknown: Schema.Boolean,
  resumeSkipped: Schema.NullOr(
    Schema.Literals(["insufficient_headroom", "compaction_turn_not_completed", "worker_lost"]),
  ),
  resumeSkipReason: Schema.NullOr(
    Schema.Literals([
      "missing_token_telemetry",
      "stale_or_unreclaimed_token_telemetry",
      "above_headroom_threshold",
    ]),
  ),
  /** How the worker reached the thread (extension, daemon, stdio) and why; null until it chose. */
  transport: Schema.NullOr(Schema.Struct({ kind: Schema.String, detail: Schema.String })),
})

/** The job record. */
export type JobRecord = typeof JobRecordSchema.Type

/** What scheduling decides; everything else starts empty. */
export interface NewJobInput {
  readonly jobId: string
  readonly threadId: string
  readonly jobNumber: number
  readonly createdAt: number
  readonly userFingerprint: string
  readonly resume: boolean
  readonly handoffDigest: string | null
  readonly settings?: Partial<JobSettings>
}

/** A job in `scheduled`, the machine's initial state. */
export const newJob = (input: NewJobInput): JobRecord => ({
  jobId: input.jobId,
  threadId: input.threadId,
  jobNumber: input.jobNumber,
  status: "scheduled",
  createdAt: input.createdAt,
  updatedAt: input.createdAt,
  userFingerprint: input.userFingerprint,
  resume: input.resume && input.handoffDigest !== null,
  handoffDigest: input.handoffDigest,
  settings: { ...defaultJobSettings, ...input.settings },
  debounceToken: 0,
  workerPid: null,
  workerStartedAt: null,
  usageBefore: null,
  compactionRequestedAt: null,
  compactionAcceptedAt: null,
  compactionTurnId: null,
  compactionTurnStartedAt: null,
  compactionItemId: null,
  compactionCompletedAt: null,
  compactionTurnEndedAt: null,
  usageAfter: null,
  resumeCheck: null,
  continuationRequestedAt: null,
  continuationTurnId: null,
  continuationAcceptedAt: null,
  continuationEndedAt: null,
  continuationOutcome: null,
  endedAt: null,
  reason: null,
  detail: null,
  outcomeMayBeUnknown: false,
  resumeSkipped: null,
  resumeSkipReason: null,
  transport: null,
})

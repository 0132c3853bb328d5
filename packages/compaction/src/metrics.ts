/**
 * Job metrics, computed only from the journal's record (its timestamps and token samples), so
 * they can be recomputed at any time and never depend on when they were read. Pure.
 */
import type { JobRecord } from "./job-record.js"

/** What a finished (or running) job measured; null where the record lacks the inputs. */
export interface JobMetrics {
  readonly tokensBefore: number | null
  readonly tokensAfter: number | null
  readonly modelContextWindowAfter: number | null
  readonly tokensReclaimed: number | null
  /** reclaimed / before. */
  readonly reclaimedFraction: number | null
  /** after / window. */
  readonly contextWindowUsedFraction: number | null
  /** Compaction request sent → compaction item completed. */
  readonly compactionDurationMs: number | null
  /** Compaction item completed → continuation turn accepted. */
  readonly continuationDelayMs: number | null
}

const finite = (n: number | null | undefined): number | null =>
  n === null || n === undefined || !Number.isFinite(n) ? null : n

const span = (from: number | null, to: number | null): number | null =>
  from === null || to === null ? null : Math.max(0, to - from)

/** Metrics of one job from its record. */
export const jobMetrics = (job: JobRecord): JobMetrics => {
  const before = finite(job.usageBefore?.totalTokens)
  const after = finite(job.usageAfter?.totalTokens)
  const window = finite(job.usageAfter?.modelContextWindow)
  const reclaimed = before === null || after === null ? null : before - after
  return {
    tokensBefore: before,
    tokensAfter: after,
    modelContextWindowAfter: window,
    tokensReclaimed: reclaimed,
    reclaimedFraction:
      reclaimed === null || before === null || before <= 0 ? null : reclaimed / before,
    contextWindowUsedFraction:
      after === null || window === null || window <= 0 ? null : after / window,
    compactionDurationMs: span(job.compactionRequestedAt, job.compactionCompletedAt),
    continuationDelayMs: span(job.compactionCompletedAt, job.continuationAcceptedAt),
  }
}

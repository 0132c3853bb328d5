/**
 * When the watcher next reads the quota, as a pure function of the jobs and the last read.
 *
 * - `quota_waiting`: aligned to the server's reset hint — at `resetsAt + margin`, but never sooner
 *   than `waitMinMs` nor later than `waitMaxMs` after the last read; without a future hint, every
 *   `waitUnknownMs`. The hint only schedules a read: only the read's `allowed: true` launches.
 * - `retry_waiting`: at `nextRetryAt` (the retry needs a fresh reading), then every `waitMinMs`.
 * - `monitoring` / `running`: every `monitorReadMs` (pressure bands and the block itself).
 * - parked and finished jobs: never.
 * Every delay is capped by `pollCapMs` (tests and impatient users). Pure.
 */
import type { JobRecord } from "./job-record.js"

/** Timing knobs of the watcher (milliseconds). */
export interface WatcherLimits {
  /** Continuations running at once, across jobs. */
  readonly maxConcurrentRuns: number
  /** Watchdog: a continuation running longer is stopped. */
  readonly maxRunMs: number
  /** Watchdog: a continuation whose output stops growing for this long is stopped. */
  readonly maxSilenceMs: number
  readonly monitorReadMs: number
  readonly waitMinMs: number
  readonly waitMaxMs: number
  readonly waitUnknownMs: number
  readonly resetMarginMs: number
  /** How often rollouts and runs are checked while a job is monitoring or running. */
  readonly tailMs: number
  /** Sleep when no job needs anything. */
  readonly idleMs: number
  /** Upper bound on any single sleep. */
  readonly pollCapMs: number
  /** TERM → KILL grace when stopping a continuation. */
  readonly stopGraceMs: number
  /** A `running` job whose process was never recorded is given up after this long. */
  readonly spawnGraceMs: number
  /** An undelivered checkpoint request is offered again at most this often (per job). */
  readonly checkpointRetryMs: number
}

/** Production defaults: 60 s while monitoring, 5 s–5 min reset-aligned while blocked. */
export const defaultWatcherLimits: WatcherLimits = {
  maxConcurrentRuns: 1,
  maxRunMs: 3 * 60 * 60 * 1000,
  maxSilenceMs: 30 * 60 * 1000,
  monitorReadMs: 60_000,
  waitMinMs: 5_000,
  waitMaxMs: 300_000,
  waitUnknownMs: 60_000,
  resetMarginMs: 2_000,
  tailMs: 5_000,
  idleMs: 60_000,
  pollCapMs: Number.POSITIVE_INFINITY,
  stopGraceMs: 3_000,
  spawnGraceMs: 30_000,
  checkpointRetryMs: 15_000,
}

/** A job as the cadence sees it; `resetsAt` in epoch ms. */
export type CadenceJob = Pick<JobRecord, "state" | "nextRetryAt"> & {
  readonly resetsAtMs: number | null
}

const clamp = (value: number, min: number, max: number) => Math.min(Math.max(value, min), max)

/** When one job wants the next read, given the last read `last`; null: it never does. */
export const jobReadDueAt = (
  job: CadenceJob,
  last: number,
  limits: WatcherLimits,
): number | null => {
  switch (job.state) {
    case "quota_waiting":
      return job.resetsAtMs !== null && job.resetsAtMs + limits.resetMarginMs > last
        ? clamp(
            job.resetsAtMs + limits.resetMarginMs,
            last + limits.waitMinMs,
            last + limits.waitMaxMs,
          )
        : last + limits.waitUnknownMs
    case "retry_waiting":
      return job.nextRetryAt !== null && job.nextRetryAt > last
        ? job.nextRetryAt
        : last + limits.waitMinMs
    case "monitoring":
    case "running":
      return last + limits.monitorReadMs
    case "draft":
    case "waiting_user":
    case "needs_attention":
    case "stopped":
    case "completed":
      return null
  }
}

/** When the next quota read is due (null: no job needs one); `lastReadAt` null means now. */
export const quotaReadDueAt = (
  jobs: ReadonlyArray<CadenceJob>,
  lastReadAt: number | null,
  now: number,
  limits: WatcherLimits,
): number | null => {
  const dues = jobs
    .map((job) => jobReadDueAt(job, lastReadAt ?? now, limits))
    .filter((due): due is number => due !== null)
  if (dues.length === 0) return null
  if (lastReadAt === null) return now
  return Math.min(Math.min(...dues), lastReadAt + limits.pollCapMs)
}

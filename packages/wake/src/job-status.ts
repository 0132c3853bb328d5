/**
 * The status of one job as users and agents see it (`baton wake status`, `wake_status`): state,
 * quota pressure and the server's reset hint, bounds, the current and last continuation, the
 * capsule's freshness and problems, the pending checkpoint request, and whether a watcher runs.
 * Continuations are labelled honestly: a new `codex exec` thread is `cli_continuation_only`, not
 * a wake of the original conversation. Never includes checkpoint or capsule text. Pure.
 */
import { CAPSULE_MAX_BYTES } from "./capsule.js"
import type { JobPaths } from "./job-paths.js"
import type { CheckpointRequest, DeliveryMode, JobRecord, LastRun } from "./job-record.js"
import type { MemoryStatus } from "./job-store.js"
import type { WatcherLockInfo } from "./watcher-lock.js"

/** How continuations of a job reach the model, honestly named. */
export type DeliveryLabel = "cli_continuation_only" | "job_thread_resume" | "same_thread_turn"

/** The label of a delivery mode. */
export const deliveryLabel = (mode: DeliveryMode): DeliveryLabel =>
  mode === "new_thread"
    ? "cli_continuation_only"
    : mode === "job_thread"
      ? "job_thread_resume"
      : "same_thread_turn"

/** One job's status report. */
export interface JobStatusReport {
  readonly jobId: string
  readonly state: JobRecord["state"]
  readonly cwd: string
  readonly originalThreadId: string | null
  readonly continuationThreadId: string | null
  readonly delivery: DeliveryMode
  readonly deliveryLabel: DeliveryLabel
  readonly model: string | null
  readonly reasoningEffort: string | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly armedAt: number | null
  readonly completedAt: number | null
  readonly generation: number
  readonly windows: number
  readonly retryCount: number
  readonly nextRetryAt: number | null
  readonly unknownUsageCount: number
  readonly quotaBlockedAt: number | null
  /** Server's reset hint (epoch ms): schedules checks, never authorises a launch. */
  readonly resetsAt: number | null
  /** No launch before this (epoch ms): a continuation itself hit the usage limit. */
  readonly cooldownUntil: number | null
  readonly pressure: JobRecord["pressure"]
  readonly usedPercent: number | null
  readonly run: JobRecord["run"]
  readonly lastRun: LastRun | null
  readonly pauseReason: string | null
  readonly lastError: string | null
  readonly bounds: JobRecord["bounds"]
  readonly memory: {
    readonly ready: boolean
    readonly capsuleBytes: number | null
    readonly capsuleMaxBytes: number
    readonly projections: number
    readonly projectedAt: number | null
    /** Likely secrets masked in the capsule (the checkpoint keeps them as written). */
    readonly maskedSecrets: number
    readonly checkpointNewerThanCapsule: boolean
    readonly capsuleModified: boolean
    readonly problems: ReadonlyArray<string>
  }
  readonly seal: JobRecord["seal"]
  readonly checkpointRequest: CheckpointRequest | null
  /** True when quota pressure reached `prepare` and the checkpoint has not changed since. */
  readonly checkpointRequested: boolean
  readonly paths: {
    readonly dir: string
    readonly state: string
    readonly checkpoint: string
    readonly capsule: string
    readonly runs: string
  }
  readonly watcher: {
    readonly running: boolean
    readonly pid: number | null
    readonly host: string | null
    readonly leaseExpiresAt: number | null
  }
}

/** Builds the report from the stored job, its memory status and the watcher lock. */
export const jobStatusReport = (
  memory: MemoryStatus,
  paths: JobPaths,
  watcher: WatcherLockInfo | null,
  now: number,
): JobStatusReport => {
  const job = memory.stored.job
  const delivery = job.delivery ?? "new_thread"
  const request = job.checkpointRequest ?? null
  return {
    jobId: job.jobId,
    state: job.state,
    cwd: job.cwd,
    originalThreadId: job.originalThreadId,
    continuationThreadId: job.continuationThreadId ?? null,
    delivery,
    deliveryLabel: deliveryLabel(delivery),
    model: job.model,
    reasoningEffort: job.reasoningEffort,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    armedAt: job.armedAt,
    completedAt: job.completedAt,
    generation: job.generation,
    windows: job.windows,
    retryCount: job.retryCount,
    nextRetryAt: job.nextRetryAt,
    unknownUsageCount: job.unknownUsageCount,
    quotaBlockedAt: job.quotaBlockedAt,
    resetsAt: job.resetsAt,
    cooldownUntil: job.cooldownUntil ?? null,
    pressure: job.pressure,
    usedPercent: job.usedPercent,
    run: job.run,
    lastRun: job.lastRun ?? null,
    pauseReason: job.pauseReason,
    lastError: job.lastError,
    bounds: job.bounds,
    memory: {
      // What the watcher will find: it re-projects from checkpoint.md on disk before a launch.
      ready: memory.problems.length === 0,
      capsuleBytes: memory.capsuleBytes,
      capsuleMaxBytes: CAPSULE_MAX_BYTES,
      projections: job.memory.projections,
      projectedAt: job.memory.projectedAt,
      maskedSecrets: job.memory.maskedSecrets ?? 0,
      checkpointNewerThanCapsule: memory.freshness.checkpointNewerThanCapsule,
      capsuleModified: memory.freshness.capsuleModified,
      problems: memory.problems,
    },
    seal: job.seal,
    checkpointRequest: request,
    checkpointRequested:
      request !== null &&
      (job.memory.projectedAt === null || job.memory.projectedAt <= request.requestedAt),
    paths: {
      dir: paths.dir,
      state: paths.state,
      checkpoint: paths.checkpoint,
      capsule: paths.capsule,
      runs: paths.runsDir,
    },
    watcher: {
      running: watcher !== null && watcher.leaseExpiresAt > now,
      pid: watcher?.pid ?? null,
      host: watcher?.host ?? null,
      leaseExpiresAt: watcher?.leaseExpiresAt ?? null,
    },
  }
}

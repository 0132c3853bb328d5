/**
 * Which job a command means when it names none: `$BATON_WAKE_JOB_ID` (set in every continuation),
 * else the open job bound to `$CODEX_THREAD_ID` — the original thread or one of its continuation
 * threads — most recently updated first. Never a guess by recency alone: without either variable
 * the caller must name the job.
 */
import * as Effect from "effect/Effect"
import type { WakeStoreError } from "./errors.js"
import { NoJobForThreadError } from "./errors.js"
import type { JobRecord } from "./job-record.js"
import type { JobStoreShape } from "./job-store.js"

/** Whether a job belongs to a Codex thread (original or continuation). */
export const jobBelongsToThread = (job: JobRecord, threadId: string): boolean =>
  job.originalThreadId === threadId ||
  job.continuationThreadId === threadId ||
  job.run?.threadId === threadId

/** The open (not completed) job of a thread, most recently updated; null when none. */
export const findJobForThread = (
  store: JobStoreShape,
  threadId: string,
): Effect.Effect<JobRecord | null, WakeStoreError> =>
  Effect.gen(function* () {
    let best: JobRecord | null = null
    for (const id of yield* store.list()) {
      const stored = yield* Effect.result(store.read(id))
      if (stored._tag === "Failure") continue
      const job = stored.success.job
      if (job.state === "completed" || !jobBelongsToThread(job, threadId)) continue
      if (best === null || job.updatedAt > best.updatedAt) best = job
    }
    return best
  })

/** Resolves the job a command means: the given id, `$BATON_WAKE_JOB_ID`, or the thread's job. */
export const resolveJobId = (
  store: JobStoreShape,
  given: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Effect.Effect<string | null, WakeStoreError | NoJobForThreadError> =>
  Effect.gen(function* () {
    if (given !== undefined && given !== "") return given
    const fromEnv = env["BATON_WAKE_JOB_ID"]
    if (fromEnv !== undefined && fromEnv !== "") return fromEnv
    const thread = env["CODEX_THREAD_ID"]
    if (thread === undefined || thread === "") return null
    const job = yield* findJobForThread(store, thread)
    if (job === null) return yield* new NoJobForThreadError({ threadId: thread })
    return job.jobId
  })

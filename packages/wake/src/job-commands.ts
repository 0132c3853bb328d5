/**
 * What a user or agent asks of a job (the CLI's `baton wake …` and the MCP tools share these):
 * create, write the checkpoint, refresh, arm (or re-arm a parked job), pause, stop, complete, and
 * read its status. Every change goes through the job store (lock + compare-and-set) and the
 * transition table; a refusal is a JobRefusedError naming the state. `stop` also ends a running
 * continuation's process group (pid and start time checked first). What `create` is given (thread
 * id, cwd, model, effort, objective, delivery, bounds, id suffix) is validated here, before
 * anything is stored, and a thread's
 * find-or-create runs under its create lock. Time from the Clock.
 */
import * as path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { isCodexThreadId } from "@baton/ipc-codex"
import { checkpointProblems, CHECKPOINT_MAX_BYTES } from "./checkpoint.js"
import type { ContinuationProcessesShape } from "./continuation-processes.js"
import { isValidModel, isValidReasoningEffort, REASONING_EFFORT_RULE } from "./continuation-plan.js"
import {
  CheckpointNotReadyError,
  InvalidJobSettingError,
  JobRefusedError,
  WakeIoError,
} from "./errors.js"
import type { WakeStoreError } from "./errors.js"
import type { JobEvent, Transition } from "./job-machine.js"
import { newJobId } from "./job-paths.js"
import { defaultJobBounds, deliveryModes } from "./job-record.js"
import type { DeliveryMode, JobBounds, JobRecord } from "./job-record.js"
import { jobStatusReport } from "./job-status.js"
import type { JobStatusReport } from "./job-status.js"
import { findJobForThread } from "./job-lookup.js"
import type { JobStoreShape, Leftovers, StoredJob } from "./job-store.js"
import { stopContinuation } from "./launcher.js"
import { readLiveWatcherLock, readWatcherLock } from "./watcher-lock.js"
import type { HolderProbe } from "./watcher-lock.js"
import type { WakeFileSystemShape } from "./wake-file-system.js"

/** What `create` takes. */
export interface CreateJobRequest {
  readonly objective: string | null
  /** The conversation that owns the task (`$CODEX_THREAD_ID`); provenance only. */
  readonly threadId: string | null
  /** The workspace the continuation runs in: an absolute path to a directory. */
  readonly cwd: string
  readonly model: string | null
  readonly reasoningEffort: string | null
  readonly delivery: DeliveryMode
  /** Whole numbers, 0 or more; an absent bound takes its default ({@link defaultJobBounds}). */
  readonly bounds: Partial<JobBounds>
  /** 8 hex digits for the id (random in production, e.g. `randomBytes(4).toString("hex")`). */
  readonly idSuffix: string
}

/** `create`'s answer: the job, and whether it already existed for that thread. */
export interface CreatedJob {
  readonly stored: StoredJob
  readonly alreadyExists: boolean
}

/**
 * Longest objective `create` takes, in UTF-8 bytes. The objective heads every capsule (≤ 8 KiB) and
 * every continuation prompt; a pasted document there (2 MB once made a checkpoint that could
 * never be armed) belongs in the checkpoint's sections.
 */
export const OBJECTIVE_MAX_BYTES = 2048

const byteLength = (text: string): number => Buffer.byteLength(text, "utf8")

const boundNames = Object.keys(defaultJobBounds) as ReadonlyArray<keyof JobBounds>

/** The bounds `create` stores: the given ones over the defaults (an absent bound is its default). */
const boundsOf = (given: Partial<JobBounds>): JobBounds => {
  const bounds: Record<string, number> = { ...defaultJobBounds }
  for (const name of boundNames) {
    const value = given[name]
    if (value !== undefined) bounds[name] = value
  }
  return bounds as unknown as JobBounds
}

/** A problem with the delivery, bounds or id suffix (checked without IO); else null. */
const settingProblem = (request: CreateJobRequest): InvalidJobSettingError | null => {
  const delivery: unknown = request.delivery
  if (typeof delivery !== "string" || !(deliveryModes as ReadonlyArray<string>).includes(delivery))
    return new InvalidJobSettingError({
      field: "delivery",
      value: String(delivery),
      rule: `one of ${deliveryModes.join(", ")}`,
    })
  const bounds: unknown = request.bounds
  if (typeof bounds !== "object" || bounds === null || Array.isArray(bounds))
    return new InvalidJobSettingError({
      field: "bounds",
      value: String(bounds),
      rule: `an object with any of ${boundNames.join(", ")} ({} for the defaults)`,
    })
  for (const [name, value] of Object.entries(bounds)) {
    if (!(boundNames as ReadonlyArray<string>).includes(name))
      return new InvalidJobSettingError({
        field: `bounds.${name}`,
        value: String(value),
        rule: `not a bound; the bounds are ${boundNames.join(", ")}`,
      })
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 0))
      return new InvalidJobSettingError({
        field: `bounds.${name}`,
        value: String(value),
        rule: `a whole number, 0 or more (default ${defaultJobBounds[name as keyof JobBounds]}); not NaN, Infinity, negative or fractional`,
      })
  }
  const suffix: unknown = request.idSuffix
  if (typeof suffix !== "string" || !/^[0-9a-f]{8}$/i.test(suffix))
    return new InvalidJobSettingError({
      field: "idSuffix",
      value: String(suffix),
      rule: 'exactly 8 hex digits (0-9, a-f), e.g. randomBytes(4).toString("hex")',
    })
  return null
}

/** Checks what `create` is given before anything is stored; the first problem, else null. */
const createRequestProblem = (
  fs: WakeFileSystemShape,
  request: CreateJobRequest,
): Effect.Effect<InvalidJobSettingError | WakeIoError | null, WakeIoError> =>
  Effect.gen(function* () {
    const setting = settingProblem(request)
    if (setting !== null) return setting
    if (request.objective !== null && /[\r\n]/.test(request.objective))
      return new InvalidJobSettingError({
        field: "objective",
        value: request.objective,
        rule: "one line (no line breaks), so it cannot add headings to checkpoint.md: put details in the checkpoint's sections",
      })
    if (request.objective !== null && byteLength(request.objective) > OBJECTIVE_MAX_BYTES)
      return new InvalidJobSettingError({
        field: "objective",
        value: request.objective.slice(0, 200),
        rule: `at most ${OBJECTIVE_MAX_BYTES} bytes (this one is ${byteLength(request.objective)}): state the goal in a sentence or two and put the details in the checkpoint's sections`,
      })
    if (request.threadId !== null && !isCodexThreadId(request.threadId))
      return new InvalidJobSettingError({
        field: "thread id",
        value: request.threadId,
        rule: "a Codex thread id, a UUID such as 019a22c2-1a7b-7611-a89d-7e51c258aa8d: pass $CODEX_THREAD_ID exactly, or no thread",
      })
    if (request.model !== null && !isValidModel(request.model))
      return new InvalidJobSettingError({
        field: "model",
        value: request.model,
        rule: "a letter or digit, then letters, digits, '.', '_', ':' or '-' (at most 128)",
      })
    if (request.reasoningEffort !== null && !isValidReasoningEffort(request.reasoningEffort))
      return new InvalidJobSettingError({
        field: "reasoning effort",
        value: request.reasoningEffort,
        rule: REASONING_EFFORT_RULE,
      })
    // The continuation runs later, from the watcher's directory: a relative path would point
    // elsewhere there, and resolving it here would read this process's cwd (hidden IO).
    if (typeof request.cwd !== "string" || !path.isAbsolute(request.cwd))
      return new InvalidJobSettingError({
        field: "cwd",
        value: String(request.cwd),
        rule: "an absolute path: the continuation runs later from the watcher's directory, so resolve a relative one first (e.g. path.resolve(process.cwd(), cwd))",
      })
    const isDirectory = yield* fs.isDirectory(request.cwd)
    if (isDirectory === null)
      return new WakeIoError({
        path: request.cwd,
        operation: "create (cwd)",
        code: "ENOENT",
        detail: "the working directory does not exist",
      })
    if (!isDirectory)
      return new InvalidJobSettingError({
        field: "cwd",
        value: request.cwd,
        rule: "the workspace directory the continuation runs in; this path is a file, not a directory: pass its directory",
      })
    return null
  })

/**
 * Creates a draft job, or returns the thread's open job. With a thread, "find, else create" runs
 * under the thread's create lock, so racing calls (other processes included) get one job.
 */
export const createJob = (
  store: JobStoreShape,
  fs: WakeFileSystemShape,
  request: CreateJobRequest,
): Effect.Effect<CreatedJob, WakeStoreError | InvalidJobSettingError> =>
  Effect.gen(function* () {
    const problem = yield* createRequestProblem(fs, request)
    if (problem !== null) return yield* problem
    const threadId = request.threadId === null ? null : request.threadId.toLowerCase()
    const createNew = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const stored = yield* store.create({
        jobId: newJobId(now, request.idSuffix),
        originalThreadId: threadId,
        cwd: request.cwd,
        model: request.model,
        reasoningEffort: request.reasoningEffort,
        limitId: null,
        bounds: boundsOf(request.bounds),
        objective: request.objective,
      })
      const withDelivery =
        request.delivery === "new_thread"
          ? stored
          : yield* store.modify(stored.job.jobId, (job) => ({
              ...job,
              delivery: request.delivery,
            }))
      return { stored: withDelivery, alreadyExists: false }
    })
    if (threadId === null) return yield* createNew
    const findOrCreate = Effect.gen(function* () {
      const existing = yield* findJobForThread(store, threadId)
      if (existing !== null)
        return { stored: yield* store.read(existing.jobId), alreadyExists: true }
      return yield* createNew
    })
    // A create takes tens of milliseconds; racing callers wait their turn (about 5 s at most).
    return yield* retryWhileBusy(store.withThreadLock(threadId, findOrCreate), 50)
  })

/**
 * Writes the checkpoint (≤ 64 KiB) and re-projects the capsule; returns the problems left. A
 * completed job is refused; an armed job's ready checkpoint is never replaced by one `arm` would
 * refuse (a draft may hold an unready one). The replaced version stays in `checkpoint.previous.md`.
 */
export const writeJobCheckpoint = (
  store: JobStoreShape,
  jobId: string,
  markdown: string,
): Effect.Effect<
  { readonly stored: StoredJob; readonly problems: ReadonlyArray<string> },
  WakeStoreError | JobRefusedError
> =>
  Effect.gen(function* () {
    const before = yield* store.read(jobId)
    if (before.job.state === "completed")
      return yield* new JobRefusedError({
        jobId,
        state: "completed",
        command: "checkpoint",
        reason: "completed jobs are immutable",
      })
    const bytes = Buffer.byteLength(markdown, "utf8")
    if (bytes > CHECKPOINT_MAX_BYTES)
      return yield* new CheckpointNotReadyError({
        path: store.paths(jobId).checkpoint,
        problems: [`checkpoint is ${bytes} bytes; the limit is ${CHECKPOINT_MAX_BYTES}`],
      })
    const problems = checkpointProblems(markdown)
    if (problems.length > 0 && before.job.armedAt !== null) {
      const current = yield* store.readCheckpoint(jobId)
      if (current !== null && checkpointProblems(current).length === 0)
        return yield* new CheckpointNotReadyError({
          path: store.paths(jobId).checkpoint,
          problems: [
            ...problems,
            "the job is armed, so its ready checkpoint was kept unchanged; write a checkpoint with Objective and Next actions filled",
          ],
        })
    }
    yield* retryWhileBusy(store.writeCheckpoint(jobId, markdown))
    const projection = yield* retryWhileBusy(store.refreshCapsule(jobId))
    return { stored: projection.stored, problems }
  })

/**
 * Retries an operation while another writer holds the job (lock or revision): a watcher tick
 * holds it for milliseconds, so a user command waits up to about two seconds instead of failing.
 */
export const retryWhileBusy = <A, E extends { readonly _tag: string }, R>(
  operation: Effect.Effect<A, E, R>,
  attempts = 20,
): Effect.Effect<A, E, R> =>
  Effect.catchIf(
    operation,
    (error) => attempts > 1 && (error._tag === "JobLockHeld" || error._tag === "JobConflict"),
    () => Effect.andThen(Effect.sleep(100), retryWhileBusy(operation, attempts - 1)),
  )

const refuseOrReturn = (
  jobId: string,
  command: string,
  result: { readonly stored: StoredJob; readonly transition: Transition },
): Effect.Effect<
  { readonly stored: StoredJob; readonly transition: Transition },
  JobRefusedError
> =>
  result.transition.refusal === null
    ? Effect.succeed(result)
    : Effect.fail(
        new JobRefusedError({
          jobId,
          state: result.stored.job.state,
          command,
          reason: result.transition.refusal,
        }),
      )

const userEvent = (
  store: JobStoreShape,
  jobId: string,
  command: string,
  event: (at: number) => JobEvent,
) =>
  Effect.gen(function* () {
    // A missing job is JobNotFound, not a failed lock in a directory that does not exist.
    yield* store.read(jobId)
    const applied = yield* retryWhileBusy(
      Effect.flatMap(Clock.currentTimeMillis, (at) => store.applyEvent(jobId, event(at))),
    )
    return yield* refuseOrReturn(jobId, command, applied)
  })

/** Arms a draft job (checkpoint must be ready), or re-arms a parked one (→ monitoring). */
export const armJob = (
  store: JobStoreShape,
  jobId: string,
): Effect.Effect<
  { readonly stored: StoredJob; readonly transition: Transition },
  WakeStoreError | JobRefusedError
> =>
  Effect.gen(function* () {
    yield* store.read(jobId)
    const projection = yield* retryWhileBusy(store.refreshCapsule(jobId))
    const job = projection.stored.job
    if (job.state === "draft" || job.armedAt === null) {
      const checkpoint = (yield* store.readCheckpoint(jobId)) ?? ""
      const problems = checkpointProblems(checkpoint)
      if (problems.length > 0)
        return yield* new CheckpointNotReadyError({
          path: store.paths(jobId).checkpoint,
          problems,
        })
    }
    if (job.state === "draft")
      return yield* userEvent(store, jobId, "arm", (at) => ({
        _tag: "Armed",
        at,
        capsuleReady: job.memory.ready,
      }))
    return yield* userEvent(store, jobId, "arm", (at) => ({ _tag: "ResumeRequested", at }))
  })

/** The agent needs the user: → waiting_user with the reason. */
export const pauseJob = (store: JobStoreShape, jobId: string, reason: string) =>
  Effect.andThen(Effect.ignore(retryWhileBusy(store.refreshCapsule(jobId))), () =>
    userEvent(store, jobId, "pause", (at) => ({ _tag: "PauseRequested", at, reason })),
  )

/** The objective is done: → completed (final). */
export const completeJob = (store: JobStoreShape, jobId: string) =>
  Effect.andThen(Effect.ignore(retryWhileBusy(store.refreshCapsule(jobId))), () =>
    userEvent(store, jobId, "complete", (at) => ({ _tag: "CompleteSignalled", at })),
  )

/** Disables automation (→ stopped) and ends a running continuation's process group. */
export const stopJob = (
  store: JobStoreShape,
  processes: ContinuationProcessesShape,
  jobId: string,
  reason: string,
  graceMs = 3_000,
): Effect.Effect<
  {
    readonly stored: StoredJob
    readonly transition: Transition
    /** A continuation was recorded as running and is gone when the stop returns. */
    readonly terminated: boolean
  },
  WakeStoreError | JobRefusedError
> =>
  Effect.gen(function* () {
    const before = yield* store.read(jobId)
    const result = yield* userEvent(store, jobId, "stop", (at) => ({
      _tag: "StopRequested",
      at,
      reason,
    }))
    let terminated = false
    for (const effect of result.transition.effects)
      if (effect._tag === "TerminateRun") {
        const run = before.job.run
        if (run !== null && run.generation === effect.generation && run.pid !== null)
          terminated = yield* stopContinuation(processes, run.pid, run.startTicks ?? null, graceMs)
      }
    return { ...result, terminated }
  })

/**
 * The status report of one job. With `liveness` (this host and a pid probe) a watcher whose
 * process is gone reads as not running at once, as the lock takeover sees it.
 */
export const jobStatus = (
  store: JobStoreShape,
  fs: WakeFileSystemShape,
  jobId: string,
  liveness?: { readonly host: string; readonly probe: HolderProbe },
): Effect.Effect<JobStatusReport, WakeStoreError> =>
  Effect.gen(function* () {
    const memory = yield* store.memoryStatus(jobId)
    const watcher =
      liveness === undefined
        ? yield* readWatcherLock(fs, store.wakeDir)
        : yield* readLiveWatcherLock(fs, store.wakeDir, liveness.host, liveness.probe)
    const now = yield* Clock.currentTimeMillis
    return jobStatusReport(memory, store.paths(jobId), watcher, now)
  })

/** Every job's short line: id, state, pressure, generation, objective head. */
export interface JobListEntry {
  readonly jobId: string
  readonly state: JobRecord["state"]
  readonly pressure: JobRecord["pressure"]
  readonly generation: number
  readonly updatedAt: number
  readonly originalThreadId: string | null
  readonly cwd: string
}

/**
 * Lists every readable job; corrupt ones are reported, not hidden, and so is what a killed or
 * failed operation left behind (job directories without `state.json`, temporary files).
 */
export const listJobs = (
  store: JobStoreShape,
): Effect.Effect<
  {
    readonly jobs: ReadonlyArray<JobListEntry>
    readonly unreadable: ReadonlyArray<{ readonly jobId: string; readonly problem: string }>
  } & Leftovers,
  WakeStoreError
> =>
  Effect.gen(function* () {
    const jobs: Array<JobListEntry> = []
    const unreadable: Array<{ jobId: string; problem: string }> = []
    for (const id of yield* store.list()) {
      const stored = yield* Effect.result(store.read(id))
      if (stored._tag === "Failure") {
        unreadable.push({ jobId: id, problem: stored.failure.message })
        continue
      }
      const job = stored.success.job
      jobs.push({
        jobId: job.jobId,
        state: job.state,
        pressure: job.pressure,
        generation: job.generation,
        updatedAt: job.updatedAt,
        originalThreadId: job.originalThreadId,
        cwd: job.cwd,
      })
    }
    return { jobs, unreadable, ...(yield* store.leftovers()) }
  })

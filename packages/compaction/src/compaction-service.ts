/**
 * The operations behind `schedule_compaction`, `compaction_status` and `cancel_compaction` (and
 * the `baton compact` commands): schedule a job and launch its worker, report a thread's jobs,
 * cancel one, and recover a thread whose worker died.
 *
 * Guarantees:
 * - one unfinished job per thread: scheduling again returns the existing job
 *   (`alreadyScheduled`), also when two schedulers race (the loser reads the winner's job);
 * - a handoff is validated and bound (thread + job, SHA-256) before anything is written, and
 *   stored once; an invalid handoff writes nothing;
 * - a dead worker is noticed by the next status, schedule or cancel: its stale lock is moved
 *   aside (logged) and the job gets the machine's `WorkerLost` event — the transition table
 *   decides the ending (nothing sent → failed; a request in flight → outcome_may_be_unknown;
 *   compaction done → completed with `resumeSkipped: worker_lost`). Nothing is ever resent and a
 *   job is never restarted;
 * - a worker that was launched but has not taken the lock yet (spawn to lock: well under a second)
 *   is recognised by its launch record (pid and process start time), so it is not declared dead;
 * - no text of a handoff, user message or turn is returned or logged here, only ids, states,
 *   digests and numbers.
 * Processes (spawning the worker), ids and time arrive as services.
 */
import type { Handoff } from "@baton/handoff"
import { bindHandoff, canonicalJson, validateHandoff, verifyHandoffRecord } from "@baton/handoff"
import type { HandoffValidationError } from "@baton/handoff"
import { InvalidThreadIdError, isCodexThreadId } from "@baton/ipc-codex"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type {
  JobLockHeldError,
  JournalIoError,
  ThreadBusyError,
  WorkerLaunchError,
} from "./errors.js"
import {
  HandoffNotAttachedError,
  InvalidJobSettingsError,
  JournalCorruptError,
  ScheduleFailedError,
} from "./errors.js"
import type { JournalError } from "./errors.js"
import { transition } from "./job-machine.js"
import type { JobEvent } from "./job-machine.js"
import type { JobRecord, JobSettings } from "./job-record.js"
import { defaultJobSettings, isTerminalStatus, JobSettingsSchema } from "./job-record.js"
import { acquireJobLock, judgeLock, ProcessProbe, releaseJobLock } from "./job-lock.js"
import { JournalFileSystem } from "./journal-file-system.js"
import { JOURNAL_FILE_MODE, Journal, journalPaths } from "./journal.js"
import type { HistoryEntry, StoredJob } from "./journal.js"
import { jobMetrics } from "./metrics.js"
import type { JobMetrics } from "./metrics.js"
import { withThreadAdminLock } from "./thread-admin-lock.js"

/** Starts the worker process for a job; returns its pid. */
export interface WorkerLauncherShape {
  readonly launch: (job: {
    readonly threadId: string
    readonly jobId: string
    readonly dir: string
  }) => Effect.Effect<{ readonly pid: number }, WorkerLaunchError>
}

/** The worker-launching service. */
export class WorkerLauncher extends Context.Service<WorkerLauncher, WorkerLauncherShape>()(
  "@baton/compaction/WorkerLauncher",
) {}

/** Makes new job ids (safe file-name components, unique per thread). */
export interface JobIdsShape {
  readonly next: Effect.Effect<string>
}

/** The job-id service. */
export class JobIds extends Context.Service<JobIds, JobIdsShape>()("@baton/compaction/JobIds") {}

/** A job as reported to users and agents: states, reasons, metrics; never text. */
export interface JobView {
  readonly jobId: string
  readonly threadId: string
  readonly jobNumber: number
  readonly status: JobRecord["status"]
  readonly terminal: boolean
  readonly createdAt: string
  readonly updatedAt: string
  readonly endedAt: string | null
  readonly reason: JobRecord["reason"]
  readonly detail: string | null
  readonly resume: boolean
  readonly handoffDigest: string | null
  readonly outcomeMayBeUnknown: boolean
  readonly resumeSkipped: JobRecord["resumeSkipped"]
  readonly resumeSkipReason: JobRecord["resumeSkipReason"]
  readonly transport: JobRecord["transport"]
  readonly continuationTurnId: string | null
  readonly continuationOutcome: JobRecord["continuationOutcome"]
  readonly settings: JobSettings
  readonly metrics: JobMetrics
}

/** What is known about the job's worker process. */
export interface WorkerView {
  /** running: holds a live lock; starting: launched, not locked yet; none: no live worker. */
  readonly state: "running" | "starting" | "none"
  readonly pid: number | null
  readonly leaseExpiresAt: string | null
}

/** A recovery this call performed (a dead worker's job was ended by the table). */
export interface Recovery {
  readonly jobId: string
  readonly from: JobRecord["status"]
  readonly to: JobRecord["status"]
  readonly detail: string
}

/** `compaction_status`: the thread's current job, its worker, and the metrics of the last 20. */
export interface CompactionStatus {
  readonly threadId: string
  readonly jobsDir: string
  readonly current: JobView | null
  readonly cancelRequested: boolean
  readonly worker: WorkerView
  readonly recovered: Recovery | null
  readonly history: ReadonlyArray<HistoryEntry>
  readonly tornTempFiles: ReadonlyArray<string>
  /**
   * Null normally. Set when the job looked abandoned (no live worker) but this call could not
   * take the thread's admin lock to end it (a full or read-only disk, or another Baton process
   * kept the lock): `current` is then the stored job as is, not recovered, and this says why.
   */
  readonly recoverySkipped: string | null
}

/** `schedule_compaction`'s answer. */
export interface ScheduleReport {
  readonly alreadyScheduled: boolean
  readonly job: JobView
  readonly handoffPath: string | null
  readonly worker: WorkerView
  readonly recovered: Recovery | null
}

/** Why a cancel did nothing although the job has not ended. */
export type CancelRefusal =
  /** The continuation request was sent: it cannot be recalled, and what it does is up to Codex. */
  | "continuation_already_sent"
  /** The continuation turn is running in Codex: only Codex can interrupt it. */
  | "continuation_already_running"

/** `cancel_compaction`'s answer. */
export interface CancelReport {
  readonly job: JobView
  /**
   * True when the cancel marker was written and the job will stand down. False when the job had
   * already ended (`alreadyEnded`), or when cancelling cannot stop what runs now (`refusal`).
   */
  readonly cancelRequested: boolean
  readonly alreadyEnded: boolean
  readonly recovered: Recovery | null
  /** Set when the job is unfinished but a cancel cannot stop it; null otherwise. */
  readonly refusal: CancelRefusal | null
  /** What happened and what to do, in words (always set). */
  readonly message: string
}

/** Everything the service needs. */
export type CompactionServices = Journal | JournalFileSystem | ProcessProbe

/** What scheduling can fail with. */
export type ScheduleError =
  | InvalidThreadIdError
  | InvalidJobSettingsError
  | HandoffValidationError
  | JournalError
  | JobLockHeldError
  | ThreadBusyError
  | WorkerLaunchError
  | ScheduleFailedError
  | HandoffNotAttachedError

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/** The user-facing view of a job record. */
export const jobView = (job: JobRecord): JobView => ({
  jobId: job.jobId,
  threadId: job.threadId,
  jobNumber: job.jobNumber,
  status: job.status,
  terminal: isTerminalStatus(job.status),
  createdAt: new Date(job.createdAt).toISOString(),
  updatedAt: new Date(job.updatedAt).toISOString(),
  endedAt: iso(job.endedAt),
  reason: job.reason,
  detail: job.detail,
  resume: job.resume,
  handoffDigest: job.handoffDigest,
  outcomeMayBeUnknown: job.outcomeMayBeUnknown,
  resumeSkipped: job.resumeSkipped,
  resumeSkipReason: job.resumeSkipReason,
  transport: job.transport,
  continuationTurnId: job.continuationTurnId,
  continuationOutcome: job.continuationOutcome,
  settings: job.settings,
  metrics: jobMetrics(job),
})

/** A valid thread id, normalised to lowercase: a UUID's case never makes a second thread. */
const checkThreadId = (threadId: string): Effect.Effect<string, InvalidThreadIdError> =>
  isCodexThreadId(threadId)
    ? Effect.succeed(threadId.toLowerCase())
    : Effect.fail(new InvalidThreadIdError({ value: threadId }))

const LaunchRecordSchema = Schema.Struct({
  pid: Schema.Number,
  processStartMs: Schema.NullOr(Schema.Number),
  at: Schema.Number,
})

/** How long a scheduled job without a launch record counts as "starting" (scheduler mid-launch). */
const LAUNCH_GRACE_MS = 10_000

/**
 * Applies one event outside a worker (recovery, launch failure, cancelling an orphaned scheduled
 * job): runs the transition's log and persist effects. Only `WorkerLost`, and `CancelRequested`
 * on a scheduled job, come here: neither sends or starts timers.
 */
const applyOutsideWorker = (
  stored: StoredJob,
  event: JobEvent,
): Effect.Effect<StoredJob, JournalError, Journal> =>
  Effect.gen(function* () {
    const journal = yield* Journal
    const step = transition(stored.job, event)
    if (step.job === stored.job) return stored
    let saved = stored
    for (const effect of step.effects) {
      if (effect._tag === "AppendLog")
        yield* journal.appendEvent(stored.job.threadId, stored.job.jobId, {
          kind: "transition",
          ...effect.entry,
        })
      else if (effect._tag === "PersistJob")
        saved = yield* journal.saveJob(step.job, saved.revision)
    }
    return saved
  })

const readLaunch = (file: string) =>
  Effect.gen(function* () {
    const fs = yield* JournalFileSystem
    const text = yield* fs.readText(file)
    if (text === null) return null
    const decoded = Result.try(() => Schema.decodeUnknownSync(LaunchRecordSchema)(JSON.parse(text)))
    return Result.isSuccess(decoded) ? decoded.success : null
  })

const readLock = (file: string) =>
  Effect.gen(function* () {
    const fs = yield* JournalFileSystem
    const text = yield* fs.readText(file)
    if (text === null) return null
    const parsed = Result.try(() => JSON.parse(text) as unknown)
    if (Result.isFailure(parsed))
      return yield* new JournalCorruptError({ path: file, problem: "lock file is not JSON" })
    const json = parsed.success
    const valid =
      typeof json === "object" &&
      json !== null &&
      "pid" in json &&
      typeof json.pid === "number" &&
      "jobId" in json &&
      typeof json.jobId === "string" &&
      "leaseExpiresAt" in json &&
      typeof json.leaseExpiresAt === "number" &&
      "processStartMs" in json &&
      (json.processStartMs === null || typeof json.processStartMs === "number")
    if (!valid)
      return yield* new JournalCorruptError({
        path: file,
        problem: "lock file does not match its schema",
      })
    return json as {
      readonly pid: number
      readonly jobId: string
      readonly leaseExpiresAt: number
      readonly processStartMs: number | null
    }
  })

const noWorker: WorkerView = { state: "none", pid: null, leaseExpiresAt: null }

/**
 * Looks at the thread's current job and its worker; if the job is unfinished and no live worker
 * holds or is about to take its lock, ends it with `WorkerLost` under the lock (the table decides
 * how). Returns what it found and what it did.
 */
export const recoverThread = (
  givenThreadId: string,
): Effect.Effect<
  ThreadLook,
  JournalError | JobLockHeldError | ThreadBusyError | InvalidThreadIdError,
  CompactionServices
> =>
  Effect.gen(function* () {
    const threadId = yield* checkThreadId(givenThreadId)
    const journal = yield* Journal
    // Look first without the admin lock; only a recovery takes it (and then looks again, since
    // a concurrent call may have recovered the thread meanwhile).
    const look = yield* lookAndRecover(threadId, false)
    if (look !== "needs_recovery") return look
    const locked = yield* withThreadAdminLock(journal.dir, threadId, lookAndRecover(threadId, true))
    return locked === "needs_recovery" ? yield* Effect.die("unreachable") : locked
  })

/** What `recoverThread` found and did. */
export interface ThreadLook {
  readonly current: StoredJob | null
  readonly worker: WorkerView
  readonly recovered: Recovery | null
}

/**
 * The look at the thread's current job and worker; with `recover`, ends a dead worker's job (the
 * caller holds the admin lock), else answers `needs_recovery`.
 */
const lookAndRecover = (
  threadId: string,
  recover: boolean,
): Effect.Effect<
  ThreadLook | "needs_recovery",
  JournalError | JobLockHeldError,
  CompactionServices
> =>
  Effect.gen(function* () {
    const journal = yield* Journal
    const probe = yield* ProcessProbe
    const current = yield* journal.currentJob(threadId)
    if (current === null || isTerminalStatus(current.job.status))
      return { current, worker: noWorker, recovered: null }
    const paths = journalPaths(journal.dir, threadId)
    const now = yield* Clock.currentTimeMillis
    const lock = yield* readLock(paths.lock)
    let lostDetail: string
    if (lock !== null) {
      const stale = yield* judgeLock(
        { schemaVersion: 1, threadId, acquiredAt: 0, heartbeatAt: 0, ...lock },
        now,
      )
      if (stale === null)
        return {
          current,
          worker: {
            state: "running" as const,
            pid: lock.pid,
            leaseExpiresAt: new Date(lock.leaseExpiresAt).toISOString(),
          },
          recovered: null,
        }
      lostDetail =
        stale === "pid_gone"
          ? `worker pid ${lock.pid} is gone`
          : stale === "pid_reused"
            ? `worker pid ${lock.pid} now belongs to another process`
            : `worker pid ${lock.pid} stopped renewing its lease`
    } else {
      const launch = yield* readLaunch(paths.launch(current.job.jobId))
      if (launch !== null && current.job.status === "scheduled") {
        const alive = yield* probe.isAlive(launch.pid)
        const start = alive ? yield* probe.startTimeMs(launch.pid) : null
        const same =
          alive &&
          (launch.processStartMs === null ||
            start === null ||
            Math.abs(start - launch.processStartMs) <= 20)
        if (same)
          return {
            current,
            worker: { state: "starting" as const, pid: launch.pid, leaseExpiresAt: null },
            recovered: null,
          }
        lostDetail = `worker pid ${launch.pid} exited before taking the lock`
      } else if (
        launch === null &&
        current.job.status === "scheduled" &&
        now - current.job.createdAt < LAUNCH_GRACE_MS
      ) {
        return {
          current,
          worker: { state: "starting" as const, pid: null, leaseExpiresAt: null },
          recovered: null,
        }
      } else lostDetail = launch === null ? "no worker was launched" : "the worker holds no lock"
    }
    if (!recover) return "needs_recovery" as const
    // Take the lock (moving a stale one aside, logged), end the job by the table, release. A
    // worker that took it meanwhile is alive: report the job as it stands.
    const taken = yield* Effect.result(
      acquireJobLock({ dir: journal.dir, threadId, jobId: current.job.jobId, leaseMs: 30_000 }),
    )
    if (Result.isFailure(taken)) {
      const error = taken.failure
      if (error._tag !== "JobLockHeld") return yield* error
      return {
        current: yield* journal.readJob(threadId, current.job.jobId),
        worker: {
          state: "running" as const,
          pid: error.holderPid,
          leaseExpiresAt: new Date(error.leaseExpiresAt).toISOString(),
        },
        recovered: null,
      }
    }
    const ours = taken.success.lock
    const result = yield* Effect.gen(function* () {
      const fresh = yield* journal.readJob(threadId, current.job.jobId)
      if (isTerminalStatus(fresh.job.status)) return { stored: fresh, recovered: null }
      const at = yield* Clock.currentTimeMillis
      yield* journal.appendEvent(threadId, current.job.jobId, {
        at,
        kind: "note",
        detail: `recovery by pid ${probe.selfPid}: ${lostDetail}`,
      })
      const ended = yield* applyOutsideWorker(fresh, {
        _tag: "WorkerLost",
        at,
        detail: lostDetail,
      })
      return {
        stored: ended,
        recovered: {
          jobId: ended.job.jobId,
          from: fresh.job.status,
          to: ended.job.status,
          detail: ended.job.detail ?? lostDetail,
        },
      }
    }).pipe(Effect.ensuring(Effect.ignore(releaseJobLock(journal.dir, ours))))
    return { current: result.stored, worker: noWorker, recovered: result.recovered }
  })

const budgetKeys = [
  "idleDebounceMs",
  "idleWaitMs",
  "compactionMs",
  "continuationMs",
  "continuationTurnMs",
] as const
const settingKeys: ReadonlyArray<string> = [...budgetKeys, "headroomThreshold"]

/** A value as the user wrote it, short (NaN, Infinity and -5 as such, strings quoted). */
const shown = (value: unknown): string => {
  if (typeof value === "number" || typeof value === "bigint") return String(value)
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 80)
  } catch {
    return typeof value
  }
}

const badSetting = (key: string, detail: string) =>
  Effect.fail(new InvalidJobSettingsError({ key, detail }))

/**
 * The job's settings: the defaults, overridden by what was given. Every key must be one of the
 * settings (a typo is refused, not ignored); budgets are whole milliseconds, 0 or more; the
 * headroom threshold is a number from 0 to 1. A key given as `undefined` counts as not given.
 */
const decodeSettings = (settings: unknown): Effect.Effect<JobSettings, InvalidJobSettingsError> =>
  Effect.gen(function* () {
    if (settings === undefined || settings === null) return defaultJobSettings
    if (typeof settings !== "object" || Array.isArray(settings))
      return yield* Effect.fail(
        new InvalidJobSettingsError({
          detail: `settings must be an object with any of ${settingKeys.join(", ")}; got ${shown(settings)}`,
        }),
      )
    const given: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(settings)) {
      if (!settingKeys.includes(key)) {
        const near = settingKeys.find((k) => k.toLowerCase() === key.toLowerCase())
        return yield* badSetting(
          key,
          `unknown setting ${JSON.stringify(key.slice(0, 80))}${near === undefined ? "" : ` (did you mean ${near}?)`}: the settings are ${settingKeys.join(", ")}`,
        )
      }
      if (value === undefined) continue
      if (key === "headroomThreshold") {
        if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1)
          return yield* badSetting(
            key,
            `headroomThreshold must be a number from 0 to 1 (the highest fraction of the context window in use that still allows the continuation), got ${shown(value)}`,
          )
      } else if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
        return yield* badSetting(
          key,
          `${key} must be a whole number of milliseconds, 0 or more, got ${shown(value)}`,
        )
      given[key] = value
    }
    const decoded = Schema.decodeUnknownResult(JobSettingsSchema)({
      ...defaultJobSettings,
      ...given,
    })
    return Result.isSuccess(decoded)
      ? decoded.success
      : yield* Effect.fail(
          new InvalidJobSettingsError({ detail: decoded.failure.message.slice(0, 300) }),
        )
  })

/** `awaitWorkerMs`: whole milliseconds, 0 or more; default 20 s. */
const decodeAwaitWorkerMs = (value: unknown): Effect.Effect<number, InvalidJobSettingsError> =>
  value === undefined
    ? Effect.succeed(20_000)
    : typeof value === "number" && Number.isSafeInteger(value) && value >= 0
      ? Effect.succeed(value)
      : badSetting(
          "awaitWorkerMs",
          `awaitWorkerMs must be a whole number of milliseconds, 0 or more (0 returns right after the launch), got ${shown(value)}`,
        )

/** Inputs of `scheduleCompaction`. */
export interface ScheduleCompactionInput {
  readonly threadId: string
  /** The agent's handoff (parsed JSON), or null to compact without one (never resumes). */
  readonly handoff: unknown
  readonly settings?: Partial<JobSettings>
  /**
   * How long to wait for the worker to take its first look at the thread (the job leaves
   * `scheduled`) before returning; default 20 s, 0 returns right after the launch. Waiting closes
   * the window in which new user input could become the worker's baseline: the agent is still in
   * its turn while this call runs. A worker that fails at once (nothing can reach the thread) is
   * reported in the answer instead of later.
   */
  readonly awaitWorkerMs?: number
}

/**
 * A retry with the handoff the unfinished job already carries is the same schedule; any other
 * handoff would be silently dropped (the job's handoff is bound once), so it is refused.
 */
const checkSameHandoff = (existing: StoredJob, handoff: Handoff) =>
  Effect.gen(function* () {
    const { job } = existing
    const conflict = (attached: "none" | "another") =>
      new HandoffNotAttachedError({
        threadId: job.threadId,
        jobId: job.jobId,
        jobNumber: job.jobNumber,
        status: job.status,
        attached,
      })
    if (job.handoffDigest === null) return yield* conflict("none")
    const text = yield* (yield* Journal).readHandoff(job.threadId, job.jobId)
    // The stored record as the worker will read it (digest, thread and job checked): one that
    // does not verify can never be carried, so it is not the caller's handoff either.
    const stored = yield* Effect.option(
      verifyHandoffRecord({
        text,
        expectedDigest: job.handoffDigest,
        threadId: job.threadId,
        jobId: job.jobId,
        forContinuation: false,
      }),
    )
    if (Option.isNone(stored) || canonicalJson(stored.value.handoff) !== canonicalJson(handoff))
      return yield* conflict("another")
  })

/**
 * Schedules compaction of a thread and launches its worker; returns once the worker took its first
 * look. An unfinished job is returned as is (`alreadyScheduled`, no second worker). A job its
 * worker ended as failed meanwhile (nothing sent: the thread could not be reached) is
 * ScheduleFailedError, with the job's reason and detail.
 */
export const scheduleCompaction = (
  input: ScheduleCompactionInput,
): Effect.Effect<ScheduleReport, ScheduleError, CompactionServices | WorkerLauncher | JobIds> =>
  Effect.gen(function* () {
    const threadId = yield* checkThreadId(input.threadId)
    const journal = yield* Journal
    const fs = yield* JournalFileSystem
    // A schedule that fails before it wrote anything (a full or read-only disk refusing the admin
    // lock) leaves no empty thread directory behind it: one it created is removed if still empty.
    const threadDir = journalPaths(journal.dir, threadId).threadDir
    const existed = yield* Effect.orElseSucceed(fs.mode(threadDir), () => 0)
    return yield* scheduleOnce(input, threadId).pipe(
      Effect.onError(() =>
        existed === null ? Effect.ignore(fs.removeEmptyDir(threadDir)) : Effect.void,
      ),
    )
  })

const scheduleOnce = (
  input: ScheduleCompactionInput,
  threadId: string,
): Effect.Effect<ScheduleReport, ScheduleError, CompactionServices | WorkerLauncher | JobIds> =>
  Effect.gen(function* () {
    const settings = yield* decodeSettings(input.settings)
    const awaitWorkerMs = yield* decodeAwaitWorkerMs(input.awaitWorkerMs)
    const handoff: Handoff | null =
      input.handoff === null || input.handoff === undefined
        ? null
        : yield* validateHandoff(input.handoff)
    const journal = yield* Journal
    const fs = yield* JournalFileSystem
    const probe = yield* ProcessProbe
    const paths = journalPaths(journal.dir, threadId)
    // Under the thread's admin lock (in-process and cross-process): look (recovering a dead
    // worker's job), then create the job only if none is unfinished. Concurrent schedulers queue
    // here, so exactly one creates the job and the others return it (`alreadyScheduled`).
    const decided = yield* withThreadAdminLock(
      journal.dir,
      threadId,
      Effect.gen(function* () {
        const before = yield* lookAndRecover(threadId, true)
        if (before === "needs_recovery") return yield* Effect.die("unreachable")
        if (before.current !== null && !isTerminalStatus(before.current.job.status)) {
          if (handoff !== null) yield* checkSameHandoff(before.current, handoff)
          return { _tag: "Existing" as const, before, stored: before.current }
        }
        const jobId = yield* (yield* JobIds).next
        const now = yield* Clock.currentTimeMillis
        const bound =
          handoff === null
            ? null
            : yield* bindHandoff({
                threadId,
                jobId,
                handoff,
                createdAt: new Date(now).toISOString(),
              })
        const scheduled = yield* journal.schedule({
          job: {
            jobId,
            threadId,
            userFingerprint: "",
            resume: handoff?.resume === true,
            handoffDigest: bound?.digest ?? null,
            settings,
          },
          handoff: bound,
        })
        if (scheduled.alreadyScheduled && handoff !== null)
          yield* checkSameHandoff(scheduled.stored, handoff)
        return scheduled.alreadyScheduled
          ? { _tag: "Existing" as const, before, stored: scheduled.stored }
          : { _tag: "Created" as const, before, scheduled, jobId, bound }
      }),
    )
    const before = decided.before
    const existingView = (stored: StoredJob, worker: WorkerView): ScheduleReport => ({
      alreadyScheduled: true,
      job: jobView(stored.job),
      handoffPath: stored.job.handoffDigest === null ? null : paths.handoff(stored.job.jobId),
      worker,
      recovered: before.recovered,
    })
    if (decided._tag === "Existing")
      return existingView(
        decided.stored,
        decided.stored === before.current
          ? before.worker
          : { state: "starting", pid: null, leaseExpiresAt: null },
      )
    const { scheduled, jobId, bound } = decided

    const launched = yield* Effect.result(
      (yield* WorkerLauncher).launch({ threadId, jobId, dir: journal.dir }),
    )
    if (Result.isFailure(launched)) {
      const at = yield* Clock.currentTimeMillis
      yield* applyOutsideWorker(scheduled.stored, {
        _tag: "WorkerLost",
        at,
        detail: `the worker could not be started: ${launched.failure.detail}`,
      })
      return yield* launched.failure
    }
    const pid = launched.success.pid
    yield* fs.writeAtomic(
      paths.launch(jobId),
      `${JSON.stringify({ pid, processStartMs: yield* probe.startTimeMs(pid), at: yield* Clock.currentTimeMillis })}\n`,
      JOURNAL_FILE_MODE,
    )
    yield* journal.appendEvent(threadId, jobId, {
      at: yield* Clock.currentTimeMillis,
      kind: "note",
      detail: `worker launched, pid ${pid}`,
    })
    const launchedAt = yield* Clock.currentTimeMillis
    const deadline = launchedAt + awaitWorkerMs
    let latest = scheduled.stored
    while (latest.job.status === "scheduled" && (yield* Clock.currentTimeMillis) < deadline) {
      if (!(yield* probe.isAlive(pid))) break
      yield* Effect.sleep(25)
      latest = yield* journal.readJob(threadId, jobId)
    }
    // A worker that ended the job and exited is seen here, not left "scheduled".
    latest = yield* journal.readJob(threadId, jobId)
    // The worker ended the job before anything was sent (thread unreachable): a failure, not a
    // schedule the agent should end its turn for.
    if (latest.job.status === "failed")
      return yield* new ScheduleFailedError({
        threadId,
        jobId,
        jobNumber: latest.job.jobNumber,
        status: latest.job.status,
        reason: latest.job.reason,
        detail: latest.job.detail,
        afterMs: (yield* Clock.currentTimeMillis) - launchedAt,
      })
    return {
      alreadyScheduled: false,
      job: jobView(latest.job),
      handoffPath: bound === null ? null : paths.handoff(jobId),
      worker: isTerminalStatus(latest.job.status)
        ? noWorker
        : {
            state: latest.job.status === "scheduled" ? ("starting" as const) : ("running" as const),
            pid,
            leaseExpiresAt: null,
          },
      recovered: before.recovered,
    }
  })

/** The thread's current job, its worker, and the metrics history (recovering a dead worker first). */
export const compactionStatus = (
  givenThreadId: string,
): Effect.Effect<
  CompactionStatus,
  JournalError | JobLockHeldError | ThreadBusyError | InvalidThreadIdError,
  CompactionServices
> =>
  Effect.gen(function* () {
    const threadId = yield* checkThreadId(givenThreadId)
    const journal = yield* Journal
    const { found, recoverySkipped } = yield* recoverOrReport(threadId)
    const inspection = yield* journal.inspect(threadId)
    const current = inspection.current
    return {
      threadId,
      jobsDir: journal.dir,
      current: current === null ? null : jobView(current.job),
      cancelRequested:
        current === null ? false : yield* journal.isCancelRequested(threadId, current.job.jobId),
      worker: found.worker,
      recovered: found.recovered,
      history: inspection.history,
      tornTempFiles: inspection.tornTempFiles,
      recoverySkipped,
    }
  })

/**
 * `recoverThread` for a read-only question: when the job needs recovery but the admin lock cannot
 * be taken or the recovery cannot be written (a full or read-only disk: `JournalIo`; another Baton
 * process keeps the lock: `ThreadBusy`), the stored job is reported as is, with why recovery was
 * skipped, instead of failing the whole status.
 */
const recoverOrReport = (
  threadId: string,
): Effect.Effect<
  { readonly found: ThreadLook; readonly recoverySkipped: string | null },
  JournalError | JobLockHeldError | ThreadBusyError,
  CompactionServices
> =>
  Effect.gen(function* () {
    const journal = yield* Journal
    const look = yield* lookAndRecover(threadId, false)
    if (look !== "needs_recovery") return { found: look, recoverySkipped: null }
    const locked = yield* Effect.result(
      withThreadAdminLock(journal.dir, threadId, lookAndRecover(threadId, true)),
    )
    if (Result.isSuccess(locked))
      return locked.success === "needs_recovery"
        ? yield* Effect.die("unreachable")
        : { found: locked.success, recoverySkipped: null }
    const error: JournalError | JobLockHeldError | ThreadBusyError = locked.failure
    if (error._tag !== "JournalIo" && error._tag !== "ThreadBusy") return yield* error
    const stored = yield* journal.currentJob(threadId)
    return {
      found: { current: stored, worker: noWorker, recovered: null },
      recoverySkipped: skippedRecovery(error),
    }
  })

const skippedRecovery = (error: JournalIoError | ThreadBusyError): string =>
  `no live worker holds this unfinished job, but it was not ended by recovery: ${error.message}. The job is shown as stored (read only); ask for the status again once that is fixed, and recovery will end it then (nothing is ever resent).`

/**
 * Cancels a job: writes the cancel marker the worker polls. A job that already ended is reported
 * as is. A job whose worker died is first ended by recovery. Cancelling after the compaction
 * request was sent cannot recall it: the job ends `cancelled` with `outcomeMayBeUnknown`. Once the
 * continuation was sent (`continuation_requested`) or its turn runs (`continuation_running`) a
 * cancel cannot stop anything: the answer is `cancelRequested: false` with `refusal` and a
 * message saying to interrupt the turn in Codex; no marker is written.
 */
export const cancelCompaction = (
  givenThreadId: string,
  jobId: string,
): Effect.Effect<
  CancelReport,
  JournalError | JobLockHeldError | ThreadBusyError | InvalidThreadIdError,
  CompactionServices
> =>
  Effect.gen(function* () {
    const threadId = yield* checkThreadId(givenThreadId)
    const journal = yield* Journal
    const found = yield* recoverThread(threadId)
    const stored = yield* journal.readJob(threadId, jobId)
    if (isTerminalStatus(stored.job.status))
      return {
        job: jobView(stored.job),
        cancelRequested: false,
        alreadyEnded: true,
        recovered: found.recovered,
        refusal: null,
        message: `job ${stored.job.jobId} had already ended ${stored.job.status}: nothing to cancel.`,
      }
    // A state whose table row ignores CancelRequested (the continuation was sent or is running)
    // cannot be stopped by the marker: say so instead of answering as if it could.
    const onCancel = transition(stored.job, {
      _tag: "CancelRequested",
      at: yield* Clock.currentTimeMillis,
    }).job
    if (onCancel === stored.job) {
      const refusal = cancelRefusal(stored.job)
      return {
        job: jobView(stored.job),
        cancelRequested: false,
        alreadyEnded: false,
        recovered: found.recovered,
        refusal: refusal.refusal,
        message: refusal.message,
      }
    }
    yield* journal.requestCancel(threadId, jobId)
    yield* journal.appendEvent(threadId, jobId, {
      at: yield* Clock.currentTimeMillis,
      kind: "note",
      detail: "cancel requested",
    })
    // A scheduled job that is not the thread's current job has no worker that will ever run it
    // (one job per thread; left behind by an older Baton's scheduling race): end it here.
    if (stored.job.status === "scheduled" && found.current?.job.jobId !== jobId) {
      const ended = yield* applyOutsideWorker(stored, {
        _tag: "CancelRequested",
        at: yield* Clock.currentTimeMillis,
      })
      return {
        job: jobView(ended.job),
        cancelRequested: true,
        alreadyEnded: false,
        recovered: found.recovered,
        refusal: null,
        message: `job ${jobId} was cancelled; nothing was sent.`,
      }
    }
    return {
      job: jobView(stored.job),
      cancelRequested: true,
      alreadyEnded: false,
      recovered: found.recovered,
      refusal: null,
      message: `cancel requested for job ${jobId} (${stored.job.status}): its worker stands down within a second; ${
        stored.job.compactionRequestedAt === null
          ? "nothing was sent"
          : onCancel.outcomeMayBeUnknown
            ? "the compaction request was already sent and cannot be recalled, so the job ends cancelled with outcomeMayBeUnknown"
            : "the compaction is done, and no continuation will be sent"
      }.`,
    }
  })

/** Why cancelling cannot stop `job` (a state whose table row ignores CancelRequested). */
const cancelRefusal = (
  job: JobRecord,
): { readonly refusal: CancelRefusal; readonly message: string } => {
  const stop =
    "only Codex can stop it: interrupt the turn there (Esc in the Codex TUI, the stop button in the IDE, or turn/interrupt through the app-server). Baton does not interrupt turns."
  return job.status === "continuation_running"
    ? {
        refusal: "continuation_already_running",
        message: `job ${job.jobId} was not cancelled: the compaction is done and its continuation turn${job.continuationTurnId === null ? "" : ` ${job.continuationTurnId}`} is already running in Codex, which a cancel cannot stop; ${stop} The job ends resumed when the turn ends.`,
      }
    : {
        refusal: "continuation_already_sent",
        message: `job ${job.jobId} was not cancelled: the compaction is done and the continuation request was already sent to Codex, so it cannot be recalled. If it starts a turn, ${stop}`,
      }
}

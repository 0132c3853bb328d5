/**
 * Tagged errors of @baton/compaction. Convention (as in @baton/handoff): the class is
 * `<Thing>Error`, the `_tag` is the name without the suffix. Each error names the file or id
 * involved and says what to do; none carries handoff, user or continuation text.
 */
import { fullDiskRemedy } from "@baton/durable-files"
import * as Data from "effect/Data"

/** A thread or job id that is not a safe file-name component. */
export class InvalidJobIdError extends Data.TaggedError("InvalidJobId")<{
  readonly field: "threadId" | "jobId"
  readonly value: string
}> {
  override get message(): string {
    return `${this.field} ${JSON.stringify(this.value.slice(0, 80))} is not a valid id (letters, digits, '.', '_', '-'; at most 128; no leading dot)`
  }
}

/** A journal file exists but cannot be read back as what it should be. Nothing is overwritten. */
export class JournalCorruptError extends Data.TaggedError("JournalCorrupt")<{
  readonly path: string
  readonly problem: string
}> {
  override get message(): string {
    return `journal file ${this.path} is unreadable: ${this.problem}. Baton never overwrites it: inspect it, move it aside to recover (the job it describes is then forgotten), and keep it if you report a bug.`
  }
}

/**
 * What to do when the journal could not be written for lack of rights: a read-only file system
 * (EROFS), or a directory or file the user may not write (EACCES, EPERM); "" for any other code.
 */
export const notWritableRemedy = (code: string): string =>
  code === "EROFS"
    ? ": the file system holding it is read-only: remount it read-write, or set BATON_JOBS_DIR to a directory on a writable disk"
    : code === "EACCES" || code === "EPERM"
      ? ": you may not write there: give your user write access to it (compaction jobs live in private 0700 directories), or set BATON_JOBS_DIR to a directory you own"
      : ""

/** A file-system operation on the journal failed. */
export class JournalIoError extends Data.TaggedError("JournalIo")<{
  readonly path: string
  readonly operation: string
  readonly code: string
  readonly detail: string
}> {
  override get message(): string {
    return `journal ${this.operation} failed on ${this.path} (${this.code}): ${this.detail}${fullDiskRemedy(this.code, "BATON_JOBS_DIR")}${notWritableRemedy(this.code)}`
  }
}

/** A compare-and-set write found another revision on disk: someone else wrote the job. */
export class JournalConflictError extends Data.TaggedError("JournalConflict")<{
  readonly path: string
  readonly expectedRevision: number
  readonly foundRevision: number | null
}> {
  override get message(): string {
    return `journal file ${this.path} is at revision ${this.foundRevision ?? "none"}, expected ${this.expectedRevision}: another writer owns this job now; stop and re-read it`
  }
}

/** The job (or its handoff) is not in the journal. */
export class JobNotFoundError extends Data.TaggedError("JobNotFound")<{
  readonly threadId: string
  readonly jobId: string
  readonly path: string
}> {
  override get message(): string {
    return `no job ${this.jobId} for thread ${this.threadId} (${this.path})`
  }
}

/** A handoff was already stored for this job; stored handoffs are never overwritten. */
export class HandoffAlreadyStoredError extends Data.TaggedError("HandoffAlreadyStored")<{
  readonly path: string
}> {
  override get message(): string {
    return `a handoff is already stored at ${this.path}; it is never overwritten`
  }
}

/** The bound handoff does not belong to the job being scheduled. */
export class HandoffJobMismatchError extends Data.TaggedError("HandoffJobMismatch")<{
  readonly jobId: string
  readonly detail: string
}> {
  override get message(): string {
    return `the handoff does not match job ${this.jobId}: ${this.detail}`
  }
}

/** A live worker holds the thread's lock (pid alive, same start time, lease current). */
export class JobLockHeldError extends Data.TaggedError("JobLockHeld")<{
  readonly path: string
  readonly holderPid: number
  readonly holderJobId: string
  readonly leaseExpiresAt: number
}> {
  override get message(): string {
    return `thread lock ${this.path} is held by live process pid ${this.holderPid} for job ${this.holderJobId} (lease until ${new Date(this.leaseExpiresAt).toISOString()})`
  }
}

/** Another live Baton process is scheduling or recovering this thread and kept at it too long. */
export class ThreadBusyError extends Data.TaggedError("ThreadBusy")<{
  readonly threadId: string
  readonly holderPid: number
}> {
  override get message(): string {
    return `thread ${this.threadId} is busy: Baton process pid ${this.holderPid} is scheduling or recovering its compaction job; try again in a few seconds`
  }
}

/** This worker no longer holds its lock (recovered by someone else, or removed). */
export class JobLockLostError extends Data.TaggedError("JobLockLost")<{
  readonly path: string
  readonly detail: string
}> {
  override get message(): string {
    return `lost the thread lock ${this.path}: ${this.detail}; stop without writing`
  }
}

/** Any journal failure. */
export type JournalError =
  | InvalidJobIdError
  | JournalCorruptError
  | JournalIoError
  | JournalConflictError
  | JobNotFoundError
  | HandoffAlreadyStoredError
  | HandoffJobMismatchError

/** The worker process could not be started (the job was ended as failed; nothing was sent). */
export class WorkerLaunchError extends Data.TaggedError("WorkerLaunch")<{
  readonly command: string
  readonly detail: string
}> {
  override get message(): string {
    return `could not start the compaction worker (${this.command}): ${this.detail}`
  }
}

/**
 * The job was created but ended before anything was sent, while scheduling waited for its worker
 * (the thread could not be reached: unknown thread, Codex missing or broken). Nothing to wait for.
 */
export class ScheduleFailedError extends Data.TaggedError("ScheduleFailed")<{
  readonly threadId: string
  readonly jobId: string
  readonly jobNumber: number
  readonly status: string
  readonly reason: string | null
  readonly detail: string | null
  /** How long after its worker was launched the job was seen ended (ms), when measured. */
  readonly afterMs?: number
}> {
  override get message(): string {
    const when =
      this.afterMs === undefined
        ? "while scheduling waited for its worker"
        : `${spanInWords(this.afterMs)} after its worker was launched, while scheduling waited for it`
    return `compaction of thread ${this.threadId} was not scheduled: job ${this.jobId} (#${this.jobNumber}) ended ${this.status}${this.reason === null ? "" : ` (${this.reason})`} ${when}. ${this.detail ?? "Nothing was sent."}`
  }
}

/** A duration in words: "450 ms", "25.1 s", "3 min 5 s". */
const spanInWords = (ms: number): string => {
  const whole = Math.max(0, Math.round(ms))
  if (whole < 1_000) return `${whole} ms`
  if (whole < 60_000) return `${(whole / 1_000).toFixed(1)} s`
  const seconds = Math.round(whole / 1_000)
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
}

/**
 * Scheduling with a handoff found the thread's unfinished job carrying no handoff or another one:
 * the new handoff was not stored and will not be carried (a job's handoff is bound to it once).
 */
export class HandoffNotAttachedError extends Data.TaggedError("HandoffNotAttached")<{
  readonly threadId: string
  readonly jobId: string
  readonly jobNumber: number
  readonly status: string
  /** What the unfinished job carries instead. */
  readonly attached: "none" | "another"
}> {
  override get message(): string {
    return `thread ${this.threadId} already has an unfinished compaction job ${this.jobId} (#${this.jobNumber}, ${this.status}) with ${this.attached === "none" ? "no handoff" : "a different handoff"}: yours was not stored and will not be carried. Wait for that job to end (compaction status), or cancel it (baton compact cancel ${this.threadId} ${this.jobId}), then schedule again with your handoff.`
  }
}

/**
 * A setting given to `schedule` (a budget, the headroom threshold, `awaitWorkerMs`) is unknown or
 * out of range; `key` names it when one is at fault. Nothing was written.
 */
export class InvalidJobSettingsError extends Data.TaggedError("InvalidJobSettings")<{
  readonly detail: string
  readonly key?: string
}> {
  override get message(): string {
    return `invalid compaction settings: ${this.detail}`
  }
}

/** A worker was asked to run a job that is not waiting for one (already started or ended). */
export class JobNotRunnableError extends Data.TaggedError("JobNotRunnable")<{
  readonly jobId: string
  readonly status: string
}> {
  override get message(): string {
    return `job ${this.jobId} is ${this.status}, not scheduled: a worker only starts scheduled jobs (a job is never restarted after a worker was lost)`
  }
}

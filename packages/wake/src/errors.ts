/**
 * Tagged errors of @baton/wake. The class is `<Thing>Error`, the `_tag` is the name without the
 * suffix. Each names the job or file involved and says what to do; none carries checkpoint text.
 */
import { fullDiskRemedy } from "@baton/durable-files"
import * as Data from "effect/Data"

/** A job id that is not a safe directory name. */
export class InvalidJobIdError extends Data.TaggedError("InvalidJobId")<{
  readonly value: string
}> {
  override get message(): string {
    return `job id ${JSON.stringify(this.value.slice(0, 100))} is not valid (6–96 characters: a letter or digit, then letters, digits, '.', '_', '-'; no '..')`
  }
}

/** A wake file exists but cannot be read back as what it should be. It is never overwritten. */
export class WakeFileCorruptError extends Data.TaggedError("WakeFileCorrupt")<{
  readonly path: string
  readonly problem: string
}> {
  override get message(): string {
    return `wake file ${this.path} is unreadable: ${this.problem}. Baton never overwrites it: inspect it, and move it aside to recover.`
  }
}

/** A file-system operation failed; on a full disk, the message says how to make room. */
export class WakeIoError extends Data.TaggedError("WakeIo")<{
  readonly path: string
  readonly operation: string
  readonly code: string
  readonly detail: string
}> {
  override get message(): string {
    return `wake ${this.operation} failed on ${this.path} (${this.code}): ${this.detail}${fullDiskRemedy(this.code, "BATON_WAKE_DIR")}`
  }
}

/** A compare-and-set write found another revision on disk: someone else changed the job. */
export class JobConflictError extends Data.TaggedError("JobConflict")<{
  readonly path: string
  readonly expectedRevision: number
  readonly foundRevision: number | null
}> {
  override get message(): string {
    return `job state ${this.path} is at revision ${this.foundRevision ?? "none"}, expected ${this.expectedRevision}: re-read the job and try again`
  }
}

/** No job with this id. */
export class JobNotFoundError extends Data.TaggedError("JobNotFound")<{
  readonly jobId: string
  readonly path: string
}> {
  override get message(): string {
    return `no wake job ${this.jobId} (${this.path})`
  }
}

/** A job with this id already exists; it is never overwritten. */
export class JobExistsError extends Data.TaggedError("JobExists")<{
  readonly jobId: string
  readonly path: string
}> {
  override get message(): string {
    return `wake job ${this.jobId} already exists at ${this.path}`
  }
}

/** Another process holds the job lock and its lease is current. */
export class JobLockHeldError extends Data.TaggedError("JobLockHeld")<{
  readonly path: string
  readonly holderPid: number
  readonly leaseExpiresAt: number
}> {
  override get message(): string {
    return `job lock ${this.path} is held by pid ${this.holderPid} until ${new Date(this.leaseExpiresAt).toISOString()}; try again shortly`
  }
}

/** The checkpoint is missing or not ready to arm (placeholders, empty sections, too large). */
export class CheckpointNotReadyError extends Data.TaggedError("CheckpointNotReady")<{
  readonly path: string
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `checkpoint ${this.path} is not ready: ${this.problems.join("; ")}`
  }
}

/** A continuation could not be started (binary missing, spawn refused, run log unwritable). */
export class LaunchError extends Data.TaggedError("Launch")<{
  readonly command: string
  readonly reason: string
}> {
  override get message(): string {
    return `could not start the continuation (${this.command}): ${this.reason}`
  }
}

/** Another watcher holds the per-user watcher lock and its lease is current. */
export class WatcherLockHeldError extends Data.TaggedError("WatcherLockHeld")<{
  readonly path: string
  readonly holderPid: number
  readonly host: string
  readonly leaseExpiresAt: number
}> {
  override get message(): string {
    return `another wake watcher (pid ${this.holderPid} on ${this.host}) holds ${this.path} until ${new Date(this.leaseExpiresAt).toISOString()}; only one runs per user`
  }
}

/** The watcher's lock was taken over or removed while it ran; it stops without another write. */
export class WatcherLockLostError extends Data.TaggedError("WatcherLockLost")<{
  readonly path: string
}> {
  override get message(): string {
    return `the wake watcher lost its lock ${this.path} (another watcher took over); stopping`
  }
}

/** No job is bound to the thread (for commands that default to the current Codex thread). */
export class NoJobForThreadError extends Data.TaggedError("NoJobForThread")<{
  readonly threadId: string
}> {
  override get message(): string {
    return `no open wake job belongs to thread ${this.threadId}: pass the job id, or create one with 'baton wake create'`
  }
}

/** A job setting that cannot reach a command line (model, reasoning effort, delivery). */
export class InvalidJobSettingError extends Data.TaggedError("InvalidJobSetting")<{
  readonly field: string
  readonly value: string
  readonly rule: string
}> {
  override get message(): string {
    return `${this.field} ${JSON.stringify(this.value.slice(0, 100))} is not valid: ${this.rule}`
  }
}

/**
 * The store was asked to write a job record that a later read would reject (it does not match the
 * state schema). Nothing was written: the job on disk stays as it was and readable.
 */
export class JobRecordInvalidError extends Data.TaggedError("JobRecordInvalid")<{
  readonly path: string
  readonly problem: string
}> {
  override get message(): string {
    return `wake refused to write ${this.path}: the job record does not match the state schema (${this.problem}); nothing was written and the job stays as it was. Check the settings passed in; if they were valid, please report this as a bug.`
  }
}

/** The job's state refuses the command (e.g. pausing a completed job). */
export class JobRefusedError extends Data.TaggedError("JobRefused")<{
  readonly jobId: string
  readonly state: string
  readonly command: string
  readonly reason: string
}> {
  override get message(): string {
    return `wake job ${this.jobId} is ${this.state}: ${this.command} refused (${this.reason})`
  }
}

/** Any job-store failure. */
export type WakeStoreError =
  | InvalidJobIdError
  | WakeFileCorruptError
  | JobRecordInvalidError
  | WakeIoError
  | JobConflictError
  | JobNotFoundError
  | JobExistsError
  | JobLockHeldError
  | CheckpointNotReadyError

/**
 * The thread lock with a lease: one worker per thread. The lock file names its holder (pid and
 * the process's start time, so a reused pid is told apart), the job, and a lease the holder
 * renews with heartbeats. A lock is stale when its pid is gone, its pid now belongs to a
 * process with another start time, or its lease expired without a heartbeat; a stale lock is
 * recovered (moved aside, never deleted in place) and the recovery is written to the stale job's
 * event log, which names the moved file; a later holder removes it after `STALE_LOCK_KEEP_MS`
 * (`removeLockDebris` of `@baton/durable-files`), with what killed creators left. A live holder's lock is always respected. Time comes from the Effect Clock and process
 * facts from the ProcessProbe service, so tests inject both.
 */
import { readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { JobLockHeldError, JobLockLostError, JournalCorruptError } from "./errors.js"
import type { JournalError } from "./errors.js"
import { JournalFileSystem } from "./journal-file-system.js"
import { checkId, JOURNAL_DIR_MODE, JOURNAL_FILE_MODE, journalPaths } from "./journal.js"

/** Facts about processes: who we are, whether a pid is alive and when it started. */
export interface ProcessProbeShape {
  readonly selfPid: number
  readonly isAlive: (pid: number) => Effect.Effect<boolean>
  /** Start time (epoch ms) of the process with this pid, or null when unknown on this platform. */
  readonly startTimeMs: (pid: number) => Effect.Effect<number | null>
}

/** The process-facts service. */
export class ProcessProbe extends Context.Service<ProcessProbe, ProcessProbeShape>()(
  "@baton/compaction/ProcessProbe",
) {}

/** `/proc/<pid>/stat` field 22 (start time in clock ticks since boot), or null. */
export const parseProcStatStartTicks = (stat: string): number | null => {
  const close = stat.lastIndexOf(")")
  if (close === -1) return null
  // Fields after "comm)" start at field 3, so field 22 is index 19.
  const ticks = Number(stat.slice(close + 2).split(" ")[19])
  return Number.isSafeInteger(ticks) ? ticks : null
}

/** `/proc/<pid>/stat` field 3 (the state letter: `R`, `S`, `Z` for a zombie, …), or null. */
export const parseProcStatState = (stat: string): string | null => {
  const close = stat.lastIndexOf(")")
  const state = close === -1 ? undefined : stat.slice(close + 2).split(" ")[0]
  return state === undefined || state === "" ? null : state
}

/**
 * Whether the process `pid` has exited but was not reaped yet (a zombie, `Z`, or dead, `X`).
 * `kill(pid, 0)` succeeds for it, so a killed worker whose parent has not waited for it (a slow
 * or non-reaping init in a container) looked alive and its job "running" until the lease ran out.
 */
const linuxProcessEnded = (pid: number): boolean => {
  try {
    const state = parseProcStatState(readFileSync(`/proc/${pid}/stat`, "utf8"))
    return state === "Z" || state === "X"
  } catch {
    return false
  }
}

/** `btime` (boot time, epoch seconds) from `/proc/stat`, or null. */
export const parseBootTimeSeconds = (procStat: string): number | null => {
  const match = /^btime (\d+)$/m.exec(procStat)
  return match?.[1] === undefined ? null : Number(match[1])
}

// USER_HZ is 100 on every mainstream Linux build; the value is only compared for equality.
const TICKS_PER_SECOND = 100

const linuxStartTimeMs = async (pid: number): Promise<number | null> => {
  try {
    const ticks = parseProcStatStartTicks(await readFile(`/proc/${pid}/stat`, "utf8"))
    const boot = parseBootTimeSeconds(await readFile("/proc/stat", "utf8"))
    return ticks === null || boot === null
      ? null
      : boot * 1000 + Math.round((ticks * 1000) / TICKS_PER_SECOND)
  } catch {
    return null
  }
}

/**
 * The real process probe: `kill(pid, 0)` (EPERM counts as alive; on Linux a zombie does not) and
 * `/proc` on Linux.
 */
export const nodeProcessProbe: ProcessProbeShape = {
  selfPid: process.pid,
  isAlive: (pid) =>
    Effect.sync(() => {
      try {
        process.kill(pid, 0)
        return process.platform !== "linux" || !linuxProcessEnded(pid)
      } catch (error) {
        return typeof error === "object" && error !== null && "code" in error
          ? error.code === "EPERM"
          : false
      }
    }),
  startTimeMs: (pid) =>
    process.platform === "linux"
      ? Effect.promise(() => linuxStartTimeMs(pid))
      : Effect.succeed(null),
}

/** Layer: the real process probe. */
export const nodeProcessProbeLayer: Layer.Layer<ProcessProbe> = Layer.succeed(
  ProcessProbe,
  nodeProcessProbe,
)

const LockFileSchema = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  threadId: Schema.String,
  jobId: Schema.String,
  pid: Schema.Number,
  processStartMs: Schema.NullOr(Schema.Number),
  acquiredAt: Schema.Number,
  heartbeatAt: Schema.Number,
  leaseExpiresAt: Schema.Number,
})

/** The lock as held: what the file says. Pass it to `heartbeat` and `releaseJobLock`. */
export type JobLock = typeof LockFileSchema.Type

/** Why a lock was judged stale. */
export type StaleReason = "pid_gone" | "pid_reused" | "lease_expired"

/** A stale lock that was recovered. */
export interface RecoveredLock {
  readonly previous: JobLock
  readonly reason: StaleReason
  /** Where the stale lock file was moved. */
  readonly movedTo: string
}

/** Judges a holder: null when live, else why it is stale. */
export const judgeLock = (
  lock: JobLock,
  nowMs: number,
): Effect.Effect<StaleReason | null, never, ProcessProbe> =>
  Effect.gen(function* () {
    const probe = yield* ProcessProbe
    if (!(yield* probe.isAlive(lock.pid))) return "pid_gone"
    if (lock.processStartMs !== null) {
      const start = yield* probe.startTimeMs(lock.pid)
      // Tolerate rounding of the tick conversion; a reused pid differs by far more.
      if (start !== null && Math.abs(start - lock.processStartMs) > 20) return "pid_reused"
    }
    if (nowMs > lock.leaseExpiresAt) return "lease_expired"
    return null
  })

const decodeLock = (file: string, text: string): Effect.Effect<JobLock, JournalCorruptError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Effect.fail(new JournalCorruptError({ path: file, problem: "lock file is not JSON" }))
  }
  const decoded = Schema.decodeUnknownResult(LockFileSchema)(json)
  return Result.isSuccess(decoded)
    ? Effect.succeed(decoded.success)
    : Effect.fail(
        new JournalCorruptError({
          path: file,
          problem: `lock file does not match its schema: ${decoded.failure.message.slice(0, 300)}`,
        }),
      )
}

/** Options of `acquireJobLock`. */
export interface AcquireJobLockOptions {
  readonly dir: string
  readonly threadId: string
  readonly jobId: string
  /** Lease length; renew with `heartbeat` well before it ends (e.g. every third of it). */
  readonly leaseMs: number
}

const sameHolder = (a: JobLock, b: JobLock): boolean =>
  a.pid === b.pid && a.jobId === b.jobId && a.acquiredAt === b.acquiredAt

/**
 * Takes the thread's lock for a job. A live holder → JobLockHeldError. A stale holder's lock is
 * moved aside to `lock.json.stale-<time>-<pid>`, logged in the stale job's event log, and the
 * lock is taken; `recovered` describes what was replaced.
 */
export const acquireJobLock = (
  options: AcquireJobLockOptions,
): Effect.Effect<
  { readonly lock: JobLock; readonly recovered: RecoveredLock | null },
  JournalError | JobLockHeldError,
  JournalFileSystem | ProcessProbe
> =>
  Effect.gen(function* () {
    yield* checkId("threadId", options.threadId)
    yield* checkId("jobId", options.jobId)
    const fs = yield* JournalFileSystem
    const probe = yield* ProcessProbe
    const p = journalPaths(options.dir, options.threadId)
    yield* fs.ensureDir(options.dir, JOURNAL_DIR_MODE)
    yield* fs.ensureDir(p.threadDir, JOURNAL_DIR_MODE)
    let recovered: RecoveredLock | null = null
    // Two rounds: the first may find and move a stale lock, the second takes it.
    for (let round = 0; round < 2; round++) {
      const now = yield* Clock.currentTimeMillis
      const lock: JobLock = {
        schemaVersion: 1,
        threadId: options.threadId,
        jobId: options.jobId,
        pid: probe.selfPid,
        processStartMs: yield* probe.startTimeMs(probe.selfPid),
        acquiredAt: now,
        heartbeatAt: now,
        leaseExpiresAt: now + options.leaseMs,
      }
      const text = `${JSON.stringify(lock)}\n`
      if (yield* fs.createExclusive(p.lock, text, JOURNAL_FILE_MODE)) {
        // Holding it: clear what killed holders and takers left beside it (best effort).
        yield* Effect.ignore(fs.removeLockDebris(p.lock, now))
        return { lock, recovered }
      }
      const existingText = yield* fs.readText(p.lock)
      if (existingText === null) continue
      const existing = yield* decodeLock(p.lock, existingText)
      const reason = yield* judgeLock(existing, now)
      if (reason === null || round === 1)
        return yield* new JobLockHeldError({
          path: p.lock,
          holderPid: existing.pid,
          holderJobId: existing.jobId,
          leaseExpiresAt: existing.leaseExpiresAt,
        })
      const movedTo = `${p.lock}.stale-${now}-${probe.selfPid}`
      if (!(yield* fs.rename(p.lock, movedTo))) continue
      // Someone may have recovered and re-locked between our read and our rename: put theirs back.
      const moved = yield* fs.readText(movedTo)
      const movedLock = moved === null ? null : yield* decodeLock(movedTo, moved)
      if (movedLock !== null && !sameHolder(movedLock, existing)) {
        yield* fs.rename(movedTo, p.lock)
        return yield* new JobLockHeldError({
          path: p.lock,
          holderPid: movedLock.pid,
          holderJobId: movedLock.jobId,
          leaseExpiresAt: movedLock.leaseExpiresAt,
        })
      }
      recovered = { previous: existing, reason, movedTo }
      if (
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(existing.jobId) &&
        !existing.jobId.includes("..")
      )
        yield* fs.append(
          p.events(existing.jobId),
          `${JSON.stringify({
            at: now,
            kind: "lock",
            detail: `stale lock of worker pid ${existing.pid} recovered (${reason}) by pid ${probe.selfPid} for job ${options.jobId}; moved to ${movedTo}`,
          })}\n`,
          JOURNAL_FILE_MODE,
        )
    }
    return yield* new JobLockHeldError({
      path: p.lock,
      holderPid: -1,
      holderJobId: "unknown",
      leaseExpiresAt: 0,
    })
  })

const readOwnLock = (dir: string, lock: JobLock) =>
  Effect.gen(function* () {
    const fs = yield* JournalFileSystem
    const file = journalPaths(dir, lock.threadId).lock
    const text = yield* fs.readText(file)
    if (text === null)
      return yield* new JobLockLostError({ path: file, detail: "the lock file is gone" })
    const onDisk = yield* decodeLock(file, text)
    if (!sameHolder(onDisk, lock))
      return yield* new JobLockLostError({
        path: file,
        detail: `the lock now belongs to pid ${onDisk.pid} for job ${onDisk.jobId}`,
      })
    return file
  })

/** Renews the lease; fails with JobLockLostError when the lock is no longer ours. */
export const heartbeatJobLock = (
  dir: string,
  lock: JobLock,
  leaseMs: number,
): Effect.Effect<JobLock, JournalError | JobLockLostError, JournalFileSystem> =>
  Effect.gen(function* () {
    const fs = yield* JournalFileSystem
    const file = yield* readOwnLock(dir, lock)
    const now = yield* Clock.currentTimeMillis
    const next: JobLock = { ...lock, heartbeatAt: now, leaseExpiresAt: now + leaseMs }
    yield* fs.writeAtomic(file, `${JSON.stringify(next)}\n`, JOURNAL_FILE_MODE)
    return next
  })

/** Releases the lock if it is still ours (renamed to `lock.json.released`, which keeps only the last). */
export const releaseJobLock = (
  dir: string,
  lock: JobLock,
): Effect.Effect<void, JournalError | JobLockLostError, JournalFileSystem> =>
  Effect.gen(function* () {
    const fs = yield* JournalFileSystem
    const file = yield* readOwnLock(dir, lock)
    yield* fs.rename(file, `${file}.released`)
  })

/**
 * The thread's admin lock: serialises the short read-decide-write steps that schedulers and
 * recoveries run on one thread's journal (is there an unfinished job? create one / end a dead
 * worker's job). Two layers, because both kinds of concurrency happen:
 * - in this process (one `baton mcp` server answering parallel tool calls): a semaphore per
 *   journal directory and thread, so fibers queue instead of racing;
 * - across processes (parallel `baton compact …` calls): an exclusively created
 *   `<threadId>/admin.lock` naming its holder (pid, process start time, time taken). A holder
 *   that is gone, whose pid was reused, or that held it longer than `ADMIN_LOCK_STALE_MS`, is
 *   moved aside (a later holder removes it after `STALE_LOCK_KEEP_MS`, see `removeLockDebris` of
 *   `@baton/durable-files`); a live one is waited for, up to `ADMIN_LOCK_WAIT_MS`.
 * It is never held while waiting for a worker or a thread, only around journal reads and writes.
 * This is not the worker's lock (`lock.json`, job-lock.ts): a worker never takes this one.
 */
import * as path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import { ThreadBusyError } from "./errors.js"
import type { JournalError } from "./errors.js"
import { ProcessProbe } from "./job-lock.js"
import { JournalFileSystem } from "./journal-file-system.js"
import { JOURNAL_DIR_MODE, JOURNAL_FILE_MODE, journalPaths } from "./journal.js"

/** A holder older than this is presumed stuck and its lock is moved aside. */
export const ADMIN_LOCK_STALE_MS = 30_000
/** How long to wait for a live holder before giving up with ThreadBusyError. */
export const ADMIN_LOCK_WAIT_MS = 15_000
const POLL_MS = 20

// One semaphore per journal directory and thread, for the fibers of this process.
const semaphores = new Map<string, Semaphore.Semaphore>()
const semaphoreFor = (key: string): Semaphore.Semaphore => {
  let semaphore = semaphores.get(key)
  if (semaphore === undefined) {
    semaphore = Semaphore.makeUnsafe(1)
    semaphores.set(key, semaphore)
  }
  return semaphore
}

interface AdminHolder {
  readonly pid: number
  readonly processStartMs: number | null
  readonly at: number
}

const parseHolder = (text: string): AdminHolder | null => {
  try {
    const json = JSON.parse(text) as unknown
    if (
      typeof json === "object" &&
      json !== null &&
      "pid" in json &&
      typeof json.pid === "number" &&
      "at" in json &&
      typeof json.at === "number" &&
      "processStartMs" in json &&
      (json.processStartMs === null || typeof json.processStartMs === "number")
    )
      return { pid: json.pid, processStartMs: json.processStartMs, at: json.at }
    return null
  } catch {
    return null
  }
}

const acquireFileLock = (
  dir: string,
  threadId: string,
): Effect.Effect<string, JournalError | ThreadBusyError, JournalFileSystem | ProcessProbe> =>
  Effect.gen(function* () {
    const fs = yield* JournalFileSystem
    const probe = yield* ProcessProbe
    const threadDir = journalPaths(dir, threadId).threadDir
    const file = path.join(threadDir, "admin.lock")
    yield* fs.ensureDir(dir, JOURNAL_DIR_MODE)
    yield* fs.ensureDir(threadDir, JOURNAL_DIR_MODE)
    const selfStart = yield* probe.startTimeMs(probe.selfPid)
    const deadline = (yield* Clock.currentTimeMillis) + ADMIN_LOCK_WAIT_MS
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const text = `${JSON.stringify({ pid: probe.selfPid, processStartMs: selfStart, at: now })}\n`
      if (yield* fs.createExclusive(file, text, JOURNAL_FILE_MODE)) {
        // Holding it: clear what killed holders and takers left beside it (best effort).
        yield* Effect.ignore(fs.removeLockDebris(file, now))
        return file
      }
      const existing = yield* fs.readText(file)
      if (existing === null) continue
      const holder = parseHolder(existing)
      let stale = holder === null || now - holder.at > ADMIN_LOCK_STALE_MS
      if (!stale && holder !== null) {
        if (!(yield* probe.isAlive(holder.pid))) stale = true
        else if (holder.processStartMs !== null) {
          const start = yield* probe.startTimeMs(holder.pid)
          if (start !== null && Math.abs(start - holder.processStartMs) > 20) stale = true
        }
      }
      // Judged on what was read before the liveness checks: a holder that released meanwhile
      // may have a successor's fresh lock in its place. Look again before moving it aside.
      if (stale && (yield* fs.readText(file)) === existing) {
        yield* fs.rename(file, `${file}.stale-${now}-${probe.selfPid}`)
        continue
      }
      if (stale) continue
      if (now >= deadline)
        return yield* new ThreadBusyError({ threadId, holderPid: holder?.pid ?? -1 })
      yield* Effect.sleep(POLL_MS)
    }
  })

/**
 * Runs `effect` holding the thread's admin lock (in-process semaphore, then the file). Waits for
 * another holder; fails with ThreadBusyError when a live one keeps it past the wait budget.
 */
export const withThreadAdminLock = <A, E, R>(
  dir: string,
  threadId: string,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | JournalError | ThreadBusyError, R | JournalFileSystem | ProcessProbe> =>
  semaphoreFor(`${path.resolve(dir)}\0${threadId}`).withPermit(
    Effect.gen(function* () {
      const fs = yield* JournalFileSystem
      const file = yield* acquireFileLock(dir, threadId)
      return yield* effect.pipe(Effect.ensuring(Effect.ignore(fs.rename(file, `${file}.released`))))
    }),
  )

/**
 * The per-user watcher lock: `<wake dir>/watcher.lock`, created exclusively and naming its holder
 * (pid, process start time, host) with a lease the running watcher renews. Only one watcher runs
 * per user. A lock is taken over only when its lease expired, or when its holder on this host is
 * gone (pid plus start time, so a recycled pid does not count); the stale file is moved aside,
 * the takeover checks that what moved is what was judged, and only then is the stale copy removed. Renewal fails with
 * WatcherLockLostError when the token on disk is no longer ours. Time from the Effect Clock; files
 * through WakeFileSystem.
 */
import * as path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { WatcherLockHeldError, WatcherLockLostError } from "./errors.js"
import type { WakeIoError } from "./errors.js"
import { WAKE_DIR_MODE, WAKE_FILE_MODE } from "./job-paths.js"
import type { WakeFileSystemShape } from "./wake-file-system.js"

/** Default lease of the watcher lock; the watcher renews it every third. */
export const WATCHER_LEASE_MS = 30_000

/** Who holds (or wants) the lock. */
export interface WatcherIdentity {
  readonly pid: number
  readonly startTicks: number | null
  readonly host: string
}

const LockSchema = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  pid: Schema.Number,
  startTicks: Schema.NullOr(Schema.Number),
  host: Schema.String,
  token: Schema.String,
  acquiredAt: Schema.Number,
  leaseExpiresAt: Schema.Number,
})

/** The lock file's content. */
export type WatcherLockInfo = typeof LockSchema.Type

/** Decodes a lock file (null when torn or not a lock). */
export const decodeWatcherLock = (text: string): WatcherLockInfo | null => {
  try {
    const result = Schema.decodeUnknownResult(LockSchema)(JSON.parse(text))
    return Result.isSuccess(result) ? result.success : null
  } catch {
    return null
  }
}

/** Path of the watcher lock under a wake directory. */
export const watcherLockPath = (wakeDir: string): string => path.join(wakeDir, "watcher.lock")

/** A held lock. */
export interface HeldWatcherLock {
  readonly file: string
  readonly token: string
}

let sequence = 0

const encode = (info: WatcherLockInfo) => `${JSON.stringify(info)}\n`

/** Tells whether a holder on this host still runs (pid plus start time). */
export type HolderProbe = (pid: number, startTicks: number | null) => Effect.Effect<boolean>

/** Reads the lock (null when absent or torn). */
export const readWatcherLock = (
  fs: WakeFileSystemShape,
  wakeDir: string,
): Effect.Effect<WatcherLockInfo | null, WakeIoError> =>
  Effect.map(fs.readText(watcherLockPath(wakeDir)), (text) =>
    text === null ? null : decodeWatcherLock(text),
  )

/** Whether a lock is current: lease not expired and (on this host) its holder alive. */
export const isLockCurrent = (
  info: WatcherLockInfo,
  now: number,
  host: string,
  probe: HolderProbe,
): Effect.Effect<boolean> =>
  info.leaseExpiresAt <= now
    ? Effect.succeed(false)
    : info.host === host
      ? probe(info.pid, info.startTicks)
      : Effect.succeed(true)

/**
 * The lock when its watcher runs, else null: the same test the takeover uses (lease current and,
 * on this host, pid plus start time alive), so a killed watcher reads as gone at once.
 */
export const readLiveWatcherLock = (
  fs: WakeFileSystemShape,
  wakeDir: string,
  host: string,
  probe: HolderProbe,
): Effect.Effect<WatcherLockInfo | null> =>
  Effect.gen(function* () {
    const info = yield* Effect.orElseSucceed(readWatcherLock(fs, wakeDir), () => null)
    if (info === null) return null
    const now = yield* Clock.currentTimeMillis
    return (yield* isLockCurrent(info, now, host, probe)) ? info : null
  })

/** Takes the lock or fails with WatcherLockHeldError; never waits. */
export const acquireWatcherLock = (
  fs: WakeFileSystemShape,
  wakeDir: string,
  identity: WatcherIdentity,
  probe: HolderProbe,
  leaseMs: number = WATCHER_LEASE_MS,
): Effect.Effect<HeldWatcherLock, WatcherLockHeldError | WakeIoError> =>
  Effect.gen(function* () {
    const file = watcherLockPath(wakeDir)
    yield* fs.ensureDir(wakeDir, WAKE_DIR_MODE)
    const now = yield* Clock.currentTimeMillis
    sequence += 1
    const token = `${identity.host}:${identity.pid}:${now}:${sequence}`
    const info: WatcherLockInfo = {
      schemaVersion: 1,
      pid: identity.pid,
      startTicks: identity.startTicks,
      host: identity.host,
      token,
      acquiredAt: now,
      leaseExpiresAt: now + leaseMs,
    }
    for (let round = 0; round < 3; round++) {
      if (yield* fs.createExclusive(file, encode(info), WAKE_FILE_MODE)) {
        yield* Effect.ignore(fs.removeLockDebris(file, now))
        return { file, token }
      }
      const existingText = yield* fs.readText(file)
      if (existingText === null) continue
      const existing = decodeWatcherLock(existingText)
      if (existing !== null && (yield* isLockCurrent(existing, now, identity.host, probe)))
        return yield* new WatcherLockHeldError({
          path: file,
          holderPid: existing.pid,
          host: existing.host,
          leaseExpiresAt: existing.leaseExpiresAt,
        })
      const aside = `${file}.stale-${now}-${sequence}`
      if (!(yield* fs.rename(file, aside))) continue
      const moved = yield* fs.readText(aside)
      if (moved !== existingText) {
        // Someone replaced it between our read and the move: put theirs back and yield.
        if (moved !== null) yield* fs.createExclusive(file, moved, WAKE_FILE_MODE)
        const holder = moved === null ? null : decodeWatcherLock(moved)
        return yield* new WatcherLockHeldError({
          path: file,
          holderPid: holder?.pid ?? -1,
          host: holder?.host ?? "unknown",
          leaseExpiresAt: holder?.leaseExpiresAt ?? now,
        })
      }
      yield* fs.remove(aside)
    }
    return yield* new WatcherLockHeldError({
      path: file,
      holderPid: -1,
      host: "unknown",
      leaseExpiresAt: now,
    })
  })

/** Extends the lease; fails with WatcherLockLostError when the lock is no longer ours. */
export const renewWatcherLock = (
  fs: WakeFileSystemShape,
  held: HeldWatcherLock,
  leaseMs: number = WATCHER_LEASE_MS,
): Effect.Effect<void, WatcherLockLostError | WakeIoError> =>
  Effect.gen(function* () {
    const text = yield* fs.readText(held.file)
    const info = text === null ? null : decodeWatcherLock(text)
    if (info === null || info.token !== held.token)
      return yield* new WatcherLockLostError({ path: held.file })
    const now = yield* Clock.currentTimeMillis
    yield* fs.writeAtomic(
      held.file,
      encode({ ...info, leaseExpiresAt: now + leaseMs }),
      WAKE_FILE_MODE,
    )
  })

/** Removes the lock if it is still ours. */
export const releaseWatcherLock = (
  fs: WakeFileSystemShape,
  held: HeldWatcherLock,
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const text = yield* fs.readText(held.file)
    if (text !== null && decodeWatcherLock(text)?.token === held.token) yield* fs.remove(held.file)
  }).pipe(Effect.ignore)

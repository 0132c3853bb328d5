/**
 * The per-job lock: a lease file created exclusively, naming its holder. Every change to a job
 * happens inside `withJobLock`, and the write itself is still compare-and-set on the revision.
 * A lock whose lease expired (or that is unreadable, i.e. torn by a crash) is moved aside (never
 * deleted in place: what moved is checked to be what was judged, and put back otherwise), then
 * removed, and taken over; so is a current lease whose holder process is gone, when the caller
 * can tell (`probe`: a watcher killed mid-change must not block `wake complete` for the
 * rest of its lease). A current lease of a live holder is always respected (the caller retries
 * later). Acquisition never waits. The holder clears the debris of killed holders and takers
 * beside the lock (`removeLockDebris`). Time comes from the Effect Clock.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { JobLockHeldError } from "./errors.js"
import type { WakeIoError } from "./errors.js"
import { WAKE_FILE_MODE } from "./job-paths.js"
import type { WakeFileSystemShape } from "./wake-file-system.js"
import type { HolderProbe } from "./watcher-lock.js"

/** How long a lock is valid without renewal; store operations take milliseconds. */
export const LOCK_LEASE_MS = 30_000

const LockSchema = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  pid: Schema.Number,
  token: Schema.String,
  acquiredAt: Schema.Number,
  leaseExpiresAt: Schema.Number,
})

type Lock = typeof LockSchema.Type

const decodeLock = (text: string): Lock | null => {
  try {
    const result = Schema.decodeUnknownResult(LockSchema)(JSON.parse(text))
    return Result.isSuccess(result) ? result.success : null
  } catch {
    return null
  }
}

let sequence = 0

const acquire = (
  fs: WakeFileSystemShape,
  file: string,
  pid: number,
  probe: HolderProbe | undefined,
): Effect.Effect<string, JobLockHeldError | WakeIoError> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    sequence += 1
    const token = `${pid}:${now}:${sequence}`
    const text = `${JSON.stringify({ schemaVersion: 1, pid, token, acquiredAt: now, leaseExpiresAt: now + LOCK_LEASE_MS })}\n`
    for (let round = 0; round < 3; round++) {
      if (yield* fs.createExclusive(file, text, WAKE_FILE_MODE)) {
        // Holding it: clear what killed holders and takers left beside it (best effort).
        yield* Effect.ignore(fs.removeLockDebris(file, now))
        return token
      }
      const existingText = yield* fs.readText(file)
      if (existingText === null) continue
      const existing = decodeLock(existingText)
      const current =
        existing !== null &&
        existing.leaseExpiresAt > now &&
        (probe === undefined || existing.pid === pid || (yield* probe(existing.pid, null)))
      if (current)
        return yield* new JobLockHeldError({
          path: file,
          holderPid: existing.pid,
          leaseExpiresAt: existing.leaseExpiresAt,
        })
      // Judged stale on what was read before the liveness check: a holder that released and
      // exited meanwhile may have a successor's fresh lock in its place. Look again first.
      if ((yield* fs.readText(file)) !== existingText) continue
      // Stale, torn or orphaned: move it aside, and check that what moved is what was judged.
      const aside = `${file}.stale-${now}-${sequence}`
      if (!(yield* fs.rename(file, aside))) continue
      const moved = yield* fs.readText(aside)
      if (moved !== existingText) {
        if (moved !== null) yield* fs.createExclusive(file, moved, WAKE_FILE_MODE)
        const holder = moved === null ? null : decodeLock(moved)
        return yield* new JobLockHeldError({
          path: file,
          holderPid: holder?.pid ?? -1,
          leaseExpiresAt: holder?.leaseExpiresAt ?? now,
        })
      }
      // What moved is the lock judged stale: nothing refers to it, so it goes (a kill before
      // this leaves it to `removeLockDebris`).
      yield* Effect.ignore(fs.remove(aside))
    }
    return yield* new JobLockHeldError({ path: file, holderPid: -1, leaseExpiresAt: now })
  })

const release = (fs: WakeFileSystemShape, file: string, token: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const text = yield* fs.readText(file)
    if (text !== null && decodeLock(text)?.token === token) yield* fs.remove(file)
  }).pipe(Effect.ignore)

/**
 * Runs `use` while holding the lock file `file`; the lock is released whatever happens. With
 * `probe` (the watcher lock's {@link HolderProbe}; the job lock records no start time), a lease held by a process that no longer runs is taken over at once (on this
 * machine's process table; the write stays compare-and-set on the revision either way).
 */
export const withJobLock = <A, E, R>(
  fs: WakeFileSystemShape,
  file: string,
  pid: number,
  use: Effect.Effect<A, E, R>,
  probe?: HolderProbe,
): Effect.Effect<A, E | JobLockHeldError | WakeIoError, R> =>
  Effect.acquireUseRelease(
    acquire(fs, file, pid, probe),
    () => use,
    (token) => release(fs, file, token),
  )

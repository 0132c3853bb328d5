/**
 * Crash-safe file primitives shared by the job stores of `@baton/compaction` and `@baton/wake`:
 * plain Node `fs` with the fsyncs that make each write survive a crash, and the real cause named
 * where Node reports a misleading one. No Effect, no job rules: each store's adapter wraps these
 * in its own typed error.
 *
 * Guarantees: a replaced file is the old text or the new text, never a mix (temp file in the same
 * directory, fsync, rename, fsync directory); a file created with {@link createFileWhole} is never
 * seen empty or part-written; no failed write (a full disk) leaves a temporary file behind; what a
 * killed writer or a lock takeover left next to a lock is removed by {@link removeLockDebris} once it
 * is provably abandoned; every function rejects with Node's error (its `code` intact) except where
 * documented.
 */
import { randomBytes } from "node:crypto"
import type { Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"

/** The `code` of a Node system error (`ENOENT`, `EROFS`, …); `UNKNOWN` for anything else. */
export const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : "UNKNOWN"

/** Runs `run`; its result, or `fallback` when it rejects with one of the `absent` codes. */
export const absentAs = async <A>(
  fallback: A,
  run: () => Promise<A>,
  absent: ReadonlyArray<string> = ["ENOENT"],
): Promise<A> => {
  try {
    return await run()
  } catch (error) {
    if (absent.includes(errorCode(error))) return fallback
    throw error
  }
}

/** Flushes a directory's entries (a rename or create in it) to disk. */
export const fsyncDirectory = async (dir: string): Promise<void> => {
  const handle = await fs.open(dir, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Writes `text` to `file` opened with `flag` (`wx`: a new file; `a`: append) and syncs it. A new
 * file whose write fails (a full disk) is removed, so no empty or part-written file stays.
 */
export const writeDurably = async (
  file: string,
  text: string,
  mode: number,
  flag: "wx" | "a" = "wx",
): Promise<void> => {
  const handle = await fs.open(file, flag, mode)
  try {
    await handle.writeFile(text, "utf8")
    await handle.sync()
  } catch (error) {
    await handle.close().catch(() => undefined)
    if (flag === "wx") await fs.unlink(file).catch(() => undefined)
    throw error
  }
  await handle.close()
}

/**
 * `mkdir -p`, then `mode` forced on the leaf. Node's recursive mkdir reports ENOENT where the real
 * cause is a read-only file system or no permission (it only knows that the path is still
 * missing); the deepest missing directory is then made alone, which fails with the real code.
 */
export const makeDirectories = async (dir: string, mode: number): Promise<void> => {
  try {
    await fs.mkdir(dir, { recursive: true, mode })
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error
    let missing = path.resolve(dir)
    while (path.dirname(missing) !== missing) {
      const parent = path.dirname(missing)
      if (
        await fs.stat(parent).then(
          () => true,
          () => false,
        )
      )
        break
      missing = parent
    }
    await fs.mkdir(missing, { mode }).catch((cause: unknown) => {
      if (errorCode(cause) !== "EEXIST") throw cause // made by another process meanwhile: go on
    })
    await fs.mkdir(dir, { recursive: true, mode })
  }
  await fs.chmod(dir, mode)
}

/**
 * Replaces `file` with `text` atomically and durably: a reader, or the file after a crash, holds
 * the old text or the new, whole.
 */
export const replaceFile = async (file: string, text: string, mode: number): Promise<void> => {
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`
  try {
    await writeDurably(temp, text, mode)
    await fs.rename(temp, file)
  } catch (error) {
    await fs.rm(temp, { force: true })
    throw error
  }
  await fsyncDirectory(path.dirname(file))
}

/** Whether process `pid` runs on this machine (`kill(pid, 0)`; EPERM: it runs as someone else). */
const processRuns = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errorCode(error) === "EPERM"
  }
}

/** Where a file system has no hard links: create in place (a reader may see it part-written). */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"])

/**
 * Creates `file` holding `text` only if nothing is there, whole and durably; false when something
 * already was (it is left as it was). The text is written and synced to a temporary file, then
 * hard-linked into place (the link fails with EEXIST), so no reader ever sees the file empty or
 * part-written (a lock taken over as "torn" while its holder was still writing it). Where hard
 * links are refused, an exclusive create written in place. The temporary file's name records
 * this process's pid (`<file>.<pid>-<hex>.creating`), so one left by a killed writer can be told
 * abandoned ({@link removeLockDebris}).
 */
export const createFileWhole = async (
  file: string,
  text: string,
  mode: number,
): Promise<boolean> => {
  const temp = `${file}.${process.pid}-${randomBytes(6).toString("hex")}.creating`
  try {
    await writeDurably(temp, text, mode)
    await fs.link(temp, file)
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false
    if (!NO_LINKS.has(errorCode(error))) throw error
    try {
      await writeDurably(file, text, mode)
    } catch (inPlace) {
      if (errorCode(inPlace) === "EEXIST") return false
      throw inPlace
    }
  } finally {
    await fs.unlink(temp).catch(() => undefined)
  }
  await fsyncDirectory(path.dirname(file))
  return true
}

/**
 * A {@link createFileWhole} temporary file older than this is abandoned even when its writer's pid
 * runs (or was not recorded): writing and linking a few hundred bytes takes milliseconds, so only
 * a killed writer (or a pid reused since) leaves one this old.
 */
export const ABANDONED_TEMP_MS = 10 * 60_000

/**
 * How long a lock moved aside by a takeover (`<lock>.stale-<ms>-<n>`, `<ms>` the takeover's time)
 * is kept. Never less than a few seconds: a taker checks what it moved and may put it back, so a
 * fresh one can still be in use. Compaction's event log names the file it moved a stale lock to;
 * an hour leaves time to look at it after a crash without letting them pile up.
 */
export const STALE_LOCK_KEEP_MS = 60 * 60_000

const escapeForRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Whether `file` is the lock `lockFile` moved aside by a takeover (`<lock>.stale-<ms>-<n>`) more
 * than {@link STALE_LOCK_KEEP_MS} before `nowMs`: debris {@link removeLockDebris} removes (and the
 * in-memory file systems of the job stores, where no process dies half-way, remove alone).
 */
export const isExpiredLockAside = (lockFile: string, file: string, nowMs: number): boolean => {
  if (!file.startsWith(`${lockFile}.stale-`)) return false
  const at = /^(\d+)-\d+$/.exec(file.slice(lockFile.length + ".stale-".length))?.[1]
  return at !== undefined && nowMs - Number(at) > STALE_LOCK_KEEP_MS
}

/**
 * Removes what killed processes left next to the lock file `lockFile`, and returns the paths
 * removed: {@link createFileWhole} temporaries (`<lock>.<pid>-<hex>.creating`) whose writer no
 * longer runs on this machine, or older than {@link ABANDONED_TEMP_MS} (also the older
 * `<lock>.<hex>.creating`, which names no pid); and locks moved aside by a takeover more than
 * {@link STALE_LOCK_KEEP_MS} before `nowMs`. Call it holding the lock. Never touches the lock
 * itself or anything else; a file that vanished meanwhile is skipped.
 */
export const removeLockDebris = async (
  lockFile: string,
  nowMs: number,
  runs: (pid: number) => boolean = processRuns,
): Promise<ReadonlyArray<string>> => {
  const dir = path.dirname(lockFile)
  const base = escapeForRegExp(path.basename(lockFile))
  const creating = new RegExp(`^${base}\\.(?:(\\d+)-)?[0-9a-f]{12}\\.creating$`)
  const lock = path.join(dir, path.basename(lockFile))
  const removed: Array<string> = []
  for (const name of await absentAs<ReadonlyArray<string>>([], () => fs.readdir(dir))) {
    const entry = path.join(dir, name)
    const temp = creating.exec(name)
    const pid = temp?.[1] === undefined ? null : Number(temp[1])
    const abandoned =
      temp === null
        ? isExpiredLockAside(lock, entry, nowMs)
        : (pid !== null && pid !== process.pid && !runs(pid)) ||
          nowMs - ((await absentAs<Stats | null>(null, () => fs.stat(entry)))?.mtimeMs ?? nowMs) >
            ABANDONED_TEMP_MS
    if (abandoned && (await absentAs(false, () => fs.unlink(entry).then(() => true))))
      removed.push(entry)
  }
  return removed
}

/** Renames durably (the target's directory is synced); false when `from` does not exist. */
export const renameDurably = (from: string, to: string): Promise<boolean> =>
  absentAs(false, async () => {
    await fs.rename(from, to)
    await fsyncDirectory(path.dirname(to))
    return true
  })

const isDirectoryPath = (p: string) =>
  fs.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  )

/**
 * The deepest existing ancestor of `file` (or `file` itself) that is not a directory — what an
 * ENOTDIR (or mkdir's EEXIST) really means. Null when every existing component is a directory
 * (a symbolic link to a directory counts as one).
 */
export const blockingNonDirectory = async (file: string): Promise<string | null> => {
  const chain: Array<string> = []
  for (let p = path.resolve(file); ; p = path.dirname(p)) {
    chain.unshift(p)
    if (path.dirname(p) === p) break
  }
  for (const p of chain) {
    const stat = await fs.lstat(p).catch(() => null)
    if (stat === null) return null
    if (!stat.isDirectory()) return stat.isSymbolicLink() && (await isDirectoryPath(p)) ? null : p
  }
  return null
}

/**
 * When `error` (ENOTDIR, or mkdir's EEXIST) came from a regular file standing where a directory
 * must be, the path of that file; null for any other error. `directory` is the directory the
 * failed operation needed (the directory made or listed, or a file's parent).
 */
export const notADirectoryCause = async (
  error: unknown,
  directory: string,
): Promise<string | null> => {
  const code = errorCode(error)
  if (code !== "ENOTDIR" && code !== "EEXIST") return null
  return blockingNonDirectory(directory)
}

/**
 * Runs `run`; when it fails because a regular file stands where a directory must be (ENOTDIR, or
 * mkdir's EEXIST), rejects instead with an Error naming that file — "`<file>` is not a directory
 * (`<why>`)" — whose `code` is ENOTDIR and whose `blocker` is the file. `directory` is the
 * directory the operation needed (see {@link notADirectoryCause}); any other failure passes
 * through unchanged.
 */
export const explainingNotADirectory = async <A>(
  directory: string,
  why: string,
  run: () => Promise<A>,
): Promise<A> => {
  try {
    return await run()
  } catch (error) {
    const blocker = await notADirectoryCause(error, directory)
    if (blocker === null) throw error
    throw Object.assign(new Error(`${blocker} is not a directory (${why})`), {
      code: "ENOTDIR",
      blocker,
    })
  }
}

/** The path a failure is about: the blocking file {@link explainingNotADirectory} named, else `file`. */
export const failurePath = (error: unknown, file: string): string =>
  typeof error === "object" && error !== null && "blocker" in error ? String(error.blocker) : file

/**
 * What to do when a write failed with `code` because the disk is full (ENOSPC, or EDQUOT: the
 * user's quota): ": the disk holding it is full: free some space on it, or set `<variable>` to a
 * directory on another disk"; "" for any other code. Appended to the messages of the job stores'
 * IO errors, so every full-disk failure says how to get going again.
 */
export const fullDiskRemedy = (code: string, variable: string): string =>
  code === "ENOSPC" || code === "EDQUOT"
    ? `: the disk holding it is ${code === "EDQUOT" ? "over your quota" : "full"}: free some space on it, or set ${variable} to a directory on another disk`
    : ""

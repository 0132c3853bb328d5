// The recall index on a full disk and on a read-only file system: every open (a search, a status,
// an index run) and `baton doctor`'s check name the real cause — SQLite itself says only "disk I/O
// error" (it cannot size the `-shm` file) or "unable to open database file" (it cannot create the
// `-wal` and `-shm` files) — and a vacuum that does not fit says to free space and vacuum again.
// Each needs a small tmpfs, so root; elsewhere the tests skip and say why.
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import {
  checkRecallIndexFile,
  nodeIndexerProcessLayer,
  openRecallDatabase,
  recallDatabaseLayer,
  vacuumIndex,
} from "@baton/recall-index"
import type { RecallStorageError } from "@baton/recall-index"
import { insertChunkRows, tempDir, withIndex, withSqlite } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c()
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A tmpfs of `size` on a new directory, unmounted after the test; or why it cannot be made. */
const mountTmpfs = (size: string): string | { readonly unavailable: string } => {
  if (process.getuid?.() !== 0) return { unavailable: "mounting a small tmpfs needs root" }
  const dir = mkdtempSync(join(tmpdir(), "baton-fs-"))
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    return { unavailable: `mount failed: ${(error as Error).message.split("\n")[0]}` }
  }
  cleanups.push(() => {
    execFileSync("umount", [dir], { stdio: "pipe" })
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

/** Fills the file system holding `dir` up to `leave` free bytes. */
const fill = (dir: string, leave: number): void => {
  const free = () => {
    const s = statfsSync(dir)
    return s.bavail * s.bsize
  }
  writeFileSync(join(dir, "filler"), Buffer.alloc(Math.max(0, free() - leave)))
  expect(free()).toBeLessThanOrEqual(leave)
}

/**
 * A real index of `sessions` × 400 chunks, closed cleanly (no `-wal`, no `-shm`: the state a
 * finished command leaves), in a temp directory; returns its file.
 */
const cleanIndex = async (sessions: number): Promise<string> => {
  const data = tempDir("data")
  cleanups.push(data.dispose)
  const dataDir = join(data.path, "baton")
  await insertChunkRows(
    dataDir,
    Array.from({ length: sessions }, (_, s) => ({
      sessionId: `session-${s}`,
      texts: Array.from(
        { length: 400 },
        (_, i) => `session ${s} note ${i}: the upload retry policy waits ${i % 7} seconds`,
      ),
    })),
  )
  await withSqlite(dataDir, (s) => s.pragma("wal_checkpoint(TRUNCATE)"))
  const file = join(dataDir, "recall-index.db")
  expect(existsSync(`${file}-wal`) || existsSync(`${file}-shm`)).toBe(false)
  return file
}

/** The error opening the index in `dataDir` fails with. */
const openError = (dataDir: string): Promise<RecallStorageError> =>
  Effect.runPromise(Effect.flip(Effect.scoped(openRecallDatabase({ dataDir }))))

const unusable = (path: string): RecallStorageError => {
  const check = checkRecallIndexFile(path)
  if (check._tag !== "Unusable") throw new Error(`expected Unusable, got ${check._tag}`)
  return check.error
}

describe("an index on a full disk", () => {
  it("fails to open with a message that says the disk is full, and doctor says so too", async (context) => {
    const dir = mountTmpfs("4m")
    if (typeof dir !== "string") return context.skip(dir.unavailable)
    const path = join(dir, "recall-index.db")
    copyFileSync(await cleanIndex(1), path)
    // Under the 32 KiB SQLite needs for the -shm file: it fails with SQLITE_IOERR_SHMSIZE.
    fill(dir, 16 * 1024)
    const full = new RegExp(
      `^the disk holding the recall index \\(${escape(dir)}\\) is full, so the index at ` +
        `${escape(path)} cannot be opened, not even to search it \\(.*SQLITE_IOERR_SHMSIZE.*\\): ` +
        "free some space there, or set BATON_DATA_DIR to a directory on another disk",
    )
    const error = await openError(dir)
    expect(error._tag).toBe("RecallStorageError")
    expect(error.operation).toBe("open")
    expect(error.message).toMatch(full)
    expect(unusable(path).message).toMatch(full)

    // Nothing was lost: with room again, the index opens and reads.
    rmSync(join(dir, "filler"))
    const sessions = await withSqlite(
      dir,
      (s) => s.prepare("select count(*) from sessions").pluck().get() as number,
    )
    expect(sessions).toBe(1)
  })

  it("a vacuum that does not fit says the index is unchanged and to vacuum again", async (context) => {
    const dir = mountTmpfs("16m")
    if (typeof dir !== "string") return context.skip(dir.unavailable)
    const path = join(dir, "recall-index.db")
    copyFileSync(await cleanIndex(8), path)
    // Room for the lock and the -shm file, not for the rewritten copy.
    fill(dir, 256 * 1024)
    const error = await Effect.runPromise(
      Effect.flip(
        Effect.scoped(vacuumIndex()).pipe(
          Effect.provide(
            Layer.mergeAll(recallDatabaseLayer({ dataDir: dir }), nodeIndexerProcessLayer),
          ),
        ),
      ),
    )
    expect(error._tag).toBe("RecallStorageError")
    expect(error.message).toMatch(
      new RegExp(
        `^the disk holding the recall index \\(${escape(dir)}\\) is full \\(.*\\): the vacuum ` +
          "was undone and the index is unchanged; free some space .* and run 'baton recall " +
          "vacuum' again$",
      ),
    )
    expect(error.message).not.toMatch(/next index run/)
    rmSync(join(dir, "filler"))
    expect(await withSqlite(dir, (s) => s.pragma("integrity_check", { simple: true }))).toBe("ok")
  })
})

describe("an index on a read-only file system", () => {
  it("fails to open with a message that names the read-only file system; doctor too", async (context) => {
    const dir = mountTmpfs("4m")
    if (typeof dir !== "string") return context.skip(dir.unavailable)
    const path = join(dir, "recall-index.db")
    copyFileSync(await cleanIndex(1), path)
    execFileSync("mount", ["-o", "remount,ro", dir], { stdio: "pipe" })
    const readOnly = new RegExp(
      `^the file system holding the recall index \\(${escape(dir)}\\) is read-only, so the ` +
        `index at ${escape(path)} cannot be opened \\(.*EROFS.*\\): remount it read-write, or ` +
        "set BATON_DATA_DIR to a directory on a writable disk",
    )
    const error = await openError(dir)
    expect(error._tag).toBe("RecallStorageError")
    expect(error.message).toMatch(readOnly)
    expect(error.message).not.toMatch(/is in the way/)
    expect(unusable(path).message).toMatch(readOnly)
  })

  it("a missing index there says the same", async (context) => {
    const dir = mountTmpfs("1m")
    if (typeof dir !== "string") return context.skip(dir.unavailable)
    execFileSync("mount", ["-o", "remount,ro", dir], { stdio: "pipe" })
    expect((await openError(dir)).message).toMatch(
      /^the file system holding the recall index \(.*\) is read-only/,
    )
  })
})

describe("withIndex on a healthy index", () => {
  it("still opens (the checks above change no message for it)", async () => {
    const path = await cleanIndex(1)
    const dataDir = join(path, "..")
    expect(await withIndex(dataDir, Effect.succeed(1))).toBe(1)
    expect(checkRecallIndexFile(path)._tag).toBe("Readable")
  })
})

import { execFileSync } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, describe, expect, test } from "vitest"
import { nodeJournalFileSystem } from "./journal-file-system.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

describe("nodeJournalFileSystem under a regular file", () => {
  // `BATON_JOBS_DIR` naming a file used to fail with "journal mkdir failed … (EEXIST)".
  test("names the file that stands where a directory must be, and what to do", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "baton-notdir-"))
    dirs.push(dir)
    const jobs = path.join(dir, "jobs")
    await writeFile(jobs, "")
    for (const failing of [
      nodeJournalFileSystem.readText(path.join(jobs, "t", "thread.json")),
      nodeJournalFileSystem.list(path.join(jobs, "t")),
      nodeJournalFileSystem.ensureDir(path.join(jobs, "t"), 0o700),
      nodeJournalFileSystem.ensureDir(jobs, 0o700),
      nodeJournalFileSystem.append(path.join(jobs, "t", "events.jsonl"), "{}\n", 0o600),
    ]) {
      const error = await Effect.runPromise(Effect.flip(failing))
      expect(error).toMatchObject({ path: jobs, code: "ENOTDIR" })
      expect(error.message).toContain(`${jobs} is not a directory`)
      expect(error.message).toContain("BATON_JOBS_DIR")
    }
    // Absent files and directories are not errors.
    expect(await Effect.runPromise(nodeJournalFileSystem.readText(path.join(dir, "x")))).toBe(null)
    expect(await Effect.runPromise(nodeJournalFileSystem.list(path.join(dir, "x")))).toEqual([])
  })
})

describe("nodeJournalFileSystem on a full disk", () => {
  // `JournalIo: journal append failed on …events.jsonl (ENOSPC): …` named the problem, not the fix.
  test("says to free some space or move BATON_JOBS_DIR", async (context) => {
    if (process.getuid?.() !== 0) return context.skip("mounting a small tmpfs needs root")
    const dir = await mkdtemp(path.join(tmpdir(), "baton-full-jobs-"))
    dirs.push(dir)
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "pipe" })
    } catch (error) {
      return context.skip(`mount failed: ${(error as Error).message.split("\n")[0]}`)
    }
    try {
      const big = "x".repeat(256 * 1024)
      for (const failing of [
        nodeJournalFileSystem.append(path.join(dir, "events.jsonl"), big, 0o600),
        nodeJournalFileSystem.writeAtomic(path.join(dir, "job.json"), big, 0o600),
        nodeJournalFileSystem.createExclusive(path.join(dir, "lock.json"), big, 0o600),
      ]) {
        const error = await Effect.runPromise(Effect.flip(failing))
        expect(error.code).toBe("ENOSPC")
        expect(error.message).toMatch(
          /\(ENOSPC\): .*: the disk holding it is full: free some space on it, or set BATON_JOBS_DIR to a directory on another disk$/,
        )
      }
    } finally {
      execFileSync("umount", [dir], { stdio: "pipe" })
    }
  })
})

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

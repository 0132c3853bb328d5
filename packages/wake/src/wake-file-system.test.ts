import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, describe, expect, test } from "vitest"
import { nodeWakeFileSystem } from "./wake-file-system.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

describe("nodeWakeFileSystem under a regular file", () => {
  test("names the file that stands where a directory must be", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "baton-notdir-"))
    dirs.push(dir)
    const wake = path.join(dir, "wake")
    await writeFile(wake, "")
    for (const failing of [
      nodeWakeFileSystem.readText(path.join(wake, "jobs", "j", "state.json")),
      nodeWakeFileSystem.list(path.join(wake, "jobs")),
      nodeWakeFileSystem.ensureDir(path.join(wake, "jobs", "j"), 0o700),
      nodeWakeFileSystem.ensureDir(wake, 0o700),
    ]) {
      const error = await Effect.runPromise(Effect.flip(failing))
      expect(error).toMatchObject({ path: wake, code: "ENOTDIR" })
      expect(error.message).toContain(`${wake} is not a directory`)
    }
    // A cwd under a file does not exist; the file itself is no directory.
    expect(await Effect.runPromise(nodeWakeFileSystem.isDirectory(path.join(wake, "x")))).toBe(null)
    expect(await Effect.runPromise(nodeWakeFileSystem.isDirectory(wake))).toBe(false)
    expect(await Effect.runPromise(nodeWakeFileSystem.isDirectory(dir))).toBe(true)
  })
})

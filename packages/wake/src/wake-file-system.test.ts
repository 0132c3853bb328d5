import { execFileSync } from "node:child_process"
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { mountReadOnly } from "@baton/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { nodeWakeFileSystem } from "./wake-file-system.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

describe("nodeWakeFileSystem.createExclusive", () => {
  // A lock file read while its creator is still writing it looked torn, and was taken over.
  test("never lets a reader see the file empty or part-written", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "baton-create-"))
    dirs.push(dir)
    // Big enough that writing it takes many reads' time.
    const text = "x".repeat(4_000_000)
    let partial = 0
    for (let round = 0; round < 5; round++) {
      const file = path.join(dir, `lock-${round}`)
      let done = false
      const creating = Effect.runPromise(
        nodeWakeFileSystem.createExclusive(file, text, 0o600),
      ).then((created) => {
        done = true
        return created
      })
      while (!done) {
        try {
          if ((await readFile(file, "utf8")) !== text) partial += 1
        } catch {
          // Not there yet.
        }
      }
      expect(await creating).toBe(true)
    }
    expect(partial).toBe(0)
    // The file is left as the only entry, whole; no temporary file remains.
    expect((await readdir(dir)).sort()).toEqual([0, 1, 2, 3, 4].map((n) => `lock-${n}`))
  })

  test("does not replace a file that is there, and leaves no temporary file", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "baton-create-"))
    dirs.push(dir)
    const file = path.join(dir, "lock")
    await writeFile(file, "first\n")
    expect(
      await Effect.runPromise(nodeWakeFileSystem.createExclusive(file, "second\n", 0o600)),
    ).toBe(false)
    expect(await readFile(file, "utf8")).toBe("first\n")
    expect(await readdir(dir)).toEqual(["lock"])
  })
})

describe("nodeWakeFileSystem.ensureDir", () => {
  // Node's recursive mkdir reports ENOENT on a read-only file system, which reads as "missing".
  test("names a read-only file system as such", async (context) => {
    const mount = mountReadOnly()
    if ("unavailable" in mount) return context.skip(mount.unavailable)
    try {
      const error = await Effect.runPromise(
        Effect.flip(nodeWakeFileSystem.ensureDir(path.join(mount.path, "a", "b"), 0o700)),
      )
      expect(error).toMatchObject({ operation: "mkdir", code: "EROFS" })
    } finally {
      mount.dispose()
    }
  })
})

describe("nodeWakeFileSystem on a full disk", () => {
  // Every call on a full disk used to leave `<file>.<hex>.creating` (or `.tmp`) behind.
  test("a failed create or atomic write leaves no temporary file", async (context) => {
    if (process.getuid?.() !== 0) return context.skip("mounting a small tmpfs needs root")
    const dir = await mkdtemp(path.join(tmpdir(), "baton-full-"))
    dirs.push(dir)
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "pipe" })
    } catch (error) {
      return context.skip(`mount failed: ${(error as Error).message.split("\n")[0]}`)
    }
    try {
      const big = "x".repeat(256 * 1024)
      const created = await Effect.runPromise(
        Effect.flip(nodeWakeFileSystem.createExclusive(path.join(dir, "lock"), big, 0o600)),
      )
      expect(created).toMatchObject({ code: "ENOSPC" })
      const written = await Effect.runPromise(
        Effect.flip(nodeWakeFileSystem.writeAtomic(path.join(dir, "state.json"), big, 0o600)),
      )
      expect(written).toMatchObject({ code: "ENOSPC" })
      expect(await readdir(dir)).toEqual([])
    } finally {
      execFileSync("umount", [dir], { stdio: "pipe" })
    }
  })
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

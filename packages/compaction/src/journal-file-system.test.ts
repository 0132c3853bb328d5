import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { mountReadOnly } from "@baton/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { nodeJournalFileSystem } from "./journal-file-system.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

describe("nodeJournalFileSystem.createExclusive", () => {
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
        nodeJournalFileSystem.createExclusive(file, text, 0o600),
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
      await Effect.runPromise(nodeJournalFileSystem.createExclusive(file, "second\n", 0o600)),
    ).toBe(false)
    expect(await readFile(file, "utf8")).toBe("first\n")
    expect(await readdir(dir)).toEqual(["lock"])
  })
})

describe("nodeJournalFileSystem.ensureDir", () => {
  // Node's recursive mkdir reports ENOENT on a read-only file system, which reads as "missing".
  test("names a read-only file system as such", async (context) => {
    const mount = mountReadOnly()
    if ("unavailable" in mount) return context.skip(mount.unavailable)
    try {
      const error = await Effect.runPromise(
        Effect.flip(nodeJournalFileSystem.ensureDir(path.join(mount.path, "a", "b"), 0o700)),
      )
      expect(error).toMatchObject({ operation: "mkdir", code: "EROFS" })
    } finally {
      mount.dispose()
    }
  })
})

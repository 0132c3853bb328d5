import { execFileSync } from "node:child_process"
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { mountReadOnly } from "@baton/testkit"
import { afterEach, describe, expect, test } from "vitest"
import {
  absentAs,
  blockingNonDirectory,
  createFileWhole,
  errorCode,
  explainingNotADirectory,
  ABANDONED_TEMP_MS,
  failurePath,
  fullDiskRemedy,
  makeDirectories,
  notADirectoryCause,
  removeLockDebris,
  renameDurably,
  STALE_LOCK_KEEP_MS,
  replaceFile,
  writeDurably,
} from "./index.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

const tempDir = async (): Promise<string> => {
  const dir = await mkdtemp(path.join(tmpdir(), "baton-durable-"))
  dirs.push(dir)
  return dir
}

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error("expected a rejection")
    },
    (error: unknown) => error,
  )

describe("createFileWhole", () => {
  // A lock file read while its creator is still writing it looked torn, and was taken over.
  test("never lets a reader see the file empty or part-written", async () => {
    const dir = await tempDir()
    // Big enough that writing it takes many reads' time.
    const text = "x".repeat(4_000_000)
    let partial = 0
    for (let round = 0; round < 5; round++) {
      const file = path.join(dir, `lock-${round}`)
      let done = false
      const creating = createFileWhole(file, text, 0o600).then((created) => {
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
    // The file is left as the only entry, whole, with the mode asked for; no temporary file.
    expect((await readdir(dir)).sort()).toEqual([0, 1, 2, 3, 4].map((n) => `lock-${n}`))
    expect((await stat(path.join(dir, "lock-0"))).mode & 0o777).toBe(0o600)
  })

  test("does not replace a file that is there, and leaves no temporary file", async () => {
    const dir = await tempDir()
    const file = path.join(dir, "lock")
    await writeFile(file, "first\n")
    expect(await createFileWhole(file, "second\n", 0o600)).toBe(false)
    expect(await readFile(file, "utf8")).toBe("first\n")
    expect(await readdir(dir)).toEqual(["lock"])
  })
})

describe("replaceFile", () => {
  test("a reader sees the old text or the new, whole; no temporary file stays", async () => {
    const dir = await tempDir()
    const file = path.join(dir, "state.json")
    const texts = ["a".repeat(2_000_000), "b".repeat(3_000_000)]
    await replaceFile(file, texts[0]!, 0o600)
    let torn = 0
    for (let round = 0; round < 4; round++) {
      let done = false
      const replacing = replaceFile(file, texts[(round + 1) % 2]!, 0o600).then(() => {
        done = true
      })
      while (!done) if (!texts.includes(await readFile(file, "utf8"))) torn += 1
      await replacing
    }
    expect(torn).toBe(0)
    expect(await readFile(file, "utf8")).toBe(texts[0])
    expect(await readdir(dir)).toEqual(["state.json"])
  })
})

describe("writeDurably", () => {
  test("appends whole lines, creating the file with the mode", async () => {
    const file = path.join(await tempDir(), "events.jsonl")
    await writeDurably(file, "one\n", 0o600, "a")
    await writeDurably(file, "two\n", 0o644, "a")
    expect(await readFile(file, "utf8")).toBe("one\ntwo\n")
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  test("a new file refuses to overwrite (EEXIST) and keeps the old text", async () => {
    const file = path.join(await tempDir(), "f")
    await writeFile(file, "old")
    expect(errorCode(await rejection(writeDurably(file, "new", 0o600)))).toBe("EEXIST")
    expect(await readFile(file, "utf8")).toBe("old")
  })
})

describe("makeDirectories", () => {
  test("makes every missing level and forces the mode on the leaf", async () => {
    const dir = await tempDir()
    const leaf = path.join(dir, "a", "b", "c")
    await mkdir(path.join(dir, "a"), { mode: 0o755 })
    await makeDirectories(leaf, 0o700)
    expect((await stat(leaf)).mode & 0o777).toBe(0o700)
    // Already there with another mode: the mode is forced again.
    await rm(leaf, { recursive: true })
    await mkdir(leaf, { mode: 0o755 })
    await makeDirectories(leaf, 0o700)
    expect((await stat(leaf)).mode & 0o777).toBe(0o700)
  })

  // Node's recursive mkdir reports ENOENT on a read-only file system, which reads as "missing".
  test("names a read-only file system as such", async (context) => {
    const mount = mountReadOnly()
    if ("unavailable" in mount) return context.skip(mount.unavailable)
    try {
      const error = await rejection(makeDirectories(path.join(mount.path, "a", "b"), 0o700))
      expect(errorCode(error)).toBe("EROFS")
    } finally {
      mount.dispose()
    }
  })
})

describe("removeLockDebris", () => {
  // `kill -9` of a lock holder or taker left `lock.<hex>.creating` and `lock.stale-<ms>-<n>` in
  // the job directory for good: nothing ever removed them.
  test("removes what killed writers and takers left beside the lock, and nothing else", async () => {
    const dir = await tempDir()
    const lock = path.join(dir, "lock")
    const now = Date.now()
    const deadPid = 2_000_001
    const livePid = process.ppid
    const old = (now - ABANDONED_TEMP_MS - 60_000) / 1000
    const files = {
      lock: "held",
      [`lock.${deadPid}-0123456789ab.creating`]: "dead writer",
      [`lock.${livePid}-0123456789ac.creating`]: "live writer, fresh",
      [`lock.${livePid}-0123456789ad.creating`]: "live writer (a reused pid), old",
      "lock.8e0205b8721f.creating": "no pid, old",
      "lock.8e0205b8721a.creating": "no pid, fresh",
      [`lock.stale-${now - STALE_LOCK_KEEP_MS - 1}-1`]: "moved aside long ago",
      [`lock.stale-${now - 5_000}-2`]: "moved aside just now (its taker may put it back)",
      [`other.stale-${now - STALE_LOCK_KEEP_MS - 1}-1`]: "another lock's",
      [`other.${deadPid}-0123456789ab.creating`]: "another file's",
      "checkpoint.md.0123456789ab.tmp": "not a lock's",
    }
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text)
    for (const name of [`lock.${livePid}-0123456789ad.creating`, "lock.8e0205b8721f.creating"])
      await utimes(path.join(dir, name), old, old)
    const removed = await removeLockDebris(lock, now, (pid) => pid !== deadPid)
    const gone = [
      `lock.${deadPid}-0123456789ab.creating`,
      `lock.${livePid}-0123456789ad.creating`,
      "lock.8e0205b8721f.creating",
      `lock.stale-${now - STALE_LOCK_KEEP_MS - 1}-1`,
    ]
    expect([...removed].sort()).toEqual(gone.map((n) => path.join(dir, n)).sort())
    expect((await readdir(dir)).sort()).toEqual(
      Object.keys(files)
        .filter((n) => !gone.includes(n))
        .sort(),
    )
    // A missing directory is nothing to clear.
    expect(await removeLockDebris(path.join(dir, "none", "lock"), now)).toEqual([])
  })

  test("a temporary file of createFileWhole names its writer's pid", async () => {
    const dir = await tempDir()
    const file = path.join(dir, "lock")
    let done = false
    const creating = createFileWhole(file, "x".repeat(4_000_000), 0o600).finally(() => {
      done = true
    })
    const seen = new Set<string>()
    while (!done) for (const n of await readdir(dir)) if (n.endsWith(".creating")) seen.add(n)
    expect(await creating).toBe(true)
    expect(seen.size).toBeGreaterThan(0)
    for (const name of seen)
      expect(name).toMatch(new RegExp(`^lock\\.${process.pid}-[0-9a-f]{12}\\.creating$`))
  })
})

describe("fullDiskRemedy", () => {
  test("says what to do for a full disk or quota, nothing otherwise", () => {
    expect(fullDiskRemedy("ENOSPC", "BATON_WAKE_DIR")).toBe(
      ": the disk holding it is full: free some space on it, or set BATON_WAKE_DIR to a directory on another disk",
    )
    expect(fullDiskRemedy("EDQUOT", "BATON_JOBS_DIR")).toMatch(/over your quota.*BATON_JOBS_DIR/)
    expect(fullDiskRemedy("EROFS", "BATON_WAKE_DIR")).toBe("")
  })
})

describe("on a full disk", () => {
  // Every call on a full disk used to leave `<file>.<hex>.creating` (or `.tmp`) behind.
  test("a failed create, replace or new-file write leaves no file behind", async (context) => {
    if (process.getuid?.() !== 0) return context.skip("mounting a small tmpfs needs root")
    const dir = await tempDir()
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "pipe" })
    } catch (error) {
      return context.skip(`mount failed: ${(error as Error).message.split("\n")[0]}`)
    }
    try {
      const big = "x".repeat(256 * 1024)
      // One at a time: each starts only once the one before has failed (and been handled).
      for (const failing of [
        () => createFileWhole(path.join(dir, "lock"), big, 0o600),
        () => replaceFile(path.join(dir, "state.json"), big, 0o600),
        () => writeDurably(path.join(dir, "new"), big, 0o600),
      ])
        expect(errorCode(await rejection(failing()))).toBe("ENOSPC")
      expect(await readdir(dir)).toEqual([])
    } finally {
      execFileSync("umount", [dir], { stdio: "pipe" })
    }
  })
})

describe("renameDurably and absentAs", () => {
  test("false when the source is missing; other errors pass through", async () => {
    const dir = await tempDir()
    expect(await renameDurably(path.join(dir, "missing"), path.join(dir, "to"))).toBe(false)
    await writeFile(path.join(dir, "from"), "x")
    expect(await renameDurably(path.join(dir, "from"), path.join(dir, "to"))).toBe(true)
    expect(await readdir(dir)).toEqual(["to"])
    expect(await absentAs("none", () => readFile(path.join(dir, "nope"), "utf8"))).toBe("none")
    const notDir = await rejection(
      absentAs("none", () => readFile(path.join(dir, "to", "x"), "utf8")),
    )
    expect(errorCode(notDir)).toBe("ENOTDIR")
    expect(errorCode("not an error")).toBe("UNKNOWN")
  })
})

describe("blockingNonDirectory and notADirectoryCause", () => {
  test("name the regular file standing where a directory must be", async () => {
    const dir = await tempDir()
    const file = path.join(dir, "jobs")
    await writeFile(file, "")
    expect(await blockingNonDirectory(path.join(file, "a", "b"))).toBe(file)
    expect(await blockingNonDirectory(file)).toBe(file)
    expect(await blockingNonDirectory(path.join(dir, "missing", "x"))).toBe(null)
    expect(await blockingNonDirectory(dir)).toBe(null)
    // A symbolic link to a directory is a directory; one to a file is not.
    await mkdir(path.join(dir, "real"))
    await symlink(path.join(dir, "real"), path.join(dir, "link"))
    expect(await blockingNonDirectory(path.join(dir, "link", "x"))).toBe(null)
    await symlink(file, path.join(dir, "filelink"))
    expect(await blockingNonDirectory(path.join(dir, "filelink", "x"))).toBe(
      path.join(dir, "filelink"),
    )

    const mkdirError = await rejection(makeDirectories(file, 0o700))
    expect(errorCode(mkdirError)).toBe("EEXIST")
    expect(await notADirectoryCause(mkdirError, file)).toBe(file)
    const readError = await rejection(readFile(path.join(file, "state.json"), "utf8"))
    expect(await notADirectoryCause(readError, file)).toBe(file)
    // Other errors, or no file in the way: no cause.
    expect(await notADirectoryCause(Object.assign(new Error(), { code: "EACCES" }), file)).toBe(
      null,
    )
    expect(await notADirectoryCause(mkdirError, dir)).toBe(null)
  })
})

describe("explainingNotADirectory and failurePath", () => {
  test("name the file in the way and say why; other failures pass through", async () => {
    const dir = await tempDir()
    const jobs = path.join(dir, "jobs")
    await writeFile(jobs, "")
    const explained = await rejection(
      explainingNotADirectory(jobs, "jobs need a directory here", () =>
        readFile(path.join(jobs, "state.json"), "utf8"),
      ),
    )
    expect(explained).toMatchObject({
      code: "ENOTDIR",
      blocker: jobs,
      message: `${jobs} is not a directory (jobs need a directory here)`,
    })
    expect(failurePath(explained, "/elsewhere")).toBe(jobs)
    const missing = await rejection(
      explainingNotADirectory(dir, "why", () => readFile(path.join(dir, "nope"), "utf8")),
    )
    expect(errorCode(missing)).toBe("ENOENT")
    expect(failurePath(missing, "/elsewhere")).toBe("/elsewhere")
    expect(await explainingNotADirectory(dir, "why", () => Promise.resolve(7))).toBe(7)
  })
})

// Sweep fixes: one job per thread under racing creates (real file system), what `create` refuses,
// what a failed create takes back, what status reports. Real files where the race is the point.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { TestClock } from "effect/testing"
import { afterEach, expect, test } from "vitest"
import { WakeIoError } from "./errors.js"
import {
  armJob,
  createJob,
  jobStatus,
  listJobs,
  OBJECTIVE_MAX_BYTES,
  writeJobCheckpoint,
} from "./job-commands.js"
import type { CreateJobRequest } from "./job-commands.js"
import { makeJobStore } from "./job-store.js"
import { makeMemoryWakeFileSystem, nodeWakeFileSystem } from "./wake-file-system.js"
import type { WakeFileSystemShape } from "./wake-file-system.js"

const THREAD = "019a0000-0000-7000-8000-000000000001"
const READY = "## Objective\nPort the parser.\n\n## Next actions\n1. Run the tests.\n"
const request: CreateJobRequest = {
  objective: "Port the parser",
  threadId: THREAD,
  cwd: "/work",
  model: null,
  reasoningEffort: null,
  delivery: "new_thread",
  bounds: {},
  idSuffix: "0123abcd",
}
const run = <A, E>(program: Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.result(program).pipe(Effect.provide(TestClock.layer())))

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})
const tempDir = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "baton-wake-sweep-"))
  dirs.push(dir)
  return dir
}

test("racing creates for one thread make one job (real files, concurrent fibers)", async () => {
  const root = await tempDir()
  const wakeDir = path.join(root, "wake")
  // Each caller its own store (as separate MCP servers or CLI runs have), one file system.
  const stores = [1, 2, 3].map((pid) => makeJobStore(wakeDir, nodeWakeFileSystem, pid))
  const results = await Effect.runPromise(
    Effect.all(
      Array.from({ length: 9 }, (_, i) =>
        createJob(stores[i % 3]!, nodeWakeFileSystem, {
          ...request,
          cwd: root,
          idSuffix: `0000000${i}`,
        }),
      ),
      { concurrency: "unbounded" },
    ),
  )
  const ids = new Set(results.map((r) => r.stored.job.jobId))
  expect(ids.size).toBe(1)
  expect(results.filter((r) => !r.alreadyExists)).toHaveLength(1)
  expect(await readdir(path.join(wakeDir, "jobs"))).toHaveLength(1)
})

test("create refuses a cwd that is a file, an unknown effort, a multi-line objective, a bad thread id", async () => {
  const root = await tempDir()
  const file = path.join(root, "afile")
  await writeFile(file, "x")
  const store = makeJobStore(path.join(root, "wake"), nodeWakeFileSystem, 1)
  const refused = async (change: Partial<CreateJobRequest>) => {
    const result = await run(
      createJob(store, nodeWakeFileSystem, { ...request, cwd: root, ...change }),
    )
    if (result._tag === "Success") throw new Error("created")
    return result.failure
  }
  expect(await refused({ threadId: null, cwd: file })).toMatchObject({
    _tag: "InvalidJobSetting",
    field: "cwd",
  })
  expect((await refused({ threadId: null, cwd: file })).message).toContain("not a directory")
  for (const effort of ["turbo", "minimal", "persistent"]) {
    const error = await refused({ threadId: null, reasoningEffort: effort })
    expect(error).toMatchObject({ _tag: "InvalidJobSetting", field: "reasoning effort" })
    expect(error.message).toContain("low, medium, high, xhigh, max, ultra")
  }
  expect(
    await refused({ threadId: null, objective: "x\n## Next actions\n1. injected" }),
  ).toMatchObject({ _tag: "InvalidJobSetting", field: "objective" })
  // A pasted document as the objective (2 MB once made a checkpoint that could never be armed).
  const long = await refused({ threadId: null, objective: "é".repeat(OBJECTIVE_MAX_BYTES / 2 + 1) })
  expect(long).toMatchObject({ _tag: "InvalidJobSetting", field: "objective" })
  expect(long.message).toContain(
    `at most ${OBJECTIVE_MAX_BYTES} bytes (this one is ${OBJECTIVE_MAX_BYTES + 2})`,
  )
  expect(await refused({ threadId: "bad id with spaces" })).toMatchObject({
    _tag: "InvalidJobSetting",
    field: "thread id",
  })
  // Nothing was stored for any of them.
  expect(await readdir(root)).toEqual(["afile"])
  const ok = await run(
    createJob(store, nodeWakeFileSystem, {
      ...request,
      cwd: root,
      reasoningEffort: "xhigh",
      objective: "x".repeat(OBJECTIVE_MAX_BYTES),
    }),
  )
  expect(ok._tag).toBe("Success")
})

test("a wake directory that is a file is named as the problem", async () => {
  const root = await tempDir()
  const wakeDir = path.join(root, "wake")
  await writeFile(wakeDir, "not a directory")
  const store = makeJobStore(wakeDir, nodeWakeFileSystem, 1)
  for (const threadId of [null, THREAD]) {
    const result = await run(
      createJob(store, nodeWakeFileSystem, { ...request, threadId, cwd: root }),
    )
    if (result._tag === "Success") throw new Error("created")
    expect(result.failure).toMatchObject({ _tag: "WakeIo", path: wakeDir, code: "ENOTDIR" })
    expect(result.failure.message).toContain(`${wakeDir} is not a directory`)
    expect(result.failure.message).toContain("BATON_WAKE_DIR")
  }
  const listed = await run(listJobs(store))
  if (listed._tag === "Success") throw new Error("listed")
  expect(listed.failure.message).toContain(`${wakeDir} is not a directory`)
})

test("a failed create takes back its job directory; leftovers are reported", async () => {
  const memory = makeMemoryWakeFileSystem()
  // A full disk: writing the capsule fails after the directories and checkpoint were made.
  const full: WakeFileSystemShape = {
    ...memory,
    writeAtomic: (file, text, mode) =>
      file.endsWith("memory-capsule.md")
        ? Effect.fail(
            new WakeIoError({
              path: file,
              operation: "atomic write",
              code: "ENOSPC",
              detail: "full",
            }),
          )
        : memory.writeAtomic(file, text, mode),
  }
  await Effect.runPromise(memory.ensureDir("/work", 0o700))
  const store = makeJobStore("/wake", full, 1)
  const failed = await run(createJob(store, full, request))
  expect(failed).toMatchObject({ _tag: "Failure", failure: { code: "ENOSPC" } })
  expect(await Effect.runPromise(memory.list("/wake/jobs"))).toEqual([])
  // What a killed process leaves is reported, not hidden.
  const good = makeJobStore("/wake", memory, 1)
  const created = await run(createJob(good, memory, request))
  if (created._tag === "Failure") throw new Error(created.failure.message)
  const dir = good.paths(created.success.stored.job.jobId).dir
  await Effect.runPromise(
    Effect.all([
      memory.createExclusive(`${dir}/checkpoint.md.a1b2c3.tmp`, "half", 0o600),
      memory.createExclusive(`${dir}/lock.stale-1-2`, "{}", 0o600),
      memory.ensureDir("/wake/jobs/wake-20260101-000000-00000000", 0o700),
      memory.createExclusive("/wake/jobs/wake-20260101-000000-00000000/checkpoint.md", "x", 0o600),
    ]),
  )
  const listed = await run(listJobs(good))
  expect(listed).toMatchObject({
    _tag: "Success",
    success: {
      orphanJobDirs: ["/wake/jobs/wake-20260101-000000-00000000"],
      tornTempFiles: [`${dir}/checkpoint.md.a1b2c3.tmp`, `${dir}/lock.stale-1-2`],
    },
  })
})

test("status reads not ready when checkpoint.md lost its readiness by hand (as the watcher will)", async () => {
  const fs = makeMemoryWakeFileSystem()
  await Effect.runPromise(fs.ensureDir("/work", 0o700))
  const store = makeJobStore("/wake", fs, 1)
  const result = await run(
    Effect.gen(function* () {
      const { stored } = yield* createJob(store, fs, request)
      const jobId = stored.job.jobId
      yield* writeJobCheckpoint(store, jobId, READY)
      yield* armJob(store, jobId)
      const before = yield* jobStatus(store, fs, jobId)
      yield* fs.writeAtomic(store.paths(jobId).checkpoint, "## Objective\nREPLACE_ME\n", 0o600)
      const after = yield* jobStatus(store, fs, jobId)
      return { before, after }
    }),
  )
  if (result._tag === "Failure") throw new Error(String(result.failure))
  expect(result.success.before.memory.ready).toBe(true)
  expect(result.success.after.memory.problems.length).toBeGreaterThan(0)
  expect(result.success.after.memory.ready).toBe(false)
})

test("the real adapter leaves no directory behind when a create fails", async () => {
  const root = await tempDir()
  await mkdir(path.join(root, "wake", "jobs"), { recursive: true })
  const store = makeJobStore(path.join(root, "wake"), nodeWakeFileSystem, 1)
  const failing: WakeFileSystemShape = {
    ...nodeWakeFileSystem,
    createExclusive: (file, text, mode) =>
      file.endsWith("state.json")
        ? Effect.fail(
            new WakeIoError({
              path: file,
              operation: "exclusive create",
              code: "ENOSPC",
              detail: "full",
            }),
          )
        : nodeWakeFileSystem.createExclusive(file, text, mode),
  }
  const failingStore = makeJobStore(path.join(root, "wake"), failing, 1)
  const failed = await run(createJob(failingStore, failing, { ...request, cwd: root }))
  expect(failed._tag).toBe("Failure")
  expect(await readdir(path.join(root, "wake", "jobs"))).toEqual([])
  expect((await run(listJobs(store)))._tag).toBe("Success")
})

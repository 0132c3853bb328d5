import * as Effect from "effect/Effect"
import { TestClock } from "effect/testing"
import { expect, test } from "vitest"
import { type FakeProcess, makeFakeContinuationProcesses } from "./continuation-processes.js"
import {
  armJob,
  completeJob,
  createJob,
  jobStatus,
  pauseJob,
  stopJob,
  writeJobCheckpoint,
} from "./job-commands.js"
import { resolveJobId } from "./job-lookup.js"
import { makeJobStore } from "./job-store.js"
import { makeMemoryWakeFileSystem } from "./wake-file-system.js"

const THREAD = "019a0000-0000-7000-8000-000000000001"
const READY = "## Objective\nPort the parser.\n\n## Next actions\n1. Run the tests.\n"

const setup = () => {
  const fs = makeMemoryWakeFileSystem()
  const store = makeJobStore("/wake", fs, 1)
  return { fs, store }
}
const request = {
  objective: "Port the parser",
  threadId: THREAD,
  cwd: "/work",
  model: null,
  reasoningEffort: null,
  delivery: "new_thread" as const,
  bounds: {},
  idSuffix: "0123abcd",
}
const run = <A, E>(program: Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.result(program).pipe(Effect.provide(TestClock.layer())))

test("create is idempotent per thread; settings are validated; the cwd must exist", async () => {
  const { fs, store } = setup()
  await Effect.runPromise(fs.ensureDir("/work", 0o700))
  const result = await run(
    Effect.gen(function* () {
      const first = yield* createJob(store, fs, request)
      const second = yield* createJob(store, fs, { ...request, idSuffix: "ffffffff" })
      const badModel = yield* Effect.flip(
        createJob(store, fs, { ...request, threadId: null, model: "-x y" }),
      )
      const noCwd = yield* Effect.flip(
        createJob(store, fs, { ...request, threadId: null, cwd: "/nope" }),
      )
      const other = yield* createJob(store, fs, {
        ...request,
        threadId: null,
        delivery: "job_thread",
        bounds: { maxGenerations: 2 },
        idSuffix: "00000001",
      })
      return { first, second, badModel, noCwd, other }
    }),
  )
  if (result._tag === "Failure") throw new Error(JSON.stringify(result.failure))
  const { first, second, badModel, noCwd, other } = result.success
  expect(first.alreadyExists).toBe(false)
  expect(second).toMatchObject({
    alreadyExists: true,
    stored: { job: { jobId: first.stored.job.jobId } },
  })
  expect(badModel._tag).toBe("InvalidJobSetting")
  expect(noCwd._tag).toBe("WakeIo")
  expect(other.stored.job.delivery).toBe("job_thread")
  expect(other.stored.job.bounds.maxGenerations).toBe(2)
})

test("arm needs a ready checkpoint; pause → arm re-arms; complete is final; the thread finds its job", async () => {
  const { fs, store } = setup()
  await Effect.runPromise(fs.ensureDir("/work", 0o700))
  const result = await run(
    Effect.gen(function* () {
      const { stored } = yield* createJob(store, fs, request)
      const id = stored.job.jobId
      const notReady = yield* Effect.flip(armJob(store, id))
      const written = yield* writeJobCheckpoint(store, id, READY)
      const armed = yield* armJob(store, id)
      const paused = yield* pauseJob(store, id, "need a key")
      const rearmed = yield* armJob(store, id)
      const found = yield* resolveJobId(store, undefined, { CODEX_THREAD_ID: THREAD })
      const byEnv = yield* resolveJobId(store, undefined, { BATON_WAKE_JOB_ID: "wake-x-given" })
      const none = yield* resolveJobId(store, undefined, {})
      const status = yield* jobStatus(store, fs, id)
      const done = yield* completeJob(store, id)
      const refused = yield* Effect.flip(pauseJob(store, id, "again"))
      const missing = yield* Effect.flip(completeJob(store, "wake-20250101-000000-00000000"))
      const afterDone = yield* Effect.flip(
        resolveJobId(store, undefined, { CODEX_THREAD_ID: THREAD }),
      )
      return {
        id,
        notReady,
        written,
        armed,
        paused,
        rearmed,
        found,
        byEnv,
        none,
        status,
        done,
        refused,
        missing,
        afterDone,
      }
    }),
  )
  if (result._tag === "Failure") throw new Error(JSON.stringify(result.failure))
  const r = result.success
  expect(r.notReady._tag).toBe("CheckpointNotReady")
  expect(r.written.problems).toEqual([])
  expect(r.armed.stored.job.state).toBe("monitoring")
  expect(r.paused.stored.job).toMatchObject({ state: "waiting_user", pauseReason: "need a key" })
  expect(r.rearmed.stored.job.state).toBe("monitoring")
  expect(r.found).toBe(r.id)
  expect(r.byEnv).toBe("wake-x-given")
  expect(r.none).toBeNull()
  expect(r.status).toMatchObject({
    state: "monitoring",
    deliveryLabel: "cli_continuation_only",
    watcher: { running: false },
  })
  expect(r.done.stored.job.state).toBe("completed")
  expect(r.refused).toMatchObject({ _tag: "JobRefused", state: "completed", command: "pause" })
  expect(r.missing._tag).toBe("JobNotFound")
  expect(r.afterDone._tag).toBe("NoJobForThread")
})

/** A job running a (fake) continuation; `beforeStop` runs just before `stopJob`. */
const stopARunningJob = async (beforeStop: (process: FakeProcess) => Effect.Effect<void>) => {
  const { fs, store } = setup()
  await Effect.runPromise(fs.ensureDir("/work", 0o700))
  const processes = makeFakeContinuationProcesses()
  const result = await run(
    Effect.gen(function* () {
      const { stored } = yield* createJob(store, fs, request)
      const id = stored.job.jobId
      yield* writeJobCheckpoint(store, id, READY)
      yield* armJob(store, id)
      const spawned = yield* processes.spawn({
        command: "codex",
        args: [],
        cwd: "/work",
        env: {},
        stdoutFile: "/o",
        stderrFile: "/e",
      })
      yield* store.applyEvent(id, {
        _tag: "UsageObserved",
        at: 1,
        allowed: false,
        resetsAt: null,
        launchSlotFree: true,
      })
      yield* store.applyEvent(id, {
        _tag: "UsageObserved",
        at: 2,
        allowed: true,
        resetsAt: null,
        launchSlotFree: true,
      })
      yield* store.applyEvent(id, {
        _tag: "RunStarted",
        at: 3,
        generation: 1,
        pid: spawned.pid,
        threadId: null,
      })
      yield* store.modify(id, (job) =>
        job.run === null ? job : { ...job, run: { ...job.run, startTicks: spawned.startTicks } },
      )
      yield* beforeStop(processes.spawned[0]!)
      return yield* stopJob(store, processes, id, "user said stop", 50)
    }),
  )
  if (result._tag === "Failure") throw new Error(JSON.stringify(result.failure))
  return { result: result.success, process: processes.spawned[0]! }
}

test("stop ends a running continuation's process group (pid and start time checked)", async () => {
  const { result, process } = await stopARunningJob(() => Effect.void)
  expect(result.terminated).toBe(true)
  expect(result.stored.job.state).toBe("stopped")
  expect(process.signals).toEqual(["SIGTERM"])
})

test("stop reports the run terminated when the watcher ended it first (nothing left to signal)", async () => {
  const { result, process } = await stopARunningJob((p) =>
    p.exit({ code: null, signal: "SIGTERM" }),
  )
  expect(result.terminated).toBe(true)
  expect(result.stored.job.state).toBe("stopped")
  expect(process.signals).toEqual([])
})

test("an armed job's ready checkpoint is never replaced by an unready one; a draft may hold one; completed jobs refuse writes", async () => {
  const { fs, store } = setup()
  await Effect.runPromise(fs.ensureDir("/work", 0o700))
  const result = await run(
    Effect.gen(function* () {
      const { stored } = yield* createJob(store, fs, request)
      const jobId = stored.job.jobId
      const draftEmpty = yield* writeJobCheckpoint(store, jobId, "")
      yield* writeJobCheckpoint(store, jobId, READY)
      yield* armJob(store, jobId)
      const emptied = yield* Effect.flip(writeJobCheckpoint(store, jobId, ""))
      const kept = yield* store.readCheckpoint(jobId)
      const capsuleReady = (yield* store.read(jobId)).job.memory.ready
      const next = READY.replace("Run the tests.", "Fix the two failures.")
      yield* writeJobCheckpoint(store, jobId, next)
      const previous = yield* fs.readText(store.paths(jobId).previousCheckpoint)
      yield* completeJob(store, jobId)
      const afterComplete = yield* Effect.flip(writeJobCheckpoint(store, jobId, READY))
      const final = yield* store.readCheckpoint(jobId)
      return { draftEmpty, emptied, kept, capsuleReady, previous, afterComplete, final, next }
    }),
  )
  if (result._tag === "Failure") throw new Error(JSON.stringify(result.failure))
  const { draftEmpty, emptied, kept, capsuleReady, previous, afterComplete, final, next } =
    result.success
  expect(draftEmpty.problems.length).toBeGreaterThan(0)
  expect(emptied._tag).toBe("CheckpointNotReady")
  expect(emptied.message).toMatch(/armed.*kept unchanged/)
  expect(kept).toBe(READY)
  expect(capsuleReady).toBe(true)
  expect(previous).toBe(READY)
  expect(afterComplete).toMatchObject({
    _tag: "JobRefused",
    reason: "completed jobs are immutable",
  })
  expect(final).toBe(next)
})

test("create refuses a bad delivery, bound or id suffix, and a relative cwd, before anything is stored", async () => {
  const { fs, store } = setup()
  await Effect.runPromise(fs.ensureDir("/work", 0o700))
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string, RegExp]> = [
    ["delivery", { delivery: "bogus" }, "delivery", /new_thread, job_thread, original_thread/],
    ["NaN", { bounds: { maxWallClockMs: Number.NaN } }, "bounds.maxWallClockMs", /whole number/],
    ["Infinity", { bounds: { maxGenerations: Infinity } }, "bounds.maxGenerations", /whole/],
    ["negative", { bounds: { maxGenerations: -5 } }, "bounds.maxGenerations", /0 or more/],
    ["fraction", { bounds: { maxRetriesPerWindow: 2.5 } }, "bounds.maxRetriesPerWindow", /whole/],
    ["string bound", { bounds: { unknownUsageLimit: "3" } }, "bounds.unknownUsageLimit", /whole/],
    ["unknown bound", { bounds: { maxGeneration: 3 } }, "bounds.maxGeneration", /maxGenerations/],
    ["bounds null", { bounds: null }, "bounds", /maxGenerations/],
    ["traversal suffix", { idSuffix: "../../x" }, "idSuffix", /8 hex digits/],
    ["empty suffix", { idSuffix: "" }, "idSuffix", /8 hex digits/],
    ["long suffix", { idSuffix: "0123abcd0" }, "idSuffix", /8 hex digits/],
    ["relative cwd", { cwd: "." }, "cwd", /absolute path/],
    ["relative cwd 2", { cwd: "work" }, "cwd", /absolute path/],
  ]
  for (const [name, change, field, rule] of cases) {
    const bad = { ...request, threadId: null, ...change } as unknown as typeof request
    const result = await run(createJob(store, fs, bad))
    expect(result._tag, name).toBe("Failure")
    if (result._tag !== "Failure") continue
    expect(result.failure, name).toMatchObject({ _tag: "InvalidJobSetting", field })
    expect(result.failure.message, name).toMatch(rule)
  }
  // Nothing was stored: no job, no job directory.
  expect(await Effect.runPromise(store.list())).toEqual([])
  expect(await Effect.runPromise(fs.list("/wake/jobs"))).toEqual([])
  // Good settings still pass: upper-case hex, every bound at its edge, an absent bound's default.
  const ok = await run(
    createJob(store, fs, {
      ...request,
      threadId: null,
      delivery: "original_thread",
      bounds: { maxGenerations: 0, maxWallClockMs: Number.MAX_SAFE_INTEGER },
      idSuffix: "0123ABCD",
    }),
  )
  if (ok._tag === "Failure") throw new Error(JSON.stringify(ok.failure))
  expect(ok.success.stored.job.jobId).toMatch(/-0123abcd$/)
  expect(ok.success.stored.job.bounds).toEqual({
    maxGenerations: 0,
    maxWallClockMs: Number.MAX_SAFE_INTEGER,
    maxRetriesPerWindow: 8,
    unknownUsageLimit: 10,
  })
  // What was stored reads back.
  const read = await run(store.read(ok.success.stored.job.jobId))
  expect(read._tag).toBe("Success")
})

// schedule / status / cancel / recovery over a real temp journal, a world of fake processes, a
// launcher that records launches, and TestClock.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { afterEach, describe, expect, test } from "vitest"
import {
  cancelCompaction,
  compactionStatus,
  JobIds,
  scheduleCompaction,
  WorkerLauncher,
} from "./compaction-service.js"
import { JournalIoError, ScheduleFailedError, WorkerLaunchError } from "./errors.js"
import type { ProcessProbeShape } from "./job-lock.js"
import { ProcessProbe } from "./job-lock.js"
import type { JobRecord } from "./job-record.js"
import type { JournalFileSystemShape } from "./journal-file-system.js"
import { JournalFileSystem, nodeJournalFileSystem } from "./journal-file-system.js"
import { Journal, journalLayer, journalPaths } from "./journal.js"

const THREAD = "019a0000-0000-7000-8000-000000000001"
const HANDOFF = {
  summary: "Parser ported to the new grammar",
  preserve: ["src/parser.ts keeps the new grammar"],
  discard: ["old benchmark logs"],
  nextStep: "Run the e2e suite",
  resume: true,
}

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

interface World {
  readonly dir: string
  readonly processes: Map<number, number>
  readonly launches: Array<{ threadId: string; jobId: string }>
  nextPid: number
  failLaunch: boolean
  /** The launched worker fails the job at once (nothing could reach the thread) and exits. */
  workerFailsJob: boolean
  ids: number
  /** Called as a process's liveness is checked (to change the world at that moment). */
  onAliveCheck?: (pid: number) => void
  /** The journal's file system (default: the real one); a test wraps it to inject faults. */
  fs?: JournalFileSystemShape
}

const makeWorld = async (): Promise<World> => {
  const d = await mkdtemp(path.join(tmpdir(), "baton-service-"))
  dirs.push(d)
  return {
    dir: path.join(d, "jobs"),
    processes: new Map([[1000, 5]]),
    launches: [],
    nextPid: 2000,
    failLaunch: false,
    workerFailsJob: false,
    ids: 0,
  }
}

const run = <A, E>(
  world: World,
  program: Effect.Effect<
    A,
    E,
    Journal | JournalFileSystem | ProcessProbe | WorkerLauncher | JobIds
  >,
  before: Effect.Effect<void> = Effect.void,
) => {
  const probe: ProcessProbeShape = {
    selfPid: 1000,
    isAlive: (pid) =>
      Effect.sync(() => {
        world.onAliveCheck?.(pid)
        return world.processes.has(pid)
      }),
    startTimeMs: (pid) => Effect.succeed(world.processes.get(pid) ?? null),
  }
  const layer = Layer.mergeAll(
    journalLayer(world.dir).pipe(
      Layer.provideMerge(Layer.succeed(JournalFileSystem, world.fs ?? nodeJournalFileSystem)),
    ),
    Layer.succeed(ProcessProbe, probe),
    Layer.succeed(WorkerLauncher, {
      launch: (job) =>
        world.failLaunch
          ? Effect.fail(new WorkerLaunchError({ command: "node worker", detail: "ENOENT" }))
          : Effect.sync(() => {
              const pid = world.nextPid++
              if (world.workerFailsJob) {
                const file = journalPaths(world.dir, job.threadId).job(job.jobId)
                const stored = JSON.parse(readFileSync(file, "utf8")) as {
                  revision: number
                  job: Record<string, unknown>
                }
                stored.revision += 1
                stored.job = {
                  ...stored.job,
                  status: "failed",
                  reason: "worker_lost_before_dispatch",
                  detail:
                    "Worker lost before dispatch (thread not found over stdio: no rollout found); nothing was sent, check the thread id.",
                  endedAt: 1,
                }
                writeFileSync(file, JSON.stringify(stored))
                world.launches.push({ threadId: job.threadId, jobId: job.jobId })
                return { pid }
              }
              world.processes.set(pid, 7)
              world.launches.push({ threadId: job.threadId, jobId: job.jobId })
              return { pid }
            }),
    }),
    Layer.succeed(JobIds, { next: Effect.sync(() => `job-${++world.ids}`) }),
  )
  return Effect.runPromise<A, E>(
    Effect.andThen(before, program).pipe(Effect.provide(layer), Effect.provide(TestClock.layer())),
  )
}

const runFlip = <A, E>(
  world: World,
  program: Effect.Effect<
    A,
    E,
    Journal | JournalFileSystem | ProcessProbe | WorkerLauncher | JobIds
  >,
) => run(world, Effect.flip(program))

/** Writes the job's record as a worker would have left it (a status mid-flight). */
const setStatus = (world: World, jobId: string, patch: Partial<JobRecord>) =>
  run(
    world,
    Effect.gen(function* () {
      const journal = yield* Journal
      const stored = yield* journal.readJob(THREAD, jobId)
      yield* journal.saveJob({ ...stored.job, ...patch }, stored.revision)
    }),
  )

const writeLock = (world: World, jobId: string, pid: number, leaseExpiresAt = 10 ** 13) =>
  writeFile(
    journalPaths(world.dir, THREAD).lock,
    JSON.stringify({
      schemaVersion: 1,
      threadId: THREAD,
      jobId,
      pid,
      processStartMs: world.processes.get(pid) ?? 7,
      acquiredAt: 0,
      heartbeatAt: 0,
      leaseExpiresAt,
    }),
  )

describe("scheduleCompaction", () => {
  test("stores the bound handoff once, launches one worker, and a second schedule returns the same job", async () => {
    const world = await makeWorld()
    const first = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(first).toMatchObject({
      alreadyScheduled: false,
      job: { status: "scheduled", resume: true, jobNumber: 1, terminal: false },
      worker: { state: "starting", pid: 2000 },
    })
    expect(first.handoffPath).toBe(journalPaths(world.dir, THREAD).handoff(first.job.jobId))
    const stored = JSON.parse(await readFile(first.handoffPath ?? "", "utf8")) as {
      threadId: string
      jobId: string
      handoff: unknown
    }
    expect(stored).toMatchObject({ threadId: THREAD, jobId: first.job.jobId, handoff: HANDOFF })

    const second = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    expect(second.alreadyScheduled).toBe(true)
    expect(second.job.jobId).toBe(first.job.jobId)
    expect(world.launches).toHaveLength(1)
    const files = await readdir(journalPaths(world.dir, THREAD).threadDir)
    expect(files.filter((f) => f.endsWith(".job.json"))).toHaveLength(1)
    const job = await readFile(journalPaths(world.dir, THREAD).job(first.job.jobId), "utf8")
    expect(job).not.toContain("Parser ported")
  })

  test("a handoff the unfinished job does not carry is refused, never silently dropped", async () => {
    const world = await makeWorld()
    const first = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    const refused = await runFlip(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(refused).toMatchObject({
      _tag: "HandoffNotAttached",
      jobId: first.job.jobId,
      attached: "none",
    })
    expect(refused.message).toContain("yours was not stored")
    expect(refused.message).toContain(`baton compact cancel ${THREAD} ${first.job.jobId}`)
    expect(world.launches).toHaveLength(1)
  })

  test("the same handoff again is the same schedule; a different one is refused", async () => {
    const world = await makeWorld()
    const first = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    // Key order does not matter: the handoff is compared canonically.
    const reordered = Object.fromEntries(Object.entries(HANDOFF).reverse())
    const again = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: reordered }),
    )
    expect(again).toMatchObject({ alreadyScheduled: true, job: { jobId: first.job.jobId } })
    const other = await runFlip(
      world,
      scheduleCompaction({
        awaitWorkerMs: 0,
        threadId: THREAD,
        handoff: { ...HANDOFF, nextStep: "Ship it" },
      }),
    )
    expect(other).toMatchObject({ _tag: "HandoffNotAttached", attached: "another" })
    expect(world.launches).toHaveLength(1)
  })

  test("concurrent schedules in one process create exactly one job; the others get it back", async () => {
    const world = await makeWorld()
    // An earlier finished job, so thread.json exists (the state the race was seen in).
    const earlier = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    await setStatus(world, earlier.job.jobId, { status: "completed", endedAt: 1 })
    const reports = await run(
      world,
      Effect.all(
        Array.from({ length: 4 }, () =>
          scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
        ),
        { concurrency: "unbounded" },
      ),
    )
    expect(reports.filter((r) => !r.alreadyScheduled)).toHaveLength(1)
    expect(new Set(reports.map((r) => r.job.jobId)).size).toBe(1)
    expect(reports.every((r) => r.job.jobNumber === 2)).toBe(true)
    expect(world.launches).toHaveLength(2)
    const files = await readdir(journalPaths(world.dir, THREAD).threadDir)
    expect(files.filter((f) => f.endsWith(".job.json"))).toHaveLength(2)
  })

  test("an admin lock left by a dead Baton process is moved aside, scheduling goes on", async () => {
    const world = await makeWorld()
    const threadDir = journalPaths(world.dir, THREAD).threadDir
    await mkdir(threadDir, { recursive: true })
    await writeFile(
      path.join(threadDir, "admin.lock"),
      JSON.stringify({ pid: 9999, processStartMs: 3, at: 0 }),
    )
    const report = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    expect(report.alreadyScheduled).toBe(false)
    const files = await readdir(threadDir)
    expect(files.some((f) => f.startsWith("admin.lock.stale-"))).toBe(true)
    expect(files).not.toContain("admin.lock")
  })

  test("a successor's admin lock that replaced a holder found dead is never moved aside", async () => {
    const world = await makeWorld()
    const threadDir = journalPaths(world.dir, THREAD).threadDir
    await mkdir(threadDir, { recursive: true })
    const lock = path.join(threadDir, "admin.lock")
    await writeFile(lock, JSON.stringify({ pid: 9999, processStartMs: 3, at: Date.now() }))
    world.processes.set(1500, 7)
    let successorChecks = 0
    world.onAliveCheck = (pid) => {
      // The holder released and exited while it was checked; another call took the lock.
      if (pid === 9999)
        writeFileSync(lock, JSON.stringify({ pid: 1500, processStartMs: 7, at: Date.now() }))
      // The successor finishes and exits as it is checked in turn.
      if (pid === 1500) {
        successorChecks += 1
        rmSync(lock)
        world.processes.delete(1500)
      }
    }
    const report = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    expect(report.alreadyScheduled).toBe(false)
    expect(successorChecks).toBe(1)
    expect((await readdir(threadDir)).filter((f) => f.startsWith("admin.lock.stale-"))).toEqual([])
  })

  test("a job its worker failed at once (thread unreachable) is a ScheduleFailed error with the cause", async () => {
    const world = await makeWorld()
    world.workerFailsJob = true
    const error = await runFlip(
      world,
      scheduleCompaction({ awaitWorkerMs: 5_000, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(error._tag).toBe("ScheduleFailed")
    expect(error.message).toContain("thread not found")
    expect(error.message).toContain("was not scheduled")
  })

  test("an uppercase thread id is the same thread (normalised to lowercase)", async () => {
    const world = await makeWorld()
    const first = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD.toUpperCase(), handoff: null }),
    )
    expect(first.job.threadId).toBe(THREAD)
    const second = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    expect(second).toMatchObject({ alreadyScheduled: true, job: { jobId: first.job.jobId } })
    const status = await run(world, compactionStatus(THREAD.toUpperCase()))
    expect(status.threadId).toBe(THREAD)
    expect(status.current?.jobId).toBe(first.job.jobId)
    const cancelled = await run(world, cancelCompaction(THREAD.toUpperCase(), first.job.jobId))
    expect(cancelled.cancelRequested).toBe(true)
    expect(await readdir(world.dir)).toEqual([THREAD])
  })

  test("without a handoff the job never resumes", async () => {
    const world = await makeWorld()
    const report = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    expect(report.job).toMatchObject({ resume: false, handoffDigest: null })
    expect(report.handoffPath).toBeNull()
  })

  test("an invalid handoff, thread id or setting writes nothing and launches nothing", async () => {
    const world = await makeWorld()
    const bad = await runFlip(
      world,
      scheduleCompaction({
        awaitWorkerMs: 0,
        threadId: THREAD,
        handoff: { ...HANDOFF, nextStep: 42 },
      }),
    )
    expect(bad._tag).toBe("HandoffInvalid")
    const secret = await runFlip(
      world,
      scheduleCompaction({
        threadId: THREAD,
        handoff: { ...HANDOFF, summary: "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD" },
      }),
    )
    expect(secret._tag).toBe("HandoffContainsSecret")
    expect(JSON.stringify(secret)).not.toContain("sk-proj-abcdefghij")
    const thread = await runFlip(world, scheduleCompaction({ threadId: "../etc", handoff: null }))
    expect(thread._tag).toBe("InvalidThreadIdError")
    const settings = await runFlip(
      world,
      scheduleCompaction({
        awaitWorkerMs: 0,
        threadId: THREAD,
        handoff: null,
        settings: { headroomThreshold: 2 },
      }),
    )
    expect(settings._tag).toBe("InvalidJobSettings")
    expect(world.launches).toHaveLength(0)
    await expect(readdir(world.dir)).rejects.toMatchObject({ code: "ENOENT" })
  })

  test("a worker that cannot be started ends the job as failed (nothing sent) and says why", async () => {
    const world = await makeWorld()
    world.failLaunch = true
    const error = await runFlip(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(error).toMatchObject({ _tag: "WorkerLaunch", detail: "ENOENT" })
    const status = await run(world, compactionStatus(THREAD))
    expect(status.current).toMatchObject({
      status: "failed",
      reason: "worker_lost_before_dispatch",
      outcomeMayBeUnknown: false,
    })
    expect(status.history).toHaveLength(1)
    // The thread is free again: a new schedule creates job 2.
    world.failLaunch = false
    const next = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    expect(next).toMatchObject({ alreadyScheduled: false, job: { jobNumber: 2 } })
  })
})

describe("recovery through status", () => {
  test("a launched worker that has not taken the lock yet is 'starting', not dead", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    const status = await run(world, compactionStatus(THREAD))
    expect(status.worker).toMatchObject({ state: "starting", pid: 2000 })
    expect(status.current?.jobId).toBe(job.jobId)
    expect(status.current?.status).toBe("scheduled")
  })

  test("overlapping status calls while one recovers a dead worker: all answer, one recovers", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    world.processes.delete(2000)
    const statuses = await run(
      world,
      Effect.all(
        Array.from({ length: 4 }, () => compactionStatus(THREAD)),
        { concurrency: "unbounded" },
      ),
    )
    expect(statuses.filter((s) => s.recovered !== null)).toHaveLength(1)
    for (const status of statuses)
      expect(status.current).toMatchObject({ jobId: job.jobId, status: "failed" })
  })

  test("a launched worker that died before taking the lock: the job fails, nothing was sent", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    world.processes.delete(2000)
    const status = await run(world, compactionStatus(THREAD))
    expect(status.recovered).toMatchObject({ jobId: job.jobId, from: "scheduled", to: "failed" })
    expect(status.current).toMatchObject({
      status: "failed",
      reason: "worker_lost_before_dispatch",
      outcomeMayBeUnknown: false,
    })
    expect(status.current?.detail).toContain("exited before taking the lock")
    // The handoff file is intact.
    const text = await readFile(journalPaths(world.dir, THREAD).handoff(job.jobId), "utf8")
    expect(text).toContain(HANDOFF.nextStep)
  })

  test.each([
    ["waiting_for_idle", "failed", "worker_lost_before_dispatch", false],
    ["compaction_requested", "outcome_may_be_unknown", "worker_lost_after_send", true],
    ["compacting", "outcome_may_be_unknown", "worker_lost_after_send", true],
    ["continuation_requested", "outcome_may_be_unknown", "worker_lost_after_send", true],
    ["continuation_running", "resumed", "continued", false],
  ] as const)(
    "a dead worker's lock in %s → %s (%s), the stale lock moved aside and logged",
    async (from, to, reason, unknown) => {
      const world = await makeWorld()
      const { job } = await run(
        world,
        scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
      )
      await setStatus(world, job.jobId, {
        status: from,
        compactionRequestedAt: from === "waiting_for_idle" ? null : 1,
      })
      await writeLock(world, job.jobId, 2000)
      world.processes.delete(2000)
      const status = await run(world, compactionStatus(THREAD))
      expect(status.current).toMatchObject({ status: to, reason, outcomeMayBeUnknown: unknown })
      expect(status.recovered).toMatchObject({ from, to })
      const files = await readdir(journalPaths(world.dir, THREAD).threadDir)
      expect(files.some((f) => f.startsWith("lock.json.stale-"))).toBe(true)
      expect(files).not.toContain("lock.json")
      const events = await readFile(journalPaths(world.dir, THREAD).events(job.jobId), "utf8")
      expect(events).toContain("stale lock of worker pid 2000 recovered (pid_gone)")
      expect(events).toContain(`"event":"WorkerLost"`)
      // Recovery is done once: a second status changes nothing.
      const again = await run(world, compactionStatus(THREAD))
      expect(again.recovered).toBeNull()
      expect(again.current?.status).toBe(to)
    },
  )

  test("a live worker's lock is respected: status reports it running and changes nothing", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    await setStatus(world, job.jobId, { status: "compacting", compactionRequestedAt: 1 })
    await writeLock(world, job.jobId, 2000)
    const status = await run(world, compactionStatus(THREAD))
    expect(status.worker).toMatchObject({ state: "running", pid: 2000 })
    expect(status.current?.status).toBe("compacting")
    expect(status.recovered).toBeNull()
  })

  test("a reused pid (another start time) does not fool recovery", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    await setStatus(world, job.jobId, { status: "waiting_for_idle" })
    await writeLock(world, job.jobId, 2000)
    world.processes.set(2000, 999_999)
    const status = await run(world, compactionStatus(THREAD))
    expect(status.current?.status).toBe("failed")
    expect(status.current?.detail).toContain("now belongs to another process")
  })

  test("a scheduled job with no launch record is 'starting' for 10 s, then lost", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    await rm(journalPaths(world.dir, THREAD).launch(job.jobId))
    const early = await run(world, compactionStatus(THREAD), TestClock.adjust(5_000))
    expect(early.worker.state).toBe("starting")
    const late = await run(world, compactionStatus(THREAD), TestClock.adjust(11_000))
    expect(late.current).toMatchObject({ status: "failed", reason: "worker_lost_before_dispatch" })
  })
})

describe("cancelCompaction", () => {
  test("a scheduled job that is not the thread's current job (orphaned by a race) is ended by cancel", async () => {
    const world = await makeWorld()
    const orphan = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    await setStatus(world, orphan.job.jobId, { status: "completed", endedAt: 1 })
    await run(world, scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }))
    await setStatus(world, orphan.job.jobId, { status: "scheduled", endedAt: null })
    const report = await run(world, cancelCompaction(THREAD, orphan.job.jobId))
    expect(report).toMatchObject({ cancelRequested: true, job: { status: "cancelled" } })
  })

  test("writes the marker for a running job; an ended job is reported as already ended", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    const cancel = await run(world, cancelCompaction(THREAD, job.jobId))
    expect(cancel).toMatchObject({ cancelRequested: true, alreadyEnded: false })
    const status = await run(world, compactionStatus(THREAD))
    expect(status.cancelRequested).toBe(true)

    world.processes.delete(2000)
    const after = await run(world, cancelCompaction(THREAD, job.jobId))
    expect(after).toMatchObject({ alreadyEnded: true, cancelRequested: false })
    expect(after.recovered?.to).toBe("failed")
  })

  test("an unknown job id is JobNotFound; a malformed one is rejected before any file access", async () => {
    const world = await makeWorld()
    await run(world, scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }))
    expect((await runFlip(world, cancelCompaction(THREAD, "job-nope")))._tag).toBe("JobNotFound")
    expect((await runFlip(world, cancelCompaction(THREAD, "../../x")))._tag).toBe("InvalidJobId")
  })
})

/** Every job file of the thread: its number, and whether thread.json names it (current or history). */
const journalFacts = async (world: World) => {
  const p = journalPaths(world.dir, THREAD)
  const index = JSON.parse(await readFile(p.index, "utf8")) as {
    currentJobId: string | null
    lastJobNumber: number
    history: Array<{ jobId: string }>
  }
  const named = new Set([index.currentJobId, ...index.history.map((h) => h.jobId)])
  const files = await readdir(p.threadDir)
  const jobs = await Promise.all(
    files
      .filter((f) => f.endsWith(".job.json"))
      .map(async (f) => {
        const stored = JSON.parse(await readFile(path.join(p.threadDir, f), "utf8")) as {
          job: { jobId: string; jobNumber: number }
        }
        return stored.job
      }),
  )
  const handoffs = files
    .filter((f) => f.endsWith(".handoff.json"))
    .map((f) => f.slice(0, -".handoff.json".length))
  return {
    index,
    numbers: jobs.map((j) => j.jobNumber).sort((a, b) => a - b),
    unreferenced: [
      ...jobs.filter((j) => !named.has(j.jobId)).map((j) => j.jobId),
      ...handoffs.filter((id) => !named.has(id)),
    ],
  }
}

/** Ends the job as its worker does: one compare-and-set save of the terminal record. */
const workerFailsJob = (world: World, jobId: string) =>
  setStatus(world, jobId, {
    status: "failed",
    reason: "worker_lost_before_dispatch",
    detail: "Worker lost before dispatch (codex missing); nothing was sent, schedule again.",
    endedAt: 1,
  })

describe("scheduling right after a job ended (no lost thread.json update, unique job numbers)", () => {
  test("a schedule that runs while the worker records its job's end neither conflicts nor orphans a job", async () => {
    const world = await makeWorld()
    const first = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    // The worker's thread.json write (the history entry of its ended job) is held back while a
    // whole schedule runs: the interleaving a retry right after ScheduleFailed hit.
    const index = journalPaths(world.dir, THREAD).index
    let armed = true
    const during: Array<unknown> = []
    world.fs = {
      ...nodeJournalFileSystem,
      writeAtomic: (file, text, mode) =>
        armed && file === index
          ? Effect.andThen(
              Effect.promise(async () => {
                armed = false
                during.push(
                  await run(
                    world,
                    Effect.result(
                      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
                    ),
                  ),
                )
              }),
              nodeJournalFileSystem.writeAtomic(file, text, mode),
            )
          : nodeJournalFileSystem.writeAtomic(file, text, mode),
    }
    await workerFailsJob(world, first.job.jobId)
    expect(armed).toBe(false)
    expect(during).toHaveLength(1)
    // Then the caller schedules again, as ScheduleFailed invites.
    const next = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(next.alreadyScheduled).toBe(false)
    const facts = await journalFacts(world)
    expect(facts.unreferenced).toEqual([])
    expect(new Set(facts.numbers).size).toBe(facts.numbers.length)
    expect(facts.index.lastJobNumber).toBe(Math.max(...facts.numbers))
    expect(facts.index.currentJobId).toBe(next.job.jobId)
    expect(facts.index.history.map((h) => h.jobId)).toContain(first.job.jobId)
  })

  test("a schedule whose thread.json compare-and-set is lost starts over: no conflict, no orphan files", async () => {
    const world = await makeWorld()
    const first = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    await workerFailsJob(world, first.job.jobId)
    // Another writer bumps thread.json right after the new job's file is written (the lock-free
    // history write of a worker; here only once).
    const p = journalPaths(world.dir, THREAD)
    let bumps = 0
    const bump = Effect.promise(async () => {
      bumps += 1
      const index = JSON.parse(await readFile(p.index, "utf8")) as { revision: number }
      await writeFile(p.index, JSON.stringify({ ...index, revision: index.revision + 1 }))
    })
    world.fs = {
      ...nodeJournalFileSystem,
      writeAtomic: (file, text, mode) =>
        file.endsWith(".job.json") && file !== p.job(first.job.jobId) && bumps < 1
          ? Effect.andThen(nodeJournalFileSystem.writeAtomic(file, text, mode), bump)
          : nodeJournalFileSystem.writeAtomic(file, text, mode),
    }
    const next = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(bumps).toBe(1)
    expect(next).toMatchObject({ alreadyScheduled: false, job: { jobNumber: 2 } })
    const facts = await journalFacts(world)
    expect(facts.unreferenced).toEqual([])
    expect(facts.numbers).toEqual([1, 2])
  })

  test("a schedule that keeps losing the compare-and-set fails and removes the files it created", async () => {
    const world = await makeWorld()
    const first = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    await workerFailsJob(world, first.job.jobId)
    const p = journalPaths(world.dir, THREAD)
    world.fs = {
      ...nodeJournalFileSystem,
      writeAtomic: (file, text, mode) =>
        file.endsWith(".job.json") && file !== p.job(first.job.jobId)
          ? Effect.andThen(
              nodeJournalFileSystem.writeAtomic(file, text, mode),
              Effect.promise(async () => {
                const index = JSON.parse(await readFile(p.index, "utf8")) as { revision: number }
                await writeFile(p.index, JSON.stringify({ ...index, revision: index.revision + 1 }))
              }),
            )
          : nodeJournalFileSystem.writeAtomic(file, text, mode),
    }
    const error = await runFlip(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(error._tag).toBe("JournalConflict")
    const files = await readdir(p.threadDir)
    expect(files.filter((f) => f.endsWith(".job.json"))).toEqual([`${first.job.jobId}.job.json`])
    expect(files.filter((f) => f.endsWith(".handoff.json"))).toEqual([
      `${first.job.jobId}.handoff.json`,
    ])
    expect(world.launches).toHaveLength(1)
  })
})

describe("cancel once the continuation is out of Baton's hands", () => {
  test.each([
    ["continuation_running", "continuation_already_running"],
    ["continuation_requested", "continuation_already_sent"],
  ] as const)(
    "in %s: cancelRequested false (%s), says to interrupt the turn in Codex, writes no marker",
    async (status, refusal) => {
      const world = await makeWorld()
      const { job } = await run(
        world,
        scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
      )
      await setStatus(world, job.jobId, {
        status,
        compactionRequestedAt: 1,
        compactionTurnEndedAt: 2,
        continuationRequestedAt: 3,
        continuationTurnId: status === "continuation_running" ? "turn-9" : null,
      })
      await writeLock(world, job.jobId, 2000)
      const report = await run(world, cancelCompaction(THREAD, job.jobId))
      expect(report).toMatchObject({
        cancelRequested: false,
        alreadyEnded: false,
        refusal,
        job: { status },
      })
      expect(report.message).toContain("was not cancelled")
      expect(report.message).toContain("interrupt the turn there")
      if (status === "continuation_running") expect(report.message).toContain("turn-9")
      const files = await readdir(journalPaths(world.dir, THREAD).threadDir)
      expect(files.filter((f) => f.endsWith(".cancel"))).toEqual([])
      const after = await run(world, compactionStatus(THREAD))
      expect(after.cancelRequested).toBe(false)
    },
  )

  test("before that, the answer says the worker stands down and whether anything was sent", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: null }),
    )
    const report = await run(world, cancelCompaction(THREAD, job.jobId))
    expect(report).toMatchObject({ cancelRequested: true, refusal: null })
    expect(report.message).toContain("nothing was sent")
  })
})

describe("settings are checked, never silently ignored", () => {
  test.each([
    [{ settings: { bogus: 1 } }, "bogus", "unknown setting"],
    [{ settings: { idleDebounceMS: 50 } }, "idleDebounceMS", "did you mean idleDebounceMs?"],
    [
      { settings: { headroomThreshold: Number.NaN } },
      "headroomThreshold",
      "from 0 to 1 (the highest",
    ],
    [{ settings: { compactionMs: -1 } }, "compactionMs", "0 or more, got -1"],
    [{ settings: { idleWaitMs: Infinity } }, "idleWaitMs", "got Infinity"],
    [{ settings: { idleWaitMs: "5" } }, "idleWaitMs", 'got "5"'],
    [
      { awaitWorkerMs: -5 },
      "awaitWorkerMs",
      "0 or more (0 returns right after the launch), got -5",
    ],
    [{ awaitWorkerMs: Number.NaN }, "awaitWorkerMs", "got NaN"],
  ])("%j → InvalidJobSettings naming %s", async (extra, key, words) => {
    const world = await makeWorld()
    const error = await runFlip(
      world,
      scheduleCompaction({
        threadId: THREAD,
        handoff: null,
        ...(extra as { settings?: Record<string, number>; awaitWorkerMs?: number }),
      }),
    )
    expect(error).toMatchObject({ _tag: "InvalidJobSettings", key })
    expect(error.message).toContain(key)
    expect(error.message).toContain(words)
    expect(world.launches).toHaveLength(0)
    await expect(readdir(world.dir)).rejects.toMatchObject({ code: "ENOENT" })
  })

  test("known settings (and keys given as undefined) are taken", async () => {
    const world = await makeWorld()
    const report = await run(
      world,
      scheduleCompaction({
        awaitWorkerMs: 0,
        threadId: THREAD,
        handoff: null,
        settings: { idleDebounceMs: 250, headroomThreshold: 0.5, compactionMs: undefined },
      } as never),
    )
    expect(report.job.settings).toMatchObject({
      idleDebounceMs: 250,
      headroomThreshold: 0.5,
      compactionMs: 15 * 60_000,
    })
  })
})

describe("a full or read-only journal disk", () => {
  const refusingAdminLock = (code: string): JournalFileSystemShape => ({
    ...nodeJournalFileSystem,
    createExclusive: (file, text, mode) =>
      path.basename(file) === "admin.lock"
        ? Effect.fail(
            new JournalIoError({
              path: file,
              operation: "exclusive create",
              code,
              detail: `${code}: refused`,
            }),
          )
        : nodeJournalFileSystem.createExclusive(file, text, mode),
  })

  test("status still reports the stored job when recovery cannot take the admin lock, and says why", async () => {
    const world = await makeWorld()
    const { job } = await run(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    world.processes.delete(2000)
    world.fs = refusingAdminLock("ENOSPC")
    const status = await run(world, compactionStatus(THREAD))
    expect(status.current).toMatchObject({ jobId: job.jobId, status: "scheduled" })
    expect(status.recovered).toBeNull()
    expect(status.worker.state).toBe("none")
    expect(status.recoverySkipped).toContain("ENOSPC")
    expect(status.recoverySkipped).toContain("free some space")
    expect(status.recoverySkipped).toContain("not ended by recovery")
    // Once the disk has room again, the next status recovers the job.
    world.fs = nodeJournalFileSystem
    const later = await run(world, compactionStatus(THREAD))
    expect(later).toMatchObject({ recoverySkipped: null, current: { status: "failed" } })
  })

  test("a schedule refused by a full disk leaves no empty thread directory", async () => {
    const world = await makeWorld()
    world.fs = refusingAdminLock("ENOSPC")
    const error = await runFlip(
      world,
      scheduleCompaction({ awaitWorkerMs: 0, threadId: THREAD, handoff: HANDOFF }),
    )
    expect(error._tag).toBe("JournalIo")
    expect(error.message).toContain("free some space")
    expect(await readdir(world.dir)).toEqual([])
  })

  test("a read-only file system's JournalIo says what to do", () => {
    const error = new JournalIoError({
      path: "/ro/jobs/t/admin.lock",
      operation: "exclusive create",
      code: "EROFS",
      detail: "EROFS: read-only file system",
    })
    expect(error.message).toContain("read-only: remount it read-write, or set BATON_JOBS_DIR")
  })
})

test("ScheduleFailed says how long the worker took, not 'at once'", () => {
  const error = new ScheduleFailedError({
    threadId: THREAD,
    jobId: "job-1",
    jobNumber: 3,
    status: "failed",
    reason: "worker_lost_before_dispatch",
    detail: "Worker lost before dispatch (initialize timed out); nothing was sent.",
    afterMs: 25_140,
  })
  expect(error.message).toContain("ended failed (worker_lost_before_dispatch) 25.1 s after")
  expect(error.message).not.toContain("at once")
})

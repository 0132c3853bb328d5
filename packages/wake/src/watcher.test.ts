// The watcher on its in-memory twins (file system, quota reader, rollout signals, processes) and
// TestClock: time moves only when the test adjusts it; the driver yields one event-loop turn per
// step, so nothing here sleeps on the wall clock.
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"
import { describe, expect, test } from "vitest"
import { CheckpointChannel, statusOnlyCheckpointChannel } from "./checkpoint-channel.js"
import type { CheckpointChannelShape } from "./checkpoint-channel.js"
import { ContinuationProcesses, makeFakeContinuationProcesses } from "./continuation-processes.js"
import { defaultJobBounds } from "./job-record.js"
import type { JobBounds, JobRecord } from "./job-record.js"
import { JobStore, makeJobStore } from "./job-store.js"
import type { JobStoreShape } from "./job-store.js"
import { QuotaReader, makeScriptedQuotaReader, readingOf } from "./quota-reader.js"
import type { QuotaReading } from "./quota-reader.js"
import { CAPSULE_BEGIN } from "./recovery-prompt.js"
import { runFiles } from "./run-meta.js"
import { SameThreadTurns, unavailableSameThreadTurns } from "./same-thread-turns.js"
import type { SameThreadTurnsShape } from "./same-thread-turns.js"
import type { RolloutSignal } from "./run-signals.js"
import { ThreadSignals, makeScriptedThreadSignals } from "./thread-signals.js"
import { runWatcher } from "./watcher.js"
import type { WatcherEvent, WatcherOptions } from "./watcher.js"
import type { WatcherLimits } from "./watcher-cadence.js"
import { WakeFileSystem, makeMemoryWakeFileSystem } from "./wake-file-system.js"

const WAKE = "/wake"
const JOB = "wake-20250131-120000-0123abcd"
const JOB2 = "wake-20250131-120000-0123abce"
const THREAD = "019a0000-0000-7000-8000-000000000001"
const CONT_THREAD = "019a0000-0000-7000-8000-0000000000c1"
const MIN = 60_000

const macrotask = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

interface Rig {
  readonly fs: ReturnType<typeof makeMemoryWakeFileSystem>
  readonly store: JobStoreShape
  readonly quota: ReturnType<typeof makeScriptedQuotaReader>
  readonly signals: ReturnType<typeof makeScriptedThreadSignals>
  readonly processes: ReturnType<typeof makeFakeContinuationProcesses>
  readonly events: Array<WatcherEvent>
  readonly layer: Layer.Layer<
    | JobStore
    | WakeFileSystem
    | QuotaReader
    | ThreadSignals
    | ContinuationProcesses
    | CheckpointChannel
    | SameThreadTurns
  >
}

const makeRig = (
  initial: QuotaReading,
  failSpawn?: string,
  sameThread: SameThreadTurnsShape = unavailableSameThreadTurns,
  channel: CheckpointChannelShape = statusOnlyCheckpointChannel,
): Rig => {
  const fs = makeMemoryWakeFileSystem()
  const store = makeJobStore(WAKE, fs, 1)
  const quota = makeScriptedQuotaReader(initial)
  const signals = makeScriptedThreadSignals()
  const processes = makeFakeContinuationProcesses(failSpawn === undefined ? {} : { failSpawn })
  return {
    fs,
    store,
    quota,
    signals,
    processes,
    events: [],
    layer: Layer.mergeAll(
      Layer.succeed(WakeFileSystem, fs),
      Layer.succeed(JobStore, store),
      Layer.succeed(QuotaReader, quota),
      Layer.succeed(ThreadSignals, signals),
      Layer.succeed(ContinuationProcesses, processes),
      Layer.succeed(CheckpointChannel, channel),
      Layer.succeed(SameThreadTurns, sameThread),
    ),
  }
}

const testLimits: Partial<WatcherLimits> = { tailMs: 1_000 }

const options = (rig: Rig, extra: Partial<WatcherOptions> = {}): WatcherOptions => ({
  identity: { pid: 1, startTicks: null, host: "test-host" },
  codexBinary: "/opt/codex/bin/codex",
  batonCommand: '"/usr/bin/node" "/opt/baton/bin.js"',
  baseEnv: { PATH: "/usr/bin", CODEX_THREAD_ID: "parent-thread-must-not-leak" },
  limits: testLimits,
  onEvent: (event) => rig.events.push(event),
  ...extra,
})

const READY_CHECKPOINT = [
  "# Wake checkpoint",
  "",
  "## Objective",
  "Port the parser to the new grammar.",
  "",
  "## Next actions",
  "1. Run the parser tests and fix the two failures.",
  "",
].join("\n")

/** Creates and arms a job (monitoring). */
const armedJob = (
  rig: Rig,
  jobId = JOB,
  bounds: JobBounds = defaultJobBounds,
  patch: (job: JobRecord) => JobRecord = (job) => job,
) =>
  Effect.gen(function* () {
    yield* rig.store.create({
      jobId,
      originalThreadId: THREAD,
      cwd: "/work/project",
      model: null,
      reasoningEffort: null,
      limitId: null,
      bounds,
      objective: null,
    })
    yield* rig.store.writeCheckpoint(jobId, READY_CHECKPOINT)
    const projected = yield* rig.store.refreshCapsule(jobId)
    yield* rig.store.applyEvent(jobId, {
      _tag: "Armed",
      at: yield* Clock.currentTimeMillis,
      capsuleReady: projected.stored.job.memory.ready,
    })
    yield* rig.store.modify(jobId, patch)
  })

const stateOf = (rig: Rig, jobId = JOB) => Effect.map(rig.store.read(jobId), (s) => s.job)

/** Starts the watcher in its own scope; returns the fiber and a way to kill it (like SIGKILL: no cleanup). */
const startWatcher = (rig: Rig, extra: Partial<WatcherOptions> = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const fiber = yield* Effect.forkDetach(
      Scope.provide(runWatcher(options(rig, extra)), scope).pipe(Effect.provide(rig.layer)),
    )
    return { fiber, scope }
  })

/** Advances TestClock in `stepMs` steps (one event-loop turn each) until `done` holds. */
const until = (done: Effect.Effect<boolean, unknown>, stepMs = 250, maxSteps = 20_000) =>
  Effect.gen(function* () {
    for (let i = 0; i < maxSteps; i++) {
      yield* macrotask
      yield* macrotask
      if (yield* Effect.orElseSucceed(done, () => false)) return
      yield* TestClock.adjust(stepMs)
    }
    throw new Error("until: condition never held")
  })

const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* macrotask
})

const runTest = <A, E>(program: Effect.Effect<A, E>) =>
  Effect.runPromise(program.pipe(Effect.provide(TestClock.layer())) as Effect.Effect<A, never>)

const usageLimitEnd: RolloutSignal = {
  _tag: "TurnEnded",
  error: {
    kind: { kind: "usageLimitExceeded", httpStatusCode: null },
    message: "You've hit your usage limit",
  },
  lastAgentMessage: null,
}

const rateLimits = (usedPercent: number, resetsAtSec: number | null = null): RolloutSignal => ({
  _tag: "RateLimits",
  snapshot: {
    limitId: "codex",
    primary: { usedPercent, windowDurationMins: 300, resetsAt: resetsAtSec },
    secondary: null,
  },
})

describe("watcher", () => {
  test("waits without a model call while allowed is false or null, on a reset-aligned cadence; launches once on true", () =>
    runTest(
      Effect.gen(function* () {
        // Reset hint 10 minutes out: reads are capped at 5 minutes apart, never inferred from time.
        const resetSec = 10 * 60
        const rig = makeRig(
          readingOf(false, { primaryUsedPercent: 100, primaryResetsAtSec: resetSec }),
        )
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        expect(rig.quota.reads()).toBe(1)
        const waiting = yield* stateOf(rig)
        expect(waiting.resetsAt).toBe(resetSec * 1000)
        // Next read at min(reset + 2 s, last + 5 min) = 5 min.
        yield* TestClock.adjust(5 * MIN - 1_000)
        yield* settle
        expect(rig.quota.reads()).toBe(1)
        yield* TestClock.adjust(1_000)
        yield* settle
        expect(rig.quota.reads()).toBe(2)
        // Next: the reset itself (10 min + 2 s).
        yield* TestClock.adjust(5 * MIN + 1_000)
        yield* settle
        expect(rig.quota.reads()).toBe(3)
        // Past the reset but still not allowed: unknown hint → every minute; still no launch.
        rig.quota.set(readingOf(null))
        yield* TestClock.adjust(MIN)
        yield* settle
        expect(rig.quota.reads()).toBe(4)
        expect((yield* stateOf(rig)).unknownUsageCount).toBe(1)
        expect(rig.processes.spawned).toHaveLength(0)
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length > 0),
          1_000,
        )
        const job = yield* stateOf(rig)
        expect(job.state).toBe("running")
        expect(job.generation).toBe(1)
        expect(job.run?.pid).toBe(rig.processes.spawned[0]?.pid)
        const spec = rig.processes.spawned[0]!.spec
        expect(spec.command).toBe("/opt/codex/bin/codex")
        expect(spec.args.slice(0, 2)).toEqual(["exec", "--json"])
        expect(spec.args).toContain("--add-dir")
        expect(spec.args).not.toContain("--last")
        expect(spec.args).not.toContain("resume")
        expect(spec.env["CODEX_THREAD_ID"]).toBeUndefined()
        expect(spec.env["BATON_WAKE_JOB_ID"]).toBe(JOB)
        const prompt = spec.args.at(-1)!
        expect(prompt).toContain(`Continue Baton wake job ${JOB}`)
        expect(prompt).toContain(CAPSULE_BEGIN)
        expect(prompt).toContain("Run the parser tests and fix the two failures.")
        // More readings never launch twice.
        yield* TestClock.adjust(5 * MIN)
        yield* settle
        expect(rig.processes.spawned).toHaveLength(1)
        const meta = yield* rig.fs.readText(runFiles(rig.store.paths(JOB), 1).meta)
        expect(JSON.parse(meta ?? "{}")).toMatchObject({
          generation: 1,
          mode: "new_thread",
          label: "cli_continuation",
          pid: rig.processes.spawned[0]!.pid,
        })
        expect(JSON.parse(meta ?? "{}").args).toContain("<prompt>")
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("unknown allowance escalates to needs_attention only after the bound", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig, JOB, { ...defaultJobBounds, unknownUsageLimit: 3 })
        const { fiber } = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set({ _tag: "SignedOut", rateLimits: null, detail: "signed out", at: 0 })
        yield* until(
          Effect.map(stateOf(rig), (j) => j.state !== "quota_waiting"),
          5_000,
        )
        const job = yield* stateOf(rig)
        expect(job.state).toBe("needs_attention")
        expect(job.lastError).toMatch(/unknown 3 times/)
        expect(rig.quota.reads()).toBe(4)
        expect(rig.processes.spawned).toHaveLength(0)
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("rollout pressure climbs through the bands: prepare asks for a checkpoint, high seals once; a usage-limit turn end blocks", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(true))
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig)
        yield* until(Effect.sync(() => rig.quota.reads() > 0))
        for (const [percent, band] of [
          [50, "normal"],
          [85, "prepare"],
          [92, "high"],
          [96, "final"],
        ] as const) {
          rig.signals.push(THREAD, rateLimits(percent, 3_600))
          yield* until(Effect.map(stateOf(rig), (j) => j.pressure === band))
        }
        const job = yield* stateOf(rig)
        expect(job.checkpointRequest).toMatchObject({ band: "prepare", delivered: false })
        expect(job.seal?.checkpointSha256).toBe(job.memory.checkpointSha256)
        expect(rig.events.filter((e) => e.kind === "sealed")).toHaveLength(1)
        expect(rig.events.filter((e) => e.kind === "checkpoint-requested")).toHaveLength(1)
        expect(job.state).toBe("monitoring")
        rig.signals.push(THREAD, rateLimits(100, 3_600), usageLimitEnd)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        expect((yield* stateOf(rig)).resetsAt).toBe(3_600_000)
        expect(rig.processes.spawned).toHaveLength(0)
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("a checkpoint request a busy thread could not take is offered again and delivered once it is idle; one per rise; a fall below prepare ends the retries", () =>
    runTest(
      Effect.gen(function* () {
        let busy = true
        const offered: Array<{ readonly band: string; readonly at: number }> = []
        const channel: CheckpointChannelShape = {
          request: (_job, band) =>
            Effect.gen(function* () {
              offered.push({ band, at: yield* Clock.currentTimeMillis })
              return busy
                ? {
                    delivered: false,
                    detail: "the original thread is active in the daemon; status shows the request",
                    retryable: true,
                  }
                : {
                    delivered: true,
                    detail: `turn t-${offered.length} on the idle original thread`,
                    retryable: false,
                  }
            }),
        }
        const rig = makeRig(readingOf(true), undefined, unavailableSameThreadTurns, channel)
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig, {
          limits: { ...testLimits, checkpointRetryMs: 5_000 },
        })
        yield* until(Effect.sync(() => rig.quota.reads() > 0))
        rig.signals.push(THREAD, rateLimits(85, 3_600))
        yield* until(Effect.map(stateOf(rig), (j) => (j.checkpointRequest ?? null) !== null))
        const first = (yield* stateOf(rig)).checkpointRequest!
        expect(first).toMatchObject({ band: "prepare", delivered: false, retryPending: true })
        // Busy: offered again on later polls, never more often than every 5 s; nothing delivered.
        yield* until(Effect.sync(() => offered.length >= 4))
        const gaps = offered.slice(1).map((o, i) => o.at - offered[i]!.at)
        for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(5_000)
        expect((yield* stateOf(rig)).checkpointRequest).toEqual(first)
        // Still in the rise (now high), the thread goes idle: the next offer is delivered.
        rig.signals.push(THREAD, rateLimits(92, 3_600))
        yield* until(Effect.map(stateOf(rig), (j) => j.pressure === "high"))
        busy = false
        yield* until(Effect.map(stateOf(rig), (j) => j.checkpointRequest?.delivered === true))
        const delivered = (yield* stateOf(rig)).checkpointRequest!
        expect(delivered).toMatchObject({
          band: "high",
          requestedAt: first.requestedAt,
          delivered: true,
          retryPending: false,
        })
        expect(delivered.detail).toMatch(/^turn t-\d+ on the idle original thread \(on retry\)$/)
        expect(offered.at(-1)?.band).toBe("high")
        // At most one delivered request per rise: more polls and readings ask nothing more.
        const afterDelivery = offered.length
        rig.signals.push(THREAD, rateLimits(96, 3_600))
        yield* until(Effect.map(stateOf(rig), (j) => j.pressure === "final"))
        yield* TestClock.adjust(MIN)
        yield* settle
        expect(offered).toHaveLength(afterDelivery)
        expect(
          rig.events.filter((e) => e.kind === "checkpoint-requested" && e["delivered"] === true),
        ).toHaveLength(1)
        // A new rise while busy: a new request, pending; falling below prepare ends its retries.
        busy = true
        rig.signals.push(THREAD, rateLimits(40, 3_600))
        yield* until(Effect.map(stateOf(rig), (j) => j.pressure === "normal"))
        rig.signals.push(THREAD, rateLimits(86, 3_600))
        yield* until(Effect.sync(() => offered.length === afterDelivery + 1))
        expect((yield* stateOf(rig)).checkpointRequest).toMatchObject({
          band: "prepare",
          delivered: false,
          retryPending: true,
        })
        rig.signals.push(THREAD, rateLimits(50, 3_600))
        yield* until(Effect.map(stateOf(rig), (j) => j.pressure === "normal"))
        expect((yield* stateOf(rig)).checkpointRequest).toMatchObject({
          delivered: false,
          retryPending: false,
        })
        busy = false
        yield* TestClock.adjust(MIN)
        yield* settle
        expect(offered).toHaveLength(afterDelivery + 1)
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("rollout history read at start-up only establishes the band: 92 % then 3 % asks nothing, a live rise asks once, a restart never asks again", () =>
    runTest(
      Effect.gen(function* () {
        const offered: Array<string> = []
        const channel: CheckpointChannelShape = {
          request: (_job, band) =>
            Effect.sync(() => {
              offered.push(band)
              return {
                delivered: true,
                detail: `turn t-${offered.length} on the idle original thread`,
                retryable: false,
              }
            }),
        }
        const rig = makeRig(readingOf(true), undefined, unavailableSameThreadTurns, channel)
        yield* TestClock.adjust(60 * MIN)
        yield* armedJob(rig)
        // Written before the watcher starts: a turn at 92 % (before the reset), then one at 3 %.
        rig.signals.push(
          THREAD,
          { ...rateLimits(92, 3_600), at: 10 * MIN },
          { ...rateLimits(3, 30_000), at: 50 * MIN },
        )
        const first = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.pressure === "normal"))
        yield* TestClock.adjust(MIN)
        yield* settle
        const established = yield* stateOf(rig)
        expect(established.usedPercent).toBe(3)
        expect(established.checkpointRequest ?? null).toBeNull()
        expect(established.seal).toBeNull()
        expect(offered).toEqual([])
        // A real rise after the start: exactly one request, delivered.
        rig.signals.push(THREAD, { ...rateLimits(92, 30_000), at: yield* Clock.currentTimeMillis })
        yield* until(Effect.map(stateOf(rig), (j) => j.checkpointRequest?.delivered === true))
        yield* TestClock.adjust(MIN)
        yield* settle
        expect(offered).toEqual(["high"])
        // Restarts (killed, then again): each new watcher reads the rollout from its start.
        let previous = first
        for (let round = 2; round <= 3; round++) {
          yield* Fiber.interrupt(previous.fiber)
          yield* TestClock.adjust(MIN)
          rig.signals.rewind()
          previous = yield* startWatcher(rig)
          yield* until(
            Effect.sync(() => rig.events.filter((e) => e.kind === "started").length === round),
          )
          yield* TestClock.adjust(5 * MIN)
          yield* settle
        }
        expect(offered).toEqual(["high"])
        expect(rig.events.filter((e) => e.kind === "checkpoint-requested")).toHaveLength(1)
        expect((yield* stateOf(rig)).pressure).toBe("high")
        yield* Fiber.interrupt(previous.fiber)
      }),
    ))

  test("a usage-limit turn end in the rollout history blocks the job only when the job has not changed since", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(null))
        yield* TestClock.adjust(60 * MIN)
        // The thread hit the limit at 30 min; the job was armed (or resumed) after it, at 60 min.
        rig.signals.push(THREAD, { ...usageLimitEnd, at: 30 * MIN })
        yield* armedJob(rig)
        const first = yield* startWatcher(rig)
        yield* until(Effect.sync(() => rig.quota.reads() > 0))
        yield* TestClock.adjust(MIN)
        yield* settle
        expect((yield* stateOf(rig)).state).toBe("monitoring")
        // The watcher is down when the thread hits the limit again: its successor acts on it.
        yield* Fiber.interrupt(first.fiber)
        rig.signals.push(THREAD, { ...usageLimitEnd, at: yield* Clock.currentTimeMillis })
        yield* TestClock.adjust(MIN)
        rig.signals.rewind()
        const second = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        yield* Fiber.interrupt(second.fiber)
      }),
    ))

  for (const [name, signal, expected] of [
    ["usage limit → quota_waiting", usageLimitEnd, "quota_waiting"],
    [
      "HTTP 503 → retry_waiting",
      {
        _tag: "TurnEnded",
        error: { kind: { kind: "httpConnectionFailed", httpStatusCode: 503 }, message: "503" },
        lastAgentMessage: null,
      },
      "retry_waiting",
    ],
    [
      "context window exceeded → needs_attention",
      {
        _tag: "TurnEnded",
        error: { kind: { kind: "contextWindowExceeded", httpStatusCode: null }, message: "ctx" },
        lastAgentMessage: null,
      },
      "needs_attention",
    ],
    [
      "clean exit without a job command → needs_attention",
      { _tag: "TurnEnded", error: null, lastAgentMessage: "done?" },
      "needs_attention",
    ],
  ] as const)
    test(`a continuation's structured exit is classified: ${name}`, () =>
      runTest(
        Effect.gen(function* () {
          const rig = makeRig(readingOf(false))
          yield* armedJob(rig)
          const { fiber } = yield* startWatcher(rig)
          yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
          rig.quota.set(readingOf(true))
          yield* until(
            Effect.sync(() => rig.processes.spawned.length === 1),
            1_000,
          )
          const proc = rig.processes.spawned[0]!
          const files = runFiles(rig.store.paths(JOB), 1)
          yield* rig.fs.writeAtomic(
            files.log,
            `${JSON.stringify({ type: "thread.started", thread_id: CONT_THREAD })}\n`,
            0o600,
          )
          rig.signals.push(CONT_THREAD, signal)
          if (expected === "quota_waiting") rig.quota.set(readingOf(false))
          yield* proc.exit({
            code: expected === "needs_attention" && signal.error === null ? 0 : 1,
            signal: null,
          })
          yield* until(
            Effect.map(stateOf(rig), (j) => j.state !== "running"),
            100,
          )
          const job = yield* stateOf(rig)
          expect(job.state).toBe(expected)
          expect(job.continuationThreadId).toBe(CONT_THREAD)
          expect(job.lastRun?.threadId).toBe(CONT_THREAD)
          if (expected === "retry_waiting") {
            expect(job.retryCount).toBe(1)
            expect(job.nextRetryAt! - job.lastRun!.endedAt).toBe(60_000)
            // Allowed again, but not due: no relaunch before 60 s.
            rig.quota.set(readingOf(true))
            yield* TestClock.adjust(59_000)
            yield* settle
            expect(rig.processes.spawned).toHaveLength(1)
            yield* until(
              Effect.sync(() => rig.processes.spawned.length === 2),
              1_000,
            )
            expect((yield* stateOf(rig)).generation).toBe(2)
          }
          const meta = JSON.parse((yield* rig.fs.readText(files.meta)) ?? "{}")
          expect(meta.endedAt).not.toBeNull()
          expect(meta.threadId).toBe(CONT_THREAD)
          yield* Fiber.interrupt(fiber)
        }),
      ))

  test("the continuation completing the job is final; its exit changes nothing", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        yield* rig.store.applyEvent(JOB, { _tag: "CompleteSignalled", at: 1 })
        yield* rig.processes.spawned[0]!.exit({ code: 0, signal: null })
        yield* until(
          Effect.sync(() => rig.events.some((e) => e.kind === "run-ended")),
          100,
        )
        const job = yield* stateOf(rig)
        expect(job.state).toBe("completed")
        expect(job.lastRun?.failure).toBe("none")
        expect(rig.processes.spawned[0]!.signals).toEqual([])
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("a killed watcher's successor adopts the live run and never launches it twice", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig)
        const first = yield* startWatcher(rig, { leaseMs: 10_000 })
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        // Like SIGKILL: the fiber dies and its scope is never closed, so its lock stays on disk.
        yield* Fiber.interrupt(first.fiber)
        expect(yield* rig.fs.readText(`${WAKE}/watcher.lock`)).not.toBeNull()
        // The dead holder's pid is not alive here, so the lock is taken over at once.
        const second = yield* startWatcher(rig)
        yield* until(
          Effect.sync(() => rig.events.some((e) => e.kind === "adopted")),
          100,
        )
        yield* TestClock.adjust(10 * MIN)
        yield* settle
        expect(rig.processes.spawned).toHaveLength(1)
        expect((yield* stateOf(rig)).state).toBe("running")
        yield* rig.store.applyEvent(JOB, { _tag: "CompleteSignalled", at: 2 })
        yield* rig.processes.spawned[0]!.exit({ code: 0, signal: null })
        yield* until(
          Effect.sync(() => rig.events.some((e) => e.kind === "run-ended")),
          1_000,
        )
        expect((yield* stateOf(rig)).state).toBe("completed")
        expect(rig.processes.spawned).toHaveLength(1)
        yield* Fiber.interrupt(second.fiber)
      }),
    ))

  test("two watchers: the second finds the lock held and stops", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(true))
        yield* armedJob(rig)
        const first = yield* startWatcher(rig, {
          identity: { pid: 1, startTicks: null, host: "other-host" },
        })
        yield* until(Effect.sync(() => rig.events.some((e) => e.kind === "started")))
        const second = yield* startWatcher(rig, {
          identity: { pid: 2, startTicks: null, host: "other-host-2" },
        })
        const exit = yield* Fiber.await(second.fiber)
        expect(Exit.isFailure(exit)).toBe(true)
        expect(JSON.stringify(exit)).toContain("WatcherLockHeld")
        expect(rig.events.filter((e) => e.kind === "started")).toHaveLength(1)
        yield* Fiber.interrupt(first.fiber)
      }),
    ))

  test("watchdog: a silent continuation's process group is stopped and the job needs attention", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig, {
          limits: { ...testLimits, maxSilenceMs: 2 * MIN },
        })
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        yield* until(
          Effect.map(stateOf(rig), (j) => j.state === "needs_attention"),
          5_000,
        )
        const job = yield* stateOf(rig)
        expect(rig.processes.spawned[0]!.signals).toEqual(["SIGTERM"])
        expect(job.lastError).toMatch(/watchdog: no output for 120 s/)
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("stop while running: the watcher ends the process group", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        yield* rig.store.applyEvent(JOB, { _tag: "StopRequested", at: 3, reason: "stop" })
        yield* until(
          Effect.sync(() => rig.processes.spawned[0]!.signals.length > 0),
          250,
        )
        expect(rig.processes.spawned[0]!.signals).toEqual(["SIGTERM"])
        yield* until(
          Effect.sync(() => rig.events.some((e) => e.kind === "run-ended")),
          250,
        )
        expect((yield* stateOf(rig)).state).toBe("stopped")
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("a refused launch (spawn fails) goes to needs_attention with the reason", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false), "codex not found")
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.map(stateOf(rig), (j) => j.state === "needs_attention"),
          1_000,
        )
        expect((yield* stateOf(rig)).lastError).toMatch(/launch failed: .*codex not found/)
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("max concurrent runs: a second unblocked job waits for the slot", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig, JOB)
        yield* armedJob(rig, JOB2)
        const { fiber } = yield* startWatcher(rig)
        yield* until(
          Effect.map(
            Effect.all([stateOf(rig, JOB), stateOf(rig, JOB2)]),
            ([a, b]) => a.state === "quota_waiting" && b.state === "quota_waiting",
          ),
        )
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        yield* TestClock.adjust(5 * MIN)
        yield* settle
        expect(rig.processes.spawned).toHaveLength(1)
        const waiting = yield* stateOf(rig, JOB2)
        expect(waiting.state).toBe("quota_waiting")
        // Completed from outside while its process lives: the run keeps its slot until it exits.
        yield* rig.store.applyEvent(JOB, { _tag: "CompleteSignalled", at: 4 })
        yield* TestClock.adjust(5 * MIN)
        yield* settle
        expect(rig.processes.spawned).toHaveLength(1)
        expect((yield* stateOf(rig, JOB2)).state).toBe("quota_waiting")
        expect(rig.processes.spawned[0]!.signals).toEqual([])
        yield* rig.processes.spawned[0]!.exit({ code: 0, signal: null })
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 2),
          1_000,
        )
        expect(rig.processes.spawned[1]!.spec.env["BATON_WAKE_JOB_ID"]).toBe(JOB2)
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("pause and re-arm while a run lives: no second run of the job until the first exits", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig)
        const { fiber } = yield* startWatcher(rig, {
          limits: { ...testLimits, maxConcurrentRuns: 4 },
        })
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        yield* rig.store.applyEvent(JOB, { _tag: "PauseRequested", at: 5, reason: "user" })
        yield* rig.store.applyEvent(JOB, { _tag: "ResumeRequested", at: 6 })
        rig.quota.set(readingOf(false))
        yield* until(
          Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"),
          1_000,
        )
        rig.quota.set(readingOf(true))
        yield* TestClock.adjust(10 * MIN)
        yield* settle
        // Pause lets the run finish (supervised, not killed); nothing launches beside it.
        expect(rig.processes.spawned).toHaveLength(1)
        expect(rig.processes.spawned[0]!.signals).toEqual([])
        expect(rig.events.some((e) => e.kind === "launch-deferred")).toBe(true)
        yield* rig.processes.spawned[0]!.exit({ code: 0, signal: null })
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 2),
          1_000,
        )
        expect((yield* stateOf(rig)).generation).toBe(2)
        yield* Fiber.interrupt(fiber)
      }),
    ))

  test("a successor watcher adopts a completed job's live run and counts it against the slot", () =>
    runTest(
      Effect.gen(function* () {
        const rig = makeRig(readingOf(false))
        yield* armedJob(rig, JOB)
        yield* armedJob(rig, JOB2)
        const first = yield* startWatcher(rig)
        yield* until(
          Effect.map(
            Effect.all([stateOf(rig, JOB), stateOf(rig, JOB2)]),
            ([a, b]) => a.state === "quota_waiting" && b.state === "quota_waiting",
          ),
        )
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        const owner = rig.processes.spawned[0]!.spec.env["BATON_WAKE_JOB_ID"]!
        yield* rig.store.applyEvent(owner, { _tag: "CompleteSignalled", at: 7 })
        yield* Fiber.interrupt(first.fiber)
        const second = yield* startWatcher(rig)
        yield* until(
          Effect.sync(() => rig.events.some((e) => e.kind === "adopted")),
          100,
        )
        yield* TestClock.adjust(5 * MIN)
        yield* settle
        expect(rig.processes.spawned).toHaveLength(1)
        yield* rig.processes.spawned[0]!.exit({ code: 0, signal: null })
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 2),
          1_000,
        )
        expect(rig.processes.spawned[1]!.spec.env["BATON_WAKE_JOB_ID"]).not.toBe(owner)
        yield* Fiber.interrupt(second.fiber)
      }),
    ))

  test("original_thread delivery: a turn on the idle original thread, ended when the thread goes idle; busy → new thread", () =>
    runTest(
      Effect.gen(function* () {
        let active: boolean | null = false
        const started: Array<{ threadId: string; text: string }> = []
        const interrupted: Array<string> = []
        const sameThread: SameThreadTurnsShape = {
          start: (threadId, text) =>
            Effect.sync(() => {
              started.push({ threadId, text })
              active = true
              return { _tag: "Started", turnId: `turn-${started.length}` } as const
            }),
          isActive: () => Effect.sync(() => active),
          interrupt: (_thread, turnId) => Effect.sync(() => void interrupted.push(turnId)),
        }
        const rig = makeRig(readingOf(false), undefined, sameThread)
        yield* armedJob(rig, JOB, defaultJobBounds, (job) => ({
          ...job,
          delivery: "original_thread",
        }))
        const { fiber } = yield* startWatcher(rig)
        yield* until(Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"))
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => started.length === 1),
          1_000,
        )
        expect(started[0]?.threadId).toBe(THREAD)
        expect(started[0]?.text).toContain("Usage is available again")
        expect(started[0]?.text).toContain(CAPSULE_BEGIN)
        expect(rig.processes.spawned).toHaveLength(0)
        const running = yield* stateOf(rig)
        expect(running.run).toMatchObject({ pid: null, threadId: THREAD, mode: "original_thread" })
        const meta = JSON.parse(
          (yield* rig.fs.readText(runFiles(rig.store.paths(JOB), 1).meta)) ?? "{}",
        )
        expect(meta).toMatchObject({ label: "same_thread_turn", turnId: "turn-1" })
        // The turn ends with a usage limit in the original thread's rollout.
        rig.signals.push(THREAD, usageLimitEnd)
        rig.quota.set(readingOf(false))
        active = false
        yield* until(
          Effect.map(stateOf(rig), (j) => j.state === "quota_waiting"),
          500,
        )
        expect((yield* stateOf(rig)).lastRun).toMatchObject({
          mode: "original_thread",
          failure: "usage_limit",
        })
        // Allowed again but the thread is busy: the launcher falls back to a new thread, and says so.
        const busy: SameThreadTurnsShape = {
          ...sameThread,
          start: () =>
            Effect.succeed({ _tag: "Unavailable", detail: "the original thread is active" }),
        }
        yield* Fiber.interrupt(fiber)
        const rig2: Rig = {
          ...rig,
          layer: Layer.merge(rig.layer, Layer.succeed(SameThreadTurns, busy)),
        }
        const second = yield* startWatcher(rig2)
        rig.quota.set(readingOf(true))
        yield* until(
          Effect.sync(() => rig.processes.spawned.length === 1),
          1_000,
        )
        expect(
          rig.events.find((e) => e.kind === "launched" && e["fallback"] !== undefined),
        ).toBeDefined()
        const fallbackMeta = JSON.parse(
          (yield* rig.fs.readText(runFiles(rig.store.paths(JOB), 2).meta)) ?? "{}",
        )
        expect(fallbackMeta).toMatchObject({ mode: "new_thread", label: "cli_continuation" })
        expect(fallbackMeta.detail).toMatch(/original_thread unavailable/)
        expect(interrupted).toEqual([])
        yield* Fiber.interrupt(second.fiber)
      }),
    ))
})

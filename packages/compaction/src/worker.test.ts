// The worker against the in-memory twin of the app-server, on TestClock: time only moves when
// the test adjusts it; the fake runs on macrotasks, so the driver yields one event-loop turn per
// step (no wall-clock sleeps).
import { bindHandoff } from "@baton/handoff"
import type { ThreadController } from "@baton/ipc-codex"
import { connectionThreadController } from "@baton/ipc-codex"
import type {
  FakeAppServer,
  FakeAppServerOptions,
  FakeTransportOptions,
} from "@baton/ipc-codex/testing"
import { fakeTransport, makeFakeAppServer } from "@baton/ipc-codex/testing"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, test } from "vitest"
import { ProcessProbe } from "./job-lock.js"
import type { JobRecord } from "./job-record.js"
import { memoryJournalFileSystemLayer } from "./journal-file-system.js"
import { Journal, journalLayer } from "./journal.js"
import type { EventLogEntry } from "./journal.js"
import { jobMetrics } from "./metrics.js"
import { runWorker } from "./worker.js"

const THREAD = "thread-1"
const JOB = "job-0001"
const SUMMARY = "Parser ported; secret-free summary"
const NEXT_STEP = "Run the e2e suite and stop"
const PRESERVE = "src/parser.ts keeps the new grammar"

const macrotask = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Advances TestClock by `stepMs` per event-loop turn until `done` holds (or the fiber ends). */
const drive = <A, E, R = never>(
  fiber: Fiber.Fiber<A, E>,
  done: Effect.Effect<boolean, never, R> = Effect.succeed(false),
  stepMs = 50,
) =>
  Effect.gen(function* () {
    for (let i = 0; i < 4_000; i++) {
      yield* macrotask
      if (fiber.pollUnsafe() !== undefined || (yield* done)) return
      yield* TestClock.adjust(stepMs)
    }
    throw new Error("drive: nothing happened after 4000 steps")
  })

/** Yields event-loop turns without moving the clock until `done` holds. */
const settle = (done: Effect.Effect<boolean>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500 && !(yield* done); i++) yield* macrotask
  })

interface Scenario {
  readonly resume: boolean
  readonly server?: FakeAppServerOptions
  readonly transport?: FakeTransportOptions
  /** Runs after the worker was forked; may drive it part of the way. */
  readonly during?: (ctx: {
    readonly server: FakeAppServer
    readonly controller: ThreadController
    readonly fiber: Fiber.Fiber<unknown, unknown>
  }) => Effect.Effect<void, unknown, Journal>
}

const probe = Layer.succeed(ProcessProbe, {
  selfPid: 4242,
  isAlive: () => Effect.succeed(true),
  startTimeMs: () => Effect.succeed(null),
})

const runScenario = async (scenario: Scenario) => {
  const server = makeFakeAppServer({ threads: [{ id: THREAD }], ...scenario.server })
  const program = Effect.gen(function* () {
    const journal = yield* Journal
    const handoff = scenario.resume
      ? yield* Effect.orDie(
          bindHandoff({
            threadId: THREAD,
            jobId: JOB,
            handoff: {
              summary: SUMMARY,
              preserve: [PRESERVE],
              discard: [],
              nextStep: NEXT_STEP,
              resume: true,
            },
            createdAt: "2025-01-31T12:00:00.000Z",
          }),
        )
      : null
    yield* journal.schedule({
      job: {
        jobId: JOB,
        threadId: THREAD,
        userFingerprint: "fingerprint-at-schedule",
        resume: scenario.resume,
        handoffDigest: handoff?.digest ?? null,
      },
      handoff,
    })
    const connection = yield* fakeTransport(server, scenario.transport).connect
    const controller = yield* connectionThreadController(connection, THREAD)
    const fiber = yield* Effect.forkChild(runWorker({ threadId: THREAD, jobId: JOB, controller }))
    if (scenario.during !== undefined) yield* scenario.during({ server, controller, fiber })
    yield* drive(fiber)
    const stored = yield* Fiber.join(fiber)
    const { entries } = yield* journal.readEvents(THREAD, JOB)
    const index = yield* journal.inspect(THREAD)
    return { job: stored.job, entries, history: index.history }
  })
  const result = await Effect.runPromise(
    Effect.scoped(program).pipe(
      Effect.provide(
        journalLayer("/jobs").pipe(Layer.provideMerge(memoryJournalFileSystemLayer())),
      ),
      Effect.provide(probe),
      Effect.provide(TestClock.layer()),
    ),
  )
  return { ...result, server }
}

const requests = (server: FakeAppServer, method: string) =>
  server.received.filter((r) => r.method === method)

const noText = (entries: ReadonlyArray<EventLogEntry>) => {
  const log = JSON.stringify(entries)
  for (const text of [SUMMARY, NEXT_STEP, PRESERVE, "Baton automatic continuation", "reply to"])
    expect(log).not.toContain(text)
}

const statusIs = (status: JobRecord["status"]) =>
  Effect.gen(function* () {
    const journal = yield* Journal
    return (yield* Effect.orDie(journal.readJob(THREAD, JOB))).job.status === status
  })

describe("runWorker", () => {
  test("resume: one compaction request, one continuation with the job id and handoff, resumed", async () => {
    const { job, entries, history, server } = await runScenario({
      resume: true,
      server: { compaction: { tokenUsage: "after-item-completed" } },
    })
    expect(job.status).toBe("resumed")
    expect(job.continuationOutcome).toBe("completed")
    expect(requests(server, "thread/compact/start")).toHaveLength(1)
    expect(server.turnInputs).toHaveLength(1)
    const text = server.turnInputs[0]?.text ?? ""
    expect(text).toContain(JOB)
    expect(text).toContain(NEXT_STEP)
    expect(text).toContain(PRESERVE)
    expect(job.compactionTurnId).toMatch(/^compact-turn/)
    expect(job.continuationTurnId).not.toBeNull()
    const metrics = jobMetrics(job)
    expect(metrics.tokensBefore).toBe(50_000)
    expect(metrics.tokensAfter).toBe(8_000)
    expect(metrics.compactionDurationMs).not.toBeNull()
    expect(metrics.continuationDelayMs).not.toBeNull()
    expect(history).toHaveLength(1)
    // Write-ahead: the job was saved as requested before each send.
    const kinds = entries.map((e) => e.to ?? e.messageType)
    expect(kinds.indexOf("compaction_requested")).toBeLessThan(kinds.indexOf("compact"))
    expect(kinds.indexOf("continuation_requested")).toBeLessThan(kinds.indexOf("startTurn"))
    noText(entries)
  })

  test("resume=false: completed, no continuation", async () => {
    const { job, server, entries } = await runScenario({ resume: false })
    expect(job.status).toBe("completed")
    expect(job.resumeSkipped).toBeNull()
    expect(requests(server, "thread/compact/start")).toHaveLength(1)
    expect(server.turnInputs).toHaveLength(0)
    noText(entries)
  })

  test("low headroom after compaction: completed with resumeSkipped, no continuation", async () => {
    const { job, server } = await runScenario({
      resume: true,
      server: {
        threads: [{ id: THREAD, lastTotalTokens: 200_000 }],
        compaction: { tokenUsage: "after-item-completed", lastTokensAfter: 180_000 },
      },
    })
    expect(job.status).toBe("completed")
    expect(job.resumeSkipped).toBe("insufficient_headroom")
    expect(job.resumeSkipReason).toBe("above_headroom_threshold")
    expect(server.turnInputs).toHaveLength(0)
  })

  test("new user input while waiting for idle: cancelled, no compaction request", async () => {
    const { job, server } = await runScenario({
      resume: true,
      server: { threads: [{ id: THREAD, status: { type: "active" } }] },
      during: ({ controller, fiber }) =>
        Effect.gen(function* () {
          yield* drive(fiber, statusIs("waiting_for_idle"))
          yield* controller.startTurn({ text: "actually, do something else" })
        }),
    })
    expect(job.status).toBe("cancelled")
    expect(job.reason).toBe("new_user_input")
    expect(requests(server, "thread/compact/start")).toHaveLength(0)
  })

  test("compaction request timeout: outcome_may_be_unknown, nothing resent", async () => {
    const { job, server } = await runScenario({
      resume: true,
      transport: { requestTimeoutMs: 5_000 },
      during: ({ server }) => Effect.sync(() => server.silence("thread/compact/start")),
    })
    expect(job.status).toBe("outcome_may_be_unknown")
    expect(job.reason).toBe("compaction_outcome_unknown")
    expect(job.outcomeMayBeUnknown).toBe(true)
    expect(requests(server, "thread/compact/start")).toHaveLength(1)
    expect(server.turnInputs).toHaveLength(0)
  })

  test("an automatic compaction that started before our request is not counted as ours", async () => {
    const turn = (id: string, status: string) => ({
      id,
      rootTurnId: id,
      items: [],
      itemsView: "notLoaded",
      status,
      error: null,
      startedAt: 0,
      completedAt: status === "inProgress" ? null : 0,
      durationMs: null,
    })
    const autoItem = { type: "contextCompaction", id: "auto-item" }
    const { job, server } = await runScenario({
      resume: true,
      server: { compaction: { tokenUsage: "after-item-completed" } },
      during: ({ server, controller, fiber }) =>
        Effect.gen(function* () {
          server.emitNotification("turn/started", {
            threadId: THREAD,
            turn: turn("auto-1", "inProgress"),
          })
          server.emitNotification("item/started", {
            threadId: THREAD,
            turnId: "auto-1",
            item: autoItem,
            startedAtMs: 0,
          })
          yield* settle(Effect.map(controller.state, (s) => s.turns.some((t) => t.id === "auto-1")))
          yield* drive(
            fiber,
            Effect.sync(() => requests(server, "thread/compact/start").length > 0),
          )
          // The racing automatic compaction finishes after our request was sent.
          server.emitNotification("item/completed", {
            threadId: THREAD,
            turnId: "auto-1",
            item: autoItem,
            completedAtMs: 0,
          })
          server.emitNotification("turn/completed", {
            threadId: THREAD,
            turn: turn("auto-1", "completed"),
          })
        }),
    })
    expect(job.status).toBe("resumed")
    expect(job.compactionTurnId).toMatch(/^compact-turn/)
    expect(job.compactionItemId).not.toBe("auto-item")
    expect(requests(server, "thread/compact/start")).toHaveLength(1)
    expect(server.turnInputs).toHaveLength(1)
  })
})

// The worker against the in-memory twin of the app-server, on TestClock: time only moves when
// the test adjusts it; the fake runs on macrotasks, so the driver yields one event-loop turn per
// step (no wall-clock sleeps).
import { bindHandoff } from "@baton/handoff"
import type { ThreadController, ThreadState } from "@baton/ipc-codex"
import { connectionThreadController, emptyThreadState } from "@baton/ipc-codex"
import type {
  FakeAppServer,
  FakeAppServerOptions,
  FakeTransportOptions,
} from "@baton/ipc-codex/testing"
import { fakeTransport, makeFakeAppServer } from "@baton/ipc-codex/testing"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { describe, expect, test } from "vitest"
import { acquireJobLock, ProcessProbe } from "./job-lock.js"
import type { JobRecord } from "./job-record.js"
import { newJob } from "./job-record.js"
import { memoryJournalFileSystemLayer } from "./journal-file-system.js"
import { Journal, journalLayer } from "./journal.js"
import type { EventLogEntry } from "./journal.js"
import { jobMetrics } from "./metrics.js"
import { NO_USER_INPUT_FINGERPRINT, threadUserBoundary } from "./user-boundary.js"
import { initialObservation, observationFor, observeThreadState, runWorker } from "./worker.js"

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
  /** Runs after the job was scheduled, before the worker starts. */
  readonly beforeWorker?: (ctx: {
    readonly server: FakeAppServer
    readonly controller: ThreadController
  }) => Effect.Effect<void, unknown>
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
    const connection = yield* fakeTransport(server, scenario.transport).connect
    const controller = yield* connectionThreadController(connection, THREAD)
    // The anchor is taken from the same view the worker reads, like the schedule path must.
    const anchor = threadUserBoundary(yield* controller.state).fingerprint
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
        userFingerprint: anchor,
        resume: scenario.resume,
        handoffDigest: handoff?.digest ?? null,
      },
      handoff,
    })
    if (scenario.beforeWorker !== undefined) yield* scenario.beforeWorker({ server, controller })
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

  test("a worker whose thread lock belongs to another job's live worker ends its scheduled job as failed", async () => {
    const server = makeFakeAppServer({ threads: [{ id: THREAD }] })
    const program = Effect.gen(function* () {
      const journal = yield* Journal
      const connection = yield* fakeTransport(server).connect
      const controller = yield* connectionThreadController(connection, THREAD)
      yield* journal.schedule({
        job: {
          jobId: JOB,
          threadId: THREAD,
          userFingerprint: "",
          resume: false,
          handoffDigest: null,
        },
        handoff: null,
      })
      yield* acquireJobLock({
        dir: journal.dir,
        threadId: THREAD,
        jobId: "job-other",
        leaseMs: 60_000,
      })
      const stored = yield* runWorker({ threadId: THREAD, jobId: JOB, controller })
      return { stored, events: yield* journal.readEvents(THREAD, JOB) }
    })
    const { stored, events } = await Effect.runPromise(
      Effect.scoped(program).pipe(
        Effect.provide(
          journalLayer("/jobs").pipe(Layer.provideMerge(memoryJournalFileSystemLayer())),
        ),
        Effect.provide(probe),
        Effect.provide(TestClock.layer()),
      ),
    )
    expect(stored.job.status).toBe("failed")
    expect(stored.job.reason).toBe("worker_lost_before_dispatch")
    expect(stored.job.detail).toContain("job-other")
    expect(events.entries.some((e) => e.to === "failed")).toBe(true)
    expect(requests(server, "thread/compact/start")).toHaveLength(0)
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

describe("runWorker: user boundary and token usage", () => {
  test("usage reported before item/completed (the real binary's order) is fresh: resumed", async () => {
    // OBSERVED.md: thread/compact/start → … 3 × thread/tokenUsage/updated → item/completed.
    const { job, server } = await runScenario({
      resume: true,
      server: { compaction: { tokenUsage: "before-item-completed" } },
    })
    expect(job.status).toBe("resumed")
    expect(job.usageAfter?.turnId).toBe(job.compactionTurnId)
    expect(jobMetrics(job).tokensAfter).toBe(8_000)
    expect(server.turnInputs).toHaveLength(1)
  })

  test("input that arrived after scheduling but before the worker's first look cancels", async () => {
    const { job, server } = await runScenario({
      resume: true,
      beforeWorker: ({ controller }) =>
        Effect.gen(function* () {
          yield* controller.startTurn({ text: "actually, do something else" })
          yield* settle(Effect.map(controller.state, (s) => s.turns.length > 0))
        }),
    })
    expect(job.status).toBe("cancelled")
    expect(job.reason).toBe("new_user_input")
    expect(requests(server, "thread/compact/start")).toHaveLength(0)
  })
})

describe("observeThreadState", () => {
  const userItem = (id: string, type = "userMessage") => ({
    id,
    type,
    phase: "completed" as const,
    startedAtMs: null,
    completedAtMs: null,
  })
  const turn = (id: string, items: ReadonlyArray<ReturnType<typeof userItem>>) => ({
    id,
    status: "completed",
    error: null,
    startedAtMs: null,
    completedAtMs: null,
    startedAtRevision: 1,
    items,
  })
  const base: ThreadState = {
    ...emptyThreadState(THREAD),
    status: { type: "idle", activeFlags: [], unknownType: null },
    turns: [turn("u1", [userItem("m1")])],
  }
  const tags = (events: ReadonlyArray<{ readonly _tag: string }>) => events.map((e) => e._tag)
  const usage = (receivedAtMs: number, totalTokens: number) => ({
    turnId: null,
    last: { totalTokens } as NonNullable<ThreadState["tokenUsage"]>["last"],
    total: { totalTokens } as NonNullable<ThreadState["tokenUsage"]>["total"],
    modelContextWindow: 100_000,
    receivedAtMs,
  })

  test("without a stored anchor the first state anchors; with one, a different first state is new input", () => {
    const job = (userFingerprint: string) =>
      newJob({
        jobId: JOB,
        threadId: THREAD,
        jobNumber: 1,
        createdAt: 0,
        userFingerprint,
        resume: false,
        handoffDigest: null,
      })
    const unanchored = observeThreadState(observationFor(job("")), base, 0)
    expect(tags(unanchored.events)).not.toContain("UserBoundaryChanged")
    const same = observeThreadState(
      observationFor(job(threadUserBoundary(base).fingerprint)),
      base,
      0,
    )
    expect(tags(same.events)).not.toContain("UserBoundaryChanged")
    const stale = observeThreadState(observationFor(job(NO_USER_INPUT_FINGERPRINT)), base, 0)
    expect(stale.events).toContainEqual({
      _tag: "UserBoundaryChanged",
      at: 0,
      fingerprint: threadUserBoundary(base).fingerprint,
    })
  })

  test("steering into the latest user turn is new input", () => {
    const first = observeThreadState(initialObservation, base, 0)
    const steered: ThreadState = {
      ...base,
      turns: [turn("u1", [userItem("m1"), userItem("s1", "steeringUserMessage")])],
    }
    expect(tags(observeThreadState(first.memory, steered, 1).events)).toContain(
      "UserBoundaryChanged",
    )
  })

  test("two usage reports within the same millisecond are both observed", () => {
    const a = observeThreadState(initialObservation, { ...base, tokenUsage: usage(5, 90_000) }, 5)
    const b = observeThreadState(a.memory, { ...base, tokenUsage: usage(5, 10_000) }, 5)
    expect(b.events).toContainEqual(
      expect.objectContaining({ _tag: "TokenUsageObserved", totalTokens: 10_000 }),
    )
    const c = observeThreadState(b.memory, { ...base, tokenUsage: usage(5, 10_000) }, 5)
    expect(tags(c.events)).not.toContain("TokenUsageObserved")
  })

  test("the usage a state holds is reported again with a compaction item that completes in it", () => {
    const withUsage = { ...base, tokenUsage: usage(5, 10_000) }
    const a = observeThreadState(initialObservation, withUsage, 5)
    const completed: ThreadState = {
      ...withUsage,
      compactions: [
        { itemId: "cc-1", turnId: "c1", phase: "completed", startedAtMs: 6, completedAtMs: 7 },
      ],
    }
    const b = observeThreadState(a.memory, completed, 7)
    expect(tags(b.events)).toEqual(["CompactionItemCompleted", "TokenUsageObserved"])
    expect(b.events[1]).toEqual({
      _tag: "TokenUsageObserved",
      at: 7,
      turnId: null,
      totalTokens: 10_000,
      modelContextWindow: 100_000,
    })
  })
})

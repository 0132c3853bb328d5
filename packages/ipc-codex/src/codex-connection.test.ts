import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, test } from "vitest"
import type { CodexConnection } from "./codex-connection.js"
import { retryWhenOverloaded } from "./codex-transport.js"
import type { FakeAppServer, FakeTransportOptions } from "./testing/index.js"
import {
  fakeTransport,
  makeFakeAppServer,
  turnCompleted,
  waitForThreadState,
} from "./testing/index.js"
import { isThreadIdle } from "./thread-state.js"

/** A well-formed thread id the twin does not know (a malformed one gets "invalid thread id"). */
const UNKNOWN_THREAD = "01a23b94-1111-7111-8111-111111111111"

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.scoped(effect))

const withConnection = <A, E>(
  server: FakeAppServer,
  body: (connection: CodexConnection) => Effect.Effect<A, E, Scope.Scope>,
  options?: FakeTransportOptions,
): Promise<A> => run(Effect.flatMap(fakeTransport(server, options).connect, body))

const errorOf = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.flip(effect)

/** Polls a condition on real time (the fake server runs on macrotasks). */
const until = (condition: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 2))
  })

describe("handshake", () => {
  test("initialize announces baton, opts out of deltas, then sends initialized", async () => {
    const server = makeFakeAppServer()
    const info = await withConnection(server, (c) => Effect.succeed(c.server))
    expect(info.version).toBe("0.169.0")
    expect(info.userAgent.startsWith("baton/")).toBe(true)
    const [init, initialized] = server.received
    expect(init?.method).toBe("initialize")
    expect(init?.params).toMatchObject({
      clientInfo: { name: "baton" },
      capabilities: {
        experimentalApi: false,
        optOutNotificationMethods: expect.arrayContaining(["item/agentMessage/delta"]),
      },
    })
    expect(initialized?.method).toBe("initialized")
  })
})

describe("thread resume and ownership", () => {
  test("resume seeds the status and subscribes", async () => {
    const server = makeFakeAppServer({
      threads: [{ id: "t1", status: { type: "active", activeFlags: [] } }],
    })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        const thread = yield* c.resumeThread("t1")
        expect(thread.id).toBe("t1")
        return yield* waitForThreadState(c, "t1", (s) => s.tokenUsage !== null)
      }),
    )
    expect(state.status.type).toBe("active")
    expect(server.received.find((r) => r.method === "thread/resume")?.params).toEqual({
      threadId: "t1",
      excludeTurns: true,
    })
  })

  test("another process holding the thread is ActiveWriterError", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1", activeWriterElsewhere: true }] })
    const error = await withConnection(server, (c) => errorOf(c.resumeThread("t1")))
    expect(error._tag).toBe("ActiveWriterError")
    expect(error.message).toContain("owned by another Codex process")
  })

  test("an unknown thread is ThreadNotFoundError", async () => {
    const server = makeFakeAppServer()
    const error = await withConnection(server, (c) => errorOf(c.resumeThread(UNKNOWN_THREAD)))
    expect(error).toMatchObject({ _tag: "ThreadNotFoundError", threadId: UNKNOWN_THREAD })
  })

  test("unsubscribe reports the server's status", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }, { id: "t2", loaded: false }] })
    const statuses = await withConnection(server, (c) =>
      Effect.gen(function* () {
        const notResumed = yield* c.unsubscribeThread("t1")
        yield* c.resumeThread("t1")
        const first = yield* c.unsubscribeThread("t1")
        const second = yield* c.unsubscribeThread("t1")
        const notLoaded = yield* c.unsubscribeThread("t2")
        return [notResumed, first, second, notLoaded]
      }),
    )
    // As 0.169: only a subscribed client unsubscribes; a second time is "notSubscribed".
    expect(statuses).toEqual(["notSubscribed", "unsubscribed", "notSubscribed", "notLoaded"])
  })
})

const compactionDone = (s: {
  compactions: ReadonlyArray<{ phase: string }>
  turns: ReadonlyArray<{ status: string }>
}) =>
  s.compactions.some((c) => c.phase === "completed") &&
  s.turns.every((t) => t.status !== "inProgress")

describe("compaction lifecycle", () => {
  test("completes: item completed, turn completed, token usage dropped, request attributed", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1", lastTotalTokens: 200_000 }] })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* waitForThreadState(c, "t1", (s) => s.tokenUsage?.last.totalTokens === 200_000)
        const request = yield* c.compactThread("t1")
        expect(request.threadId).toBe("t1")
        return yield* waitForThreadState(c, "t1", compactionDone)
      }),
    )
    const compaction = state.compactions[0]!
    expect(state.compactionRequests[0]).toMatchObject({
      outcome: "accepted",
      turnId: compaction.turnId,
    })
    expect(state.turns.find((t) => t.id === compaction.turnId)?.status).toBe("completed")
    expect(state.tokenUsage).toMatchObject({
      turnId: compaction.turnId,
      modelContextWindow: 258_400,
    })
    expect(state.tokenUsage!.last.totalTokens).toBe(8_000)
    expect(isThreadIdle(state)).toBe(true)
  })

  test.each(["after-item-completed", "after-turn-completed", "none"] as const)(
    "token usage %s",
    async (tokenUsage) => {
      const server = makeFakeAppServer({
        threads: [{ id: "t1", lastTotalTokens: 100_000 }],
        compaction: { tokenUsage },
      })
      const states = await withConnection(server, (c) =>
        Effect.gen(function* () {
          yield* c.resumeThread("t1")
          yield* waitForThreadState(c, "t1", (s) => s.tokenUsage !== null)
          yield* c.compactThread("t1")
          yield* Effect.promise(() => server.settled())
          // A round trip is a barrier: every earlier frame has been reduced when its answer arrives.
          yield* c.listLoadedThreads
          return yield* c.threadState("t1")
        }),
      )
      const compaction = states.compactions[0]!
      expect(compaction.phase).toBe("completed")
      if (tokenUsage === "none") expect(states.tokenUsage!.last.totalTokens).toBe(100_000)
      else
        expect(states.tokenUsage).toMatchObject({
          turnId: compaction.turnId,
          last: { totalTokens: 8_000 },
        })
    },
  )

  test.each([
    ["failed", "failed"],
    ["interrupted", "interrupted"],
  ] as const)("a %s compaction turn ends without item/completed", async (outcome, status) => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }], compaction: { outcome } })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* c.compactThread("t1")
        return yield* waitForThreadState(c, "t1", (s) => s.turns.some((t) => t.status === status))
      }),
    )
    expect(state.compactions[0]?.phase).toBe("started")
    const turn = state.turns.find((t) => t.status === status)!
    if (outcome === "failed") {
      expect(turn.error).toMatchObject({
        message: "compaction failed",
        codexErrorInfo: { kind: "other" },
      })
      expect(state.lastError?.message).toBe("compaction failed")
    }
  })

  test("a compaction that never completes stays started and active", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }], compaction: { outcome: "never" } })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* c.compactThread("t1")
        yield* Effect.promise(() => server.settled())
        return yield* c.threadState("t1")
      }),
    )
    expect(state.compactions).toHaveLength(1)
    expect(state.compactions[0]?.phase).toBe("started")
    expect(state.status.type).toBe("active")
    expect(state.activeTurnId).toBe(state.compactions[0]?.turnId)
  })

  test("turn/start during the compaction turn is TurnNotSteerableError", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }], compaction: { outcome: "never" } })
    const error = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* c.compactThread("t1")
        yield* waitForThreadState(c, "t1", (s) => s.compactions.length > 0)
        return yield* errorOf(c.startTurn("t1", "continue"))
      }),
    )
    expect(error).toMatchObject({
      _tag: "TurnNotSteerableError",
      turnKind: "compact",
      threadId: "t1",
    })
  })

  test.each(["before", "after"] as const)(
    "an auto-compaction %s the request is a separate turn; the request keeps the first turn after it",
    async (autoCompaction) => {
      const server = makeFakeAppServer({ threads: [{ id: "t1" }], compaction: { autoCompaction } })
      const state = await withConnection(server, (c) =>
        Effect.gen(function* () {
          yield* c.resumeThread("t1")
          yield* c.compactThread("t1")
          yield* Effect.promise(() => server.settled())
          return yield* waitForThreadState(
            c,
            "t1",
            (s) =>
              s.compactions.length === 2 && s.compactions.every((x) => x.phase === "completed"),
          )
        }),
      )
      const [first, second] = state.compactions
      expect(first?.turnId).not.toBe(second?.turnId)
      // Attribution is "first turn/started after the request": with an auto-compaction before, the
      // domain must check the turn kind itself; the state records which turn that was.
      expect(state.compactionRequests[0]?.turnId).toBe(first?.turnId)
      expect(
        first?.turnId.startsWith(autoCompaction === "before" ? "auto-turn" : "compact-turn"),
      ).toBe(true)
    },
  )

  test("the deprecated thread/compacted is recorded but not required", async () => {
    const server = makeFakeAppServer({
      threads: [{ id: "t1" }],
      compaction: { emitThreadCompacted: true },
    })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* c.compactThread("t1")
        return yield* waitForThreadState(c, "t1", (s) => s.compactedNotices.length > 0)
      }),
    )
    expect(state.compactedNotices[0]).toBe(state.compactions[0]?.turnId)
  })

  test("a refused compaction request is settled as rejected", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1", loaded: false }] })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        const error = yield* errorOf(c.compactThread("t1"))
        expect(error._tag).toBe("ThreadNotFoundError")
        return yield* c.threadState("t1")
      }),
    )
    expect(state.compactionRequests[0]?.outcome).toBe("rejected")
  })

  test("modelContextWindow null and missing both become null", async () => {
    for (const window of [null, "missing"] as const) {
      const server = makeFakeAppServer({ threads: [{ id: "t1" }], modelContextWindow: window })
      const state = await withConnection(server, (c) =>
        Effect.gen(function* () {
          yield* c.resumeThread("t1")
          return yield* waitForThreadState(c, "t1", (s) => s.tokenUsage !== null)
        }),
      )
      expect(state.tokenUsage?.modelContextWindow).toBeNull()
    }
  })
})

describe("turns", () => {
  test("turn/start sends only threadId and one text input, then the turn completes", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        const { turnId } = yield* c.startTurn("t1", "carry on from the handoff")
        return yield* waitForThreadState(c, "t1", turnCompleted(turnId))
      }),
    )
    expect(server.turnInputs[0]?.params).toEqual({
      threadId: "t1",
      input: [{ type: "text", text: "carry on from the handoff", text_elements: [] }],
    })
    expect(state.turns.at(-1)?.items.map((i) => i.type)).toEqual(["userMessage", "agentMessage"])
  })

  test("interrupt ends the active turn as interrupted", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }], compaction: { outcome: "never" } })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* c.compactThread("t1")
        const active = yield* waitForThreadState(c, "t1", (s) => s.activeTurnId !== null)
        yield* c.interruptTurn("t1", active.activeTurnId!)
        return yield* waitForThreadState(c, "t1", (s) =>
          s.turns.some((t) => t.status === "interrupted"),
        )
      }),
    )
    expect(state.activeTurnId).toBeNull()
  })
})

describe("status", () => {
  test("idle/active flapping is counted and activeFlags are kept", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* waitForThreadState(c, "t1", (s) => s.statusChanges >= 1)
        for (let i = 0; i < 5; i++) {
          server.setStatus("t1", {
            type: "active",
            activeFlags: i % 2 === 0 ? ["waitingOnUserInput"] : [],
          })
          server.setStatus("t1", { type: "idle" })
        }
        return yield* waitForThreadState(c, "t1", (s) => s.statusChanges >= 12)
      }),
    )
    expect(state.status.type).toBe("idle")
    expect(state.lastBusyAtMs).not.toBeNull()
    expect(isThreadIdle(state)).toBe(true)
  })

  test("systemError and unknown status types are not idle", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const [systemError, unknown] = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        server.setStatus("t1", { type: "systemError" })
        const a = yield* waitForThreadState(c, "t1", (s) => s.status.type === "systemError")
        server.setStatus("t1", { type: "hibernating" })
        const b = yield* waitForThreadState(c, "t1", (s) => s.status.type === "unknown")
        return [a, b] as const
      }),
    )
    expect(isThreadIdle(systemError)).toBe(false)
    expect(unknown.status.unknownType).toBe("hibernating")
    expect(isThreadIdle(unknown)).toBe(false)
  })
})

describe("server→client requests", () => {
  test("shared servers: approvals stay pending (never answered) until serverRequest/resolved", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const [pending, resolved] = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        const id = server.requestFromServer("t1")
        const a = yield* waitForThreadState(c, "t1", (s) => s.pendingServerRequests.length === 1)
        server.resolveServerRequest("t1", id)
        const b = yield* waitForThreadState(
          c,
          "t1",
          (s) => s.pendingServerRequests.length === 0 && s.status.type === "idle",
        )
        return [a, b] as const
      }),
    )
    expect(pending.pendingServerRequests[0]).toMatchObject({
      method: "item/commandExecution/requestApproval",
      handling: "left-pending",
    })
    expect(pending.status.activeFlags).toEqual(["waitingOnApproval"])
    expect(isThreadIdle(pending)).toBe(false)
    expect(isThreadIdle(resolved)).toBe(true)
    expect(server.serverRequestAnswers).toEqual([])
  })

  test("private stdio policy declines with the narrowest 'no' per request type", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    await withConnection(
      server,
      (c) =>
        Effect.gen(function* () {
          yield* c.resumeThread("t1")
          server.requestFromServer("t1", "item/commandExecution/requestApproval")
          server.requestFromServer("t1", "item/fileChange/requestApproval")
          server.requestFromServer("t1", "item/tool/requestUserInput")
          server.requestFromServer("t1", "mcpServer/elicitation/request")
          yield* waitForThreadState(c, "t1", (s) => s.pendingServerRequests.length === 4)
          yield* until(() => server.serverRequestAnswers.length === 4)
        }),
      { serverRequests: "decline" },
    )
    expect(server.serverRequestAnswers.map((a) => a.result ?? a.error)).toEqual([
      { decision: "decline" },
      { decision: "decline" },
      { code: -32000, message: expect.stringContaining("declined by Baton") },
      { action: "decline", content: null, _meta: null },
    ])
  })

  test("two connections to one server both see the approval (daemon behaviour)", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const counts = await run(
      Effect.gen(function* () {
        const a = yield* fakeTransport(server).connect
        const b = yield* fakeTransport(server).connect
        yield* a.resumeThread("t1")
        yield* b.resumeThread("t1")
        server.requestFromServer("t1")
        const sa = yield* waitForThreadState(a, "t1", (s) => s.pendingServerRequests.length === 1)
        const sb = yield* waitForThreadState(b, "t1", (s) => s.pendingServerRequests.length === 1)
        return [sa.pendingServerRequests.length, sb.pendingServerRequests.length]
      }),
    )
    expect(counts).toEqual([1, 1])
  })
})

describe("errors and overload", () => {
  test.each([
    ["usageLimitExceeded", false],
    [{ responseStreamDisconnected: { httpStatusCode: 502 } }, true],
  ] as const)("error notification %j willRetry=%s", async (codexErrorInfo, willRetry) => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        server.emitError("t1", {
          message: "You've hit your usage limit",
          codexErrorInfo,
          willRetry,
        })
        return yield* waitForThreadState(c, "t1", (s) => s.lastError !== null)
      }),
    )
    expect(state.lastError).toMatchObject({ willRetry, message: "You've hit your usage limit" })
    expect(state.lastError?.codexErrorInfo?.kind).toBe(
      typeof codexErrorInfo === "string" ? codexErrorInfo : "responseStreamDisconnected",
    )
    expect(state.errorCount).toBe(1)
  })

  test("-32001 is OverloadedError; retryWhenOverloaded backs off on the Effect clock and succeeds", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const result = await withConnection(server, (c) =>
      Effect.gen(function* () {
        server.overloadNext(1)
        const first = yield* errorOf(c.listLoadedThreads)
        expect(first).toMatchObject({ _tag: "OverloadedError", retryable: true })
        server.overloadNext(3)
        const fiber = yield* Effect.forkChild(
          retryWhenOverloaded(c.listLoadedThreads, { baseDelayMs: 1_000 }),
        )
        // Advance test time one step per event-loop turn until the retries are done: a delay
        // armed after a step simply waits for the next one (no wall-clock sleep to outrun).
        for (let i = 0; i < 2_000 && fiber.pollUnsafe() === undefined; i++) {
          yield* TestClock.adjust("5 seconds")
          yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
        }
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(TestClock.layer())),
    )
    expect(result).toEqual(["t1"])
    expect(server.received.filter((r) => r.method === "thread/loaded/list")).toHaveLength(5)
  })

  test("retryWhenOverloaded gives up after its retries and never retries other errors", async () => {
    const server = makeFakeAppServer()
    const [exhausted, other] = await withConnection(server, (c) =>
      Effect.gen(function* () {
        server.overloadNext(10)
        const a = yield* errorOf(
          retryWhenOverloaded(c.listLoadedThreads, { retries: 2, baseDelayMs: 1 }),
        )
        server.overloadNext(0)
        const before = server.received.length
        const b = yield* errorOf(
          retryWhenOverloaded(c.resumeThread(UNKNOWN_THREAD), { retries: 2, baseDelayMs: 1 }),
        )
        return [a, { error: b, sent: server.received.length - before }] as const
      }),
    )
    expect(exhausted._tag).toBe("OverloadedError")
    expect(other.error._tag).toBe("ThreadNotFoundError")
    expect(other.sent).toBe(1)
  })

  test("a request without an answer times out with outcomeMayBeUnknown and is not resent", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const error = await withConnection(server, (c) =>
      Effect.gen(function* () {
        server.silence("thread/compact/start")
        const fiber = yield* Effect.forkChild(errorOf(c.compactThread("t1")))
        yield* until(() => server.received.some((r) => r.method === "thread/compact/start"))
        yield* TestClock.adjust("31 seconds")
        const e = yield* Fiber.join(fiber)
        const state = yield* c.threadState("t1")
        expect(state.compactionRequests[0]?.outcome).toBe("pending")
        return e
      }).pipe(Effect.provide(TestClock.layer())),
    )
    expect(error).toMatchObject({
      _tag: "RequestTimeoutError",
      method: "thread/compact/start",
      outcomeMayBeUnknown: true,
    })
    expect(error.message).toContain("outcome may be unknown")
    expect(server.received.filter((r) => r.method === "thread/compact/start")).toHaveLength(1)
  })

  test("an unknown method is a ProtocolMismatchError naming the method and server version", async () => {
    const server = makeFakeAppServer()
    server.failNext("account/read", {
      code: -32600,
      message: "Invalid request: unknown variant `account/read`, expected one of …",
    })
    const error = await withConnection(server, (c) => errorOf(c.readAccount))
    expect(error).toMatchObject({
      _tag: "ProtocolMismatchError",
      method: "account/read",
      serverVersion: "0.169.0",
    })
  })

  test("a result of the wrong shape is a ProtocolMismatchError showing what was seen", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    server.resultNext("turn/start", { turn: { status: "inProgress" } })
    server.failNext("turn/interrupt", {
      code: -32600,
      message: "Invalid request: missing field `turnId`",
    })
    const [shape, params] = await withConnection(server, (c) =>
      Effect.all([errorOf(c.startTurn("t1", "x")), errorOf(c.interruptTurn("t1", "x"))]),
    )
    expect(shape).toMatchObject({ _tag: "ProtocolMismatchError", method: "turn/start" })
    expect(shape.message).toContain("inProgress")
    expect(params).toMatchObject({ _tag: "ProtocolMismatchError", method: "turn/interrupt" })
  })

  test("generic errors keep code and message", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    server.failNext("turn/interrupt", { code: -32600, message: "no active turn to interrupt" })
    const error = await withConnection(server, (c) => errorOf(c.interruptTurn("t1", "turn-x")))
    expect(error).toMatchObject({
      _tag: "RpcError",
      code: -32600,
      detail: "no active turn to interrupt",
    })
  })
})

describe("rate limits and account", () => {
  test.each([true, false, null, undefined])(
    "read with ordinaryUsageAllowed=%s (absent → null)",
    async (allowed) => {
      const server = makeFakeAppServer({
        rateLimitsRead: {
          kind: "ok",
          primaryUsedPercent: 55,
          ...(allowed === undefined ? {} : { ordinaryUsageAllowed: allowed }),
        },
      })
      const read = await withConnection(server, (c) => c.readRateLimits)
      expect(read.ordinaryUsageAllowed).toBe(allowed ?? null)
      expect(read.rateLimits.primary?.usedPercent).toBe(55)
      expect(read.state.byLimitId["codex"]?.primary?.usedPercent).toBe(55)
    },
  )

  test("without a ChatGPT login the read is NotAuthenticatedError", async () => {
    const server = makeFakeAppServer()
    const error = await withConnection(server, (c) => errorOf(c.readRateLimits))
    expect(error._tag).toBe("NotAuthenticatedError")
  })

  test("sparse updates merge into the last read and reach every thread's state", async () => {
    const server = makeFakeAppServer({
      threads: [{ id: "t1" }],
      rateLimitsRead: {
        kind: "ok",
        ordinaryUsageAllowed: true,
        primaryUsedPercent: 40,
        secondaryUsedPercent: 10,
      },
    })
    const state = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* c.readRateLimits
        server.emitRateLimits({
          limitId: "codex",
          primary: { usedPercent: 61, windowDurationMins: null, resetsAt: null },
          secondary: null,
          credits: null,
          planType: null,
        })
        server.emitRateLimits({ limitId: null, primary: null, secondary: null })
        return yield* waitForThreadState(
          c,
          "t1",
          (s) =>
            s.rateLimits?.lastUpdateAtMs !== null &&
            s.rateLimits?.snapshot.primary?.usedPercent === 61,
        )
      }),
    )
    const limits = state.rateLimits!
    expect(limits.ordinaryUsageAllowed).toBe(true)
    expect(limits.snapshot.primary).toMatchObject({ usedPercent: 61, windowDurationMins: 300 })
    expect(limits.snapshot.primary?.resetsAt).not.toBeNull()
    expect(limits.snapshot.secondary?.usedPercent).toBe(10)
    expect(limits.snapshot.planType).toBe("plus")
  })

  test("account/read hides the account id", async () => {
    const server = makeFakeAppServer()
    expect(await withConnection(server, (c) => c.readAccount)).toEqual({
      account: null,
      requiresOpenaiAuth: false,
    })
  })
})

describe("connection loss", () => {
  test("threadState says closed once the connection is gone (a running turn stays as last seen)", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }], compaction: { outcome: "never" } })
    const [before, after, untracked] = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        yield* c.compactThread("t1")
        const running = yield* waitForThreadState(c, "t1", (s) => s.activeTurnId !== null)
        server.disconnectAll("killed")
        yield* c.awaitClosed
        return [running, yield* c.threadState("t1"), yield* c.threadState("t2")] as const
      }),
    )
    expect(before.closed).toBe(false)
    expect(after).toMatchObject({ closed: true, activeTurnId: before.activeTurnId })
    expect(after.revision).toBeGreaterThan(before.revision)
    expect(isThreadIdle(after)).toBe(false)
    expect(untracked.closed).toBe(true)
  })
})

describe("listing", () => {
  test("thread/loaded/list follows cursors; thread/list returns summaries", async () => {
    const server = makeFakeAppServer({
      threads: [{ id: "a" }, { id: "b" }, { id: "c", loaded: false }, { id: "d" }],
      loadedListPageSize: 1,
    })
    const [loaded, page] = await withConnection(server, (c) =>
      Effect.all([c.listLoadedThreads, c.listThreads({ limit: 10 })]),
    )
    expect(loaded).toEqual(["a", "b", "d"])
    expect(page.threads.map((t) => t.id)).toEqual(["a", "b", "c", "d"])
    expect(server.received.filter((r) => r.method === "thread/loaded/list")).toHaveLength(3)
  })
})

describe("wire robustness", () => {
  test("garbage, unknown ids, duplicates and drifted notifications are counted, never fatal", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const [stats, events] = await withConnection(server, (c) =>
      Effect.gen(function* () {
        const collected = yield* Effect.forkChild(Stream.runCollect(Stream.take(c.events, 3)))
        yield* Effect.sleep("1 millis")
        server.emitRawFrame("this is not json")
        server.emitRawFrame("[1,2,3]")
        server.answerUnknownId()
        server.duplicateNextResponse()
        yield* c.resumeThread("t1")
        server.emitNotification("item/completed", {
          threadId: "t1",
          item: { type: "contextCompaction" },
        })
        server.emitNotification("some/new/notification", { x: 1 })
        server.emitNotification("thread/closed")
        yield* c.listLoadedThreads
        return [yield* c.stats, [...(yield* Fiber.join(collected))]] as const
      }),
    )
    expect(stats).toMatchObject({ nonJsonFrames: 1, undecodableFrames: 1, unknownResponses: 2 })
    expect(events).toHaveLength(3)
  })

  test("drifted and unknown notifications surface as events", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const events = await withConnection(server, (c) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(c.events, 3)))
        yield* Effect.sleep("1 millis")
        server.emitNotification("item/completed", {
          threadId: "t1",
          item: { type: "contextCompaction" },
        })
        server.emitNotification("some/new/notification", { x: 1 })
        server.emitNotification("thread/closed", { threadId: "t1" })
        return [...(yield* Fiber.join(fiber))]
      }),
    )
    expect(events[0]).toMatchObject({ _tag: "ProtocolDrift", method: "item/completed" })
    expect(events[1]).toMatchObject({
      _tag: "OtherNotification",
      method: "some/new/notification",
      params: { x: 1 },
    })
    expect(events[2]).toMatchObject({ _tag: "ThreadClosed", threadId: "t1" })
  })

  test("a disconnect fails pending requests (outcome unknown) and ends streams with DisconnectedError", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const [requestError, streamError] = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread("t1")
        server.silence("thread/compact/start")
        const observing = yield* Effect.forkChild(errorOf(Stream.runDrain(c.observeThread("t1"))))
        const requesting = yield* Effect.forkChild(errorOf(c.compactThread("t1")))
        yield* until(() => server.received.some((r) => r.method === "thread/compact/start"))
        server.disconnectAll("daemon restarted")
        const a = yield* Fiber.join(requesting)
        const b = yield* Fiber.join(observing)
        const after = yield* errorOf(c.listLoadedThreads)
        expect(after).toMatchObject({ _tag: "DisconnectedError", outcomeMayBeUnknown: false })
        return [a, b] as const
      }),
    )
    expect(requestError).toMatchObject({
      _tag: "DisconnectedError",
      method: "thread/compact/start",
      outcomeMayBeUnknown: true,
    })
    expect(streamError).toMatchObject({ _tag: "DisconnectedError", reason: "daemon restarted" })
  })

  test("a subscriber that never reads does not slow the reader; state stays current", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const [state, stats] = await withConnection(
      server,
      (c) =>
        Effect.gen(function* () {
          yield* c.resumeThread("t1")
          // Subscribe and never pull.
          const stalled = yield* Effect.forkChild(
            Stream.runForEach(c.observeThread("t1"), () => Effect.never),
          )
          yield* Effect.sleep("1 millis")
          for (let i = 1; i <= 500; i++) server.emitTokenUsage("t1", "turn-x", i)
          const s = yield* waitForThreadState(
            c,
            "t1",
            (x) => x.tokenUsage?.last.totalTokens === 500,
          )
          yield* Fiber.interrupt(stalled)
          return [s, yield* c.stats] as const
        }),
      { subscriberBuffer: 8 },
    )
    expect(state.tokenUsage?.last.totalTokens).toBe(500)
    expect(stats.droppedStreamValues).toBeGreaterThan(0)
  })

  test("closing the scope closes the link", async () => {
    const server = makeFakeAppServer()
    await withConnection(server, () => Effect.void)
    await Effect.runPromise(until(() => server.clientCount() === 0))
    expect(server.clientCount()).toBe(0)
  })
})

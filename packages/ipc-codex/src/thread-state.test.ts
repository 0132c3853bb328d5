import { describe, expect, test } from "vitest"
import type { CodexEvent } from "./codex-event.js"
import { decodeNotification } from "./codex-event.js"
import type { ThreadState } from "./thread-state.js"
import {
  THREAD_STATE_LIMITS,
  applyEvent,
  emptyThreadState,
  isThreadIdle,
  recordCompactionRequest,
  settleCompactionRequest,
  toStatusView,
} from "./thread-state.js"

const ev = (method: string, params: unknown, at = 1): CodexEvent => ({
  ...decodeNotification(method, params),
  receivedAtMs: at,
})
const fold = (events: ReadonlyArray<CodexEvent>, start: ThreadState = emptyThreadState("t")) =>
  events.reduce(applyEvent, start)
const usage = (turnId: string, last: number, window: number | null = 258_400) =>
  ev("thread/tokenUsage/updated", {
    threadId: "t",
    turnId,
    tokenUsage: {
      total: { totalTokens: last * 2 },
      last: { totalTokens: last },
      modelContextWindow: window,
    },
  })

describe("status reduction", () => {
  test.each([
    [{ type: "idle" }, "idle", [], true],
    [{ type: "active", activeFlags: [] }, "active", [], false],
    [
      { type: "active", activeFlags: ["waitingOnApproval"] },
      "active",
      ["waitingOnApproval"],
      false,
    ],
    [{ type: "notLoaded" }, "notLoaded", [], false],
    [{ type: "systemError" }, "systemError", [], false],
    [{ type: "somethingNew" }, "unknown", [], false],
  ] as const)("%j → %s", (status, type, flags, idle) => {
    const state = fold([ev("thread/status/changed", { threadId: "t", status })])
    expect(state.status.type).toBe(type)
    expect(state.status.activeFlags).toEqual(flags)
    expect(isThreadIdle(state)).toBe(idle)
    expect(state.statusChanges).toBe(1)
  })

  test("idle with a pending server request is not idle; resolution makes it idle again", () => {
    const idle = ev("thread/status/changed", { threadId: "t", status: { type: "idle" } })
    const request: CodexEvent = {
      _tag: "ServerRequestReceived",
      requestId: 7,
      method: "item/tool/requestUserInput",
      threadId: "t",
      turnId: "u",
      itemId: "i",
      handling: "left-pending",
      receivedAtMs: 2,
    }
    const pending = fold([idle, request])
    expect(isThreadIdle(pending)).toBe(false)
    expect(pending.lastBusyAtMs).toBe(2)
    const resolved = applyEvent(
      pending,
      ev("serverRequest/resolved", { threadId: "t", requestId: 7 }, 3),
    )
    expect(isThreadIdle(resolved)).toBe(true)
  })

  test("0.169 order: status idle arrives before turn/completed; idle only once the turn ended", () => {
    const turn = (status: string) => ({ id: "u1", status, items: [], error: null })
    const running = fold([
      ev("thread/status/changed", { threadId: "t", status: { type: "active", activeFlags: [] } }),
      ev("turn/started", { threadId: "t", turn: turn("inProgress") }),
      ev("thread/status/changed", { threadId: "t", status: { type: "idle" } }),
    ])
    expect(running.status.type).toBe("idle")
    expect(isThreadIdle(running)).toBe(false)
    const done = applyEvent(
      running,
      ev("turn/completed", { threadId: "t", turn: turn("completed") }),
    )
    expect(isThreadIdle(done)).toBe(true)
  })

  test("events for other threads and unrelated notifications leave the state untouched (same object)", () => {
    const state = emptyThreadState("t")
    expect(
      applyEvent(
        state,
        ev("thread/status/changed", { threadId: "other", status: { type: "idle" } }),
      ),
    ).toBe(state)
    expect(applyEvent(state, ev("configWarning", { summary: "x" }))).toBe(state)
    expect(applyEvent(state, ev("item/started", { threadId: "t" }))).toBe(state)
  })

  test("thread/closed marks the thread not loaded", () => {
    const state = fold([
      ev("thread/status/changed", { threadId: "t", status: { type: "idle" } }),
      ev("thread/closed", { threadId: "t" }),
    ])
    expect(state).toMatchObject({ closed: true, status: { type: "notLoaded" } })
  })

  test("toStatusView keeps unknown types visible", () => {
    expect(toStatusView({ type: "paused" })).toEqual({
      type: "unknown",
      activeFlags: [],
      unknownType: "paused",
    })
  })
})

describe("turns, items and compaction", () => {
  const compactionRun = (turnId: string, itemId: string, at: number) => [
    ev("turn/started", { threadId: "t", turn: { id: turnId, status: "inProgress" } }, at),
    ev(
      "item/started",
      { threadId: "t", turnId, item: { type: "contextCompaction", id: itemId } },
      at + 1,
    ),
    ev(
      "item/completed",
      { threadId: "t", turnId, item: { type: "contextCompaction", id: itemId } },
      at + 2,
    ),
    ev("turn/completed", { threadId: "t", turn: { id: turnId, status: "completed" } }, at + 3),
  ]

  test("a compaction run is tracked by item and turn; the request is attributed to the first turn after it", () => {
    const requested = recordCompactionRequest(emptyThreadState("t"), 0)
    const accepted = settleCompactionRequest(
      requested,
      requested.compactionRequests[0]!.requestedAtRevision,
      "accepted",
    )
    const state = fold(compactionRun("c1", "i1", 10), accepted)
    expect(state.compactions).toEqual([
      { itemId: "i1", turnId: "c1", phase: "completed", startedAtMs: 11, completedAtMs: 12 },
    ])
    expect(state.compactionRequests[0]).toMatchObject({ turnId: "c1", outcome: "accepted" })
    expect(state.turns[0]).toMatchObject({ id: "c1", status: "completed", completedAtMs: 13 })
    expect(state.activeTurnId).toBeNull()
  })

  test("item/completed before item/started (reordering) ends completed", () => {
    const state = fold([
      ev(
        "item/completed",
        { threadId: "t", turnId: "c", item: { type: "contextCompaction", id: "i" } },
        5,
      ),
      ev(
        "item/started",
        { threadId: "t", turnId: "c", item: { type: "contextCompaction", id: "i" } },
        6,
      ),
    ])
    expect(state.compactions[0]).toMatchObject({ phase: "completed", completedAtMs: 5 })
  })

  test("a failed turn keeps its normalised error", () => {
    const state = fold([
      ev("turn/started", { threadId: "t", turn: { id: "u" } }),
      ev("turn/completed", {
        threadId: "t",
        turn: {
          id: "u",
          status: "failed",
          error: { message: "limit", codexErrorInfo: "usageLimitExceeded" },
        },
      }),
    ])
    expect(state.turns[0]?.error).toEqual({
      message: "limit",
      codexErrorInfo: { kind: "usageLimitExceeded", details: null },
      additionalDetails: null,
    })
  })

  test("token usage keeps the freshest value with its turnId; a null window stays null", () => {
    const state = fold([usage("u1", 200_000), usage("c1", 9_000, null)])
    expect(state.tokenUsage).toMatchObject({
      turnId: "c1",
      last: { totalTokens: 9_000 },
      modelContextWindow: null,
    })
  })

  test("histories are bounded; compactions survive item eviction", () => {
    const events: Array<CodexEvent> = []
    for (let i = 0; i < 40; i++) events.push(...compactionRun(`c${i}`, `i${i}`, i * 10))
    for (let i = 0; i < 100; i++)
      events.push(
        ev("item/started", {
          threadId: "t",
          turnId: "c39",
          item: { type: "agentMessage", id: `m${i}` },
        }),
      )
    const state = fold(events)
    expect(state.turns).toHaveLength(THREAD_STATE_LIMITS.turns)
    expect(state.compactions).toHaveLength(THREAD_STATE_LIMITS.compactions)
    expect(state.compactions.at(-1)?.itemId).toBe("i39")
    expect(state.turns.at(-1)?.items).toHaveLength(THREAD_STATE_LIMITS.itemsPerTurn)
  })

  test("every applied event bumps the revision", () => {
    const events = compactionRun("c", "i", 0)
    const states = events.reduce<Array<ThreadState>>(
      (acc, e) => [...acc, applyEvent(acc.at(-1) ?? emptyThreadState("t"), e)],
      [],
    )
    expect(states.map((s) => s.revision)).toEqual([1, 2, 3, 4])
  })
})

describe("errors and rate limits", () => {
  test("error notifications: last error and count", () => {
    const state = fold([
      ev("error", {
        threadId: "t",
        turnId: "u",
        willRetry: true,
        error: {
          message: "reconnecting",
          codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: null } },
        },
      }),
      ev("error", {
        threadId: "t",
        turnId: "u",
        willRetry: false,
        error: { message: "limit", codexErrorInfo: "usageLimitExceeded" },
      }),
    ])
    expect(state.errorCount).toBe(2)
    expect(state.lastError).toMatchObject({
      message: "limit",
      willRetry: false,
      codexErrorInfo: { kind: "usageLimitExceeded" },
    })
  })

  test("rate-limit updates apply to any thread's state", () => {
    const state = fold([
      ev("account/rateLimits/updated", {
        rateLimits: {
          limitId: "codex",
          primary: { usedPercent: 12, windowDurationMins: 300, resetsAt: 99 },
        },
      }),
    ])
    expect(state.rateLimits?.snapshot.primary).toEqual({
      usedPercent: 12,
      windowDurationMins: 300,
      resetsAt: 99,
    })
  })
})

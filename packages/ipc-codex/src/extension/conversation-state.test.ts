import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { decodeConversationState, NO_USER_INPUT_FINGERPRINT } from "./conversation-state.js"
import type { ConversationView } from "./conversation-state.js"
import {
  approvalRequestFixture,
  conversationStateFixture,
  userInputRequestFixture,
} from "./testing/conversation-fixtures.js"

const view = (state: unknown): ConversationView => {
  const decoded = decodeConversationState(state)
  if (decoded._tag === "Failure") throw new Error(decoded.failure.message)
  return decoded.success
}

const layoutProblem = (state: unknown): string => {
  const decoded = decodeConversationState(state)
  if (decoded._tag === "Success") throw new Error("layout unexpectedly accepted")
  return decoded.failure.message
}

describe("decodeConversationState", () => {
  it.each([
    ["idle, nothing pending", {}, true],
    ["active", { status: "active" }, false],
    ["idle with a pending approval", { requests: [approvalRequestFixture()] }, false],
    [
      "idle with a non-terminal submission",
      { unconfirmedTurnSubmissions: [{ terminal: false }] },
      false,
    ],
    ["idle with a submission lacking terminal", { unconfirmedTurnSubmissions: [{}] }, false],
    ["idle with a terminal submission", { unconfirmedTurnSubmissions: [{ terminal: true }] }, true],
    ["an unknown status", { status: "waitingOnSomething" }, false],
  ])("isIdle: %s", (_name, fixture, expected) => {
    expect(view(conversationStateFixture(fixture)).isIdle).toBe(expected)
  })

  it("types pending requests without their payload", () => {
    const v = view(
      conversationStateFixture({
        requests: [
          approvalRequestFixture(7),
          userInputRequestFixture("u1"),
          { id: 3, method: "custom/thing" },
          42,
        ],
      }),
    )
    expect(v.pendingRequests).toEqual([
      {
        id: 7,
        method: "item/commandExecution/requestApproval",
        kind: "approval",
        completed: false,
      },
      { id: "u1", method: "item/tool/requestUserInput", kind: "user-input", completed: false },
      { id: 3, method: "custom/thing", kind: "other", completed: false },
      { id: undefined, method: undefined, kind: "other", completed: false },
    ])
    expect(JSON.stringify(v)).not.toContain("exec-1")
  })

  it("lists compaction items with the private completion flag", () => {
    const v = view(
      conversationStateFixture({
        compactions: [
          { id: "old", completed: true },
          { id: "new", completed: false },
        ],
      }),
    )
    expect(v.compactions).toEqual([
      { id: "old", turnId: "compaction-turn", completed: true, source: "turns" },
      { id: "new", turnId: "compaction-turn", completed: false, source: "turns" },
    ])
    expect(v.privateCompletionFlagSeen).toBe(true)
    expect(view(conversationStateFixture({ compactions: [] })).privateCompletionFlagSeen).toBe(
      false,
    )
  })

  it("tolerates history compaction items without completed, never as completion", () => {
    const turnHistory = {
      kind: "canonical",
      history: {
        islands: [{ entries: [{ value: "turn:h1" }, { value: "missing-key" }] }],
        entitiesByKey: {
          "turn:h1": {
            turnId: "h1",
            turnStartedAtMs: 10,
            items: [{ id: "hist", type: "contextCompaction" }],
          },
        },
      },
    }
    const v = view(conversationStateFixture({ compactions: [], turnHistory }))
    expect(v.compactions).toEqual([
      { id: "hist", turnId: "h1", completed: undefined, source: "history" },
    ])
    expect(v.privateCompletionFlagSeen).toBe(false)
    expect(v.historyTurns?.map((t) => t.id)).toEqual(["h1"])
  })

  it("reports an unreadable turnHistory as absent", () => {
    expect(
      view(conversationStateFixture({ turnHistory: { kind: "paged", whatever: 1 } })).historyTurns,
    ).toBeUndefined()
  })

  it("reads token usage and tolerates a null window or missing telemetry", () => {
    expect(
      view(
        conversationStateFixture({ tokenUsage: { last: 61_000, total: 200_000, window: 100_000 } }),
      ).tokenUsage,
    ).toEqual({
      lastTotalTokens: 61_000,
      totalTotalTokens: 200_000,
      modelContextWindow: 100_000,
    })
    expect(
      view(conversationStateFixture({ tokenUsage: { last: 1, window: null } })).tokenUsage
        ?.modelContextWindow,
    ).toBeNull()
    expect(view(conversationStateFixture({ tokenUsage: null })).tokenUsage).toBeUndefined()
    const { latestTokenUsageInfo: _, ...withoutUsage } = conversationStateFixture()
    expect(view(withoutUsage).tokenUsage).toBeUndefined()
    expect(
      view({ ...conversationStateFixture(), latestTokenUsageInfo: "garbage" }).tokenUsage,
    ).toBeUndefined()
  })

  it("tolerates unknown fields everywhere", () => {
    const state = conversationStateFixture()
    const turns = state["turns"] as Array<Record<string, unknown>>
    const v = view({
      ...state,
      brandNew: { x: 1 },
      turns: turns.map((t) => ({ ...t, extra: [1, 2] })),
    })
    expect(v.turns).toHaveLength(2)
  })

  it.each<[string, (s: Record<string, unknown>) => unknown, RegExp]>([
    ["a non-object state", () => "nope", /Unsupported extension state layout/],
    [
      "a missing threadRuntimeStatus",
      ({ threadRuntimeStatus: _, ...rest }) => rest,
      /threadRuntimeStatus/,
    ],
    ["a non-string status type", (s) => ({ ...s, threadRuntimeStatus: { type: 3 } }), /type/],
    ["requests that are not an array", (s) => ({ ...s, requests: {} }), /requests/],
    ["turns missing", ({ turns: _, ...rest }) => rest, /turns/],
    ["a turn without items", (s) => ({ ...s, turns: [{ turnId: "t" }] }), /items/],
    [
      "a compaction item in turns without a boolean completed",
      (s) => ({ ...s, turns: [{ turnId: "t", items: [{ id: "c", type: "contextCompaction" }] }] }),
      /contextCompaction lifecycle/,
    ],
    [
      "a compaction item in turns without an id",
      (s) => ({
        ...s,
        turns: [{ turnId: "t", items: [{ type: "contextCompaction", completed: true }] }],
      }),
      /contextCompaction lifecycle/,
    ],
  ])("refuses %s", (_name, mutate, expected) => {
    expect(layoutProblem(mutate(conversationStateFixture()))).toMatch(expected)
  })
})

describe("user boundary", () => {
  const boundary = (fixture: Parameters<typeof conversationStateFixture>[0]) =>
    view(conversationStateFixture(fixture)).userBoundary

  it("summarises the latest user turn by id, time and a SHA-256 fingerprint, never the text", () => {
    const b = boundary({ userText: "secret plan" })
    expect(b.latestUserTurnId).toBe("user-turn")
    expect(b.startedAtMs).toBe(100)
    expect(b.fingerprint).toMatch(/^[0-9a-f]{64}$/)
    expect(
      JSON.stringify(view(conversationStateFixture({ userText: "secret plan" }))),
    ).not.toContain("secret plan")
  })

  it("changes with new user text and stays stable otherwise", () => {
    expect(boundary({ userText: "a" }).fingerprint).toBe(
      boundary({ userText: "a", tokenUsage: { last: 1, window: 2 } }).fingerprint,
    )
    expect(boundary({ userText: "a" }).fingerprint).not.toBe(
      boundary({ userText: "b" }).fingerprint,
    )
  })

  it("ignores compaction turns (empty input) and older user turns", () => {
    const state = conversationStateFixture({ userText: "x" })
    const turns = state["turns"] as Array<Record<string, unknown>>
    const older = {
      turnId: "older",
      turnStartedAtMs: 1,
      params: { input: [{ type: "text", text: "old" }] },
      items: [],
    }
    const laterCompaction = {
      turnId: "late-compaction",
      turnStartedAtMs: 999,
      params: { input: [] },
      items: [{ id: "z", type: "contextCompaction", completed: true }],
    }
    const v = view({ ...state, turns: [older, ...turns, laterCompaction] })
    expect(v.userBoundary.latestUserTurnId).toBe("user-turn")
    expect(v.userBoundary.fingerprint).toBe(boundary({ userText: "x" }).fingerprint)
  })

  it("changes on mid-turn steering", () => {
    const state = conversationStateFixture({ userText: "x" })
    const turns = state["turns"] as Array<Record<string, unknown>>
    const steered = {
      ...turns[0],
      items: [
        ...(turns[0]!["items"] as Array<unknown>),
        { id: "s1", type: "steeringUserMessage", content: [{ type: "text", text: "also this" }] },
      ],
    }
    expect(view({ ...state, turns: [steered, turns[1]] }).userBoundary.fingerprint).not.toBe(
      boundary({ userText: "x" }).fingerprint,
    )
  })

  it("on equal start times the later entry wins, history first then turns", () => {
    const history = {
      kind: "canonical",
      history: {
        islands: [{ entries: [{ value: "k" }] }],
        entitiesByKey: {
          k: {
            turnId: "from-history",
            turnStartedAtMs: 100,
            params: { input: [{ type: "text", text: "h" }] },
            items: [],
          },
        },
      },
    }
    expect(boundary({ turnHistory: history }).latestUserTurnId).toBe("user-turn")
  })

  it("flags interrupted and failed user turns", () => {
    expect(boundary({ userTurnStatus: "interrupted" }).interrupted).toBe(true)
    expect(boundary({ userTurnStatus: "failed" }).interrupted).toBe(true)
    expect(boundary({ userTurnStatus: "completed" }).interrupted).toBe(false)
  })

  it("uses the digest of no-user-input when there is no user turn", () => {
    const state = { threadRuntimeStatus: { type: "idle" }, requests: [], turns: [] }
    expect(view(state).userBoundary.fingerprint).toBe(NO_USER_INPUT_FINGERPRINT)
    expect(NO_USER_INPUT_FINGERPRINT).toBe(
      createHash("sha256").update("no-user-input").digest("hex"),
    )
  })
})

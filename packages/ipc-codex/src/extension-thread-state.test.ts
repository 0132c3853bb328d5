import * as Result from "effect/Result"
import { describe, expect, test } from "vitest"
import { decodeConversationState } from "./extension/conversation-state.js"
import {
  approvalRequestFixture,
  conversationStateFixture,
  userInputRequestFixture,
} from "./extension/testing/conversation-fixtures.js"
import { threadStateFromView } from "./extension-thread-state.js"
import type { ConversationFixture } from "./extension/testing/conversation-fixtures.js"
import { emptyThreadState, isThreadIdle, recordCompactionRequest } from "./thread-state.js"

const view = (fixture: ConversationFixture = {}, extra: Record<string, unknown> = {}) => {
  const decoded = decodeConversationState({ ...conversationStateFixture(fixture), ...extra })
  if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
  return decoded.success
}

describe("threadStateFromView", () => {
  test.each<[string, ConversationFixture, string, ReadonlyArray<string>, boolean]>([
    ["idle", {}, "idle", [], true],
    ["active", { status: "active" }, "active", [], false],
    [
      "approval pending",
      { requests: [approvalRequestFixture()] },
      "idle",
      ["waitingOnApproval"],
      false,
    ],
    [
      "user input pending",
      { requests: [userInputRequestFixture()] },
      "idle",
      ["waitingOnUserInput"],
      false,
    ],
    [
      "unconfirmed submission",
      { unconfirmedTurnSubmissions: [{ terminal: false }] },
      "idle",
      ["pendingTurnSubmission"],
      false,
    ],
    ["terminal submission", { unconfirmedTurnSubmissions: [{ terminal: true }] }, "idle", [], true],
    ["unknown status", { status: "hydrating" }, "unknown", [], false],
  ])("%s", (_, fixture, type, flags, idle) => {
    const state = threadStateFromView(emptyThreadState("thread-1"), view(fixture), 10)
    expect(state.status.type).toBe(type)
    expect(state.status.activeFlags).toEqual(flags)
    expect(isThreadIdle(state)).toBe(idle)
    // Extension idle and Baton idle agree.
    expect(view(fixture).isIdle).toBe(idle)
  })

  test("turns, items, compactions and token usage are projected; history items need completed", () => {
    const state = threadStateFromView(
      emptyThreadState("thread-1"),
      view(
        {
          compactions: [{ id: "c1", completed: false }],
          tokenUsage: { last: 1_000, window: null },
        },
        {
          turnHistory: {
            kind: "canonical",
            history: {
              islands: [{ entries: [{ value: "h1" }, { value: "h2" }] }],
              entitiesByKey: {
                h1: { turnId: "old-1", items: [{ id: "hc1", type: "contextCompaction" }] },
                h2: {
                  turnId: "old-2",
                  items: [{ id: "hc2", type: "contextCompaction", completed: true }],
                },
              },
            },
          },
        },
      ),
      10,
    )
    expect(state.turns.map((t) => `${t.id}:${t.status}`)).toEqual([
      "user-turn:completed",
      "compaction-turn:completed",
    ])
    expect(state.turns[0]?.items.map((i) => `${i.type}:${i.phase}`)).toEqual([
      "userMessage:completed",
      "agentMessage:completed",
    ])
    expect(state.compactions.map((c) => `${c.itemId}:${c.turnId}:${c.phase}`)).toEqual([
      "c1:compaction-turn:started",
      "hc2:old-2:completed",
    ])
    expect(state.tokenUsage).toEqual({
      turnId: null,
      last: { totalTokens: 1_000 },
      total: { totalTokens: 250_000 },
      modelContextWindow: null,
      receivedAtMs: 10,
    })
  })

  test("a recorded compaction request is attributed to the first turn after the known ones", () => {
    const before = threadStateFromView(emptyThreadState("thread-1"), view(), 10)
    const requested = recordCompactionRequest(before, 11)
    const withTurn = conversationStateFixture()
    ;(withTurn["turns"] as Array<unknown>).push({
      turnId: "new-compaction",
      status: "inProgress",
      items: [{ id: "c9", type: "contextCompaction", completed: false }],
    })
    const decoded = decodeConversationState(withTurn)
    if (Result.isFailure(decoded)) throw new Error("layout")
    const after = threadStateFromView(requested, decoded.success, 12)
    expect(after.compactionRequests.at(-1)?.turnId).toBe("new-compaction")
    expect(after.activeTurnId).toBe("new-compaction")
    expect(after.revision).toBe(requested.revision + 1)
    // Without a new turn nothing is attributed.
    expect(threadStateFromView(requested, view(), 12).compactionRequests.at(-1)?.turnId).toBeNull()
  })
})

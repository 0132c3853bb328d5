import { emptyThreadState } from "@baton/ipc-codex"
import type { ThreadState } from "@baton/ipc-codex"
import { describe, expect, test } from "vitest"
import type { UserTurnView } from "./user-boundary.js"
import {
  NO_USER_INPUT_FINGERPRINT,
  threadUserBoundary,
  userBoundary,
  userTurnsOfState,
} from "./user-boundary.js"

const turn = (over: Partial<UserTurnView>): UserTurnView => ({
  turnId: "u1",
  startedAtMs: 100,
  status: "completed",
  userText: "please port the parser",
  ...over,
})

describe("userBoundary", () => {
  test("no user turn → the fixed no-input fingerprint", () => {
    expect(userBoundary([]).fingerprint).toBe(NO_USER_INPUT_FINGERPRINT)
    expect(userBoundary([turn({ userText: null })]).fingerprint).toBe(NO_USER_INPUT_FINGERPRINT)
  })

  test("compaction turns (no user text) and older turns do not move it", () => {
    const base = [turn({ turnId: "old", startedAtMs: 50, userText: "earlier" }), turn({})]
    const fp = userBoundary(base).fingerprint
    expect(
      userBoundary([...base, turn({ turnId: "c", startedAtMs: 200, userText: null })]).fingerprint,
    ).toBe(fp)
    expect(
      userBoundary([turn({ turnId: "older", startedAtMs: 10, userText: "x" }), ...base])
        .fingerprint,
    ).toBe(fp)
  })

  test("a new turn, steering (more text) or a different start time move it", () => {
    const fp = userBoundary([turn({})]).fingerprint
    expect(userBoundary([turn({}), turn({ turnId: "u2", startedAtMs: 300 })]).fingerprint).not.toBe(
      fp,
    )
    expect(
      userBoundary([turn({ userText: "please port the parser\nand stop" })]).fingerprint,
    ).not.toBe(fp)
    expect(userBoundary([turn({ startedAtMs: 101 })]).fingerprint).not.toBe(fp)
  })

  test("ties on start time: the later entry wins", () => {
    const b = userBoundary([turn({ turnId: "a" }), turn({ turnId: "b" })])
    expect(b.turnId).toBe("b")
  })

  test("stopped when the latest user turn is interrupted or failed", () => {
    expect(userBoundary([turn({ status: "interrupted" })]).stopped).toBe(true)
    expect(userBoundary([turn({ status: "failed" })]).stopped).toBe(true)
    expect(userBoundary([turn({ status: "inProgress" })]).stopped).toBe(false)
  })

  test("the text never appears in the result, only its hash", () => {
    const b = userBoundary([turn({ userText: "secret plan 42" })])
    expect(JSON.stringify(b)).not.toContain("secret plan")
    expect(b.textSha256).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe("threadUserBoundary (a ThreadState, as the worker reads it)", () => {
  const item = (id: string, type: string) => ({
    id,
    type,
    phase: "completed" as const,
    startedAtMs: null,
    completedAtMs: null,
  })
  const turn = (id: string, status: string, items: ReadonlyArray<ReturnType<typeof item>>) => ({
    id,
    status,
    error: null,
    startedAtMs: null,
    completedAtMs: null,
    startedAtRevision: 1,
    items,
  })
  const state = (turns: ThreadState["turns"]): ThreadState => ({
    ...emptyThreadState("thread-1"),
    turns,
  })

  test("only turns with a user message or steering item are user turns; ids stand in for text", () => {
    const s = state([
      turn("u1", "completed", [item("m1", "userMessage"), item("a1", "agentMessage")]),
      turn("c1", "completed", [item("cc1", "contextCompaction")]),
      turn("u2", "interrupted", [item("a2", "agentMessage"), item("s1", "steeringUserMessage")]),
    ])
    expect(userTurnsOfState(s)).toEqual([
      { turnId: "u1", startedAtMs: null, status: "completed", userText: "m1" },
      { turnId: "u2", startedAtMs: null, status: "interrupted", userText: "s1" },
    ])
    expect(threadUserBoundary(s)).toMatchObject({ turnId: "u2", stopped: true })
    expect(threadUserBoundary(state([])).fingerprint).toBe(NO_USER_INPUT_FINGERPRINT)
  })

  test("a compaction turn after the user turn leaves the fingerprint unchanged", () => {
    const user = turn("u1", "completed", [item("m1", "userMessage")])
    const compaction = turn("c1", "completed", [item("cc1", "contextCompaction")])
    expect(threadUserBoundary(state([user, compaction])).fingerprint).toBe(
      threadUserBoundary(state([user])).fingerprint,
    )
  })
})

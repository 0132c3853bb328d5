import { describe, expect, test } from "vitest"
import type { UserTurnView } from "./user-boundary.js"
import { NO_USER_INPUT_FINGERPRINT, userBoundary } from "./user-boundary.js"

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

import { describe, expect, it } from "vitest"
import { DEFAULT_EXTENSION_METHOD_VERSIONS, extensionMethodVersions } from "./method-versions.js"
import {
  checkCompactAck,
  checkInterruptAck,
  checkStartTurnAck,
  compactThreadParams,
  interruptTurnParams,
  startTurnParams,
} from "./thread-writes.js"

describe("write params", () => {
  it("compact carries only the conversation id", () => {
    expect(compactThreadParams("thread-9")).toStrictEqual({ conversationId: "thread-9" })
  })

  it("start-turn has the exact shape, inherits thread settings and overrides nothing", () => {
    const params = startTurnParams("thread-9", { text: "continue", clientUserMessageId: "job-1" })
    expect(params).toStrictEqual({
      conversationId: "thread-9",
      turnStart: {
        request: {
          threadId: "thread-9",
          clientUserMessageId: "job-1",
          input: [{ type: "text", text: "continue", text_elements: [] }],
        },
        context: { inheritThreadSettings: true },
      },
    })
    const text = JSON.stringify(params)
    for (const key of ["model", "approvalPolicy", "sandbox", "effort", "turnStartParams"])
      expect(text).not.toContain(`"${key}"`)
  })

  it("interrupt-turn stops only the expected turn, as the user would", () => {
    expect(interruptTurnParams("thread-9", "turn-3")).toStrictEqual({
      conversationId: "thread-9",
      mode: "user-stop",
      expectedTurnId: "turn-3",
    })
  })
})

describe("acknowledgements", () => {
  it.each([
    [{ ok: true }, true],
    [{ ok: true, extra: 1 }, true],
    [{ ok: false }, false],
    [{}, false],
    [null, false],
  ])("compact %j accepted: %s", (result, accepted) => {
    expect(checkCompactAck(result)._tag === "Success").toBe(accepted)
  })

  it.each([
    [{ result: { turn: { id: "t1", status: "inProgress" } } }, true],
    [{ result: { turn: { id: "t1", status: "completed", more: 1 } } }, true],
    [{ result: { turn: { id: "t1", status: "failed" } } }, false],
    [{ result: { turn: { status: "inProgress" } } }, false],
    [{ ok: true }, false],
    [{ turn: { id: "t1", status: "inProgress" } }, false],
  ])("start-turn %j accepted: %s", (result, accepted) => {
    expect(checkStartTurnAck(result)._tag === "Success").toBe(accepted)
  })

  it.each([
    [{ interruptedTurnId: "t1" }, true],
    [{ interruptedTurnId: null, extra: 1 }, true],
    [{ interruptedTurnId: 7 }, false],
    [{ ok: true }, false],
    [{}, false],
    [null, false],
  ])("interrupt-turn %j accepted: %s", (result, accepted) => {
    expect(checkInterruptAck(result)._tag === "Success").toBe(accepted)
  })
})

describe("method versions", () => {
  it("defaults to the versions Rekall verified (interrupt: the table's 4, with expectedTurnId)", () => {
    expect(DEFAULT_EXTENSION_METHOD_VERSIONS).toStrictEqual({
      initialize: 0,
      "thread-owner-discovery": 1,
      "thread-stream-following-changed": 1,
      "thread-stream-state-changed": 11,
      "thread-follower-compact-thread": 2,
      "thread-follower-start-turn": 3,
      "thread-follower-interrupt-turn": 4,
    })
  })

  it("applies valid overrides and ignores invalid ones", () => {
    const v = extensionMethodVersions({
      "thread-follower-compact-thread": 3,
      "thread-follower-start-turn": -1,
      initialize: 1.5,
    })
    expect(v["thread-follower-compact-thread"]).toBe(3)
    expect(v["thread-follower-start-turn"]).toBe(3)
    expect(v.initialize).toBe(0)
  })
})

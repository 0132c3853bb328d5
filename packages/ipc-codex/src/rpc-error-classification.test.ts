import { describe, expect, test } from "vitest"
import { RpcError } from "./errors.js"
import { classifyRpcError, isRetryable } from "./rpc-error-classification.js"

// Messages as codex-cli 0.169.0 sent them (see README "What 0.169.0 did").
const cases: ReadonlyArray<readonly [string, number, string, string, Record<string, unknown>]> = [
  [
    "thread/resume",
    -32600,
    "thread 01a22b99-304f-7bc2-bd29-12a5873d5369 already has an active writer",
    "ActiveWriterError",
    { threadId: "01a22b99-304f-7bc2-bd29-12a5873d5369" },
  ],
  [
    "account/rateLimits/read",
    -32600,
    "codex account authentication required to read rate limits",
    "NotAuthenticatedError",
    {},
  ],
  [
    "turn/start",
    -32603,
    "failed to submit turn input: ActiveTurnNotSteerable { turn_kind: Compact }",
    "TurnNotSteerableError",
    { turnKind: "compact" },
  ],
  [
    "turn/start",
    -32600,
    "thread not found: 01a22b99-304f-7bc2-bd29-12a5873d5369",
    "ThreadNotFoundError",
    {},
  ],
  [
    "thread/resume",
    -32600,
    "no rollout found for thread id 01a22b99-64a5-7f81-bf7a-f0e5ce3d77ed",
    "ThreadNotFoundError",
    {},
  ],
  [
    "thread/read",
    -32600,
    "thread not loaded: 01a23b94-1111-7111-8111-111111111111",
    "ThreadNotFoundError",
    { threadId: "01a23b94-1111-7111-8111-111111111111" },
  ],
  [
    "thread/read",
    -32600,
    "invalid thread id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `g` at 1",
    "RpcError",
    { code: -32600 },
  ],
  [
    "bogus/method",
    -32600,
    "Invalid request: unknown variant `bogus/method`, expected one of `initialize`",
    "ProtocolMismatchError",
    { method: "bogus/method" },
  ],
  [
    "thread/compact/start",
    -32600,
    "Invalid request: missing field `threadId`",
    "ProtocolMismatchError",
    {},
  ],
  ["x", -32601, "Method not found", "ProtocolMismatchError", {}],
  ["x", -32602, "Invalid params", "ProtocolMismatchError", {}],
  [
    "thread/list",
    -32001,
    "Server overloaded; retry later.",
    "OverloadedError",
    { retryable: true },
  ],
  ["turn/interrupt", -32600, "no active turn to interrupt", "RpcError", { code: -32600 }],
  ["thread/list", -32600, "Not initialized", "RpcError", {}],
]

describe("classifyRpcError", () => {
  test.each(cases)("%s %i %s → %s", (method, code, detail, tag, fields) => {
    const classified = classifyRpcError(new RpcError({ method, code, detail }), {
      serverVersion: "0.169.0",
    })
    expect(classified._tag).toBe(tag)
    expect(classified).toMatchObject(fields)
    expect(isRetryable(classified)).toBe(tag === "OverloadedError")
  })

  test("ActiveTurnNotSteerable in codexErrorInfo data is recognised too", () => {
    const classified = classifyRpcError(
      new RpcError({
        method: "turn/steer",
        code: -32603,
        detail: "rejected",
        data: { codexErrorInfo: { activeTurnNotSteerable: { turnKind: "review" } } },
      }),
      { threadId: "t" },
    )
    expect(classified).toMatchObject({
      _tag: "TurnNotSteerableError",
      turnKind: "review",
      threadId: "t",
    })
  })

  test("the caller's thread id wins over one parsed from the message", () => {
    expect(
      classifyRpcError(
        new RpcError({
          method: "thread/resume",
          code: -32600,
          detail: "thread abcdef12 already has an active writer",
        }),
        { threadId: "T" },
      ),
    ).toMatchObject({ threadId: "T" })
  })
})

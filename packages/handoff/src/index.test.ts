import { describe, expect, it } from "vitest"
import * as api from "./index.js"

describe("public entry", () => {
  it("exports exactly the documented values", () => {
    expect(Object.keys(api).sort()).toStrictEqual([
      "HandoffBindingMismatchError",
      "HandoffContainsSecretError",
      "HandoffDigestMismatchError",
      "HandoffDoesNotAuthorizeResumeError",
      "HandoffInvalidError",
      "HandoffTooLargeError",
      "bindHandoff",
      "canonicalDigest",
      "canonicalJson",
      "findSecrets",
      "handoffDigest",
      "handoffLimits",
      "maskSecrets",
      "parseHandoffJson",
      "parseHandoffJsonResult",
      "renderContinuation",
      "validateHandoff",
      "validateHandoffResult",
      "verifyHandoffRecord",
    ])
  })
})

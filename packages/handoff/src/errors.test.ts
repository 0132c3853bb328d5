import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import {
  HandoffBindingMismatchError,
  HandoffContainsSecretError,
  HandoffDigestMismatchError,
  HandoffDoesNotAuthorizeResumeError,
  HandoffInvalidError,
  HandoffTooLargeError,
} from "./errors.js"

describe("errors", () => {
  it("use the issue's names as _tag and the <Thing>Error convention for classes", () => {
    const errors = [
      new HandoffTooLargeError({ bytes: 2, limit: 1 }),
      new HandoffInvalidError({ path: "", rule: "r", issues: [] }),
      new HandoffDigestMismatchError({ expected: "a", actual: "b" }),
      new HandoffBindingMismatchError({ field: "jobId", expected: '"a"', found: '"b"' }),
      new HandoffDoesNotAuthorizeResumeError({ jobId: "j" }),
      new HandoffContainsSecretError({ findings: [] }),
    ]
    expect(errors.map((e) => [e._tag, e.constructor.name])).toStrictEqual([
      ["HandoffTooLarge", "HandoffTooLargeError"],
      ["HandoffInvalid", "HandoffInvalidError"],
      ["HandoffDigestMismatch", "HandoffDigestMismatchError"],
      ["HandoffBindingMismatch", "HandoffBindingMismatchError"],
      ["HandoffDoesNotAuthorizeResume", "HandoffDoesNotAuthorizeResumeError"],
      ["HandoffContainsSecret", "HandoffContainsSecretError"],
    ])
    for (const e of errors) expect(e).toBeInstanceOf(Error)
  })

  it("derive messages from their fields", () => {
    expect(
      new HandoffInvalidError({ path: "summary", rule: "is required", issues: [] }).message,
    ).toBe("Invalid handoff: summary is required.")
    expect(
      new HandoffInvalidError({
        path: "",
        rule: "must be a JSON object (found null)",
        issues: [{ path: "", rule: "must be a JSON object (found null)" }],
      }).message,
    ).toBe("Invalid handoff: the top-level value must be a JSON object (found null).")
    expect(
      new HandoffBindingMismatchError({ field: "threadId", expected: '"t1"', found: '"t2"' })
        .message,
    ).toBe(
      'Saved handoff does not belong to this job: threadId is "t2", expected "t1". ' +
        "The continuation is cancelled.",
    )
    expect(
      new HandoffContainsSecretError({
        findings: [
          { path: "summary", kind: "private-key" },
          { path: "discard[2]", kind: "jwt" },
        ],
      }).message,
    ).toBe(
      "Handoff refused: summary contains a PEM private key block; discard[2] contains a JSON Web " +
        "Token. Remove the secret and refer to it by name (for example an environment variable) " +
        "instead; handoffs are stored in plain text.",
    )
  })

  it("are yieldable Effect failures matched by tag", () => {
    const program = Effect.gen(function* () {
      return yield* new HandoffTooLargeError({ bytes: 40_000, limit: 32_000 })
    }).pipe(Effect.catchTag("HandoffTooLarge", (e) => Effect.succeed(e.bytes - e.limit)))
    expect(Effect.runSync(program)).toBe(8_000)
  })

  it("serialise their fields (and no message duplicate) to JSON", () => {
    expect(
      JSON.parse(JSON.stringify(new HandoffTooLargeError({ bytes: 2, limit: 1 }))),
    ).toStrictEqual({
      _tag: "HandoffTooLarge",
      bytes: 2,
      limit: 1,
    })
  })
})

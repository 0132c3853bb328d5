import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { HandoffError } from "./errors.js"
import type { Handoff } from "./handoff-schema.js"
import { bindHandoff, verifyHandoffRecord } from "./handoff-record.js"
import type { BindHandoffInput, BoundHandoff, VerifyHandoffRecordInput } from "./handoff-record.js"

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

const handoff: Handoff = {
  summary: "Parser ported; tests green",
  preserve: [],
  discard: [],
  nextStep: "Run the e2e suite and stop",
  resume: true,
}
const input: BindHandoffInput = {
  threadId: "thread-1",
  jobId: "job-7",
  handoff,
  createdAt: "2025-01-31T12:00:00.000Z",
}

const bind = (i: BindHandoffInput): BoundHandoff => Effect.runSync(bindHandoff(i))
const bindError = (i: BindHandoffInput) => Effect.runSync(Effect.flip(bindHandoff(i)))
const verifyError = (i: VerifyHandoffRecordInput): HandoffError =>
  Effect.runSync(Effect.flip(verifyHandoffRecord(i)))

const bound = bind(input)
const verifyInput: VerifyHandoffRecordInput = {
  text: bound.text,
  expectedDigest: bound.digest,
  threadId: "thread-1",
  jobId: "job-7",
  forContinuation: true,
}
/** Stored text that a third party rewrote, with its digest recomputed so only later checks fire. */
const tampered = (text: string): VerifyHandoffRecordInput => ({
  ...verifyInput,
  text,
  expectedDigest: sha256(text),
})
const recordWith = (patch: Record<string, unknown>): string =>
  JSON.stringify({ ...(JSON.parse(bound.text) as object), ...patch })

describe("bindHandoff (golden)", () => {
  it("stores the canonical record and its SHA-256", () => {
    // Digest computed with `printf '%s' '<text>' | sha256sum`.
    expect(bound).toStrictEqual({
      record: { version: 1, ...input },
      text:
        '{"createdAt":"2025-01-31T12:00:00.000Z","handoff":{"discard":[],"nextStep":"Run the e2e ' +
        'suite and stop","preserve":[],"resume":true,"summary":"Parser ported; tests green"},' +
        '"jobId":"job-7","threadId":"thread-1","version":1}',
      digest: "5b94eb5e4e7598c4fbcbeaa227beec38ce9faeba20d5666814ba606d2171735a",
    })
  })

  it("keeps non-ASCII ids and text exactly", () => {
    const result = bind({
      threadId: "thread-ß",
      jobId: "job-ü",
      createdAt: "2025-01-31T12:00:00Z",
      handoff: {
        summary: "café — 日本語 𝄞",
        preserve: ['quote " backslash \\ 😀'],
        discard: ["old logs"],
        nextStep: "Run tests",
        resume: true,
      },
    })
    expect(result.text).toBe(
      '{"createdAt":"2025-01-31T12:00:00Z","handoff":{"discard":["old logs"],"nextStep":"Run tests",' +
        '"preserve":["quote \\" backslash \\\\ 😀"],"resume":true,"summary":"café — 日本語 𝄞"},' +
        '"jobId":"job-ü","threadId":"thread-ß","version":1}',
    )
    expect(result.digest).toBe("160fbcbfa547c303ccd9c174264a22b3f4aa18578c9844f78e30224a02e1f2cb")
  })
})

describe("bindHandoff re-validates what it binds", () => {
  it("rejects blank ids, naming the field", () => {
    expect(bindError({ ...input, threadId: " " })).toMatchObject({
      _tag: "HandoffInvalid",
      path: "threadId",
      rule: "must contain non-whitespace text",
    })
    expect(bindError({ ...input, jobId: "" })).toMatchObject({ path: "jobId" })
  })

  it("rejects a handoff that was never decoded, with paths inside the record", () => {
    expect(bindError({ ...input, handoff: { ...handoff, summary: "" } })).toMatchObject({
      _tag: "HandoffInvalid",
      path: "handoff.summary",
    })
  })

  it("refuses secrets, naming the field inside the record", () => {
    const token = ["xoxb-", "123456789012-", "AbCdEfGhIjKl"].join("")
    expect(bindError({ ...input, handoff: { ...handoff, preserve: [token] } })).toMatchObject({
      _tag: "HandoffContainsSecret",
      findings: [{ path: "handoff.preserve[0]", kind: "slack-token" }],
    })
  })

  it("refuses an oversized handoff", () => {
    expect(
      bindError({ ...input, handoff: { ...handoff, summary: "a".repeat(32_000) } }),
    ).toMatchObject({ _tag: "HandoffTooLarge", limit: 32_000 })
  })

  const good = [
    "2025-01-31T12:00:00Z",
    "2025-01-31T12:00:00.1Z",
    "2025-01-31T12:00:00.123456789+05:30",
    "2024-02-29T23:59:59-08:00",
  ]
  for (const createdAt of good) {
    it(`accepts createdAt ${createdAt}`, () => {
      expect(bind({ ...input, createdAt }).record.createdAt).toBe(createdAt)
    })
  }

  const bad = [
    "2025-02-29T00:00:00Z",
    "2025-01-31 12:00:00Z",
    "2025-01-31T24:00:00Z",
    "2025-01-31T12:60:00Z",
    "2025-01-31T12:00:00",
    "2025-13-01T00:00:00Z",
    "2025-01-31T12:00:00+24:00",
    "yesterday",
  ]
  for (const createdAt of bad) {
    it(`rejects createdAt ${createdAt}`, () => {
      expect(bindError({ ...input, createdAt })).toMatchObject({
        _tag: "HandoffInvalid",
        path: "createdAt",
        rule: "must be an ISO-8601 timestamp such as 2025-01-31T12:00:00.000Z",
      })
    })
  }
})

describe("verifyHandoffRecord", () => {
  it("returns the record when digest, version, thread, job and resume all match", () => {
    expect(Effect.runSync(verifyHandoffRecord(verifyInput))).toStrictEqual(bound.record)
  })

  it("compares the digest case-insensitively", () => {
    const upper = { ...verifyInput, expectedDigest: bound.digest.toUpperCase() }
    expect(Effect.runSync(verifyHandoffRecord(upper))).toStrictEqual(bound.record)
  })

  it("fails with HandoffDigestMismatch when the stored text changed", () => {
    const text = bound.text.replace("stop", "stap")
    const error = verifyError({ ...verifyInput, text })
    expect(error).toMatchObject({
      _tag: "HandoffDigestMismatch",
      expected: bound.digest,
      actual: sha256(text),
    })
    expect(error.message).toBe(
      `Saved handoff changed since it was stored: expected SHA-256 ${bound.digest}, found ` +
        `${sha256(text)}. The continuation is cancelled; write a new handoff and schedule again.`,
    )
  })

  it("rejects a non-string text from untyped callers without throwing", () => {
    expect(verifyError({ ...verifyInput, text: undefined as unknown as string })).toMatchObject({
      _tag: "HandoffInvalid",
      rule: "must be the stored record text (a string)",
    })
  })

  it("checks the digest first", () => {
    const text = recordWith({ threadId: "other", version: 2 })
    expect(verifyError({ ...verifyInput, text })._tag).toBe("HandoffDigestMismatch")
  })

  it("fails with HandoffInvalid when the stored text is not JSON", () => {
    expect(verifyError(tampered("{not json"))).toMatchObject({
      _tag: "HandoffInvalid",
      rule: "must be valid JSON: Expected property name or '}' at line 1, column 2",
    })
  })

  const versions: ReadonlyArray<readonly [string, string]> = [
    [recordWith({ version: 2 }), "2"],
    [recordWith({ version: "1" }), '"1"'],
    [recordWith({ version: undefined }), "missing"],
    ["[1]", "missing"],
  ]
  for (const [text, found] of versions) {
    it(`fails with HandoffBindingMismatch on version ${found}`, () => {
      const error = verifyError(tampered(text))
      expect(error).toMatchObject({
        _tag: "HandoffBindingMismatch",
        field: "version",
        expected: "1",
        found,
      })
      expect(error.message).toBe(
        `Saved handoff does not belong to this job: version is ${found}, expected 1. ` +
          "The continuation is cancelled.",
      )
    })
  }

  it("fails with HandoffBindingMismatch on another thread or job", () => {
    expect(verifyError({ ...verifyInput, threadId: "thread-2" })).toMatchObject({
      _tag: "HandoffBindingMismatch",
      field: "threadId",
      expected: '"thread-2"',
      found: '"thread-1"',
    })
    expect(verifyError({ ...verifyInput, jobId: "job-8" })).toMatchObject({
      _tag: "HandoffBindingMismatch",
      field: "jobId",
      expected: '"job-8"',
      found: '"job-7"',
    })
  })

  it("fails with HandoffInvalid when the record breaks its schema", () => {
    expect(verifyError(tampered(recordWith({ extra: 1 })))).toMatchObject({
      _tag: "HandoffInvalid",
      path: "extra",
      rule: "is not an allowed field",
    })
    expect(
      verifyError(tampered(recordWith({ handoff: { ...handoff, summary: " " } }))),
    ).toMatchObject({ _tag: "HandoffInvalid", path: "handoff.summary" })
  })

  it("fails with HandoffInvalid when the text is valid but not canonical", () => {
    const pretty = JSON.stringify(JSON.parse(bound.text), null, 2)
    expect(verifyError(tampered(pretty))).toMatchObject({
      _tag: "HandoffInvalid",
      path: "",
      rule: "must be the canonical JSON of a handoff record (as written by bindHandoff)",
    })
  })

  it("fails with HandoffContainsSecret when a rewritten record carries a credential", () => {
    const key = ["AKIA", "Z3X9Q7W2E5R8T1Y4"].join("")
    const text = bind({ ...input, handoff: { ...handoff, summary: "s" } }).text.replace(
      '"summary":"s"',
      `"summary":"${key}"`,
    )
    const error = verifyError(tampered(text))
    expect(error).toMatchObject({
      _tag: "HandoffContainsSecret",
      findings: [{ path: "handoff.summary", kind: "aws-access-key-id" }],
    })
    expect(JSON.stringify(error) + error.message).not.toContain(key)
  })

  it("fails with HandoffDoesNotAuthorizeResume for a continuation when resume is false", () => {
    const paused = bind({ ...input, handoff: { ...handoff, resume: false } })
    const check = { ...verifyInput, text: paused.text, expectedDigest: paused.digest }
    const error = verifyError(check)
    expect(error).toMatchObject({ _tag: "HandoffDoesNotAuthorizeResume", jobId: "job-7" })
    expect(error.message).toBe(
      "The saved handoff of job job-7 has resume: false, so it does not authorize a " +
        "continuation. The compaction result is kept and no continuation is sent.",
    )
    const notForContinuation = { ...check, forContinuation: false }
    expect(Effect.runSync(verifyHandoffRecord(notForContinuation))).toStrictEqual(paused.record)
  })
})

describe("binding properties", () => {
  const text = fc
    .string({ unit: "grapheme", minLength: 1, maxLength: 30 })
    .filter((s) => s.trim() !== "")
  const handoffs: fc.Arbitrary<Handoff> = fc.record({
    summary: text,
    preserve: fc.array(text, { maxLength: 5 }),
    discard: fc.array(text, { maxLength: 5 }),
    nextStep: text,
    resume: fc.boolean(),
  })
  const ids = fc.tuple(text, text)

  it("verifies what it binds, and rejects any one-character change of the stored text", () => {
    fc.assert(
      fc.property(
        handoffs,
        ids,
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 1 }),
        (h, [t, j], at, c) => {
          const result = Effect.runSyncExit(
            bindHandoff({ threadId: t, jobId: j, handoff: h, createdAt: "2025-01-31T12:00:00Z" }),
          )
          fc.pre(Exit.isSuccess(result)) // a random string may look like a secret
          if (!Exit.isSuccess(result)) return
          const b = result.value
          const check = {
            text: b.text,
            expectedDigest: b.digest,
            threadId: t,
            jobId: j,
            forContinuation: false,
          }
          expect(Effect.runSync(verifyHandoffRecord(check))).toStrictEqual(b.record)
          const i = at % b.text.length
          const changed = b.text.slice(0, i) + c + b.text.slice(i + 1)
          fc.pre(changed !== b.text)
          expect(verifyError({ ...check, text: changed })._tag).toBe("HandoffDigestMismatch")
        },
      ),
      { numRuns: 300 },
    )
  })
})

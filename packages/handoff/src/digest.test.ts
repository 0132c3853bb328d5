import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalDigest, handoffDigest, sha256Hex } from "./digest.js"
import type { Handoff } from "./handoff-schema.js"

// Expected digests were computed outside the code under test with `printf '%s' '<text>' | sha256sum`.
describe("digests (golden)", () => {
  it("hashes the UTF-8 bytes of a text, lowercase hex", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(sha256Hex('"café"')).toBe(
      "28380feb8724d669bc8d4cf5b5a5bb1adbdc61b81ebd06f3fabc567b4f3b0fc5",
    )
  })

  it("hashes a minimal handoff by its canonical JSON", () => {
    const handoff: Handoff = {
      summary: "x",
      preserve: [],
      discard: [],
      nextStep: "",
      resume: false,
    }
    // {"discard":[],"nextStep":"","preserve":[],"resume":false,"summary":"x"}
    expect(handoffDigest(handoff)).toBe(
      "24ba5b46a55799476b724a937d0637af4dbd59f592e51d2a7c6d231ba4063a2f",
    )
  })

  it("hashes a handoff with non-ASCII, astral and escaped text", () => {
    const handoff: Handoff = {
      summary: "café — 日本語 😀 𝄞",
      preserve: ['quote " backslash \\ tab \t newline \n'],
      discard: [],
      nextStep: "Run tests",
      resume: true,
    }
    // {"discard":[],"nextStep":"Run tests","preserve":["quote \" backslash \\ tab \t newline \n"],"resume":true,"summary":"café — 日本語 😀 𝄞"}
    expect(handoffDigest(handoff)).toBe(
      "793506e0c8b64eb12a0299fc6fc5c0a17f306628707d78062365cf5577e395d8",
    )
    expect(canonicalDigest(handoff)).toBe(handoffDigest(handoff))
  })
})

const text = fc.string({ unit: "binary", maxLength: 12 })
const handoffs: fc.Arbitrary<Handoff> = fc.record({
  summary: text,
  preserve: fc.array(text, { maxLength: 4 }),
  discard: fc.array(text, { maxLength: 4 }),
  nextStep: text,
  resume: fc.boolean(),
})

/** One edit per field; each yields a handoff that differs from the original. */
const edits: ReadonlyArray<readonly [string, (h: Handoff, s: string) => Handoff]> = [
  ["summary appended", (h, s) => ({ ...h, summary: `${h.summary}${s}` })],
  ["summary replaced", (h, s) => ({ ...h, summary: s })],
  ["preserve item added", (h, s) => ({ ...h, preserve: [...h.preserve, s] })],
  ["preserve item removed", (h) => ({ ...h, preserve: h.preserve.slice(1) })],
  ["discard item added", (h, s) => ({ ...h, discard: [...h.discard, s] })],
  ["discard reversed", (h) => ({ ...h, discard: [...h.discard].reverse() })],
  ["nextStep appended", (h, s) => ({ ...h, nextStep: `${h.nextStep}${s}` })],
  ["resume flipped", (h) => ({ ...h, resume: !h.resume })],
]

describe("digest properties", () => {
  it("changes when any field changes", () => {
    fc.assert(
      fc.property(handoffs, fc.constantFrom(...edits), text, (handoff, [, edit], s) => {
        const edited = edit(handoff, s)
        fc.pre(JSON.stringify(edited) !== JSON.stringify(handoff))
        expect(handoffDigest(edited)).not.toBe(handoffDigest(handoff))
      }),
      { numRuns: 1000 },
    )
  })

  it("does not depend on the key order of the handoff object", () => {
    fc.assert(
      fc.property(handoffs, (h) => {
        const reordered: Handoff = {
          resume: h.resume,
          nextStep: h.nextStep,
          discard: h.discard,
          preserve: h.preserve,
          summary: h.summary,
        }
        expect(handoffDigest(reordered)).toBe(handoffDigest(h))
      }),
    )
  })

  it("is 64 lowercase hex digits", () => {
    fc.assert(
      fc.property(handoffs, (h) => {
        expect(handoffDigest(h)).toMatch(/^[0-9a-f]{64}$/)
      }),
    )
  })
})

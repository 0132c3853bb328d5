import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  compileSafeRegex,
  escapeRegExp,
  requiredLiterals,
  unsafePatternReason,
} from "./regex-safety.js"

const compile = (pattern: string, caseSensitive = false) =>
  Effect.runSync(Effect.result(compileSafeRegex(pattern, caseSensitive)))

describe("compileSafeRegex", () => {
  it.each([
    "retry(ing)?\\s+polic(y|ies)",
    "handlers=\\d+",
    "[a-z_]+\\.ts",
    "(foo|bar)+baz",
    "a{2,5}",
    "(?<name>\\w+)@example\\.com",
    "(?:ab)+",
    "x(a+)?y",
  ])("accepts %s", (pattern) => {
    const r = compile(pattern)
    expect(Result.isSuccess(r)).toBe(true)
  })

  it.each([
    ["(a+)+$", "repeated group"],
    ["(\\w*)*x", "repeated group"],
    ["((ab)*c)+", "repeated group"],
    ["(a{1,100})+", "repeated group"],
    ["(?:x+y?)*z", "repeated group"],
    ["(a)\\1", "backreferences"],
    ["(?<n>a)\\k<n>", "backreferences"],
    ["(unclosed", "not a valid regular expression"],
    ["\\p{Nope}", "not a valid regular expression"],
    ["x".repeat(301), "it may be at most 300"],
    ["", "empty"],
  ])("refuses %s", (pattern, message) => {
    const r = compile(pattern)
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure).toMatchObject({ _tag: "RecallQueryError", field: "pattern" })
      expect(r.failure.message).toContain(message)
    }
  })

  it("ignores quantifier characters inside classes and escapes", () => {
    expect(unsafePatternReason("([+*])+")).toBeUndefined()
    expect(unsafePatternReason("(\\+)+")).toBeUndefined()
    expect(unsafePatternReason("([a-z]+)+")).toContain("repeated group")
  })

  it("is case-insensitive unless asked, and escapes literals exactly", () => {
    const r = compile("Frost")
    expect(Result.isSuccess(r) && r.success.test("FROST date")).toBe(true)
    const cs = compile("Frost", true)
    expect(Result.isSuccess(cs) && cs.success.test("frost")).toBe(false)
    const literal = new RegExp(escapeRegExp('a.b*c "q" C:\\x (y) [z] {1} | ^$ /'), "u")
    expect(literal.test('a.b*c "q" C:\\x (y) [z] {1} | ^$ /')).toBe(true)
    expect(literal.test("aXb*c")).toBe(false)
  })
})

describe("requiredLiterals", () => {
  it.each([
    ["timeout after \\d+ ms", ["timeout after ", " ms"]],
    ["conn(ect|ection) reset", [" reset", "conn"]],
    ["colou?r", ["colo", "r"]],
    ["ab+c", ["ab", "c"]],
    ["x{0,3}yz", ["yz"]],
    ["foo[0-9]{2}bar", ["foo", "bar"]],
    ["^ERR\\.\\(x\\)$", ["ERR.(x)"]],
    ["\\p{L}+ing", ["ing"]],
    ["\\u{1F600}smile\\x41", ["smile"]],
    ["(?<=pre)fix", ["fix"]],
    ["😀+x", ["😀", "x"]],
    ["a|b", []],
    ["(a|b)", []],
    ["[abc]\\d.", []],
  ])("%s → %j", (pattern, runs) => {
    expect(requiredLiterals(pattern)).toEqual(runs)
  })

  // Patterns from a small grammar (literals, escapes, classes, groups with alternatives,
  // quantifiers, top-level alternation), and strings fast-check builds to match each: every
  // run the pattern names must be in every match.
  const atom = fc.constantFrom(
    "a",
    "b",
    "c",
    "\\.",
    "\\(",
    "[ab]",
    "[^a]",
    ".",
    "\\d",
    "\\s",
    "(ab|c)",
    "(?:a+)",
    "é",
  )
  const quantifier = fc.constantFrom("", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,3}")
  // `(?:a+)` repeated by another quantifier is a nested quantifier: backtracking over it is
  // exponential (one generated case, `ab(?:a+)*a+` on 51 characters, ran for 128 s), so it
  // takes at most `?`.
  const sequence = fc
    .array(fc.tuple(atom, quantifier), { minLength: 1, maxLength: 6 })
    .map((parts) => parts.map(([a, q]) => a + (a === "(?:a+)" && q !== "?" ? "" : q)).join(""))
  const compiles = (p: string) => {
    try {
      new RegExp(p, "u")
      return true
    } catch {
      return false
    }
  }
  const pattern = fc
    .oneof(
      { weight: 4, arbitrary: sequence },
      { weight: 1, arbitrary: fc.tuple(sequence, sequence).map(([a, b]) => `${a}|${b}`) },
    )
    .filter(compiles)

  it("names only text every match holds", () => {
    fc.assert(
      fc.property(
        pattern.chain((p) =>
          fc.tuple(fc.constant(p), fc.stringMatching(new RegExp(p, "u"), { size: "small" })),
        ),
        ([p, text]) => {
          const match = new RegExp(p, "u").exec(text)
          if (match === null) return
          for (const run of requiredLiterals(p)) expect(match[0]).toContain(run)
        },
      ),
      { numRuns: 500 },
    )
  })
})

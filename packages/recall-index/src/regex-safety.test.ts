import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { compileSafeRegex, escapeRegExp, unsafePatternReason } from "./regex-safety.js"

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
    ["x".repeat(301), "keep it under"],
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

import { describe, expect, it } from "vitest"
import { describeFound, formatFieldPath } from "./field-path.js"

describe("formatFieldPath", () => {
  it("formats identifiers, indices and other keys", () => {
    expect(formatFieldPath([])).toBe("")
    expect(formatFieldPath(["summary"])).toBe("summary")
    expect(formatFieldPath(["preserve", 3])).toBe("preserve[3]")
    expect(formatFieldPath(["handoff", "preserve", 0])).toBe("handoff.preserve[0]")
    expect(formatFieldPath(["next step", 'a"b'])).toBe('["next step"]["a\\"b"]')
    expect(formatFieldPath([Symbol("s")])).toBe("[Symbol(s)]")
  })

  it("masks secrets and truncates long keys", () => {
    const key = ["AKIA", "Z3X9Q7W2E5R8T1Y4"].join("")
    expect(formatFieldPath([key])).toBe('["[redacted aws-access-key-id]"]')
    expect(formatFieldPath(["k".repeat(100)])).toBe(`["${"k".repeat(64)}…"]`)
  })
})

describe("describeFound", () => {
  it("renders values briefly, masked", () => {
    expect(describeFound(undefined)).toBe("missing")
    expect(describeFound(2)).toBe("2")
    expect(describeFound(null)).toBe("null")
    expect(describeFound(true)).toBe("true")
    expect(describeFound("t-1")).toBe('"t-1"')
    expect(describeFound([1])).toBe("an array")
    expect(describeFound({})).toBe("a value of type object")
    expect(describeFound(`x ${["AKIA", "Z3X9Q7W2E5R8T1Y4"].join("")}`)).toBe(
      '"x [redacted aws-access-key-id]"',
    )
  })
})

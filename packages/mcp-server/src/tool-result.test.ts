import { describe, expect, it } from "vitest"
import { toolFailure, toolSuccess } from "./baton-tool.js"
import { ECHO_CHARS } from "./echoed-input.js"
import {
  defectToCallToolResult,
  describeToolFailure,
  failureFields,
  toCallToolResult,
} from "./tool-result.js"

/** The fields block of a failure's result. */
const toCallToolResultText = (failure: { _tag: string }): string =>
  (toCallToolResult(toolFailure(failure), "t").content[1] as { text: string }).text

describe("tool results", () => {
  it("mirrors structured content in text", () => {
    expect(toCallToolResult(toolSuccess({ a: 1 }), "t")).toEqual({
      content: [{ type: "text", text: '{"a":1}' }],
      structuredContent: { a: 1 },
    })
  })

  it("describes a failure without a message by its fields", () => {
    expect(describeToolFailure({ _tag: "Nope", path: "x", limit: 3 } as never, "t")).toBe(
      "Nope: path=x, limit=3 (from t).",
    )
    expect(toCallToolResult(toolFailure({ _tag: "Bare" }), "t").content).toEqual([
      { type: "text", text: "Bare: failed (from t)." },
      { type: "text", text: '{"_tag":"Bare"}' },
    ])
  })

  it("echoes at most ECHO_CHARS characters of a string field", () => {
    const long = "x".repeat(ECHO_CHARS + 1)
    const cut = `${"x".repeat(ECHO_CHARS)}…`
    const failure = { _tag: "Missing", id: long, nested: { ids: [long] }, limit: 3 }
    expect(toCallToolResult(toolFailure(failure), "t").content).toEqual([
      { type: "text", text: `Missing: id=${cut}, nested={"ids":["${cut}"]}, limit=3 (from t).` },
      {
        type: "text",
        text: JSON.stringify({ _tag: "Missing", id: cut, nested: { ids: [cut] }, limit: 3 }),
      },
    ])
    const short = { _tag: "Missing", id: "x".repeat(ECHO_CHARS) }
    expect(JSON.parse(toCallToolResultText(short))).toEqual(short)
  })

  it("keeps only data fields of an error (no stack, message or cause)", () => {
    const error = Object.assign(new Error("m", { cause: "c" }), { _tag: "X", field: "f" })
    expect(failureFields(error)).toEqual({ field: "f" })
  })

  it("reports defects as bugs, one line, without a stack", () => {
    const result = defectToCallToolResult(new Error("line one\nline two"), "tool_x")
    expect(result.isError).toBe(true)
    const text = (result.content[0] as { text: string }).text
    expect(text).toContain("tool_x failed unexpectedly (Error: line one)")
    expect(text).not.toContain("line two")
    expect(text).not.toMatch(/\bat /)
  })
})

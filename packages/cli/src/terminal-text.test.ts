import { describe, expect, it } from "vitest"
import { inertLine, inertText } from "./terminal-text.js"

describe("inertText", () => {
  it("shows control characters instead of sending them to the terminal", () => {
    expect(inertText("a\u0000b\u0007c\u001bd\u009be\u007f")).toBe("a\\x00b\\x07c\\x1bd\\x9be\\x7f")
    expect(inertText("progress 10%\rprogress 20%")).toBe("progress 10%\\rprogress 20%")
  })

  it("keeps newlines and tabs, turns CRLF into a newline and drops colour sequences", () => {
    expect(inertText("one\r\n\ttwo\nthree")).toBe("one\n\ttwo\nthree")
    expect(inertText("\u001b[32mPASS\u001b[0m 3 tests")).toBe("PASS 3 tests")
    expect(inertText("café 日本語 😀")).toBe("café 日本語 😀")
  })
})

describe("inertLine", () => {
  it("keeps one line: newlines, tabs, carriage returns and escapes are shown", () => {
    expect(inertLine("quota hit\nretry\tlater\r\u001b[31m!")).toBe(
      "quota hit\\nretry\\tlater\\r\\x1b[31m!",
    )
    expect(inertLine("café 日本語")).toBe("café 日本語")
  })
})

// How a hit shows a chunk that starts inside its turn's text.
import { describe, expect, it } from "vitest"
import { shownChunkText } from "./snippet.js"

describe("shownChunkText", () => {
  it("drops a window's partial first word and marks the cut", () => {
    expect(shownChunkText("r. The zebrafish job crashed", 318)).toBe("…The zebrafish job crashed")
    expect(shownChunkText("ook very carefully please", 900)).toBe("…very carefully please")
  })

  it("leaves the first window, and a window with no early space, as they are", () => {
    expect(shownChunkText("The zebrafish job crashed", 0)).toBe("The zebrafish job crashed")
    const long = `${"x".repeat(40)} tail`
    expect(shownChunkText(long, 10)).toBe(long)
    expect(shownChunkText(" leading space", 10)).toBe(" leading space")
  })
})

// Data directory resolution.
import { describe, expect, it } from "vitest"
import { batonDataDir } from "./data-directory.js"

describe("batonDataDir", () => {
  it("prefers BATON_DATA_DIR, then XDG_DATA_HOME, then ~/.local/share", () => {
    expect(batonDataDir({ BATON_DATA_DIR: "/d", XDG_DATA_HOME: "/x" }, "/h")).toBe("/d")
    expect(batonDataDir({ XDG_DATA_HOME: "/x" }, "/h")).toBe("/x/baton")
    expect(batonDataDir({ XDG_DATA_HOME: "" }, "/h")).toBe("/h/.local/share/baton")
  })
})

// Data directory resolution.
import { describe, expect, it } from "vitest"
import {
  batonDataDir,
  relativeDataDir,
  relativeDataDirMessage,
  RELATIVE_DATA_DIR_REASON,
} from "./data-directory.js"
import { RecallStorageError } from "./errors.js"

describe("batonDataDir", () => {
  it("prefers BATON_DATA_DIR, then XDG_DATA_HOME, then ~/.local/share", () => {
    expect(batonDataDir({ BATON_DATA_DIR: "/d", XDG_DATA_HOME: "/x" }, "/h")).toBe("/d")
    expect(batonDataDir({ XDG_DATA_HOME: "/x" }, "/h")).toBe("/x/baton")
    expect(batonDataDir({ XDG_DATA_HOME: "" }, "/h")).toBe("/h/.local/share/baton")
    // XDG: a relative value is ignored.
    expect(batonDataDir({ XDG_DATA_HOME: "rel" }, "/h")).toBe("/h/.local/share/baton")
  })

  it("refuses a relative BATON_DATA_DIR instead of resolving it against the working directory", () => {
    for (const value of ["rel/dir", "./data", "..", "~/data"]) {
      expect(relativeDataDir({ BATON_DATA_DIR: value })).toBe(value)
      expect(() => batonDataDir({ BATON_DATA_DIR: value }, "/h")).toThrow(
        `BATON_DATA_DIR is a relative path (${value}): give an absolute path`,
      )
    }
    expect(relativeDataDir({ BATON_DATA_DIR: "/abs" })).toBeUndefined()
    expect(relativeDataDir({ BATON_DATA_DIR: "" })).toBeUndefined()
    expect(relativeDataDir({})).toBeUndefined()
    // The storage error the CLI and the MCP server report says the same.
    const error = new RecallStorageError({
      operation: "create-directory",
      path: "rel/dir",
      reason: RELATIVE_DATA_DIR_REASON,
    })
    expect(error.message).toBe(relativeDataDirMessage("rel/dir"))
  })
})

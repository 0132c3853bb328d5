import { describe, expect, it } from "vitest"
import {
  resolveClaudeConfigDir,
  resolveCodexHome,
  resolveDataDir,
  resolveJobsDir,
} from "./baton-paths.js"

const home = "/home/u"
const cwd = "/work"

describe("baton paths", () => {
  it("defaults under the home directory", () => {
    expect(resolveDataDir({}, home, cwd)).toEqual({
      path: "/home/u/.local/share/baton",
      source: "default",
    })
    expect(resolveCodexHome({}, home, cwd).path).toBe("/home/u/.codex")
    expect(resolveJobsDir({}, home, cwd).path).toBe("/home/u/.codex/tools/baton/jobs")
    expect(resolveClaudeConfigDir({}, home, cwd).path).toBe("/home/u/.claude")
  })

  it("follows XDG_DATA_HOME only when absolute", () => {
    expect(resolveDataDir({ XDG_DATA_HOME: "/xdg" }, home, cwd)).toEqual({
      path: "/xdg/baton",
      source: "$XDG_DATA_HOME",
    })
    expect(resolveDataDir({ XDG_DATA_HOME: "rel" }, home, cwd).path).toBe(
      "/home/u/.local/share/baton",
    )
  })

  it("lets explicit variables win, resolving relative values against cwd", () => {
    const env = {
      BATON_DATA_DIR: "data",
      XDG_DATA_HOME: "/xdg",
      BATON_JOBS_DIR: "/jobs",
      CODEX_HOME: "/c",
    }
    expect(resolveDataDir(env, home, cwd)).toEqual({
      path: "/work/data",
      source: "$BATON_DATA_DIR",
    })
    expect(resolveJobsDir(env, home, cwd)).toEqual({ path: "/jobs", source: "$BATON_JOBS_DIR" })
  })

  it("puts the jobs directory under CODEX_HOME when set", () => {
    expect(resolveJobsDir({ CODEX_HOME: "/c" }, home, cwd)).toEqual({
      path: "/c/tools/baton/jobs",
      source: "$CODEX_HOME",
    })
    expect(resolveClaudeConfigDir({ CLAUDE_CONFIG_DIR: "/cc" }, home, cwd).path).toBe("/cc")
  })

  it("treats empty variables as unset", () => {
    expect(resolveDataDir({ BATON_DATA_DIR: "" }, home, cwd).path).toBe(
      "/home/u/.local/share/baton",
    )
    expect(resolveCodexHome({ CODEX_HOME: "" }, home, cwd).path).toBe("/home/u/.codex")
  })
})

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
    expect(resolveDataDir({}, home)).toEqual({
      path: "/home/u/.local/share/baton",
      source: "default",
    })
    expect(resolveCodexHome({}, home, cwd).path).toBe("/home/u/.codex")
    expect(resolveJobsDir({}, home, cwd).path).toBe("/home/u/.codex/tools/baton/jobs")
    expect(resolveClaudeConfigDir({}, home, cwd).path).toBe("/home/u/.claude")
  })

  it("follows XDG_DATA_HOME only when absolute", () => {
    expect(resolveDataDir({ XDG_DATA_HOME: "/xdg" }, home)).toEqual({
      path: "/xdg/baton",
      source: "$XDG_DATA_HOME",
    })
    expect(resolveDataDir({ XDG_DATA_HOME: "rel" }, home).path).toBe("/home/u/.local/share/baton")
  })

  it("lets explicit variables win", () => {
    const env = {
      BATON_DATA_DIR: "/data",
      XDG_DATA_HOME: "/xdg",
      BATON_JOBS_DIR: "/jobs",
      CODEX_HOME: "/c",
    }
    expect(resolveDataDir(env, home)).toEqual({ path: "/data", source: "$BATON_DATA_DIR" })
    expect(resolveJobsDir(env, home, cwd)).toEqual({ path: "/jobs", source: "$BATON_JOBS_DIR" })
  })

  it("marks a relative BATON_DATA_DIR or BATON_JOBS_DIR as refused, never resolving it against cwd", () => {
    const env = { BATON_DATA_DIR: "rel/dir", BATON_JOBS_DIR: "./jobs", XDG_DATA_HOME: "/xdg" }
    expect(resolveDataDir(env, home)).toEqual({
      path: "rel/dir",
      source: "$BATON_DATA_DIR",
      relative: true,
    })
    expect(resolveJobsDir(env, home, cwd)).toEqual({
      path: "./jobs",
      source: "$BATON_JOBS_DIR",
      relative: true,
    })
  })

  it("puts the jobs directory under CODEX_HOME when set", () => {
    expect(resolveJobsDir({ CODEX_HOME: "/c" }, home, cwd)).toEqual({
      path: "/c/tools/baton/jobs",
      source: "$CODEX_HOME",
    })
    expect(resolveClaudeConfigDir({ CLAUDE_CONFIG_DIR: "/cc" }, home, cwd).path).toBe("/cc")
  })

  it("treats empty variables as unset", () => {
    expect(resolveDataDir({ BATON_DATA_DIR: "" }, home).path).toBe("/home/u/.local/share/baton")
    expect(resolveCodexHome({ CODEX_HOME: "" }, home, cwd).path).toBe("/home/u/.codex")
  })
})

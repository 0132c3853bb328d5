import { describe, expect, it } from "vitest"
import { transcriptRoots } from "./transcript-discovery.js"

describe("transcriptRoots", () => {
  it("uses CLAUDE_CONFIG_DIR and CODEX_HOME when set", () => {
    expect(
      transcriptRoots({ env: { CLAUDE_CONFIG_DIR: "/c", CODEX_HOME: "/x" }, homeDir: "/h" }),
    ).toEqual({
      claudeProjects: ["/c/projects"],
      codexSessions: "/x/sessions",
      codexArchivedSessions: "/x/archived_sessions",
    })
  })

  it("falls back to ~/.claude, ~/.config/claude, $XDG_CONFIG_HOME/claude and ~/.codex", () => {
    expect(
      transcriptRoots({ env: { XDG_CONFIG_HOME: "/xdg", CLAUDE_CONFIG_DIR: "" }, homeDir: "/h" }),
    ).toEqual({
      claudeProjects: ["/h/.claude/projects", "/h/.config/claude/projects", "/xdg/claude/projects"],
      codexSessions: "/h/.codex/sessions",
      codexArchivedSessions: "/h/.codex/archived_sessions",
    })
  })
})

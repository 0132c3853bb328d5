// Worktree collapse by string rule.
import { describe, expect, it } from "vitest"
import { repoRootOf } from "./repo-root.js"

describe("repoRootOf", () => {
  it.each([
    ["/home/a/proj", "/home/a/proj"],
    ["/home/a/proj/", "/home/a/proj"],
    ["/home/a/proj/.claude/worktrees/fix-1", "/home/a/proj"],
    ["/home/a/proj/.claude/worktrees/fix-1/src", "/home/a/proj"],
    ["/home/a/proj/.worktrees/x", "/home/a/proj"],
    ["/", "/"],
  ])("%s → %s", (cwd, root) => {
    expect(repoRootOf(cwd)).toBe(root)
  })
})

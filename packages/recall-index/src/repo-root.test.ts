// Worktree collapse by string rule.
import { describe, expect, it } from "vitest"
import { repoRootOf, repositoryUrlKey } from "./repo-root.js"

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

describe("repositoryUrlKey", () => {
  it.each([
    ["https://github.com/acme/pay.git", "https://github.com/acme/pay"],
    ["https://x-access-token:ghp_secret@GitHub.com/acme/pay.git/", "https://github.com/acme/pay"],
    ["HTTPS://user@git.example.org/Acme/Pay", "https://git.example.org/Acme/Pay"],
    ["ssh://git@github.com/acme/pay.git", "ssh://github.com/acme/pay"],
    ["git@github.com:acme/pay.git", "git@github.com:acme/pay"],
    ["  /srv/git/pay.git  ", "/srv/git/pay"],
  ])("%s → %s", (url, key) => {
    expect(repositoryUrlKey(url)).toBe(key)
  })

  it("has no key for an empty remote", () => {
    expect(repositoryUrlKey("  ")).toBeUndefined()
    expect(repositoryUrlKey("https://user:pw@host/")).toBe("https://host")
  })
})

/**
 * Worktree collapse by string rule (no git calls, so it works for deleted paths): a Claude
 * `/.claude/worktrees/<name>` or `/.worktrees/<name>` suffix (and anything below it) maps to the
 * main checkout. Richer git-based identity comes later; this fills `sessions.repo_root` now.
 */

const worktreeSegment = /\/\.(?:claude\/)?worktrees\/[^/]+(?:\/.*)?$/

/** The main repository root for a session cwd, by string rule; trailing slashes removed. */
export const repoRootOf = (cwd: string): string => {
  const collapsed = cwd.replace(worktreeSegment, "")
  const trimmed = collapsed.replace(/\/+$/, "")
  return trimmed === "" ? "/" : trimmed
}

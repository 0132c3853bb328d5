/**
 * Worktree collapse by string rule (no git calls, so it works for deleted paths): a Claude
 * `/.claude/worktrees/<name>` or `/.worktrees/<name>` suffix (and anything below it) maps to the
 * main checkout. The indexer prefers git's files (`repository-root.ts`) and, for a directory that
 * is gone, the session's remote ({@link repositoryUrlKey}); these rules are the last resort.
 */

const worktreeSegment = /\/\.(?:claude\/)?worktrees\/[^/]+(?:\/.*)?$/

/** The main repository root for a session cwd, by string rule; trailing slashes removed. */
export const repoRootOf = (cwd: string): string => {
  const collapsed = cwd.replace(worktreeSegment, "")
  const trimmed = collapsed.replace(/\/+$/, "")
  return trimmed === "" ? "/" : trimmed
}

/**
 * A remote URL as a key that matches its other spellings: credentials dropped (a token in
 * `https://user:token@host/...` must never be stored), the host lower-cased, a trailing `/` and
 * `.git` removed. `undefined` for an empty value.
 */
export const repositoryUrlKey = (url: string): string | undefined => {
  let key = url.trim()
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)(?:[^@/]*@)?([^/]*)(.*)$/i.exec(key)
  if (scheme !== null) key = `${scheme[1]!.toLowerCase()}${scheme[2]!.toLowerCase()}${scheme[3]!}`
  key = key.replace(/\/+$/, "").replace(/\.git$/, "")
  return key === "" ? undefined : key
}

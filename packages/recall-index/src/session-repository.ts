/**
 * Which repository a session belongs to, decided at index time and stored in `sessions.repo_root`
 * (what `scope_cwd` filters on) with how it was found in `repo_root_from`:
 *
 * 1. `git` — the session's directory exists, and git's files lead to the main checkout (a linked
 *    worktree such as a Codex app worktree under `~/.codex/worktrees/<id>/<repo>` becomes the
 *    repository it was added from);
 * 2. `remote` — the directory is gone, but a Codex session names its origin remote, and a session
 *    resolved by `git` has the same remote: its root;
 * 3. `path` — the string rules of `repoRootOf`.
 *
 * Without {@link RepositoryFiles} (a library caller that passes none) nothing is read: the string
 * rules apply and `repo_root_from` stays null, so a later run with git access resolves those rows.
 * A stored `git` / `remote` root is not replaced by a weaker one for the same directory (the
 * worktree was deleted since), see the writer's session upsert. Existing directories are taken at
 * their real path (symlinks resolved), and a stored root that resolves elsewhere is moved there.
 */
import type { Database } from "better-sqlite3"
import { repoRootOf } from "./repo-root.js"
import { realPathOf, resolveRepositoryRoot } from "./repository-root.js"
import type { RepositoryFiles } from "./repository-root.js"
import type { TranscriptSession } from "./transcript-model.js"

/** `repo_root` and `repo_root_from` of one session row. */
export interface SessionRepository {
  readonly repoRoot: string | null
  readonly repoRootFrom: "git" | "remote" | "path" | null
}

/** Decides sessions' repositories for one index run (git lookups are cached per directory). */
export interface SessionRepositoryResolver {
  readonly of: (session: Pick<TranscriptSession, "cwd" | "repositoryUrl">) => SessionRepository
  /**
   * Resolves the rows an earlier version (or a run without git access) left unresolved, and
   * rows that only the string rules placed whose remote a `git`-resolved session now shares.
   * Returns the rows changed. A no-op without {@link RepositoryFiles}.
   */
  readonly refresh: () => number
}

/** A resolver over `sqlite`'s sessions, reading git's files through `files` when given. */
export const makeSessionRepositoryResolver = (
  sqlite: Database,
  files: RepositoryFiles | undefined,
): SessionRepositoryResolver => {
  const byDirectory = new Map<string, ReturnType<typeof resolveRepositoryRoot>>()
  const gitRootOf = (cwd: string) => {
    let found = byDirectory.get(cwd)
    if (found === undefined && files !== undefined) {
      found = resolveRepositoryRoot(cwd, files, { existingOnly: true })
      byDirectory.set(cwd, found)
    }
    return found
  }
  const rootOfRemote = sqlite
    .prepare<[string], string>(
      `select repo_root from sessions where repository_url = ? and repo_root_from = 'git'
        and repo_root is not null order by last_activity desc limit 1`,
    )
    .pluck()
  const of: SessionRepositoryResolver["of"] = (session) => {
    if (session.cwd === undefined) return { repoRoot: null, repoRootFrom: null }
    const git = gitRootOf(session.cwd)
    if (git === undefined) return { repoRoot: repoRootOf(session.cwd), repoRootFrom: null }
    if (git.from === "git") return { repoRoot: git.root, repoRootFrom: "git" }
    const remote =
      session.repositoryUrl === undefined ? undefined : rootOfRemote.get(session.repositoryUrl)
    return remote === undefined
      ? { repoRoot: git.root, repoRootFrom: "path" }
      : { repoRoot: remote, repoRootFrom: "remote" }
  }
  const unresolved = sqlite.prepare<[], { id: number; cwd: string; repository_url: string | null }>(
    "select id, cwd, repository_url from sessions where repo_root_from is null and cwd is not null",
  )
  const setRepository = sqlite.prepare<[string | null, string | null, number]>(
    "update sessions set repo_root = ?, repo_root_from = ? where id = ?",
  )
  const adoptRemote = sqlite.prepare(`
    update sessions set repo_root_from = 'remote', repo_root = (
      select g.repo_root from sessions g
      where g.repository_url = sessions.repository_url and g.repo_root_from = 'git'
        and g.repo_root is not null
      order by g.last_activity desc limit 1)
    where repo_root_from = 'path' and repository_url is not null and exists (
      select 1 from sessions g
      where g.repository_url = sessions.repository_url and g.repo_root_from = 'git'
        and g.repo_root is not null)`)
  const storedRoots = sqlite
    .prepare<[], string>(
      "select distinct repo_root from sessions where repo_root is not null and repo_root_from is not null",
    )
    .pluck()
  const moveRoot = sqlite.prepare<[string, string]>(
    "update sessions set repo_root = ? where repo_root = ? and repo_root_from is not null",
  )
  const refresh = sqlite.transaction((): number => {
    let changed = 0
    for (const row of unresolved.all()) {
      const found = of({
        cwd: row.cwd,
        ...(row.repository_url === null ? {} : { repositoryUrl: row.repository_url }),
      })
      changed += setRepository.run(found.repoRoot, found.repoRootFrom, row.id).changes
    }
    // Roots an earlier version stored through a symlink (`~/code/repo` for `/data/code/repo`)
    // move to the real path that sessions indexed now get (for one that is gone: its nearest
    // existing parent's).
    if (files?.realPath !== undefined) {
      for (const root of storedRoots.all()) {
        const real = realPathOf(root, files)
        if (real !== root) changed += moveRoot.run(real, root).changes
      }
    }
    return changed + adoptRemote.run().changes
  })
  return { of, refresh: () => (files === undefined ? 0 : refresh.immediate()) }
}

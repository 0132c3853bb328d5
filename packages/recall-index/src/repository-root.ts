/**
 * The main repository of a directory, from git's files on disk (no `git` process): walk up to
 * the nearest `.git`; a `.git` directory holding `HEAD` marks the root (an empty or stray `.git`
 * directory does not: git itself does not take it for a repository); a `.git` file (a linked worktree or a
 * submodule) points at its git dir, whose `commondir` leads to the main repository's `.git`.
 * Guarantees: never throws and never writes; a directory outside any repository, or git files it
 * cannot read, fall back to the directory itself (then `repoRootOf`'s string rules still collapse
 * `.claude/worktrees/<name>` and `.worktrees/<name>`). The directory is first resolved to its
 * real path (through its nearest existing parent when it is gone), so `~/code/repo` through a
 * symlink `~/code -> /data/code` is the same repository as `/data/code/repo` (agents record
 * `getcwd()`, the real path). Reads go through the given {@link RepositoryFiles}, so the rules
 * are tested without a disk.
 */
import { readFileSync, realpathSync, statSync } from "node:fs"
import { basename, dirname, isAbsolute, join, resolve } from "node:path"
import { repoRootOf } from "./repo-root.js"

/** The two reads the lookup needs. */
export interface RepositoryFiles {
  /** `directory`, `file`, or undefined when the path does not exist. */
  readonly kind: (path: string) => "directory" | "file" | undefined
  /** The file's text, or undefined when unreadable. */
  readonly readText: (path: string) => string | undefined
  /** The path with symlinks resolved, or undefined when it does not exist; absent: taken as is. */
  readonly realPath?: (path: string) => string | undefined
}

/** The real file system. */
export const nodeRepositoryFiles: RepositoryFiles = {
  kind: (path) => {
    try {
      const s = statSync(path)
      return s.isDirectory() ? "directory" : s.isFile() ? "file" : undefined
    } catch {
      return undefined
    }
  },
  readText: (path) => {
    try {
      return readFileSync(path, "utf8")
    } catch {
      return undefined
    }
  },
  realPath: (path) => {
    try {
      return realpathSync(path)
    } catch {
      return undefined
    }
  },
}

const mainRootOfGitDir = (gitDir: string, files: RepositoryFiles): string | undefined => {
  const common = files.readText(join(gitDir, "commondir"))?.trim()
  if (common === undefined || common === "") return undefined
  const commonDir = isAbsolute(common) ? common : resolve(gitDir, common)
  return commonDir.endsWith("/.git") ? dirname(commonDir) : undefined
}

/**
 * `path` (absolute) with symlinks resolved: its own real path, or for a path that does not exist
 * (a deleted worktree, a directory not made yet) its nearest existing parent's real path with the
 * rest appended; unchanged without {@link RepositoryFiles.realPath} or when nothing resolves.
 */
export const realPathOf = (path: string, files: RepositoryFiles): string => {
  if (files.realPath === undefined) return path
  let rest: Array<string> = []
  for (let dir = path, depth = 0; depth < 64; depth++) {
    const real = files.realPath(dir)
    if (real !== undefined) return rest.length === 0 ? real : join(real, ...rest)
    const parent = dirname(dir)
    if (parent === dir) break
    rest = [basename(dir), ...rest]
    dir = parent
  }
  return path
}

/** How a repository root was found: git's files on disk, or the string rules. */
export type RepositoryRootSource = "git" | "path"

/**
 * The main repository root of `cwd` — a linked git worktree's main checkout, else the nearest
 * directory holding `.git`, else the string rules of `repoRootOf` — without a trailing slash, and
 * whether git's files gave it. With `existingOnly`, a `cwd` that is not a directory on disk is
 * not walked up from (its parents' repository — say, a home directory kept in git — is not the
 * deleted worktree's) and gets the string rules.
 */
export const resolveRepositoryRoot = (
  cwd: string,
  files: RepositoryFiles = nodeRepositoryFiles,
  options: { readonly existingOnly?: boolean } = {},
): { readonly root: string; readonly from: RepositoryRootSource } => {
  const start = realPathOf(resolve(cwd), files)
  if (options.existingOnly === true && files.kind(start) !== "directory") {
    return { root: repoRootOf(start), from: "path" }
  }
  let dir = start
  for (let depth = 0; depth < 64; depth++) {
    const dotGit = join(dir, ".git")
    const kind = files.kind(dotGit)
    if (kind === "directory" && files.kind(join(dotGit, "HEAD")) === "file")
      return { root: dir, from: "git" }
    if (kind === "file") {
      const pointer = /^gitdir:\s*(.+)$/m.exec(files.readText(dotGit) ?? "")?.[1]?.trim()
      if (pointer === undefined) return { root: dir, from: "git" }
      const gitDir = isAbsolute(pointer) ? pointer : resolve(dir, pointer)
      return { root: mainRootOfGitDir(gitDir, files) ?? dir, from: "git" }
    }
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return { root: repoRootOf(start), from: "path" }
}

/** The main repository root of `cwd` (see {@link resolveRepositoryRoot}), without a trailing slash. */
export const repositoryRootOf = (
  cwd: string,
  files: RepositoryFiles = nodeRepositoryFiles,
): string => resolveRepositoryRoot(cwd, files).root

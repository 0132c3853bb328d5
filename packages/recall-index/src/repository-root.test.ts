import { describe, expect, it } from "vitest"
import { repositoryRootOf, resolveRepositoryRoot } from "./repository-root.js"
import type { RepositoryFiles } from "./repository-root.js"

const memory = (
  dirs: ReadonlyArray<string>,
  files: Readonly<Record<string, string>>,
): RepositoryFiles => ({
  kind: (path) => (dirs.includes(path) ? "directory" : path in files ? "file" : undefined),
  readText: (path) => files[path],
})

describe("repositoryRootOf", () => {
  const fs = memory(["/work/app/.git", "/work/app/.git/worktrees/feat"], {
    "/work/app/.git/HEAD": "ref: refs/heads/main\n",
    "/work/feat/.git": "gitdir: /work/app/.git/worktrees/feat\n",
    "/work/app/.git/worktrees/feat/commondir": "../..\n",
    "/work/lib/vendor/sub/.git": "gitdir: ../../.git/modules/sub\n",
  })

  it("finds the repository from a subdirectory", () => {
    expect(repositoryRootOf("/work/app/packages/x/", fs)).toBe("/work/app")
  })

  it("follows a linked worktree to its main repository", () => {
    expect(repositoryRootOf("/work/feat/src", fs)).toBe("/work/app")
  })

  it("keeps a submodule (no commondir) as its own root", () => {
    expect(repositoryRootOf("/work/lib/vendor/sub/a", fs)).toBe("/work/lib/vendor/sub")
  })

  it("falls back to the string rules outside any repository", () => {
    expect(repositoryRootOf("/gone/repo/.claude/worktrees/w1/src", fs)).toBe("/gone/repo")
    expect(repositoryRootOf("/tmp/scratch", fs)).toBe("/tmp/scratch")
  })

  it("walks past a .git directory git would not take for a repository (no HEAD)", () => {
    const stray = memory(["/tmp/.git", "/work/app/.git"], { "/work/app/.git/HEAD": "ref\n" })
    expect(resolveRepositoryRoot("/tmp/scratch", stray)).toEqual({
      root: "/tmp/scratch",
      from: "path",
    })
    expect(repositoryRootOf("/work/app/src", stray)).toBe("/work/app")
  })

  it("says whether git's files or the string rules gave the root", () => {
    expect(resolveRepositoryRoot("/work/feat/src", fs)).toEqual({ root: "/work/app", from: "git" })
    expect(resolveRepositoryRoot("/tmp/scratch", fs)).toEqual({
      root: "/tmp/scratch",
      from: "path",
    })
  })

  it("with existingOnly, does not walk up from a directory that is gone", () => {
    // A home directory kept in git must not claim a deleted worktree below it.
    const home = memory(["/home/u/.git", "/home/u/live"], { "/home/u/.git/HEAD": "ref\n" })
    expect(resolveRepositoryRoot("/home/u/live", home, { existingOnly: true })).toEqual({
      root: "/home/u",
      from: "git",
    })
    expect(
      resolveRepositoryRoot("/home/u/.codex/worktrees/ab12/pay", home, { existingOnly: true }),
    ).toEqual({ root: "/home/u/.codex/worktrees/ab12/pay", from: "path" })
    expect(
      resolveRepositoryRoot("/home/u/proj/.claude/worktrees/w1", home, { existingOnly: true }),
    ).toEqual({ root: "/home/u/proj", from: "path" })
  })

  it("resolves a symlinked directory to its real path first", () => {
    // `~/code -> /data/code`: agents record the real path, so the scope must be the real root.
    const linked = {
      ...memory(["/data/code/repo/.git", "/data/scratch"], {
        "/data/code/repo/.git/HEAD": "ref\n",
      }),
      realPath: (path: string) =>
        ["/home/u/code", "/home/u/code/repo", "/home/u/code/repo/src"].includes(path)
          ? path.replace("/home/u/code", "/data/code")
          : path === "/home/u/tmp"
            ? "/data/scratch"
            : undefined,
    }
    expect(repositoryRootOf("/home/u/code/repo/src", linked)).toBe("/data/code/repo")
    expect(resolveRepositoryRoot("/home/u/tmp", linked, { existingOnly: true })).toEqual({
      root: "/data/scratch",
      from: "path",
    })
    // A path that is not there resolves through its nearest existing parent.
    expect(repositoryRootOf("/home/u/code/repo/new/dir", linked)).toBe("/data/code/repo")
    expect(repositoryRootOf("/home/u/code/gone/x", linked)).toBe("/data/code/gone/x")
    expect(repositoryRootOf("/elsewhere/gone", linked)).toBe("/elsewhere/gone")
  })
})

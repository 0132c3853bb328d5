// Repository identity on rollouts the REAL pinned `codex exec` (0.169.0) writes: one session in a
// main checkout with an origin remote, one in a linked worktree under $CODEX_HOME/worktrees (the
// Codex app's layout). The indexer places both in the main checkout by git's files, and, once the
// worktree is deleted, a fresh index places its session there by the remote Codex recorded.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createCodexHome,
  readRollout,
  runCodexExec,
  startMockResponses,
  textReply,
} from "@baton/testkit"
import type { CodexHome, MockResponsesServer } from "@baton/testkit"
import { nodeRepositoryFiles, recentSessions } from "@baton/recall-index"
import { runIndex, withIndex, withSqlite } from "./index-harness.js"

let mock: MockResponsesServer
let home: CodexHome
let data: string
let worktree: string
const threads: Record<"main" | "worktree", string> = { main: "", worktree: "" }
let meta: Record<"main" | "worktree", Record<string, unknown>>

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd,
    env: { ...process.env, ...home.env },
    stdio: "pipe",
  })

beforeAll(async () => {
  mock = await startMockResponses({
    replies: [textReply("noted in the worktree"), textReply("noted in the main checkout")],
  })
  home = await createCodexHome({ mock, gitWorkdir: true })
  data = mkdtempSync(join(tmpdir(), "baton-repo-identity-"))
  git(home.workdir, "remote", "add", "origin", "https://bot:ghp_e2eToken@github.com/acme/pay.git")
  worktree = join(home.codexHome, "worktrees", "ab12", "pay")
  git(home.workdir, "worktree", "add", "-q", "-b", "feat", worktree)
  const inWorktree = await runCodexExec({ home, prompt: "WORKTREE-PROMPT", cwd: worktree })
  const inMain = await runCodexExec({ home, prompt: "MAIN-PROMPT" })
  for (const [name, run] of [
    ["worktree", inWorktree],
    ["main", inMain],
  ] as const) {
    expect(run.exitCode, run.stderr).toBe(0)
    threads[name] = run.threadId!
  }
  const first = async (path: string) => (await readRollout(path))[0]?.payload ?? {}
  meta = {
    worktree: await first(inWorktree.rolloutPaths[0]!),
    main: await first(inMain.rolloutPaths[0]!),
  }
}, 180_000)

afterAll(async () => {
  await home?.dispose()
  await mock?.close()
  if (data !== undefined) rmSync(data, { recursive: true, force: true })
})

const environment = () => ({ env: { CODEX_HOME: home.codexHome }, homeDir: home.root })
const rows = (dataDir: string) =>
  withSqlite(dataDir, (s) =>
    Object.fromEntries(
      (
        s
          .prepare("select session_id, repo_root, repo_root_from, repository_url from sessions")
          .all() as Array<{ session_id: string; repository_url: string | null }>
      ).map(({ session_id, ...rest }) => [session_id, rest]),
    ),
  )

describe("repository identity on real codex rollouts", () => {
  it("codex records the cwd and the origin remote in session_meta.git", () => {
    expect(meta.worktree["cwd"]).toBe(worktree)
    expect(meta.main["cwd"]).toBe(home.workdir)
    for (const m of [meta.main, meta.worktree]) {
      expect(String((m["git"] as Record<string, unknown>)["repository_url"])).toContain(
        "github.com/acme/pay",
      )
    }
  })

  it("places the worktree's session in the main checkout, and scopes find both", async () => {
    const dataDir = join(data, "live")
    await runIndex(dataDir, { environment: environment(), repositoryFiles: nodeRepositoryFiles })
    const placed = { repo_root: home.workdir, repo_root_from: "git" }
    const stored = await rows(dataDir)
    expect(stored[threads.main]).toMatchObject(placed)
    expect(stored[threads.worktree]).toMatchObject(placed)
    // Codex's credentials never reach the index.
    expect(stored[threads.main]!.repository_url).toBe("https://github.com/acme/pay")
    const scoped = await withIndex(dataDir, recentSessions({ limit: 10, scopeCwd: home.workdir }))
    expect(scoped.map((s) => s.sessionId).sort()).toEqual([threads.main, threads.worktree].sort())
  })

  it("places the session of a deleted worktree by its remote", async () => {
    git(home.workdir, "worktree", "remove", "--force", worktree)
    const dataDir = join(data, "after-removal")
    await runIndex(dataDir, { environment: environment(), repositoryFiles: nodeRepositoryFiles })
    const stored = await rows(dataDir)
    expect(stored[threads.main]).toMatchObject({ repo_root: home.workdir, repo_root_from: "git" })
    expect(stored[threads.worktree]).toMatchObject({
      repo_root: home.workdir,
      repo_root_from: "remote",
    })
  })
})

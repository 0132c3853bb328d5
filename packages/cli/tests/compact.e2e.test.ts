// `baton compact …` as a user or an agent's shell runs it, against the REAL codex 0.169.0 daemon:
// schedule-with-handoff from an absolute path (thread id from CODEX_THREAD_ID), status until the
// continuation ran, and the usage errors. Needs `npx tsc -b`.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type {
  CodexDaemon,
  CodexDaemonConnection,
  CodexHome,
  MockResponsesServer,
} from "@baton/testkit"
import {
  createCodexHome,
  handlerReply,
  isCompactionRequest,
  startCodexDaemon,
  startMockResponses,
  textReply,
  userTexts,
} from "@baton/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { runBaton } from "./run-baton.js"

let mock: MockResponsesServer
let home: CodexHome
let daemon: CodexDaemon
let owner: CodexDaemonConnection
let dir = ""
let env: Record<string, string> = {}

beforeAll(async () => {
  mock = await startMockResponses({
    defaultReply: handlerReply((request) =>
      isCompactionRequest(request)
        ? textReply("SUMMARY")
        : textReply("ack", { usage: { inputTokens: 150_000, outputTokens: 10 } }),
    ),
  })
  home = await createCodexHome({ mock })
  daemon = await startCodexDaemon(home)
  owner = await daemon.connect()
  dir = await mkdtemp(join(tmpdir(), "baton-cli-compact-"))
  env = { ...home.env, BATON_JOBS_DIR: join(dir, "jobs") }
}, 120_000)

afterAll(async () => {
  await owner?.close().catch(() => undefined)
  await daemon?.dispose().catch(() => undefined)
  await home?.dispose().catch(() => undefined)
  await mock?.close().catch(() => undefined)
  await rm(dir, { recursive: true, force: true })
}, 60_000)

describe("baton compact (real daemon)", () => {
  test("schedule-with-handoff → resumed, reported by status; usage errors exit 2", async () => {
    const { threadId } = await owner.startThread({ cwd: home.workdir })
    await owner.runTurn(threadId, "step 1")
    const file = join(dir, "handoff.json")
    await writeFile(
      file,
      JSON.stringify({ summary: "done half", nextStep: "CLI-NEXT do the rest", resume: true }),
    )
    const inCodex = { ...env, CODEX_THREAD_ID: threadId }
    const scheduled = await runBaton(["compact", "schedule-with-handoff", file, "--json"], {
      env: inCodex,
    })
    expect(scheduled.code).toBe(0)
    const report = JSON.parse(scheduled.stdout) as { ok: boolean; job: { jobId: string } }
    expect(report).toMatchObject({ ok: true, alreadyScheduled: false, job: { resume: true } })

    const deadline = Date.now() + 60_000
    let status: { status: { current: { status: string } } } | undefined
    while (Date.now() < deadline) {
      const run = await runBaton(["compact", "status", "--json"], { env: inCodex })
      status = JSON.parse(run.stdout) as typeof status
      if (status?.status.current.status === "resumed") break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status?.status.current.status).toBe("resumed")
    const text = await runBaton(["compact", "status", threadId], { env })
    expect(text.stdout).toContain(`job ${report.job.jobId} (#1) resumed`)
    expect(text.stdout).toContain("continuation turn: completed")
    expect(text.stdout).not.toContain("CLI-NEXT")
    const continuations = mock
      .requests()
      .filter((r) => (userTexts(r.body).at(-1) ?? "").includes(report.job.jobId))
    expect(continuations).toHaveLength(1)

    const relative = await runBaton(["compact", "schedule-with-handoff", "handoff.json"], {
      env: inCodex,
    })
    expect(relative.code).toBe(2)
    expect(relative.stderr).toContain("must be an absolute path")
    const noThread = await runBaton(["compact", "schedule"], { env })
    expect(noThread.code).toBe(2)
    expect(noThread.stderr).toContain("CODEX_THREAD_ID")
    const badSetting = await runBaton(["compact", "schedule", threadId, "--headroom", "lots"], {
      env,
    })
    expect(badSetting.code).toBe(2)
    const outOfRange = await runBaton(["compact", "schedule", threadId, "--headroom", "3"], { env })
    expect(outOfRange.code).toBe(2)
    expect(outOfRange.stderr).toContain("--headroom must be between 0 and 1")
  }, 120_000)
})

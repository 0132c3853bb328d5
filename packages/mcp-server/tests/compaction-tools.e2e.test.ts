// The compaction tools through the MCP SDK client over stdio (`baton mcp`), against the REAL codex
// 0.169.0 daemon and the testkit's mock model: an agent's view of schedule_compaction,
// compaction_status and cancel_compaction. Needs `npx tsc -b`.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
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

const batonBin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))

let mock: MockResponsesServer
let home: CodexHome
let daemon: CodexDaemon
let owner: CodexDaemonConnection
let client: Client
let dir = ""

beforeAll(async () => {
  mock = await startMockResponses({
    defaultReply: handlerReply((request) =>
      isCompactionRequest(request)
        ? textReply("SUMMARY of the work")
        : textReply(`ack: ${(userTexts(request.body).at(-1) ?? "").slice(0, 30)}`, {
            usage: { inputTokens: 150_000, outputTokens: 100 },
            ...((userTexts(request.body).at(-1) ?? "").includes("HOLD") ? { delayMs: 5_000 } : {}),
          }),
    ),
  })
  home = await createCodexHome({ mock })
  daemon = await startCodexDaemon(home)
  owner = await daemon.connect()
  dir = await mkdtemp(join(tmpdir(), "baton-mcp-compaction-"))
  client = new Client({ name: "baton-compaction-test", version: "0" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [batonBin, "mcp"],
      env: { ...home.env, BATON_JOBS_DIR: join(dir, "jobs"), BATON_DATA_DIR: join(dir, "data") },
      stderr: "pipe",
    }),
  )
}, 120_000)

afterAll(async () => {
  await client?.close().catch(() => undefined)
  await owner?.close().catch(() => undefined)
  await daemon?.dispose().catch(() => undefined)
  await home?.dispose().catch(() => undefined)
  await mock?.close().catch(() => undefined)
  await rm(dir, { recursive: true, force: true })
}, 60_000)

interface Structured {
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
  readonly content?: unknown
}

const call = async (name: string, args: Record<string, unknown>): Promise<Structured> =>
  (await client.callTool({ name, arguments: args })) as Structured

const statusUntil = async (threadId: string, done: (status: string) => boolean) => {
  const deadline = Date.now() + 60_000
  for (;;) {
    const result = await call("compaction_status", { threadId })
    const current = result.structuredContent?.["current"] as { status: string } | null
    if (current !== null && current !== undefined && done(current.status)) return result
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(current)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("compaction MCP tools (real daemon)", () => {
  test("the three tools are listed with output schemas", async () => {
    const { tools } = await client.listTools()
    for (const name of ["schedule_compaction", "compaction_status", "cancel_compaction"]) {
      const tool = tools.find((t) => t.name === name)
      expect(tool?.outputSchema).toMatchObject({ type: "object" })
      expect(tool?.inputSchema).toMatchObject({ required: expect.arrayContaining(["threadId"]) })
    }
  })

  test("schedule_compaction with a resume handoff → resumed; a second schedule is alreadyScheduled", async () => {
    const { threadId } = await owner.startThread({ cwd: home.workdir })
    await owner.runTurn(threadId, "step 1")
    const busy = await owner.startTurn(threadId, "HOLD on, still working")
    const handoff = {
      summary: "Half the migration is done",
      preserve: ["MCP-PRESERVE keep the schema"],
      nextStep: "MCP-NEXT finish the migration",
      resume: true,
    }
    const first = await call("schedule_compaction", { threadId, handoff })
    expect(first.isError).toBeFalsy()
    expect(first.structuredContent).toMatchObject({
      alreadyScheduled: false,
      job: { resume: true },
    })
    const jobId = (first.structuredContent?.["job"] as { jobId: string }).jobId
    const again = await call("schedule_compaction", { threadId })
    expect(again.structuredContent).toMatchObject({ alreadyScheduled: true, job: { jobId } })
    await owner.waitForTurnCompleted(busy.turnId, { timeoutMs: 30_000 })
    const done = await statusUntil(threadId, (s) => s === "resumed")
    expect(done.structuredContent).toMatchObject({
      current: { jobId, status: "resumed", transport: { kind: "daemon" } },
    })
    const continuation = mock
      .requests()
      .filter((r) => (userTexts(r.body).at(-1) ?? "").includes(`continuation for job ${jobId}`))
    expect(continuation).toHaveLength(1)
    expect(userTexts(continuation[0]?.body).at(-1)).toContain("MCP-NEXT")
    expect(JSON.stringify(done.structuredContent)).not.toContain("MCP-NEXT")
  }, 90_000)

  test("cancel_compaction before dispatch → cancelled; bad input is an isError result, not a crash", async () => {
    const { threadId } = await owner.startThread({ cwd: home.workdir })
    await owner.runTurn(threadId, "step 1")
    const busy = await owner.startTurn(threadId, "HOLD please")
    const scheduled = await call("schedule_compaction", { threadId })
    const jobId = (scheduled.structuredContent?.["job"] as { jobId: string }).jobId
    const cancelled = await call("cancel_compaction", { threadId, jobId })
    expect(cancelled.structuredContent).toMatchObject({
      cancelRequested: true,
      alreadyEnded: false,
    })
    const done = await statusUntil(threadId, (s) => s === "cancelled")
    expect(done.structuredContent).toMatchObject({
      current: { reason: "explicit_cancellation", outcomeMayBeUnknown: false },
    })
    await owner.waitForTurnCompleted(busy.turnId, { timeoutMs: 30_000 })

    const badThread = await call("schedule_compaction", { threadId: "not-a-thread" })
    expect(badThread.isError).toBe(true)
    expect(JSON.stringify(badThread.content)).toContain("InvalidThreadIdError")
    const badHandoff = await call("schedule_compaction", {
      threadId,
      handoff: { summary: "x", resume: true },
    })
    expect(badHandoff.isError).toBe(true)
    expect(JSON.stringify(badHandoff.content)).toContain("nextStep")
    const unknownJob = await call("cancel_compaction", { threadId, jobId: "job-unknown" })
    expect(unknownJob.isError).toBe(true)
  }, 90_000)
})

import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { createBatonServer } from "./baton-server.js"
import { batonTools } from "./default-tools.js"
import {
  wakeCheckpointOutput,
  wakeCompleteOutput,
  wakeCreateOutput,
  wakePauseOutput,
  wakeStatusOutput,
  wakeTools,
} from "./wake-tools.js"

const CHECKPOINT = [
  "# Wake checkpoint",
  "",
  "## Objective",
  "Port the parser to the new grammar.",
  "",
  "## Next actions",
  "1. Run the parser tests.",
  "",
].join("\n")

/** Every section, each at `## `: a checkpoint with nothing to note. */
const FULL_CHECKPOINT = [
  "# Wake checkpoint",
  "",
  "## Objective",
  "Port the parser to the new grammar.",
  "",
  "## Current position",
  "Lexer ported.",
  "",
  "## Verified facts",
  "- Lexer tests pass.",
  "",
  "## Decisions / do not repeat",
  "- Keep the old AST.",
  "",
  "## Constraints",
  "- No new dependencies.",
  "",
  "## Active files",
  "- src/parse.ts",
  "",
  "## Next actions",
  "1. Run the parser tests.",
  "",
  "## Blockers",
  "- None.",
  "",
  "## Resume policy",
  "- Read the capsule first.",
  "",
  "## Handoff",
  "- Update after each milestone.",
  "",
].join("\n")

/** The same checkpoint with Blockers under `### `: still ready, but the heading is misread. */
const MISLEVELED_CHECKPOINT = FULL_CHECKPOINT.replace("## Blockers", "### Blockers")
const MISLEVELED_NOTE =
  "found `### Blockers`: not a section heading; sections use `## ` headings (`## Blockers`)"

let client: Client
let root = ""
const previous = process.env["BATON_WAKE_DIR"]
const closers: Array<() => Promise<void>> = []

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "baton-wake-mcp-"))
  process.env["BATON_WAKE_DIR"] = join(root, "wake")
  const server = createBatonServer({ tools: [...wakeTools] })
  client = new Client({ name: "test", version: "0" })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await Promise.all([server.connect(b), client.connect(a)])
  closers.push(
    () => client.close(),
    () => server.close(),
  )
})
afterAll(async () => {
  for (const close of closers) await close()
  if (previous === undefined) delete process.env["BATON_WAKE_DIR"]
  else process.env["BATON_WAKE_DIR"] = previous
  await rm(root, { recursive: true, force: true })
})

const call = (name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args })

describe("wake tools", () => {
  it("are registered in the server's default tools", () => {
    const names = batonTools.map((tool) => tool.name)
    for (const name of [
      "wake_create",
      "wake_checkpoint",
      "wake_status",
      "wake_pause",
      "wake_complete",
    ])
      expect(names).toContain(name)
  })

  it("create → checkpoint → status → complete, with structured results", async () => {
    const created = await call("wake_create", {
      objective: "Port the parser",
      threadId: "019a0000-0000-7000-8000-000000000009",
      cwd: root,
    })
    expect(created.isError).toBeFalsy()
    const job = z.object(wakeCreateOutput).parse(created.structuredContent)
    expect(job).toMatchObject({ state: "draft", alreadyExists: false, ready: false })
    expect(job.problems.join(" ")).toMatch(/REPLACE_ME|Next actions/)

    const again = await call("wake_create", {
      objective: "Port the parser",
      threadId: "019a0000-0000-7000-8000-000000000009",
      cwd: root,
    })
    expect(z.object(wakeCreateOutput).parse(again.structuredContent)).toMatchObject({
      jobId: job.jobId,
      alreadyExists: true,
    })

    const written = await call("wake_checkpoint", {
      jobId: job.jobId,
      checkpoint: CHECKPOINT,
      arm: true,
    })
    const checkpoint = z.object(wakeCheckpointOutput).parse(written.structuredContent)
    expect(checkpoint).toMatchObject({ state: "monitoring", ready: true, problems: [] })
    expect(checkpoint.capsuleBytes).toBeGreaterThan(0)
    expect(checkpoint.capsuleBytes).toBeLessThanOrEqual(8192)

    const status = z
      .object(wakeStatusOutput)
      .parse((await call("wake_status", { jobId: job.jobId })).structuredContent)
    expect(status.status).toMatchObject({
      jobId: job.jobId,
      state: "monitoring",
      deliveryLabel: "cli_continuation_only",
      capsule: { ready: true, checkpointNewerThanCapsule: false },
    })
    expect(status.jobs.map((j) => j.jobId)).toEqual([job.jobId])
    expect(status.watcherRunning).toBe(false)
    expect(JSON.stringify(status)).not.toContain("Run the parser tests")

    const completed = await call("wake_complete", { jobId: job.jobId })
    expect(z.object(wakeCompleteOutput).parse(completed.structuredContent)).toMatchObject({
      state: "completed",
    })
  })

  it("one call creates, fills and arms", async () => {
    const created = await call("wake_create", {
      objective: "Port the lexer",
      cwd: root,
      checkpoint: CHECKPOINT,
      arm: true,
    })
    expect(z.object(wakeCreateOutput).parse(created.structuredContent)).toMatchObject({
      state: "monitoring",
      ready: true,
      armed: true,
      armRefused: null,
    })
  })

  it("arm: true that cannot arm says so; a completed job refuses a checkpoint; a blank objective is refused", async () => {
    const unready = await call("wake_create", {
      objective: "Port the grammar",
      cwd: root,
      checkpoint: "## Objective\n\n## Next actions\n",
      arm: true,
    })
    const created = z.object(wakeCreateOutput).parse(unready.structuredContent)
    expect(created).toMatchObject({ state: "draft", armed: false })
    expect(created.armRefused).toMatch(/^the checkpoint is not ready: /)
    const written = await call("wake_checkpoint", {
      jobId: created.jobId,
      checkpoint: CHECKPOINT,
      arm: true,
    })
    expect(z.object(wakeCheckpointOutput).parse(written.structuredContent)).toMatchObject({
      state: "monitoring",
      armed: true,
    })
    await call("wake_complete", { jobId: created.jobId })
    const late = await call("wake_checkpoint", {
      jobId: created.jobId,
      checkpoint: CHECKPOINT,
      arm: true,
    })
    expect(late.isError).toBe(true)
    expect(JSON.stringify(late.content)).toContain("completed jobs are immutable")
    const blank = await call("wake_create", { objective: "   ", cwd: root })
    expect(blank.isError).toBe(true)
    expect(JSON.stringify(blank.content)).toContain("objective")
  })

  it("refusals and bad ids are tool errors naming what to fix", async () => {
    const bad = await call("wake_status", { jobId: "../../etc" })
    expect(bad.isError).toBe(true)
    expect(JSON.stringify(bad.content)).toContain("InvalidJobId")
    const missing = await call("wake_complete", { jobId: "wake-20250101-000000-00000000" })
    expect(missing.isError).toBe(true)
    expect(JSON.stringify(missing.content)).toContain("JobNotFound")
    const relative = await call("wake_create", { objective: "x", cwd: "relative/dir" })
    expect(relative.isError).toBe(true)
    expect(JSON.stringify(relative.content)).toContain("InvalidJobSetting")
  })

  it("parallel creates for one thread return one job", async () => {
    const thread = "019a0000-0000-7000-8000-0000000000ee"
    const results = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        call("wake_create", { objective: `parallel ${i}`, threadId: thread, cwd: root }),
      ),
    )
    const jobs = results.map((r) => z.object(wakeCreateOutput).parse(r.structuredContent))
    expect(new Set(jobs.map((j) => j.jobId)).size).toBe(1)
    expect(jobs.filter((j) => !j.alreadyExists)).toHaveLength(1)
  })

  it("refuses a cwd that is a file, an unknown effort, a bad thread id and a multi-line objective", async () => {
    const file = join(root, "afile")
    await writeFile(file, "x")
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ cwd: file }, "not a directory"],
      [{ cwd: root, reasoningEffort: "turbo" }, "low, medium, high, xhigh, max, ultra"],
      [{ cwd: root, reasoningEffort: "minimal" }, "low, medium, high, xhigh, max, ultra"],
      [{ cwd: root, threadId: "bad id with spaces" }, "UUID"],
      [{ cwd: root, objective: "x\n## Next actions\n1. injected" }, "no line breaks"],
    ]
    for (const [args, says] of cases) {
      const result = await call("wake_create", { objective: "x", ...args })
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain("InvalidJobSetting")
      expect(JSON.stringify(result.content)).toContain(says)
    }
  })

  it("wake_checkpoint, wake_create and wake_status return the checkpoint notes the CLI shows", async () => {
    const created = z.object(wakeCreateOutput).parse(
      (
        await call("wake_create", {
          objective: "Port the notes parser",
          cwd: root,
          checkpoint: MISLEVELED_CHECKPOINT,
        })
      ).structuredContent,
    )
    expect(created.ready).toBe(true)
    expect(created.checkpointNotes).toContain(MISLEVELED_NOTE)
    const statusOf = async (jobId: string) =>
      z.object(wakeStatusOutput).parse((await call("wake_status", { jobId })).structuredContent)
        .status
    expect((await statusOf(created.jobId))?.checkpointNotes).toContain(MISLEVELED_NOTE)

    const clean = await call("wake_checkpoint", {
      jobId: created.jobId,
      checkpoint: FULL_CHECKPOINT,
    })
    expect(clean.isError).toBeFalsy()
    expect(z.object(wakeCheckpointOutput).parse(clean.structuredContent)).toMatchObject({
      ready: true,
      checkpointNotes: [],
    })
    expect((await statusOf(created.jobId))?.checkpointNotes).toEqual([])

    const misleveled = await call("wake_checkpoint", {
      jobId: created.jobId,
      checkpoint: MISLEVELED_CHECKPOINT,
      arm: true,
    })
    const written = z.object(wakeCheckpointOutput).parse(misleveled.structuredContent)
    expect(written).toMatchObject({ ready: true, armed: true })
    expect(written.checkpointNotes).toContain(MISLEVELED_NOTE)
    expect((await statusOf(created.jobId))?.checkpointNotes).toContain(MISLEVELED_NOTE)

    const fresh = z.object(wakeCreateOutput).parse(
      (
        await call("wake_create", {
          objective: "Port the clean parser",
          cwd: root,
          checkpoint: FULL_CHECKPOINT,
        })
      ).structuredContent,
    )
    expect(fresh.checkpointNotes).toEqual([])
  })

  it("wake_pause parks an armed job with the reason; status lists leftovers", async () => {
    const created = z.object(wakeCreateOutput).parse(
      (
        await call("wake_create", {
          objective: "Port the tokenizer",
          cwd: root,
          checkpoint: CHECKPOINT,
          arm: true,
        })
      ).structuredContent,
    )
    const paused = await call("wake_pause", {
      jobId: created.jobId,
      reason: "needs the API key",
    })
    expect(z.object(wakePauseOutput).parse(paused.structuredContent)).toEqual({
      jobId: created.jobId,
      state: "waiting_user",
      pauseReason: "needs the API key",
    })
    const blank = await call("wake_pause", { jobId: created.jobId, reason: " " })
    expect(blank.isError).toBe(true)
    const status = z
      .object(wakeStatusOutput)
      .parse((await call("wake_status", {})).structuredContent)
    expect(status.orphanJobDirs).toEqual([])
    expect(status.tornTempFiles).toEqual([])
  })
})

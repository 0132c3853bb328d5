// Compaction of a thread loaded nowhere (an earlier `codex exec` session): no daemon, no VS Code,
// so Baton's worker starts its own private `codex app-server` (stdio) from the REAL codex 0.169.0,
// resumes the thread, compacts it and continues it — then stops that server.
import type { CodexHome, MockResponsesServer } from "@baton/testkit"
import {
  createCodexHome,
  findProcessesByEnv,
  handlerReply,
  runCodexExec,
  startMockResponses,
  userTexts,
} from "@baton/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { BatonSide } from "./compaction-harness.js"
import {
  batonSide,
  compactionRequests,
  continuationRequests,
  handoff,
  scriptedReply,
  waitForExit,
} from "./compaction-harness.js"

let mock: MockResponsesServer
let home: CodexHome
let baton: BatonSide

beforeAll(async () => {
  mock = await startMockResponses({ defaultReply: handlerReply(scriptedReply) })
  home = await createCodexHome({ mock })
  baton = await batonSide(home)
}, 120_000)

afterAll(async () => {
  await home?.dispose().catch(() => undefined)
  await mock?.close().catch(() => undefined)
  await baton?.dispose().catch(() => undefined)
}, 60_000)

describe("compaction over a private stdio app-server (real codex 0.169.0)", () => {
  test("resume: true on an exec thread: stdio chosen and recorded, one compaction, one continuation, server stopped", async () => {
    const exec = await runCodexExec({ home, prompt: "start the migration" })
    expect(exec.exitCode).toBe(0)
    const threadId = exec.threadId ?? ""
    const given = handoff(true)
    const scheduled = await baton.schedule(threadId, { handoff: given })
    expect(scheduled.job.transport?.kind).toBe("stdio")
    expect(scheduled.job.transport?.detail).toContain("daemon: unavailable")

    const done = await baton.waitForJob(
      threadId,
      scheduled.job.jobId,
      (j) => j.status === "resumed",
    )
    expect(done.job).toMatchObject({ continuationOutcome: "completed", outcomeMayBeUnknown: false })
    const all = mock.requests()
    expect(compactionRequests(all, threadId)).toHaveLength(1)
    const continuation = continuationRequests(all, threadId, scheduled.job.jobId)
    expect(continuation).toHaveLength(1)
    expect(userTexts(continuation[0]?.body).at(-1)).toContain(given.nextStep)

    const status = await baton.status(threadId)
    expect(status.current?.metrics.tokensAfter).toBeGreaterThan(0)
    expect(status.current?.metrics.reclaimedFraction).toBeGreaterThan(0)

    // The worker exits once the continuation turn ended, and takes its app-server with it.
    await waitForExit(scheduled.worker.pid ?? -1)
    const deadline = Date.now() + 10_000
    while (
      (await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`)).length > 0 &&
      Date.now() < deadline
    )
      await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`)).toEqual([])
    expect(mock.outboundAttempts()).toEqual([])
  }, 120_000)

  test("resume: false on an exec thread: compacted, no continuation", async () => {
    const exec = await runCodexExec({ home, prompt: "another task" })
    const threadId = exec.threadId ?? ""
    const { job } = await baton.schedule(threadId, { handoff: handoff(false) })
    const done = await baton.waitForJob(threadId, job.jobId, (j) => j.status === "completed")
    expect(done.job).toMatchObject({ reason: "compacted", transport: { kind: "stdio" } })
    expect(compactionRequests(mock.requests(), threadId)).toHaveLength(1)
    expect(continuationRequests(mock.requests(), threadId, job.jobId)).toHaveLength(0)
  }, 120_000)
})

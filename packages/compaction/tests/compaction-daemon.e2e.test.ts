// Compaction jobs against the REAL codex 0.169.0 app-server daemon and the testkit's mock model.
// The "user" drives threads through their own daemon client; Baton schedules through its public
// API, which launches real detached worker processes that reach the thread over the daemon socket.
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import { handoffDigest } from "@baton/handoff"
import { isTerminalStatus } from "@baton/compaction"
import { usageLimitReply, userTexts } from "@baton/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { CodexDaemonConnection, CodexHome, MockResponsesServer } from "@baton/testkit"
import type { BatonSide, DaemonRig } from "./compaction-harness.js"
import {
  compactionRequests,
  CONTEXT_TOKENS,
  continuationRequests,
  handoff,
  requestsOf,
  startDaemonRig,
  waitForExit,
} from "./compaction-harness.js"

let rig: DaemonRig
let mock: MockResponsesServer
let home: CodexHome
let owner: CodexDaemonConnection
let baton: BatonSide

beforeAll(async () => {
  rig = await startDaemonRig()
  ;({ mock, home, owner, baton } = rig)
}, 120_000)

afterAll(() => rig?.dispose(), 60_000)

/** A thread with `turns` finished turns, loaded in the daemon by its owner. */
const threadWithTurns = async (turns: number, marker = "work"): Promise<string> => {
  const { threadId } = await owner.startThread({ cwd: home.workdir })
  for (let i = 1; i <= turns; i++) await owner.runTurn(threadId, `${marker} step ${i}`)
  return threadId
}

describe("compaction over the daemon (real codex 0.169.0)", () => {
  test("resume: true → one compaction, then exactly one continuation carrying the handoff; metrics from real token usage", async () => {
    const threadId = await threadWithTurns(3)
    const given = handoff(true)
    const scheduled = await baton.schedule(threadId, { handoff: given })
    expect(scheduled).toMatchObject({
      alreadyScheduled: false,
      job: { resume: true, terminal: false },
      worker: { state: "running" },
    })
    const jobId = scheduled.job.jobId

    const done = await baton.waitForJob(threadId, jobId, (j) => j.status === "resumed")
    const job = done.job
    expect(job).toMatchObject({
      reason: "continued",
      continuationOutcome: "completed",
      outcomeMayBeUnknown: false,
      resumeSkipped: null,
      transport: { kind: "daemon" },
    })
    expect(job.transport?.detail).toContain("thread/loaded/list")

    const all = mock.requests()
    expect(compactionRequests(all, threadId)).toHaveLength(1)
    const continuations = continuationRequests(all, threadId, jobId)
    expect(continuations).toHaveLength(1)
    const text = userTexts(continuations[0]?.body).at(-1) ?? ""
    expect(text).toContain(jobId)
    expect(text).toContain(given.nextStep)
    expect(text).toContain(given.preserve[0])
    expect(text).toContain(path.join(baton.jobsDir, threadId, `${jobId}.handoff.json`))
    // The compaction request came after the last user turn ended (the thread was idle).
    const compaction = compactionRequests(all, threadId)[0]
    const userTurns = requestsOf(all, threadId).filter((r) => r.seq < (compaction?.seq ?? 0))
    expect(userTurns.length).toBeGreaterThanOrEqual(3)

    // Metrics from the real token usage: before = the last turn's context, after = Codex's estimate.
    const status = await baton.status(threadId)
    const m = status.current?.metrics
    expect(m?.tokensBefore).toBe(CONTEXT_TOKENS + 100)
    expect(m?.tokensAfter).toBeGreaterThan(0)
    expect(m?.tokensAfter).toBeLessThan(CONTEXT_TOKENS)
    expect(m?.reclaimedFraction).toBeGreaterThan(0.5)
    expect(m?.compactionDurationMs).toBeGreaterThanOrEqual(0)
    expect(m?.continuationDelayMs).toBeGreaterThanOrEqual(0)
    expect(status.history.at(-1)).toMatchObject({ jobId, status: "resumed" })
    expect(status.worker.state).toBe("none")

    // The handoff file is intact and bound; the record and the log carry no handoff text.
    const stored = await readFile(
      path.join(baton.jobsDir, threadId, `${jobId}.handoff.json`),
      "utf8",
    )
    expect(JSON.parse(stored)).toMatchObject({ threadId, jobId, handoff: given })
    expect(job.handoffDigest).toMatch(/^[0-9a-f]{64}$/)
    expect(handoffDigest(given)).toMatch(/^[0-9a-f]{64}$/)
    const log = await baton.readEvents(threadId, jobId)
    const record = await readFile(path.join(baton.jobsDir, threadId, `${jobId}.job.json`), "utf8")
    for (const secretish of ["NEXT-STEP", "PRESERVE-1", "Ported the parser"]) {
      expect(log).not.toContain(secretish)
      expect(record).not.toContain(secretish)
    }
    expect(log).toContain(`"messageType":"compact"`)
    expect(log).toContain(`"messageType":"startTurn/accepted"`)
    expect(mock.outboundAttempts()).toEqual([])
  }, 90_000)

  test("a thread whose last turn hit the usage limit (systemError, nothing running) is compacted and continued", async () => {
    const threadId = await threadWithTurns(1, "quota")
    mock.enqueue(usageLimitReply({ resetsAt: Math.floor(Date.now() / 1000) + 600 }))
    const limited = await owner.runTurn(threadId, "quota step 2")
    expect(limited.status).toBe("failed")
    const { job } = await baton.schedule(threadId, { handoff: handoff(true) })
    // Before, the job waited for an idle that never came (until `expired`, an hour later).
    const done = await baton.waitForJob(
      threadId,
      job.jobId,
      (j) => isTerminalStatus(j.status),
      45_000,
    )
    expect(done.job).toMatchObject({ status: "resumed", reason: "continued" })
    expect(compactionRequests(mock.requests(), threadId)).toHaveLength(1)
    expect(continuationRequests(mock.requests(), threadId, job.jobId)).toHaveLength(1)
  }, 90_000)

  test("resume: false → compacted, the handoff stored, no continuation", async () => {
    const threadId = await threadWithTurns(2)
    const { job } = await baton.schedule(threadId, { handoff: handoff(false) })
    const done = await baton.waitForJob(threadId, job.jobId, (j) => j.status === "completed")
    expect(done.job).toMatchObject({ reason: "compacted", resume: false, resumeSkipped: null })
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(compactionRequests(mock.requests(), threadId)).toHaveLength(1)
    expect(continuationRequests(mock.requests(), threadId, job.jobId)).toHaveLength(0)
  }, 90_000)

  test("low headroom after compaction (a huge summary) → completed, continuation skipped with the reason", async () => {
    const threadId = await threadWithTurns(2, "BIG-SUMMARY")
    const { job } = await baton.schedule(threadId, { handoff: handoff(true) })
    const done = await baton.waitForJob(threadId, job.jobId, (j) => j.status === "completed")
    expect(done.job).toMatchObject({
      reason: "compacted",
      resumeSkipped: "insufficient_headroom",
    })
    expect(["above_headroom_threshold", "stale_or_unreclaimed_token_telemetry"]).toContain(
      done.job.resumeSkipReason,
    )
    expect(done.job.detail).toContain("continuation skipped")
    expect(continuationRequests(mock.requests(), threadId, job.jobId)).toHaveLength(0)
  }, 90_000)

  test("scheduling twice returns the same job; cancel before dispatch sends nothing", async () => {
    const threadId = await threadWithTurns(1)
    const busy = await owner.startTurn(threadId, "HOLD-6000 a long tool run")
    const first = await baton.schedule(threadId, { handoff: handoff(true) })
    const second = await baton.schedule(threadId, { handoff: null })
    expect(second.alreadyScheduled).toBe(true)
    expect(second.job.jobId).toBe(first.job.jobId)
    await baton.waitForJob(threadId, first.job.jobId, (j) => j.status === "waiting_for_idle")
    const cancel = await baton.cancel(threadId, first.job.jobId)
    expect(cancel.cancelRequested).toBe(true)
    const done = await baton.waitForJob(threadId, first.job.jobId, (j) => j.status === "cancelled")
    expect(done.job).toMatchObject({ reason: "explicit_cancellation", outcomeMayBeUnknown: false })
    await owner.waitForTurnCompleted(busy.turnId, { timeoutMs: 30_000 })
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(compactionRequests(mock.requests(), threadId)).toHaveLength(0)
    if (first.worker.pid !== null) await waitForExit(first.worker.pid)
  }, 90_000)

  test("new user input while waiting for idle → cancelled (new_user_input), nothing sent", async () => {
    const threadId = await threadWithTurns(1)
    const busy = await owner.startTurn(threadId, "HOLD-1500 still working")
    const { job } = await baton.schedule(threadId, {
      handoff: handoff(true),
      settings: { idleDebounceMs: 4_000 },
    })
    // Scheduling returned after the worker anchored the job on the thread's user boundary.
    expect((await baton.readJob(threadId, job.jobId)).job.userFingerprint).toMatch(/^[0-9a-f]{64}$/)
    await owner.waitForTurnCompleted(busy.turnId, { timeoutMs: 30_000 })
    // The user types the next instruction before Baton's debounce elapses.
    await owner.runTurn(threadId, "actually, also rename the module")
    const done = await baton.waitForJob(threadId, job.jobId, (j) => j.status === "cancelled")
    expect(done.job.reason).toBe("new_user_input")
    expect(done.job.outcomeMayBeUnknown).toBe(false)
    expect(compactionRequests(mock.requests(), threadId)).toHaveLength(0)
  }, 90_000)
})

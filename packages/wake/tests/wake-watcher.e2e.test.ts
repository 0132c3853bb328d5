// Real Codex (0.169.0) end to end: the original session runs `codex exec` against the testkit's
// mock model and creates, fills and arms its wake job through the `baton` CLI in Codex's shell;
// the real `baton wake watch` reads quota through a real `codex app-server` signed in with a
// simulated ChatGPT account (the mock answers the backend usage call), tails the rollout, and
// launches the continuation as a real `codex exec` whose function call runs `baton wake complete`.
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { handlerReply, runCodexExec, textReply, usageLimitReply } from "@baton/testkit"
import type { RecordedRequest } from "@baton/testkit"
import { CAPSULE_MARKER } from "@baton/wake"
import { afterEach, describe, expect, it } from "vitest"
import { READY_CHECKPOINT, runMetas, shell, usageAnswer, waitFor, wakeRig } from "./wake-rig.js"
import type { WakeRig } from "./wake-rig.js"

let rig: WakeRig | undefined
afterEach(async () => {
  await rig?.dispose()
  rig = undefined
})

const bodyText = (request: RecordedRequest) => JSON.stringify(request.body)

describe("wake watcher with real Codex", () => {
  it("climbs the bands (seal), blocks on a 429 usage limit, launches within 5 s of the reset, and the continuation completes the job", async () => {
    rig = await wakeRig({ initialUsage: true })
    const { mock, home } = rig
    const watcher = rig.startWatcher()
    await watcher.waitForEvent((e) => e.kind === "started")
    await import("node:fs/promises").then((fs) =>
      fs.writeFile(join(home.workdir, "checkpoint-draft.md"), READY_CHECKPOINT),
    )
    let jobId = ""
    mock.enqueue(
      shell('baton wake create --objective "Write hello.txt" --json', { usedPercent: 40 }),
      shell("baton wake checkpoint --file checkpoint-draft.md --json", { usedPercent: 45 }),
      shell("baton wake arm --json", { usedPercent: 70 }),
      shell("echo step-1", { usedPercent: 85 }),
      shell("echo step-2", { usedPercent: 92 }),
      shell("echo step-3", { usedPercent: 96 }),
      handlerReply(async () => {
        // The watcher has seen the climb before the account runs out.
        jobId = (await rig!.jobIds())[0] ?? ""
        await waitFor("pressure final", async () =>
          (await rig!.readJob(jobId)).pressure === "final" ? true : undefined,
        )
        mock.setWhamUsage(usageAnswer(false))
        return usageLimitReply({ resetsAt: Math.floor(Date.now() / 1000) + 600 })
      }),
    )
    const session = await runCodexExec({
      home,
      prompt: "Write hello.txt; keep a wake job so the work survives the quota window.",
      sandbox: "workspace-write",
      args: ["--add-dir", rig.wakeDir],
      env: rig.env,
      timeoutMs: 120_000,
    })
    expect(session.exitCode).toBe(1)
    expect(session.events.some((e) => e.type === "turn.failed")).toBe(true)
    const job = await waitFor("quota_waiting", async () => {
      const j = await rig!.readJob(jobId)
      return j.state === "quota_waiting" ? j : undefined
    })
    expect(job.originalThreadId).toBe(session.threadId)
    // Bands climbed one by one, the capsule was sealed once at ≥ 90 %, the agent was asked to checkpoint.
    const bands = watcher
      .events()
      .filter((e) => e.kind === "transition" && e["event"] === "PressureObserved")
      .map((e) => e["pressure"])
    expect(bands.filter((b, i) => b !== bands[i - 1])).toEqual([
      "normal",
      "prepare",
      "high",
      "final",
    ])
    expect(watcher.events().filter((e) => e.kind === "sealed")).toHaveLength(1)
    expect(job.seal).not.toBeNull()
    const sealed = await readFile(
      join(rig.wakeDir, "jobs", jobId, "sealed", job.seal!.file),
      "utf8",
    )
    expect(sealed.startsWith(CAPSULE_MARKER)).toBe(true)
    expect(job.checkpointRequest).toMatchObject({ band: "prepare", delivered: false })

    // Waiting: backend reads go on, the model is never called.
    const modelRequests = mock.requests().length
    const usageReads = () =>
      mock.backendRequests().filter((r) => r.path.endsWith("/wham/usage")).length
    const readsBefore = usageReads()
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect(mock.requests()).toHaveLength(modelRequests)
    expect(usageReads()).toBeGreaterThan(readsBefore)
    expect((await rig.readJob(jobId)).state).toBe("quota_waiting")

    // The reset: the continuation starts and its request carries the capsule.
    mock.enqueue(
      handlerReply(() => shell(`baton wake complete ${jobId} --json`)),
      textReply("Done: hello.txt written and the job is complete."),
    )
    const resetAt = Date.now()
    mock.setWhamUsage(usageAnswer(true))
    const requests = await mock.waitForRequests(modelRequests + 1, 15_000)
    const first = requests[modelRequests]!
    expect(first.receivedAt - resetAt).toBeLessThan(5_000)
    expect(bodyText(first)).toContain("WAKE_MEMORY_CAPSULE_V1")
    expect(bodyText(first)).toContain(`Continue Baton wake job ${jobId}`)
    expect(bodyText(first)).toContain("Write hello.txt containing the word hi.")
    const done = await waitFor("completed", async () => {
      const j = await rig!.readJob(jobId)
      return j.state === "completed" ? j : undefined
    })
    expect(done.generation).toBe(1)
    const lastRun = await waitFor("the run's end recorded", async () => {
      const j = await rig!.readJob(jobId)
      return j.lastRun ?? undefined
    })
    expect(lastRun).toMatchObject({ generation: 1, failure: "none", exitCode: 0 })
    const metas = await runMetas(rig.wakeDir, jobId)
    expect(metas).toHaveLength(1)
    expect(metas[0]).toMatchObject({ label: "cli_continuation", mode: "new_thread", exitCode: 0 })
    expect(mock.outboundAttempts()).toEqual([])
  })
})

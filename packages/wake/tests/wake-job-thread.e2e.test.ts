// Real Codex (0.169.0) end to end, `job_thread` delivery: the job's first continuation is a new
// `codex exec` thread (the job has no thread of its own yet) and that thread becomes the job's
// continuation thread; the continuation runs out of quota (a 429 usage limit), the job waits for
// the next window, and after the reset the second continuation is `codex exec resume <that
// thread>`: the same conversation (the mock sees the same `thread-id` and the first
// continuation's turn in the request history), and it completes the job.
import {
  functionCallOutputs,
  handlerReply,
  textReply,
  usageLimitReply,
  userTexts,
} from "@baton/testkit"
import type { RecordedRequest } from "@baton/testkit"
import { CAPSULE_BEGIN } from "@baton/wake"
import { afterEach, describe, expect, it } from "vitest"
import { runMetas, shell, usageAnswer, waitFor, wakeRig } from "./wake-rig.js"
import type { WakeRig } from "./wake-rig.js"

/** The job's original session (provenance only: job_thread never resumes it). */
const THREAD = "019a1111-2222-7333-8444-555566667777"

let rig: WakeRig | undefined
afterEach(async () => {
  await rig?.dispose()
  rig = undefined
})

const stateIs = (jobId: string, state: string) => async () => {
  const job = await rig!.readJob(jobId)
  return job.state === state ? job : undefined
}

/** The job's state, last error, run and last run, for a timeout message. */
const seen = (jobId: string) => async () => {
  const job = await rig!.readJob(jobId)
  return JSON.stringify({
    state: job.state,
    lastError: job.lastError,
    run: job.run,
    lastRun: job.lastRun ?? null,
    continuationThreadId: job.continuationThreadId ?? null,
  })
}

const lastUserText = (request: RecordedRequest) => userTexts(request.body).at(-1) ?? ""

describe("wake job_thread delivery with real Codex", () => {
  it("the second quota window's continuation resumes the first continuation's thread (same thread id and history) and completes the job", async () => {
    rig = await wakeRig({ initialUsage: false })
    const jobId = await rig.armedJob(THREAD, ["--delivery", "job_thread"])
    expect((await rig.readJob(jobId)).delivery).toBe("job_thread")
    const watcher = rig.startWatcher()
    await waitFor("quota_waiting", stateIs(jobId, "quota_waiting"), 30_000, seen(jobId))

    // Window 1: the first continuation does one step, then the account runs out (429).
    let resetsAt = 0
    rig.mock.enqueue(
      shell("echo first-step-done"),
      handlerReply(() => {
        rig!.mock.setWhamUsage(usageAnswer(false))
        resetsAt = Math.floor(Date.now() / 1000) + 600
        return usageLimitReply({ resetsAt })
      }),
    )
    rig.mock.setWhamUsage(usageAnswer(true))
    const firstEnd = await waitFor(
      "the first continuation ended by the usage limit",
      async () => {
        const job = await rig!.readJob(jobId)
        return job.state === "quota_waiting" && job.lastRun?.generation === 1 ? job : undefined
      },
      45_000,
      seen(jobId),
    )
    expect(firstEnd.lastRun).toMatchObject({
      generation: 1,
      mode: "new_thread",
      failure: "usage_limit",
    })
    expect(firstEnd.windows).toBe(2)
    // The run's own 429 holds the next launch until its reset.
    expect(firstEnd.cooldownUntil).toBe(resetsAt * 1000)
    const jobThread = firstEnd.continuationThreadId ?? null
    expect(jobThread).not.toBeNull()
    expect(jobThread).not.toBe(THREAD)
    expect(firstEnd.lastRun!.threadId).toBe(jobThread)
    const firstRequests = rig.mock.requests()
    expect(firstRequests).toHaveLength(2)
    // The mock saw the first continuation in the thread the job recorded.
    for (const request of firstRequests) expect(request.headers["thread-id"]).toBe(jobThread)
    expect(lastUserText(firstRequests[0]!)).toContain(
      `Continue Baton wake job ${jobId} (continuation 1).`,
    )

    // Window 2: nothing runs while blocked; after the reset the job's own thread is resumed.
    // Skip the ten minutes through the store (the cooldown itself is asserted above).
    await rig.modifyJob(jobId, (job) => ({ ...job, cooldownUntil: Date.now() }))
    rig.mock.enqueue(
      handlerReply(() => shell(`baton wake complete ${jobId} --json`)),
      textReply("Done: hello.txt written and the job is complete."),
    )
    rig.mock.setWhamUsage(usageAnswer(true))
    const requests = await rig.mock.waitForRequests(3, 30_000)
    const resumed = requests[2]!
    expect(resumed.headers["thread-id"]).toBe(jobThread)
    const texts = userTexts(resumed.body)
    // The first continuation's turn is in the history, then the second continuation's prompt.
    const firstPrompt = texts.findIndex((t) =>
      t.includes(`Continue Baton wake job ${jobId} (continuation 1).`),
    )
    const secondPrompt = texts.findIndex((t) =>
      t.includes(`Continue Baton wake job ${jobId} (continuation 2).`),
    )
    expect(firstPrompt).toBeGreaterThanOrEqual(0)
    expect(secondPrompt).toBeGreaterThan(firstPrompt)
    expect(JSON.stringify(functionCallOutputs(resumed.body))).toContain("first-step-done")
    const prompt = lastUserText(resumed)
    expect(prompt).toContain("This resumes the job's own continuation thread")
    expect(prompt).toContain(CAPSULE_BEGIN)

    const done = await waitFor("completed", stateIs(jobId, "completed"), 30_000, seen(jobId))
    expect(done.generation).toBe(2)
    const lastRun = await waitFor(
      "the second run's end recorded",
      async () => {
        const job = await rig!.readJob(jobId)
        return job.lastRun?.generation === 2 ? job.lastRun : undefined
      },
      30_000,
      seen(jobId),
    )
    expect(lastRun).toMatchObject({
      generation: 2,
      mode: "job_thread",
      threadId: jobThread,
      failure: "none",
      exitCode: 0,
    })
    // Every model request of both continuations belongs to the one job thread.
    expect(new Set(rig.mock.requests().map((r) => r.headers["thread-id"]))).toEqual(
      new Set([jobThread]),
    )
    const launched = watcher.events().filter((e) => e.kind === "launched")
    expect(launched.map((e) => [e["generation"], e["mode"]])).toEqual([
      [1, "new_thread"],
      [2, "job_thread"],
    ])
    const metas = await runMetas(rig.wakeDir, jobId)
    expect(metas).toHaveLength(2)
    expect(metas[0]).toMatchObject({ generation: 1, mode: "new_thread", failure: "usage_limit" })
    expect(metas[1]).toMatchObject({
      generation: 2,
      mode: "job_thread",
      threadId: jobThread,
      failure: "none",
      exitCode: 0,
    })
    const args = metas[1]!["args"] as ReadonlyArray<string>
    expect(args.slice(0, 2)).toEqual(["exec", "resume"])
    expect(args.slice(-2)).toEqual([jobThread, "<prompt>"])
    expect(rig.mock.outboundAttempts()).toEqual([])
  })
})

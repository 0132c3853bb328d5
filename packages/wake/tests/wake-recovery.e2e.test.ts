// Real Codex (0.169.0) end to end, the recovery side: the signed-in usage signal on the real
// `account/rateLimits/read` (false and null keep the job waiting with no model request; true
// launches), network failures and their backoff, stop during a run, a killed and restarted
// watcher, and two watchers racing for the lock. Jobs are created, filled and armed through the
// `baton` CLI; the watcher is the real `baton wake watch`; continuations are real `codex exec`.
import { handlerReply, httpErrorReply, textReply, usageLimitReply } from "@baton/testkit"
import { jobPaths } from "@baton/wake"
import { readFile, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { isRunning, runMetas, shell, usageAnswer, waitFor, wakeRig } from "./wake-rig.js"
import type { WakeRig } from "./wake-rig.js"

const THREAD = "019a1111-2222-7333-8444-555566667777"

let rig: WakeRig | undefined
afterEach(async () => {
  await rig?.dispose()
  rig = undefined
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const stateIs = (jobId: string, state: string) => async () => {
  const job = await rig!.readJob(jobId)
  return job.state === state ? job : undefined
}

/** The job's state, last error and last run, for a timeout message. */
const seen = (jobId: string) => async () => {
  const job = await rig!.readJob(jobId)
  return JSON.stringify({
    state: job.state,
    lastError: job.lastError,
    lastRun: job.lastRun ?? null,
  })
}

describe("wake recovery with real Codex", () => {
  it("signed in: waits while ordinaryUsageAllowed is false or null, with no model request, and launches when it turns true", async () => {
    rig = await wakeRig({ initialUsage: false })
    const jobId = await rig.armedJob(THREAD)
    const watcher = rig.startWatcher()
    await waitFor("quota_waiting", stateIs(jobId, "quota_waiting"))
    await sleep(1_500)
    rig.mock.setWhamUsage(usageAnswer(null))
    const unknown = await waitFor("two unknown readings", async () => {
      const job = await rig!.readJob(jobId)
      return job.unknownUsageCount >= 2 ? job : undefined
    })
    expect(unknown.state).toBe("quota_waiting")
    expect(rig.mock.requests()).toHaveLength(0)
    rig.mock.enqueue(
      handlerReply(() => shell(`baton wake complete ${jobId} --json`)),
      textReply("done"),
    )
    rig.mock.setWhamUsage(usageAnswer(true))
    await waitFor("completed", stateIs(jobId, "completed"), 30_000, seen(jobId))
    const readings = watcher
      .events()
      .filter((e) => e.kind === "quota")
      .map((e) => e["allowed"])
    const firstTrue = readings.indexOf(true)
    expect(readings.slice(0, firstTrue)).toContain(false)
    expect(readings.slice(0, firstTrue)).toContain(null)
    expect(readings.slice(0, firstTrue).every((r) => r === false || r === null)).toBe(true)
    // Every model request came after the first `true`: none while waiting.
    const launched = watcher.events().find((e) => e.kind === "launched")!
    expect(rig.mock.requests().every((r) => r.receivedAt >= (launched["at"] as number))).toBe(true)
    const watcherReads = rig.mock.backendRequests().filter((r) => r.path.endsWith("/wham/usage"))
    expect(watcherReads.length).toBeGreaterThanOrEqual(firstTrue + 1)
    // Codex's `-o` writes the last message into the file wake made first: private like the rest.
    const lastMessage = join(rig.wakeDir, "jobs", jobId, "runs", "run-0001.last-message.txt")
    await waitFor("the last message written", async () =>
      (await readFile(lastMessage, "utf8").catch(() => "")).includes("done") ? true : undefined,
    )
    expect((await stat(lastMessage)).mode & 0o777).toBe(0o600)
  })

  it("a network failure (HTTP 503) → retry_waiting with the 60 s backoff; no relaunch before it is due; the retry completes", async () => {
    rig = await wakeRig({
      initialUsage: false,
      providerOptions: { request_max_retries: 0, stream_max_retries: 0 },
    })
    const jobId = await rig.armedJob(THREAD)
    rig.startWatcher()
    await waitFor("quota_waiting", stateIs(jobId, "quota_waiting"))
    rig.mock.enqueue(httpErrorReply(503, { error: { message: "upstream connect error" } }))
    rig.mock.setWhamUsage(usageAnswer(true))
    const retrying = await waitFor("retry_waiting with the run recorded", async () => {
      const job = await rig!.readJob(jobId)
      return job.state === "retry_waiting" && job.lastRun !== undefined && job.lastRun !== null
        ? job
        : undefined
    })
    expect(retrying.retryCount).toBe(1)
    expect(retrying.lastRun).toMatchObject({ generation: 1, failure: "connection" })
    expect(retrying.lastRun!.detail).toMatch(/^httpConnectionFailed: /)
    expect(retrying.nextRetryAt! - retrying.lastRun!.endedAt).toBe(60_000)
    const requests = rig.mock.requests().length
    expect(requests).toBe(1)
    await sleep(2_500)
    expect(rig.mock.requests()).toHaveLength(requests)
    expect((await rig.readJob(jobId)).state).toBe("retry_waiting")
    // Skip the minute through the store (the schedule itself is asserted above and in unit tests).
    rig.mock.enqueue(
      handlerReply(() => shell(`baton wake complete ${jobId} --json`)),
      textReply("done"),
    )
    await rig.modifyJob(jobId, (job) => ({ ...job, nextRetryAt: Date.now() }))
    const done = await waitFor("completed", stateIs(jobId, "completed"), 30_000, seen(jobId))
    expect(done.generation).toBe(2)
    await waitFor("the retry's end recorded", async () =>
      (await rig!.readJob(jobId)).lastRun?.generation === 2 ? true : undefined,
    )
    const metas = await runMetas(rig.wakeDir, jobId)
    expect(metas.map((m) => m["failure"])).toEqual(["connection", "none"])
  })

  it("stop during a run kills the continuation's process group", async () => {
    rig = await wakeRig({ initialUsage: false })
    const jobId = await rig.armedJob(THREAD)
    const watcher = rig.startWatcher()
    await waitFor("quota_waiting", stateIs(jobId, "quota_waiting"))
    // The continuation's command blocks until a file appears (it never does: stop ends it).
    rig.mock.enqueue(shell("while [ ! -e never-released ]; do sleep 0.1; done"), textReply("late"))
    rig.mock.setWhamUsage(usageAnswer(true))
    await rig.mock.waitForRequests(1, 20_000)
    const running = await waitFor("running with a pid", async () => {
      const job = await rig!.readJob(jobId)
      return job.state === "running" && job.run?.pid !== null ? job : undefined
    })
    const pid = running.run!.pid!
    expect(await isRunning(pid)).toBe(true)
    const stopped = await rig.baton(["wake", "stop", jobId, "--json"])
    expect(stopped.code).toBe(0)
    expect(JSON.parse(stopped.stdout)).toMatchObject({ state: "stopped", runTerminated: true })
    await waitFor(
      "the continuation gone",
      async () => ((await isRunning(pid)) ? undefined : true),
      10_000,
    )
    await watcher.waitForEvent((e) => e.kind === "run-ended")
    const job = await waitFor("the end recorded", async () => {
      const j = await rig!.readJob(jobId)
      return j.lastRun !== undefined && j.lastRun !== null ? j : undefined
    })
    expect(job.state).toBe("stopped")
    expect(job.lastRun!.signal).toBe("SIGTERM")
    await sleep(1_500)
    expect(watcher.events().filter((e) => e.kind === "launched")).toHaveLength(1)
  })

  it("pause and re-arm during a run: the run finishes supervised; no second continuation starts beside it", async () => {
    rig = await wakeRig({ initialUsage: false })
    const jobId = await rig.armedJob(THREAD)
    const watcher = rig.startWatcher()
    await waitFor("quota_waiting", stateIs(jobId, "quota_waiting"))
    rig.mock.enqueue(
      shell("while [ ! -e release ]; do sleep 0.1; done"),
      textReply("first continuation done"),
      handlerReply(() => shell(`baton wake complete ${jobId} --json`)),
      textReply("done"),
    )
    rig.mock.setWhamUsage(usageAnswer(true))
    await rig.mock.waitForRequests(1, 20_000)
    const running = await waitFor("running with a pid", async () => {
      const job = await rig!.readJob(jobId)
      return job.state === "running" && job.run?.pid !== null ? job : undefined
    })
    const pid = running.run!.pid!
    expect((await rig.baton(["wake", "pause", jobId, "--json"])).code).toBe(0)
    expect((await rig.baton(["wake", "arm", jobId, "--json"])).code).toBe(0)
    rig.mock.setWhamUsage(usageAnswer(false))
    await waitFor("quota_waiting again", stateIs(jobId, "quota_waiting"))
    const allowedAt = Date.now()
    rig.mock.setWhamUsage(usageAnswer(true))
    // Usage reads allowed while the first run lives: the launch is deferred, not doubled.
    await waitFor("two allowed readings", () =>
      watcher
        .events()
        .filter(
          (e) => e.kind === "quota" && e["allowed"] === true && (e["at"] as number) > allowedAt,
        ).length >= 2
        ? true
        : undefined,
    )
    expect(await isRunning(pid)).toBe(true)
    expect(watcher.events().some((e) => e.kind === "launch-deferred")).toBe(true)
    expect(watcher.events().filter((e) => e.kind === "launched")).toHaveLength(1)
    expect(rig.mock.requests()).toHaveLength(1)
    await writeFile(join(rig.home.workdir, "release"), "go")
    const done = await waitFor("completed", stateIs(jobId, "completed"), 60_000, seen(jobId))
    expect(done.generation).toBe(2)
    const ended = watcher.events().find((e) => e.kind === "run-ended" && e["generation"] === 1)
    const second = watcher.events().find((e) => e.kind === "launched" && e["generation"] === 2)
    expect((second!["at"] as number) >= (ended!["at"] as number)).toBe(true)
  })

  it("a continuation that hits a 429 usage limit while usage reads allowed waits for the 429's reset", async () => {
    rig = await wakeRig({ initialUsage: false })
    const jobId = await rig.armedJob(THREAD)
    const watcher = rig.startWatcher()
    await waitFor("quota_waiting", stateIs(jobId, "quota_waiting"))
    const resetsAt = Math.floor(Date.now() / 1000) + 3_600
    rig.mock.enqueue(usageLimitReply({ resetsAt }), usageLimitReply({ resetsAt }))
    rig.mock.setWhamUsage(usageAnswer(true))
    const waiting = await waitFor("quota_waiting after the run's 429", async () => {
      const job = await rig!.readJob(jobId)
      return job.state === "quota_waiting" && job.lastRun?.failure === "usage_limit"
        ? job
        : undefined
    })
    expect(waiting.resetsAt).toBe(resetsAt * 1000)
    expect(waiting.cooldownUntil).toBe(resetsAt * 1000)
    const ended = await watcher.waitForEvent((e) => e.kind === "run-ended")
    // Readings after the run still say allowed; none of them launches before the reset.
    await waitFor("two allowed readings after the run", () =>
      watcher
        .events()
        .filter(
          (e) =>
            e.kind === "quota" &&
            e["allowed"] === true &&
            (e["at"] as number) > (ended["at"] as number),
        ).length >= 2
        ? true
        : undefined,
    )
    expect(rig.mock.requests()).toHaveLength(1)
    expect((await rig.readJob(jobId)).generation).toBe(1)
    const status = await rig.baton(["wake", "status", jobId])
    expect(status.stdout).toContain(`no launch before ${new Date(resetsAt * 1000).toISOString()}`)
  })

  it("a killed watcher's successor adopts the running continuation and never launches it twice", async () => {
    rig = await wakeRig({ initialUsage: false })
    const jobId = await rig.armedJob(THREAD)
    const first = rig.startWatcher()
    await waitFor("quota_waiting", stateIs(jobId, "quota_waiting"))
    // The continuation's command waits for the test's signal, then completes the job.
    const releaseFile = join(rig.home.workdir, "release")
    rig.mock.enqueue(
      shell(`while [ ! -e release ]; do sleep 0.1; done; baton wake complete ${jobId} --json`),
      textReply("done"),
    )
    rig.mock.setWhamUsage(usageAnswer(true))
    await rig.mock.waitForRequests(1, 20_000)
    const running = await waitFor("running with a pid", async () => {
      const job = await rig!.readJob(jobId)
      return job.state === "running" && job.run?.pid !== null ? job : undefined
    })
    first.process.kill("SIGKILL")
    await first.process.exited
    expect(await isRunning(running.run!.pid!)).toBe(true)
    // As if the kill landed mid-change: the dead watcher's lease on the job lock, 30 s to run.
    // `baton wake complete` below must take it over, not fail (it did ~1 run in 8 before).
    const now = Date.now()
    await writeFile(
      jobPaths(rig.wakeDir, jobId).lock,
      JSON.stringify({
        schemaVersion: 1,
        pid: first.process.pid,
        token: `${first.process.pid}:${now}:1`,
        acquiredAt: now,
        leaseExpiresAt: now + 30_000,
      }),
    )
    const second = rig.startWatcher()
    const adopted = await second.waitForEvent((e) => e.kind === "adopted")
    expect(adopted).toMatchObject({ jobId, generation: 1, pid: running.run!.pid })
    await writeFile(releaseFile, "go")
    const done = await waitFor("completed", stateIs(jobId, "completed"), 30_000, seen(jobId))
    expect(done.generation).toBe(1)
    await second.waitForEvent((e) => e.kind === "run-ended")
    await sleep(1_500)
    expect(second.events().filter((e) => e.kind === "launched")).toHaveLength(0)
    expect(await runMetas(rig.wakeDir, jobId)).toHaveLength(1)
    const threads = new Set(rig.mock.requests().map((r) => r.headers["thread-id"]))
    expect(threads.size).toBe(1)
  })

  it("two watchers started together: one holds the lock, the other exits naming it", async () => {
    rig = await wakeRig({ initialUsage: true })
    await rig.armedJob(THREAD)
    const a = rig.startWatcher()
    const b = rig.startWatcher()
    const loserExit = await Promise.race([
      a.process.exited.then((exit) => ({ who: a, other: b, exit })),
      b.process.exited.then((exit) => ({ who: b, other: a, exit })),
    ])
    expect(loserExit.exit.code).toBe(1)
    expect(loserExit.who.stdout()).toContain('"_tag":"WatcherLockHeld"')
    await loserExit.other.waitForEvent((e) => e.kind === "started")
    await sleep(1_000)
    expect(await isRunning(loserExit.other.process.pid)).toBe(true)
    expect(loserExit.who.events().filter((e) => e.kind === "started")).toHaveLength(0)
    const status = await rig.baton(["wake", "status", "--json"])
    expect(JSON.parse(status.stdout)).toMatchObject({
      watcher: { running: true, pid: loserExit.other.process.pid },
    })
  })
})

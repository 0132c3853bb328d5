// Real Codex (0.169.0) end to end, the daemon side: the job's original thread lives in a real
// `codex app-server daemon` (owned by a WebSocket client, like a TUI attached to it), and the real
// `baton wake watch` reaches it through Baton's daemon transport. Proves `original_thread`
// delivery (the continuation is a turn on that very thread, carrying the recovery prompt; a busy
// thread falls back to a new `codex exec` thread and says why) and the checkpoint channel (one
// checkpoint turn on the idle thread when pressure first reaches `prepare`; a thread busy at that
// moment gets it once its turn has ended).
import {
  handlerReply,
  textReply,
  usageAllowanceAnswer,
  usageLimitReply,
  userTexts,
} from "@baton/testkit"
import type { CodexDaemonConnection, MockRateLimits, RecordedRequest } from "@baton/testkit"
import { CAPSULE_BEGIN, CAPSULE_MARKER } from "@baton/wake"
import { afterEach, describe, expect, it } from "vitest"
import {
  ACCOUNT_ID,
  FAST_LIMITS,
  USER_ID,
  runMetas,
  shell,
  usageAnswer,
  waitFor,
  wakeRig,
} from "./wake-rig.js"
import type { WakeRig } from "./wake-rig.js"

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
    run: job.run,
    lastRun: job.lastRun ?? null,
  })
}

const limits = (usedPercent: number): MockRateLimits => ({
  primary: {
    usedPercent,
    windowMinutes: 300,
    resetAt: Math.floor(Date.now() / 1000) + 3_600,
  },
})

const lastUserText = (request: RecordedRequest) => userTexts(request.body).at(-1) ?? ""

/** The thread's status as the daemon reports it (`thread/read`). */
const threadStatus = async (owner: CodexDaemonConnection, threadId: string) => {
  const read = await owner.request<{ thread: { status?: { type?: string } } }>("thread/read", {
    threadId,
  })
  return read.thread.status?.type
}

/**
 * A daemon, an owner connection and a thread it started; an armed job bound to the thread; a
 * watcher; then the thread's turn hits a 429 usage limit and the job waits for quota.
 */
const quotaWaitingOnDaemonThread = async (createArgs: ReadonlyArray<string>) => {
  rig = await wakeRig({ initialUsage: true })
  const daemon = await rig.startDaemon()
  const owner = await daemon.connect()
  const { threadId } = await owner.startThread({
    cwd: rig.home.workdir,
    sandbox: "danger-full-access",
    approvalPolicy: "never",
  })
  const jobId = await rig.armedJob(threadId, createArgs)
  const watcher = rig.startWatcher()
  await watcher.waitForEvent((e) => e.kind === "started")
  rig.mock.enqueue(
    handlerReply(() => {
      rig!.mock.setWhamUsage(usageAnswer(false))
      return usageLimitReply({ resetsAt: Math.floor(Date.now() / 1000) + 600 })
    }),
  )
  const limited = await owner.runTurn(threadId, "Write hello.txt for the release notes.")
  expect(limited.status).toBe("failed")
  const waiting = await waitFor(
    "quota_waiting",
    stateIs(jobId, "quota_waiting"),
    30_000,
    seen(jobId),
  )
  expect(waiting.originalThreadId).toBe(threadId)
  return { owner, threadId, jobId, watcher }
}

describe("wake with the real Codex app-server daemon", () => {
  it("original_thread: after the reset the continuation is a turn on the job's own thread in the daemon, and it completes the job", async () => {
    const { owner, threadId, jobId, watcher } = await quotaWaitingOnDaemonThread([
      "--delivery",
      "original_thread",
    ])
    // What the real daemon reports for a thread whose last turn hit the usage limit.
    expect(await threadStatus(owner, threadId)).toBe("systemError")
    const before = rig!.mock.requests().length
    rig!.mock.enqueue(
      handlerReply(() => shell(`baton wake complete ${jobId} --json`)),
      textReply("Done: hello.txt written and the job is complete."),
    )
    rig!.mock.setWhamUsage(usageAnswer(true))
    const requests = await rig!.mock.waitForRequests(before + 1, 20_000)
    const first = requests[before]!
    // The same conversation: the original thread's id and its earlier turn, then the recovery prompt.
    expect(first.headers["thread-id"]).toBe(threadId)
    expect(userTexts(first.body)).toContain("Write hello.txt for the release notes.")
    const prompt = lastUserText(first)
    expect(prompt).toContain(`Continue Baton wake job ${jobId} (continuation 1).`)
    expect(prompt).toContain("Usage is available again")
    expect(prompt).toContain(CAPSULE_BEGIN)
    expect(prompt).toContain(CAPSULE_MARKER)
    expect(prompt).toContain("Write hello.txt containing the word hi.")
    const done = await waitFor("completed", stateIs(jobId, "completed"), 30_000, seen(jobId))
    expect(done.generation).toBe(1)
    const launched = watcher.events().filter((e) => e.kind === "launched")
    expect(launched).toHaveLength(1)
    expect(launched[0]).toMatchObject({
      jobId,
      generation: 1,
      mode: "original_thread",
      label: "same_thread_turn",
      pid: null,
    })
    expect(launched[0]!["fallback"]).toBeUndefined()
    const lastRun = await waitFor(
      "the turn's end recorded",
      async () => (await rig!.readJob(jobId)).lastRun ?? undefined,
      30_000,
      seen(jobId),
    )
    // Classified from the original thread's rollout: its last turn (the continuation) ended cleanly.
    expect(lastRun).toMatchObject({
      generation: 1,
      mode: "original_thread",
      threadId,
      failure: "none",
    })
    const metas = await runMetas(rig!.wakeDir, jobId)
    expect(metas).toHaveLength(1)
    expect(metas[0]).toMatchObject({
      label: "same_thread_turn",
      mode: "original_thread",
      threadId,
      pid: null,
    })
    expect(typeof metas[0]!["turnId"]).toBe("string")
    // No new thread was started: every model request belongs to the original thread.
    expect(new Set(rig!.mock.requests().map((r) => r.headers["thread-id"]))).toEqual(
      new Set([threadId]),
    )
    expect(rig!.mock.outboundAttempts()).toEqual([])
  })

  it("original_thread: a thread busy with a turn when usage returns is left alone; the continuation falls back to a new thread and records why", async () => {
    const { owner, threadId, jobId, watcher } = await quotaWaitingOnDaemonThread([
      "--delivery",
      "original_thread",
    ])
    // The owner starts a turn of its own; the mock holds its answer, so the thread stays active.
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    try {
      rig!.mock.enqueue(
        handlerReply(async () => {
          await released
          return textReply("Back again.")
        }),
      )
      const held = rig!.mock.requests().length
      const busy = await owner.startTurn(threadId, "Are you still there?")
      await rig!.mock.waitForRequests(held + 1, 20_000)
      expect(await threadStatus(owner, threadId)).toBe("active")
      rig!.mock.enqueue(
        handlerReply(() => shell(`baton wake complete ${jobId} --json`)),
        textReply("Done."),
      )
      rig!.mock.setWhamUsage(usageAnswer(true))
      const launched = await watcher.waitForEvent((e) => e.kind === "launched", 20_000)
      expect(launched).toMatchObject({
        jobId,
        generation: 1,
        mode: "new_thread",
        label: "cli_continuation",
      })
      expect(launched["fallback"]).toMatch(
        /^original_thread unavailable: the original thread is active in the daemon/,
      )
      const done = await waitFor("completed", stateIs(jobId, "completed"), 30_000, seen(jobId))
      expect(done.generation).toBe(1)
      const metas = await runMetas(rig!.wakeDir, jobId)
      expect(metas).toHaveLength(1)
      expect(metas[0]).toMatchObject({ label: "cli_continuation", mode: "new_thread" })
      expect(metas[0]!["detail"]).toMatch(
        /^original_thread unavailable \(the original thread is active in the daemon .*\); new thread$/,
      )
      // The continuation ran in a thread of its own; the busy turn never saw the recovery prompt.
      const continuation = rig!.mock
        .requests()
        .filter((r) => lastUserText(r).includes(`Continue Baton wake job ${jobId}`))
      expect(continuation.length).toBeGreaterThanOrEqual(1)
      for (const request of continuation) expect(request.headers["thread-id"]).not.toBe(threadId)
      release()
      await owner.waitForTurnCompleted(busy.turnId, { timeoutMs: 20_000 })
      const originalTurns = rig!.mock.requests().filter((r) => r.headers["thread-id"] === threadId)
      for (const request of originalTurns)
        expect(userTexts(request.body).join("\n")).not.toContain("Continue Baton wake job")
    } finally {
      release()
    }
  })

  it("checkpoint channel: the first rise to prepare puts one checkpoint turn on the idle original thread; later readings in prepare and above ask no more", async () => {
    rig = await wakeRig({ initialUsage: true })
    const daemon = await rig.startDaemon()
    const owner = await daemon.connect()
    const { threadId } = await owner.startThread({
      cwd: rig.home.workdir,
      sandbox: "danger-full-access",
      approvalPolicy: "never",
    })
    rig.mock.enqueue(textReply("Started.", { rateLimits: limits(40) }))
    await owner.runTurn(threadId, "Start the release notes.")
    const jobId = await rig.armedJob(threadId)
    // The rise to 85 % happens in a turn that has ended, so the thread is idle when the watcher
    // reads it (a watcher reads a rollout from its start).
    rig.mock.enqueue(textReply("Halfway.", { rateLimits: limits(85) }))
    await owner.runTurn(threadId, "Keep going.")
    expect(await threadStatus(owner, threadId)).toBe("idle")
    rig.mock.enqueue(textReply("Checkpoint updated.", { rateLimits: limits(86) }))
    const before = rig.mock.requests().length
    const since = owner.notifications().length
    const watcher = rig.startWatcher()
    const requested = await watcher.waitForEvent((e) => e.kind === "checkpoint-requested")
    expect(requested).toMatchObject({ jobId, band: "prepare", delivered: true })
    const requests = await rig.mock.waitForRequests(before + 1, 20_000)
    const checkpointTurn = requests[before]!
    expect(checkpointTurn.headers["thread-id"]).toBe(threadId)
    const text = lastUserText(checkpointTurn)
    expect(text).toContain(`Baton wake: quota pressure for job ${jobId} is prepare.`)
    expect(text).toContain(`wake refresh ${jobId}`)
    await owner.waitForNotification((n) => n.method === "turn/completed", {
      since,
      timeoutMs: 20_000,
    })
    const job = await waitFor("the checkpoint turn's reading", async () => {
      const j = await rig!.readJob(jobId)
      return j.usedPercent === 86 ? j : undefined
    })
    expect(job.checkpointRequest).toMatchObject({ band: "prepare", delivered: true })
    expect(job.checkpointRequest!.detail).toMatch(/^turn \S+ on the idle original thread$/)
    // More readings in prepare, then high: no second request.
    rig.mock.enqueue(textReply("Still going.", { rateLimits: limits(88) }))
    await owner.runTurn(threadId, "Next step.")
    await waitFor("88 %", async () =>
      (await rig!.readJob(jobId)).usedPercent === 88 ? true : undefined,
    )
    rig.mock.enqueue(textReply("Almost there.", { rateLimits: limits(92) }))
    await owner.runTurn(threadId, "Another step.")
    await waitFor("high", async () =>
      (await rig!.readJob(jobId)).pressure === "high" ? true : undefined,
    )
    await sleep(1_500)
    expect(watcher.events().filter((e) => e.kind === "checkpoint-requested")).toHaveLength(1)
    const asked = rig.mock
      .requests()
      .filter((r) => lastUserText(r).startsWith("Baton wake: quota pressure"))
    expect(asked).toHaveLength(1)
    const bands = watcher
      .events()
      .filter((e) => e.kind === "transition" && e["event"] === "PressureObserved")
      .map((e) => e["pressure"])
    // History (40 %, then 85 %) counts by its newest reading only: the job starts at prepare.
    expect(bands.filter((b, i) => b !== bands[i - 1])).toEqual(["prepare", "high"])
    expect((await rig.readJob(jobId)).state).toBe("monitoring")
    expect(rig.mock.outboundAttempts()).toEqual([])
  })

  it("checkpoint channel: a thread busy with a turn when pressure reaches prepare is not interrupted; it gets the one checkpoint turn after its turn ends", async () => {
    rig = await wakeRig({ initialUsage: true })
    const daemon = await rig.startDaemon()
    const owner = await daemon.connect()
    const { threadId } = await owner.startThread({
      cwd: rig.home.workdir,
      sandbox: "danger-full-access",
      approvalPolicy: "never",
    })
    rig.mock.enqueue(textReply("Started.", { rateLimits: limits(40) }))
    await owner.runTurn(threadId, "Start the release notes.")
    const jobId = await rig.armedJob(threadId)
    const watcher = rig.startWatcher({ ...FAST_LIMITS, checkpointRetryMs: 500 })
    await waitFor("normal", async () =>
      (await rig!.readJob(jobId)).pressure === "normal" ? true : undefined,
    )
    // The owner's next turn is held by the mock, so the thread stays active; meanwhile the
    // account's usage (the watcher's quota read) reaches 85 %.
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    try {
      rig.mock.enqueue(
        handlerReply(async () => {
          await released
          return textReply("Step done.")
        }),
        textReply("Checkpoint updated."),
      )
      const held = rig.mock.requests().length
      const busy = await owner.startTurn(threadId, "Keep going.")
      await rig.mock.waitForRequests(held + 1, 20_000)
      expect(await threadStatus(owner, threadId)).toBe("active")
      rig.mock.setWhamUsage(
        usageAllowanceAnswer(true, {
          accountId: ACCOUNT_ID,
          userId: USER_ID,
          primary: {
            usedPercent: 85,
            windowSeconds: 18_000,
            resetAt: Math.floor(Date.now() / 1000) + 3_600,
          },
        }),
      )
      const first = await watcher.waitForEvent((e) => e.kind === "checkpoint-requested", 30_000)
      expect(first).toMatchObject({ jobId, band: "prepare", delivered: false, retryable: true })
      expect(first["detail"]).toMatch(/^the original thread is active in the daemon/)
      expect((await rig.readJob(jobId)).checkpointRequest).toMatchObject({
        band: "prepare",
        delivered: false,
        retryPending: true,
      })
      // Retried polls while the turn runs deliver nothing and never touch the busy turn.
      await sleep(2_000)
      const asked = () =>
        rig!.mock.requests().filter((r) => lastUserText(r).startsWith("Baton wake: quota pressure"))
      expect(asked()).toHaveLength(0)
      expect(await threadStatus(owner, threadId)).toBe("active")
      expect((await rig.readJob(jobId)).checkpointRequest).toMatchObject({ delivered: false })
      const since = owner.notifications().length
      release()
      await owner.waitForTurnCompleted(busy.turnId, { timeoutMs: 30_000 })
      const delivered = await watcher.waitForEvent(
        (e) => e.kind === "checkpoint-requested" && e["delivered"] === true,
        30_000,
      )
      expect(delivered).toMatchObject({ jobId, band: "prepare", retry: true })
      const checkpointTurn = await waitFor("the checkpoint turn's request", () => asked()[0])
      expect(checkpointTurn.headers["thread-id"]).toBe(threadId)
      expect(lastUserText(checkpointTurn)).toContain(
        `Baton wake: quota pressure for job ${jobId} is prepare.`,
      )
      // The checkpoint turn followed the busy turn, whose answer is in its history.
      const history = JSON.stringify(checkpointTurn.body)
      expect(userTexts(checkpointTurn.body)).toContain("Keep going.")
      expect(history).toContain("Step done.")
      await owner.waitForNotification(
        (n) => n.method === "turn/completed" && !JSON.stringify(n.params).includes(busy.turnId),
        { since, timeoutMs: 20_000 },
      )
      const job = await rig.readJob(jobId)
      expect(job.checkpointRequest).toMatchObject({
        band: "prepare",
        delivered: true,
        retryPending: false,
      })
      expect(job.checkpointRequest!.detail).toMatch(
        /^turn \S+ on the idle original thread \(on retry\)$/,
      )
      // One delivered request per rise: later polls in prepare ask no more.
      await sleep(1_500)
      expect(asked()).toHaveLength(1)
      expect(
        watcher
          .events()
          .filter((e) => e.kind === "checkpoint-requested" && e["delivered"] === true),
      ).toHaveLength(1)
      expect((await rig.readJob(jobId)).state).toBe("monitoring")
      expect(rig.mock.outboundAttempts()).toEqual([])
    } finally {
      release()
    }
  })
})

import { describe, expect, test } from "vitest"
import type { JobEvent, JobEventTag } from "./job-machine.js"
import {
  checkpointRetryDue,
  jobEventTags,
  parkedStates,
  retryDelayMs,
  transition,
} from "./job-machine.js"
import type { JobRecord, JobState } from "./job-record.js"
import { defaultJobBounds, jobStates, newJobRecord } from "./job-record.js"

const T0 = 1_700_000_000_000
const base = newJobRecord({
  jobId: "wake-20250131-120000-0123abcd",
  originalThreadId: "thread-1",
  cwd: "/work",
  model: null,
  reasoningEffort: null,
  limitId: null,
  bounds: defaultJobBounds,
  createdAt: T0,
})
const armedJob: JobRecord = {
  ...base,
  armedAt: T0,
  memory: { ...base.memory, checkpointSha256: "c1", ready: true },
}

/** A job in `state` with the data that state normally carries. */
export const inState = (state: JobState): JobRecord => ({
  ...(state === "draft" ? base : armedJob),
  state,
  ...(state === "running"
    ? {
        generation: 1,
        run: { generation: 1, launchedAt: T0, startedAt: null, pid: null, threadId: null },
      }
    : {}),
  ...(state === "retry_waiting" ? { generation: 1, retryCount: 1, nextRetryAt: T0 + 60_000 } : {}),
})

/** The same job with its bounds spent: one more unknown reading or launch escalates. */
const exhausted = (state: JobState): JobRecord => ({
  ...inState(state),
  unknownUsageCount: defaultJobBounds.unknownUsageLimit - 1,
  generation: defaultJobBounds.maxGenerations,
  retryCount: defaultJobBounds.maxRetriesPerWindow,
})

const at = T0 + 120_000
/** Representative events of every tag, with the variants that select different rows. */
export const sampleEvents: ReadonlyArray<JobEvent> = [
  { _tag: "Armed", at, capsuleReady: true },
  { _tag: "Armed", at, capsuleReady: false },
  ...(["unknown", "normal", "prepare", "high", "final"] as const).map((band): JobEvent => ({
    _tag: "PressureObserved",
    at,
    band,
    usedPercent: band === "unknown" ? null : 91,
  })),
  ...[true, false, null].flatMap((allowed) =>
    [true, false].map((launchSlotFree): JobEvent => ({
      _tag: "UsageObserved",
      at,
      allowed,
      resetsAt: null,
      launchSlotFree,
    })),
  ),
  { _tag: "UsageLimitHit", at, resetsAt: at + 3_600_000 },
  ...[true, false, null].map((allowed): JobEvent => ({
    _tag: "RetryDue",
    at,
    allowed,
    launchSlotFree: true,
  })),
  { _tag: "RunStarted", at, generation: 1, pid: 42, threadId: "t-2" },
  { _tag: "LaunchFailed", at, generation: 1, detail: "codex not found" },
  ...(["none", "usage_limit", "connection", "stream", "overloaded", "other"] as const).map(
    (failure): JobEvent => ({ _tag: "RunExited", at, generation: 1, failure, detail: null }),
  ),
  { _tag: "CompleteSignalled", at },
  { _tag: "StopRequested", at, reason: "stopped by user" },
  { _tag: "PauseRequested", at, reason: "need the API key" },
  { _tag: "ResumeRequested", at },
  { _tag: "BoundsExceeded", at, bound: "max_wall_clock" },
]

/** Every edge the table produces from the representative jobs: `from --> to : Event`. */
export const machineEdges = (): ReadonlyArray<string> => {
  const edges = new Set<string>()
  for (const state of jobStates)
    for (const from of [inState(state), exhausted(state)])
      for (const event of sampleEvents) {
        const { job } = transition(from, event)
        if (job.state !== state) edges.add(`${state} --> ${job.state} : ${event._tag}`)
      }
  return [...edges].sort()
}

describe("job transition table", () => {
  test("total: every state × every event returns a job, effects and Persist first when changed", () => {
    expect(new Set(sampleEvents.map((e) => e._tag))).toEqual(new Set<JobEventTag>(jobEventTags))
    for (const state of jobStates)
      for (const event of sampleEvents) {
        const job = inState(state)
        const result = transition(job, event)
        if (result.job === job) expect(result.effects).toEqual([])
        else expect(result.effects[0]).toEqual({ _tag: "Persist" })
        if (result.refusal !== null) expect(result.job).toBe(job)
      }
  })

  test("completed is final for every event; stopped is final for automation", () => {
    for (const event of sampleEvents)
      expect(transition(inState("completed"), event).job.state).toBe("completed")
    const user = new Set<JobEventTag>([
      "ResumeRequested",
      "CompleteSignalled",
      "StopRequested",
      "PauseRequested",
    ])
    for (const state of parkedStates)
      for (const event of sampleEvents.filter((e) => !user.has(e._tag) && e._tag !== "Armed"))
        expect(transition(inState(state), event).job.state).toBe(state)
  })

  test("every state is reachable from draft", () => {
    const seen = new Set<JobState>(["draft"])
    let frontier: Array<JobRecord> = [base]
    while (frontier.length > 0) {
      const next: Array<JobRecord> = []
      for (const job of frontier)
        for (const event of sampleEvents) {
          const result = transition(job, event).job
          if (!seen.has(result.state)) {
            seen.add(result.state)
            next.push(result)
          }
        }
      frontier = next
    }
    expect([...seen].sort()).toEqual([...jobStates].sort())
  })

  test("only quota_waiting and a due retry_waiting launch", () => {
    for (const state of jobStates)
      for (const event of sampleEvents) {
        const launches = transition(inState(state), event).effects.some(
          (e) => e._tag === "LaunchContinuation",
        )
        if (launches) expect(["quota_waiting", "retry_waiting"]).toContain(state)
      }
    const early = transition(inState("retry_waiting"), {
      _tag: "UsageObserved",
      at: T0 + 59_999,
      allowed: true,
      resetsAt: null,
      launchSlotFree: true,
    })
    expect(early.job.state).toBe("retry_waiting")
    const due = transition(inState("retry_waiting"), {
      _tag: "RetryDue",
      at: T0 + 60_000,
      allowed: true,
      launchSlotFree: true,
    })
    expect(due.job.state).toBe("running")
    expect(due.job.retryCount).toBe(1)
    expect(due.effects).toEqual([
      { _tag: "Persist" },
      { _tag: "LaunchContinuation", generation: 2 },
    ])
  })

  test("backoff schedule: 60 s doubling to 900 s, at most 8 per window", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelayMs(n) / 1000)).toEqual([
      60, 120, 240, 480, 900, 900, 900, 900,
    ])
    let job = { ...inState("quota_waiting") }
    const delays: Array<number> = []
    let now = T0
    for (let i = 0; i < 9; i++) {
      job = transition(job, {
        _tag: "UsageObserved",
        at: now,
        allowed: true,
        resetsAt: null,
        launchSlotFree: true,
      }).job
      expect(job.state).toBe("running")
      const exit = transition(job, {
        _tag: "RunExited",
        at: now,
        generation: job.generation,
        failure: "overloaded",
        detail: "Selected model is at capacity",
      })
      job = exit.job
      if (i < 8) {
        expect(job.state).toBe("retry_waiting")
        const retry = exit.effects.find((e) => e._tag === "ScheduleRetry")
        expect(retry).toEqual({ _tag: "ScheduleRetry", at: job.nextRetryAt, attempt: i + 1 })
        delays.push((job.nextRetryAt ?? 0) - now)
        now = job.nextRetryAt ?? now
      }
    }
    expect(delays.map((d) => d / 1000)).toEqual([60, 120, 240, 480, 900, 900, 900, 900])
    expect(job.state).toBe("needs_attention")
    expect(job.lastError).toMatch(/^transient retry limit exceeded \(8\)/)
  })

  test("unknown usage keeps waiting and escalates only after N readings in a row", () => {
    let job: JobRecord = {
      ...inState("quota_waiting"),
      bounds: { ...defaultJobBounds, unknownUsageLimit: 3 },
    }
    const unknown: JobEvent = {
      _tag: "UsageObserved",
      at,
      allowed: null,
      resetsAt: null,
      launchSlotFree: true,
    }
    job = transition(job, unknown).job
    job = transition(job, unknown).job
    expect(job.state).toBe("quota_waiting")
    job = transition(job, { ...unknown, allowed: false }).job
    expect(job.unknownUsageCount).toBe(0)
    for (let i = 0; i < 3; i++) job = transition(job, unknown).job
    expect(job.state).toBe("needs_attention")
  })

  // Scenarios from the reference's test list (§17, §20.4).
  test("scenarios", () => {
    const usage = (allowed: boolean | null, launchSlotFree = true): JobEvent => ({
      _tag: "UsageObserved",
      at,
      allowed,
      resetsAt: null,
      launchSlotFree,
    })
    // 5: a stopped job is never launched.
    expect(transition(inState("stopped"), usage(true)).job.state).toBe("stopped")
    // 6, 7: monitoring + blocked → quota_waiting; + allowed → one launch.
    const waiting = transition(inState("monitoring"), usage(false)).job
    expect(waiting.state).toBe("quota_waiting")
    expect(waiting.windows).toBe(1)
    expect(
      transition(waiting, usage(true)).effects.filter((e) => e._tag === "LaunchContinuation"),
    ).toHaveLength(1)
    // monitoring + allowed does nothing; a full concurrency slot defers the launch.
    const monitoring = inState("monitoring")
    expect(transition(monitoring, usage(true)).job).toBe(monitoring)
    expect(transition(waiting, usage(true, false)).job).toBe(waiting)
    // 9 + usage-limit failure while the snapshot said allowed → quota_waiting, not needs_attention.
    const limited = transition(inState("running"), {
      _tag: "RunExited",
      at,
      generation: 1,
      failure: "usage_limit",
      detail: null,
    })
    expect(limited.job.state).toBe("quota_waiting")
    // 8: a clean exit without a job command → needs_attention.
    expect(
      transition(inState("running"), {
        _tag: "RunExited",
        at,
        generation: 1,
        failure: "none",
        detail: null,
      }).job.state,
    ).toBe("needs_attention")
    // a stale exit (other generation) is ignored.
    const stale = inState("running")
    expect(
      transition(stale, { _tag: "RunExited", at, generation: 7, failure: "other", detail: null })
        .job,
    ).toBe(stale)
    // 3: arm → pause → resume → complete; resume of completed is refused.
    let job = transition(base, { _tag: "Armed", at, capsuleReady: true }).job
    job = transition(job, { _tag: "PauseRequested", at, reason: "waiting" }).job
    expect(job.state).toBe("waiting_user")
    // Paused again: the same reason changes nothing, a new one replaces it; a stopped job says how
    // to get it back.
    expect(transition(job, { _tag: "PauseRequested", at, reason: "waiting" }).job).toBe(job)
    expect(
      transition(job, { _tag: "PauseRequested", at, reason: "need the key" }).job,
    ).toMatchObject({ state: "waiting_user", pauseReason: "need the key" })
    expect(
      transition(inState("stopped"), { _tag: "PauseRequested", at, reason: "x" }).refusal,
    ).toContain("baton wake arm")
    job = transition(job, { _tag: "ResumeRequested", at }).job
    expect(job.state).toBe("monitoring")
    job = transition(job, { _tag: "CompleteSignalled", at }).job
    expect(transition(job, { _tag: "ResumeRequested", at }).refusal).toBe(
      "completed jobs are immutable",
    )
    // 2: arming with a placeholder checkpoint is refused.
    expect(transition(base, { _tag: "Armed", at, capsuleReady: false }).refusal).toMatch(
      /not ready/,
    )
    // stop kills the running continuation.
    expect(
      transition(inState("running"), { _tag: "StopRequested", at, reason: "user" }).effects,
    ).toContainEqual({ _tag: "TerminateRun", generation: 1 })
    // 18: high pressure seals once per checkpoint hash, without launching or leaving monitoring.
    const high = transition(inState("monitoring"), {
      _tag: "PressureObserved",
      at,
      band: "high",
      usedPercent: 92,
    })
    expect(high.job.state).toBe("monitoring")
    expect(high.effects).toEqual([
      { _tag: "Persist" },
      { _tag: "RequestCheckpoint", band: "high" },
      { _tag: "SealCapsule", checkpointSha256: "c1" },
    ])
    const sealed = {
      ...high.job,
      seal: { checkpointSha256: "c1", capsuleSha256: "k", sealedAt: at, file: "capsule-c1.md" },
    }
    expect(
      transition(sealed, { _tag: "PressureObserved", at, band: "high", usedPercent: 92 }).job,
    ).toBe(sealed)
    // bounds: no launch past max generations.
    const spent = { ...inState("quota_waiting"), generation: defaultJobBounds.maxGenerations }
    expect(transition(spent, usage(true)).job.state).toBe("needs_attention")
    const late = transition(inState("quota_waiting"), {
      ...usage(true),
      at: T0 + defaultJobBounds.maxWallClockMs,
    })
    expect(late.job.lastError).toMatch(/max_wall_clock/)
  })
})

test("an undelivered checkpoint request is due again only within its rise, with a live agent, until delivered", () => {
  const pending = {
    band: "prepare" as const,
    requestedAt: at,
    delivered: false,
    detail: "the original thread is active in the daemon; status shows the request",
    retryPending: true,
  }
  const waiting: JobRecord = {
    ...inState("monitoring"),
    pressure: "prepare",
    usedPercent: 85,
    checkpointRequest: pending,
  }
  expect(checkpointRetryDue(waiting)).toBe(true)
  // Still due higher up and while a continuation runs; not once delivered, nor without a channel.
  expect(checkpointRetryDue({ ...waiting, pressure: "final" })).toBe(true)
  expect(
    checkpointRetryDue({ ...inState("running"), checkpointRequest: pending, pressure: "high" }),
  ).toBe(true)
  expect(
    checkpointRetryDue({ ...waiting, checkpointRequest: { ...pending, delivered: true } }),
  ).toBe(false)
  expect(
    checkpointRetryDue({ ...waiting, checkpointRequest: { ...pending, retryPending: false } }),
  ).toBe(false)
  const { retryPending: _omitted, ...legacy } = pending
  expect(checkpointRetryDue({ ...waiting, checkpointRequest: legacy })).toBe(false)
  expect(checkpointRetryDue({ ...waiting, state: "quota_waiting" })).toBe(false)
  expect(checkpointRetryDue({ ...waiting, pressure: "normal" })).toBe(false)
  // Readings within the rise keep it pending; falling below prepare ends the rise for good.
  const higher = transition(waiting, {
    _tag: "PressureObserved",
    at,
    band: "high",
    usedPercent: 92,
  })
  expect(higher.job.checkpointRequest).toEqual(pending)
  expect(checkpointRetryDue(higher.job)).toBe(true)
  const fell = transition(higher.job, {
    _tag: "PressureObserved",
    at,
    band: "normal",
    usedPercent: 40,
  })
  expect(fell.job.checkpointRequest).toEqual({ ...pending, retryPending: false })
  const again = transition(fell.job, {
    _tag: "PressureObserved",
    at,
    band: "prepare",
    usedPercent: 85,
  })
  expect(checkpointRetryDue(again.job)).toBe(false)
  // The next rise asks afresh (the watcher records a new request).
  expect(again.effects).toContainEqual({ _tag: "RequestCheckpoint", band: "prepare" })
})

test("a replayed reading establishes the band without asking; an older reading than the job's changes nothing", () => {
  const monitoring = inState("monitoring")
  const high = { _tag: "PressureObserved", at, band: "high", usedPercent: 92 } as const
  // History read at start-up (replay) from before the job was armed: the band and the seal, but
  // no checkpoint request.
  const replayed = transition(monitoring, { ...high, sampleAt: T0 - 60_000, replay: true })
  expect(replayed.job).toMatchObject({ pressure: "high", usedPercent: 92, pressureAt: T0 - 60_000 })
  expect(replayed.effects).toEqual([
    { _tag: "Persist" },
    { _tag: "SealCapsule", checkpointSha256: "c1" },
  ])
  // A live reading of the same rise asks nothing either: the job is already above prepare.
  expect(transition(replayed.job, { ...high, sampleAt: at }).effects).not.toContainEqual({
    _tag: "RequestCheckpoint",
    band: "high",
  })
  // A replayed rise after the arm that no request answered yet (no watcher ran) asks once; one
  // taken before the job's last request does not.
  expect(transition(monitoring, { ...high, sampleAt: at, replay: true }).effects).toContainEqual({
    _tag: "RequestCheckpoint",
    band: "high",
  })
  const requested: JobRecord = {
    ...monitoring,
    checkpointRequest: { band: "high", requestedAt: at, delivered: true, detail: "turn t" },
  }
  expect(
    transition(requested, { ...high, sampleAt: at - 1, replay: true }).effects,
  ).not.toContainEqual({ _tag: "RequestCheckpoint", band: "high" })
  // A live rise asks once and records when its reading was taken.
  const live = transition(monitoring, { ...high, sampleAt: at })
  expect(live.effects).toContainEqual({ _tag: "RequestCheckpoint", band: "high" })
  expect(live.job.pressureAt).toBe(at)
  // An older reading (history read again after a restart) never moves the job, replayed or not.
  const older = { _tag: "PressureObserved", at, band: "normal", usedPercent: 3 } as const
  expect(transition(live.job, { ...older, sampleAt: at - 1, replay: true }).job).toBe(live.job)
  expect(transition(live.job, { ...older, sampleAt: at - 1 }).job).toBe(live.job)
  expect(transition(live.job, { ...older, sampleAt: at + 1 }).job.pressure).toBe("normal")
})

test("the README's state diagram lists exactly the table's edges", async () => {
  const { readFile } = await import("node:fs/promises")
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8")
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
  const documented = diagram
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.includes("-->") && !l.startsWith("[*]"))
    .flatMap((l) => {
      const [edge, events] = l.split(" : ")
      return (events ?? "").split(", ").map((e) => `${edge} : ${e}`)
    })
    .sort()
  expect(documented).toEqual(machineEdges())
})

test("a continuation's usage-limit exit holds launches until the 429's reset, else a growing backoff; re-arm clears it", () => {
  const allowed = (job: JobRecord, at: number) =>
    transition(job, {
      _tag: "UsageObserved",
      at,
      allowed: true,
      resetsAt: null,
      launchSlotFree: true,
    })
  const limitExit = (job: JobRecord, at: number, resetsAt: number | null) =>
    transition(job, {
      _tag: "RunExited",
      at,
      generation: job.generation,
      failure: "usage_limit",
      detail: "You've hit your usage limit",
      resetsAt,
    }).job
  // The 429 said one hour: readings that say allowed do not launch before it.
  let job = limitExit(allowed(inState("quota_waiting"), T0).job, T0, T0 + 3_600_000)
  expect(job).toMatchObject({ state: "quota_waiting", resetsAt: T0 + 3_600_000 })
  expect(job.cooldownUntil).toBe(T0 + 3_600_000)
  expect(allowed(job, T0 + 60_000).job.state).toBe("quota_waiting")
  expect(allowed(job, T0 + 3_599_999).effects).toEqual([])
  job = allowed(job, T0 + 3_600_000).job
  expect(job.state).toBe("running")
  // No reset known: a backoff doubling with each usage-limit exit in a row (the first was above).
  const waits: Array<number> = []
  let now = T0 + 3_600_000
  for (let i = 0; i < 3; i++) {
    job = limitExit(job, now, null)
    waits.push((job.cooldownUntil ?? now) - now)
    expect(allowed(job, now + waits[i]! - 1).job.state).toBe("quota_waiting")
    now += waits[i]!
    job = allowed(job, now).job
    expect(job.state).toBe("running")
  }
  expect(waits).toEqual([120_000, 240_000, 480_000])
  // A run ending otherwise resets the streak; a user re-arm clears a cooldown.
  job = transition(job, { _tag: "PauseRequested", at: now, reason: "user" }).job
  job = transition(job, { _tag: "ResumeRequested", at: now }).job
  expect(job).toMatchObject({ cooldownUntil: null, usageLimitStreak: 0 })
})

test("a launch that never started gives its generation back", () => {
  const launched = transition(inState("quota_waiting"), {
    _tag: "UsageObserved",
    at,
    allowed: true,
    resetsAt: null,
    launchSlotFree: true,
  })
  expect(launched.job).toMatchObject({ state: "running", generation: 1 })
  const refused = transition(launched.job, {
    _tag: "LaunchFailed",
    at,
    generation: 1,
    detail: "the checkpoint is not ready",
  })
  expect(refused.job).toMatchObject({ state: "needs_attention", generation: 0, run: null })
  // Re-armed and launched again, the next continuation is generation 1, not 2.
  const rearmed = transition(refused.job, { _tag: "ResumeRequested", at })
  const waiting = transition(rearmed.job, {
    _tag: "UsageObserved",
    at,
    allowed: false,
    resetsAt: null,
    launchSlotFree: true,
  })
  const again = transition(waiting.job, {
    _tag: "UsageObserved",
    at,
    allowed: true,
    resetsAt: null,
    launchSlotFree: true,
  })
  expect(again.effects).toContainEqual({ _tag: "LaunchContinuation", generation: 1 })
})

import { describe, expect, it } from "vitest"
import type { JobView } from "@baton/compaction"
import { renderCancelText, renderJob, renderStatusText } from "./compact-command.js"

/** A finished job with the given token counts (the fields the renderer reads). */
const jobWith = (before: number, after: number): JobView =>
  ({
    jobId: "job_a",
    threadId: "thread_a",
    jobNumber: 1,
    status: "completed",
    terminal: true,
    reason: null,
    detail: null,
    resume: false,
    resumeSkipped: null,
    resumeSkipReason: null,
    outcomeMayBeUnknown: false,
    transport: null,
    continuationOutcome: null,
    metrics: {
      tokensBefore: before,
      tokensAfter: after,
      modelContextWindowAfter: 100_000,
      tokensReclaimed: before - after,
      reclaimedFraction: (before - after) / before,
      contextWindowUsedFraction: after / 100_000,
      compactionDurationMs: null,
      continuationDelayMs: null,
    },
  }) as unknown as JobView

describe("renderJob", () => {
  it("reports the tokens a compaction reclaimed", () => {
    expect(renderJob(jobWith(40_000, 10_000))).toContain(
      "tokens: 40,000 → 10,000 (reclaimed 30,000, 75%); window used after 10%",
    )
  })

  it("says the thread grew when the compaction left more tokens than it found", () => {
    const text = renderJob(jobWith(1_000, 1_250))
    expect(text).toContain("tokens: 1,000 → 1,250 (grew by 250, 25%)")
    expect(text).not.toMatch(/-\d/)
  })
})

describe("a job that compacted nothing", () => {
  const failed = {
    ...jobWith(120_200, 0),
    status: "failed",
    metrics: {
      ...jobWith(120_200, 0).metrics,
      tokensAfter: null,
      tokensReclaimed: null,
      reclaimedFraction: null,
      contextWindowUsedFraction: null,
    },
  } as unknown as JobView

  it("says so instead of printing question marks", () => {
    const text = renderJob(failed)
    expect(text).toContain("tokens: 120,200 before; nothing compacted")
    expect(text).not.toContain("?")
  })

  it("has a history row without question marks", () => {
    const text = renderStatusText({
      threadId: "thread_a",
      recovered: null,
      current: failed,
      worker: { state: "none", pid: null },
      cancelRequested: false,
      history: [
        {
          jobNumber: 1,
          status: "completed",
          tokensReclaimed: 30_000,
          reclaimedFraction: 0.75,
          continuationDelayMs: null,
        },
        {
          jobNumber: 2,
          status: "failed",
          tokensReclaimed: null,
          reclaimedFraction: null,
          continuationDelayMs: null,
        },
      ],
      tornTempFiles: [],
      jobsDir: "/jobs",
    } as unknown as Parameters<typeof renderStatusText>[0])
    expect(text).toContain("  #1 completed reclaimed 30,000 (75%)\n")
    expect(text).toContain("  #2 failed (nothing compacted)\n")
    expect(text).not.toContain("?")
  })
})

describe("cancel", () => {
  const report = (job: JobView, over: Record<string, unknown>) =>
    ({
      job,
      cancelRequested: true,
      alreadyEnded: false,
      recovered: null,
      refusal: null,
      message: "",
      ...over,
    }) as unknown as Parameters<typeof renderCancelText>[0]

  it("says nothing was cancelled when the continuation already runs, and what to do", () => {
    const running = { ...jobWith(40_000, 10_000), status: "continuation_running", terminal: false }
    const text = renderCancelText(
      report(running as unknown as JobView, {
        cancelRequested: false,
        refusal: "continuation_already_running",
        message: "the continuation turn is running in Codex; interrupt it there",
      }),
    )
    expect(text).toBe(
      "not cancelled: the continuation turn is running in Codex; interrupt it there\n",
    )
  })

  it("reports a cancel before dispatch as requested, nothing sent", () => {
    const waiting = { ...jobWith(40_000, 10_000), status: "waiting_for_idle", terminal: false }
    expect(renderCancelText(report(waiting as unknown as JobView, {}))).toContain(
      "cancel requested for job job_a (waiting_for_idle)",
    )
  })
})

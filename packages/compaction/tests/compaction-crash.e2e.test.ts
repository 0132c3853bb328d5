// The crash matrix: a real worker process is SIGKILLed right after it persisted each job state
// (the worst moment: the write landed, the step after it did not), against the REAL codex 0.169.0
// daemon. The next `status` recovers the lock, the journal says what happened, no request is sent
// twice, and the handoff file is intact. The kill comes from the worker itself
// (BATON_COMPACTION_CRASH_AFTER, a test-only fault switch in worker-main), so it lands exactly there.
import { createHash } from "node:crypto"
import { readdir, readFile } from "node:fs/promises"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { CodexDaemonConnection, CodexHome, MockResponsesServer } from "@baton/testkit"
import type { BatonSide, DaemonRig } from "./compaction-harness.js"
import {
  compactionRequests,
  continuationRequests,
  handoff,
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

/** What recovery must conclude for a worker killed right after persisting each state. */
const matrix: ReadonlyArray<{
  readonly after: string
  /** The job record's state when the kill came, if not `after` (a transient state). */
  readonly persisted?: string
  readonly to: string
  readonly reason: string
  readonly compactions: number
  readonly continuations: number
  readonly unknown: boolean
}> = [
  // Nothing was sent: failed, schedule again.
  {
    after: "scheduled",
    to: "failed",
    reason: "worker_lost_before_dispatch",
    compactions: 0,
    continuations: 0,
    unknown: false,
  },
  {
    after: "waiting_for_idle",
    to: "failed",
    reason: "worker_lost_before_dispatch",
    compactions: 0,
    continuations: 0,
    unknown: false,
  },
  {
    after: "idle_settling",
    to: "failed",
    reason: "worker_lost_before_dispatch",
    compactions: 0,
    continuations: 0,
    unknown: false,
  },
  // The request was recorded as sent (write-ahead) but the kill came before the send: unknown, never resent.
  {
    after: "compaction_requested",
    to: "outcome_may_be_unknown",
    reason: "worker_lost_after_send",
    compactions: 0,
    continuations: 0,
    unknown: true,
  },
  {
    after: "compacting",
    to: "outcome_may_be_unknown",
    reason: "worker_lost_after_send",
    compactions: 1,
    continuations: 0,
    unknown: true,
  },
  // Compaction done: completed, continuation skipped because the worker was lost.
  {
    after: "finishing_compaction",
    to: "completed",
    reason: "compacted",
    compactions: 1,
    continuations: 0,
    unknown: false,
  },
  // A transient state: the batch that enters it also moves on (idle is already observed), so the
  // job record holds the batch's last state; the log holds the transition.
  {
    after: "waiting_for_resume_idle",
    persisted: "resume_idle_settling",
    to: "completed",
    reason: "compacted",
    compactions: 1,
    continuations: 0,
    unknown: false,
  },
  {
    after: "resume_idle_settling",
    to: "completed",
    reason: "compacted",
    compactions: 1,
    continuations: 0,
    unknown: false,
  },
  // Transient too: verification and the continuation's write-ahead land in one flush; the kill
  // after it comes before the send, which the journal can no longer rule out: unknown, not resent.
  {
    after: "verifying_handoff",
    persisted: "continuation_requested",
    to: "outcome_may_be_unknown",
    reason: "worker_lost_after_send",
    compactions: 1,
    continuations: 0,
    unknown: true,
  },
  {
    after: "continuation_requested",
    to: "outcome_may_be_unknown",
    reason: "worker_lost_after_send",
    compactions: 1,
    continuations: 0,
    unknown: true,
  },
  {
    after: "continuation_running",
    to: "resumed",
    reason: "continued",
    compactions: 1,
    continuations: 1,
    unknown: false,
  },
]

describe("crash matrix: kill -9 the worker right after each persisted state (real daemon)", () => {
  test.each(matrix)(
    "killed after $after → status recovers it as $to ($reason)",
    async (row) => {
      const { threadId } = await owner.startThread({ cwd: home.workdir })
      await owner.runTurn(threadId, "work step 1")
      const given = handoff(true)
      const scheduled = await baton.schedule(threadId, {
        handoff: given,
        // idle_settling / resume_idle_settling are only persisted while the debounce runs.
        settings: { idleDebounceMs: 150 },
        env: { BATON_COMPACTION_CRASH_AFTER: row.after },
      })
      const { jobId } = scheduled.job
      expect(scheduled.worker.pid).not.toBeNull()
      await waitForExit(scheduled.worker.pid ?? -1)
      // Let anything the dead worker had set in motion inside Codex finish (e.g. the compaction).
      await new Promise((resolve) => setTimeout(resolve, 600))

      const status = await baton.status(threadId)
      expect(status.recovered).toMatchObject({
        jobId,
        from: row.persisted ?? row.after,
        to: row.to,
      })
      expect(await baton.readEvents(threadId, jobId)).toContain(`"to":"${row.after}"`)
      expect(status.current).toMatchObject({
        jobId,
        status: row.to,
        reason: row.reason,
        outcomeMayBeUnknown: row.unknown,
      })
      if (row.to === "completed") expect(status.current?.resumeSkipped).toBe("worker_lost")
      if (row.to === "resumed") expect(status.current?.continuationOutcome).toBe("unfollowed")

      // The journal says what happened.
      const log = await baton.readEvents(threadId, jobId)
      expect(log).toContain(`"event":"WorkerLost"`)
      expect(log).toContain("recovery by pid")
      const files = await readdir(path.join(baton.jobsDir, threadId))
      expect(files).not.toContain("lock.json")
      if (row.after !== "scheduled") {
        expect(log).toContain("stale lock of worker pid")
        expect(files.some((f) => f.startsWith("lock.json.stale-"))).toBe(true)
      }

      // The handoff file is intact: its SHA-256 is the digest the job was bound to.
      const text = await readFile(
        path.join(baton.jobsDir, threadId, `${jobId}.handoff.json`),
        "utf8",
      )
      expect(createHash("sha256").update(text).digest("hex")).toBe(status.current?.handoffDigest)

      // No request was sent twice, and nothing more arrives after recovery.
      await new Promise((resolve) => setTimeout(resolve, 500))
      const all = mock.requests()
      expect(compactionRequests(all, threadId)).toHaveLength(row.compactions)
      expect(continuationRequests(all, threadId, jobId)).toHaveLength(row.continuations)

      // The thread is free again: a new job can be scheduled (and is job 2).
      const again = await baton.schedule(threadId, { handoff: null })
      expect(again).toMatchObject({ alreadyScheduled: false, job: { jobNumber: 2 } })
      await baton.waitForJob(
        threadId,
        again.job.jobId,
        (j) =>
          j.status === "completed" ||
          j.status === "failed" ||
          j.status === "outcome_may_be_unknown",
      )
    },
    90_000,
  )
})

/**
 * The README's example, kept as a type-checked file that readme-example.test.ts runs and compares
 * with the README text (imports aside). Not exported from the package.
 */
import * as Effect from "effect/Effect"
import { renderContinuation } from "./continuation.js"
import { bindHandoff, verifyHandoffRecord } from "./handoff-record.js"
import { parseHandoffJson } from "./handoff-validation.js"

// README-EXAMPLE-START
export const example = Effect.gen(function* () {
  // 1. Before compaction: accept the agent's handoff and bind it to the thread and job.
  const handoff = yield* parseHandoffJson(
    '{"summary":"Parser ported; tests green","nextStep":"Run the e2e suite and stop","resume":true}',
  )
  const bound = yield* bindHandoff({
    threadId: "thread-1",
    jobId: "job-7",
    handoff,
    createdAt: "2025-01-31T12:00:00.000Z",
  })
  // Store bound.text at a path and bound.digest in the job record (IO is the caller's).
  // 2. After compaction: verify what was read back, then render the continuation turn.
  const record = yield* verifyHandoffRecord({
    text: bound.text,
    expectedDigest: bound.digest,
    threadId: "thread-1",
    jobId: "job-7",
    forContinuation: true,
  })
  return renderContinuation(record, "/jobs/thread-1.job-7.handoff.json")
})
// README-EXAMPLE-END

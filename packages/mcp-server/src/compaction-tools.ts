/**
 * `schedule_compaction`, `compaction_status`, `cancel_compaction`: the compaction jobs of a Codex
 * thread, with Rekall's semantics. Guarantees: the thread id is validated, never guessed; a
 * handoff is validated and bound before anything is written; scheduling returns as soon as the
 * background worker is launched (one unfinished job per thread: again → `alreadyScheduled`);
 * results carry states, reasons, ids and numbers, never handoff text. @baton/compaction (and
 * effect) load on the first call.
 */
import { z } from "zod"
import { defineBatonTool } from "./baton-tool.js"

const threadId = z
  .string()
  .describe(
    "The Codex thread id: exactly $CODEX_THREAD_ID of the thread to compact (a UUID). Never guess it.",
  )

const nullableNumber = z.number().nullable()

const jobView = z.object({
  jobId: z.string(),
  threadId: z.string(),
  jobNumber: z.number().int(),
  status: z
    .string()
    .describe(
      "scheduled, waiting_for_idle, idle_settling, compaction_requested, compaction_accepted, compacting, finishing_compaction, waiting_for_resume_idle, resume_idle_settling, verifying_handoff, continuation_requested, continuation_running; terminal: completed, resumed, cancelled, failed, expired, outcome_may_be_unknown",
    ),
  terminal: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().nullable(),
  reason: z.string().nullable().describe("why the job ended"),
  detail: z.string().nullable().describe("the ending in one sentence"),
  resume: z.boolean().describe("true when a verified handoff asks for a continuation"),
  handoffDigest: z.string().nullable(),
  outcomeMayBeUnknown: z
    .boolean()
    .describe("a request was sent and its result is unknown; it is never resent"),
  resumeSkipped: z.string().nullable(),
  resumeSkipReason: z.string().nullable(),
  transport: z.object({ kind: z.string(), detail: z.string() }).nullable(),
  continuationTurnId: z.string().nullable(),
  continuationOutcome: z.string().nullable(),
  settings: z.object({
    idleDebounceMs: z.number(),
    idleWaitMs: z.number(),
    compactionMs: z.number(),
    continuationMs: z.number(),
    continuationTurnMs: z.number(),
    headroomThreshold: z.number(),
  }),
  metrics: z.object({
    tokensBefore: nullableNumber,
    tokensAfter: nullableNumber,
    modelContextWindowAfter: nullableNumber,
    tokensReclaimed: nullableNumber,
    reclaimedFraction: nullableNumber,
    contextWindowUsedFraction: nullableNumber,
    compactionDurationMs: nullableNumber,
    continuationDelayMs: nullableNumber,
  }),
})

const worker = z.object({
  state: z.enum(["running", "starting", "none"]),
  pid: z.number().int().nullable(),
  leaseExpiresAt: z.string().nullable(),
})

const recovery = z
  .object({ jobId: z.string(), from: z.string(), to: z.string(), detail: z.string() })
  .nullable()
  .describe("set when this call found the job's worker dead and ended the job by the job table")

/** The `schedule_compaction` tool. */
export const scheduleCompactionTool = defineBatonTool({
  name: "schedule_compaction",
  title: "Schedule compaction of this Codex thread",
  description:
    "Asks Baton to compact the Codex thread once it is idle, then (if the handoff says resume: true and the context has room) start exactly one continuation turn carrying the handoff. Call compaction_status and probe_compaction first; validate the handoff with handoff_validate. Schedule once, then END YOUR TURN: the compaction only starts when the thread is idle. Scheduling again with the same handoff while a job is unfinished returns that job (alreadyScheduled); a different handoff is refused (HandoffNotAttached), never dropped.",
  inputSchema: {
    threadId,
    handoff: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "Optional handoff {summary, preserve?, discard?, nextStep?, resume}; without it Baton compacts and never continues.",
      ),
  },
  outputSchema: {
    alreadyScheduled: z.boolean(),
    job: jobView,
    handoffPath: z.string().nullable().describe("where the bound handoff is stored"),
    worker,
    recovered: recovery,
  },
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  handler: async (input) => {
    const [Effect, ops] = await Promise.all([import("effect/Effect"), import("@baton/compaction")])
    const result = await Effect.runPromise(
      Effect.result(
        ops
          .scheduleCompaction({ threadId: input.threadId, handoff: input.handoff ?? null })
          .pipe(Effect.provide(ops.nodeCompactionLayer({ env: process.env, cwd: process.cwd() }))),
      ),
    )
    return result._tag === "Success"
      ? { _tag: "Success", success: { ...result.success, job: { ...result.success.job } } }
      : result
  },
})

/** The `compaction_status` tool. */
export const compactionStatusTool = defineBatonTool({
  name: "compaction_status",
  title: "Compaction status of this Codex thread",
  description:
    "The thread's current compaction job (state, why it ended, whether a request's outcome is unknown, tokens before/after, durations), its background worker, and the metrics of the last 20 jobs. If the worker died, this call ends its job safely (never resends) and says so in `recovered`.",
  inputSchema: { threadId },
  outputSchema: {
    threadId: z.string(),
    jobsDir: z.string(),
    current: jobView.nullable(),
    cancelRequested: z.boolean(),
    worker,
    recovered: recovery,
    history: z.array(
      z.object({
        jobId: z.string(),
        jobNumber: z.number(),
        status: z.string(),
        createdAt: z.number(),
        endedAt: nullableNumber,
        resumeSkipped: z.string().nullable(),
        tokensBefore: nullableNumber,
        tokensAfter: nullableNumber,
        tokensReclaimed: nullableNumber,
        reclaimedFraction: nullableNumber,
        compactionDurationMs: nullableNumber,
        continuationDelayMs: nullableNumber,
      }),
    ),
    tornTempFiles: z.array(z.string()),
    recoverySkipped: z
      .string()
      .nullable()
      .describe(
        "null normally; why a job that looked abandoned was reported as stored, not recovered (a full or read-only disk, or another Baton process held the thread's lock)",
      ),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  handler: async ({ threadId: id }) => {
    const [Effect, ops] = await Promise.all([import("effect/Effect"), import("@baton/compaction")])
    const result = await Effect.runPromise(
      Effect.result(
        ops
          .compactionStatus(id)
          .pipe(Effect.provide(ops.nodeCompactionLayer({ env: process.env, cwd: process.cwd() }))),
      ),
    )
    return result._tag === "Success"
      ? {
          _tag: "Success",
          success: {
            ...result.success,
            history: [...result.success.history],
            tornTempFiles: [...result.success.tornTempFiles],
          },
        }
      : result
  },
})

/** The `cancel_compaction` tool. */
export const cancelCompactionTool = defineBatonTool({
  name: "cancel_compaction",
  title: "Cancel a compaction job",
  description:
    "Cancels the thread's compaction job. Before the compaction request is sent nothing happens to the thread; after it was sent it cannot be recalled and the job ends cancelled with outcomeMayBeUnknown. Once the continuation turn was sent nothing is cancelled (cancelRequested false, refusal and message say so: interrupt the turn in Codex). A job that already ended is reported as is.",
  inputSchema: { threadId, jobId: z.string().describe("the job id from schedule_compaction") },
  outputSchema: {
    job: jobView,
    cancelRequested: z.boolean(),
    alreadyEnded: z.boolean(),
    recovered: recovery,
    refusal: z
      .enum(["continuation_already_sent", "continuation_already_running"])
      .nullable()
      .describe(
        "why a cancel cannot stop the unfinished job (the continuation was sent); null otherwise",
      ),
    message: z.string().describe("what happened and what to do"),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  handler: async ({ threadId: id, jobId }) => {
    const [Effect, ops] = await Promise.all([import("effect/Effect"), import("@baton/compaction")])
    return Effect.runPromise(
      Effect.result(
        ops
          .cancelCompaction(id, jobId)
          .pipe(Effect.provide(ops.nodeCompactionLayer({ env: process.env, cwd: process.cwd() }))),
      ),
    )
  },
})

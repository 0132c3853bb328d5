/**
 * `wake_create`, `wake_checkpoint`, `wake_status`, `wake_pause`, `wake_complete`: wake jobs from
 * an agent.
 * Guarantees: every change goes through @baton/wake's job store (lock + compare-and-set) and its
 * transition table; a job id is validated, never guessed (MCP servers do not receive
 * `$CODEX_THREAD_ID`, so the owning thread is passed explicitly); results carry states, paths,
 * sizes, problems and the CLI's checkpoint notes (`checkpointNotes`: heading lines and section
 * names at most), never checkpoint or capsule text. A continuation ends with `wake_complete` (the
 * explicit success signal) or `wake_pause` (it needs the user). @baton/wake and effect load on the
 * first call.
 */
import { randomBytes } from "node:crypto"
import { homedir, hostname } from "node:os"
import { isAbsolute } from "node:path"
import type { Effect as EffectTypes } from "effect"
import { z } from "zod"
import { defineBatonTool, toolFailure, toolSuccess } from "./baton-tool.js"

const jobIdInput = z
  .string()
  .describe(
    "The wake job id (wake-YYYYMMDD-HHMMSS-xxxxxxxx), as `wake_create` returned it or the recovery prompt names it.",
  )

const states = z
  .string()
  .describe(
    "draft, monitoring, quota_waiting, running, retry_waiting, waiting_user, needs_attention, stopped, completed",
  )

const checkpointNotesField = z
  .array(z.string())
  .describe(
    "what parsing checkpoint.md noticed besides readiness (wrong-level, unknown, missing, aliased or duplicated sections), one line each; fix the checkpoint when not empty",
  )

const loadWake = async () => {
  const [Effect, wake] = await Promise.all([import("effect/Effect"), import("@baton/wake")])
  const env = process.env
  const wakeDir = wake.wakeDirectory({
    BATON_WAKE_DIR: env["BATON_WAKE_DIR"],
    CODEX_HOME: env["CODEX_HOME"],
    HOME: env["HOME"] ?? homedir(),
  })
  const fs = wake.nodeWakeFileSystemFor({ BATON_WAKE_DIR: env["BATON_WAKE_DIR"] })
  const store = wake.makeJobStore(wakeDir, fs, process.pid, {
    holderProbe: wake.nodeContinuationProcesses.isAlive,
  })
  const run = <A, E extends { readonly _tag: string }>(program: EffectTypes.Effect<A, E>) =>
    Effect.runPromise(Effect.result(program))
  const watcherRunning = async () => {
    const lock = await Effect.runPromise(
      wake.readLiveWatcherLock(fs, wakeDir, hostname(), wake.nodeContinuationProcesses.isAlive),
    )
    return lock !== null
  }
  return { Effect, wake, store, fs, run, watcherRunning }
}

/** Input of `wake_create`. */
export const wakeCreateInput = {
  objective: z
    .string()
    .trim()
    .min(1, "objective must say the goal: it is empty or only whitespace")
    .describe(
      "One concise goal for the whole task, on one line, at most 2048 bytes (details go in the checkpoint).",
    ),
  threadId: z
    .string()
    .optional()
    .describe(
      "The Codex thread that owns the task: exactly its $CODEX_THREAD_ID, a UUID (provenance only; never resumed). An open job of that thread is returned instead of a new one, also to calls made at the same time.",
    ),
  cwd: z
    .string()
    .optional()
    .describe(
      "Absolute path of the workspace directory the continuation runs in (default: the server's directory).",
    ),
  checkpoint: z
    .string()
    .optional()
    .describe(
      "Checkpoint markdown (## Objective, ## Current position, ## Verified facts, ## Decisions / do not repeat, ## Constraints, ## Active files, ## Next actions, ## Blockers). Written and projected into the capsule.",
    ),
  arm: z.boolean().optional().describe("Arm the job when the checkpoint is ready (default false)."),
  model: z
    .string()
    .optional()
    .describe("Model for continuations (default: Codex's configuration)."),
  reasoningEffort: z
    .string()
    .optional()
    .describe("Reasoning effort for continuations: low, medium, high, xhigh, max or ultra."),
}

/** Output of `wake_create`. */
export const wakeCreateOutput = {
  jobId: z.string(),
  state: states,
  alreadyExists: z.boolean(),
  checkpointPath: z.string().describe("Edit this file to keep the checkpoint current."),
  capsulePath: z.string(),
  ready: z.boolean().describe("true when the checkpoint can be armed"),
  problems: z.array(z.string()).describe("what keeps the checkpoint from being ready"),
  armed: z.boolean().describe("true when this call armed the job"),
  armRefused: z
    .string()
    .nullable()
    .describe("why arm: true did not arm the job (null when it did or was not asked)"),
  watcherRunning: z.boolean().describe("false: run `baton wake watch --detach`"),
  checkpointNotes: checkpointNotesField.describe(
    "notes on the checkpoint this call wrote (empty when it wrote none), one line each: wrong-level, unknown, missing, aliased or duplicated sections; fix the checkpoint when not empty",
  ),
}

/** The `wake_create` tool. */
export const wakeCreateTool = defineBatonTool({
  name: "wake_create",
  title: "Create a wake job",
  description:
    "Create a durable wake job for a long task so it survives a quota window: Baton keeps a checkpoint and a ≤ 8 KiB memory capsule, a watcher reads the quota without model calls, and when usage is allowed again a fresh `codex exec` continuation resumes from the capsule (a CLI continuation, not the original chat). Pass the checkpoint and arm: true to arm in one call; read checkpointNotes for sections it misread.",
  inputSchema: wakeCreateInput,
  outputSchema: wakeCreateOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  handler: async (input) => {
    const { Effect, wake, store, fs, run, watcherRunning } = await loadWake()
    const cwd = input.cwd ?? process.cwd()
    if (!isAbsolute(cwd))
      return toolFailure(
        new wake.InvalidJobSettingError({ field: "cwd", value: cwd, rule: "an absolute path" }),
      )
    const program = Effect.gen(function* () {
      const created = yield* wake.createJob(store, fs, {
        objective: input.objective,
        threadId: input.threadId ?? null,
        cwd,
        model: input.model ?? null,
        reasoningEffort: input.reasoningEffort ?? null,
        delivery: "new_thread",
        bounds: {},
        idSuffix: randomBytes(4).toString("hex"),
      })
      const jobId = created.stored.job.jobId
      let problems: ReadonlyArray<string> = (yield* store.memoryStatus(jobId)).problems
      let notes: ReadonlyArray<string> = []
      let state = created.stored.job.state
      if (input.checkpoint !== undefined && !created.alreadyExists) {
        const written = yield* wake.writeJobCheckpoint(store, jobId, input.checkpoint)
        problems = written.problems
        notes = wake.checkpointNotes(input.checkpoint)
        state = written.stored.job.state
      }
      let armRefused: string | null = null
      if (input.arm === true) {
        if (problems.length > 0) armRefused = `the checkpoint is not ready: ${problems.join("; ")}`
        else if (state !== "draft")
          armRefused = `the job already exists in state ${state}; use wake_checkpoint with arm: true to re-arm it`
        else state = (yield* wake.armJob(store, jobId)).stored.job.state
      }
      return { created, jobId, problems, notes, state, armRefused }
    })
    const result = await run(program)
    if (result._tag === "Failure") return toolFailure(result.failure)
    const { created, jobId, problems, notes, state, armRefused } = result.success
    const paths = store.paths(jobId)
    return toolSuccess({
      jobId,
      state,
      alreadyExists: created.alreadyExists,
      checkpointPath: paths.checkpoint,
      capsulePath: paths.capsule,
      ready: problems.length === 0,
      problems: [...problems],
      armed: input.arm === true && armRefused === null,
      armRefused,
      watcherRunning: await watcherRunning(),
      checkpointNotes: [...notes],
    })
  },
})

/** Input of `wake_checkpoint`. */
export const wakeCheckpointInput = {
  jobId: jobIdInput,
  checkpoint: z
    .string()
    .min(1)
    .describe(
      "The whole checkpoint markdown (≤ 64 KiB). Update it after each milestone and before long, risky or quota-heavy work; record abandoned approaches under Decisions / do not repeat.",
    ),
  arm: z.boolean().optional().describe("Also arm (or re-arm) the job when ready (default false)."),
}

/** Output of `wake_checkpoint`. */
export const wakeCheckpointOutput = {
  jobId: z.string(),
  state: states,
  ready: z.boolean(),
  problems: z.array(z.string()),
  capsuleBytes: z.number().int().nullable().describe("the projected capsule's size (≤ 8192)"),
  projections: z.number().int(),
  armed: z.boolean().describe("true when this call armed (or re-armed) the job"),
  armRefused: z
    .string()
    .nullable()
    .describe("why arm: true did not arm the job (null when it did or was not asked)"),
  maskedSecrets: z
    .number()
    .int()
    .describe("likely secrets masked in the capsule (checkpoint.md keeps them as written)"),
  checkpointNotes: checkpointNotesField,
}

/** The `wake_checkpoint` tool. */
export const wakeCheckpointTool = defineBatonTool({
  name: "wake_checkpoint",
  title: "Write a wake job's checkpoint",
  description:
    "Replace the job's checkpoint.md and re-project the memory capsule locally (no model call). The capsule is what a continuation starts from, so keep Objective, Current position, Verified facts and Next actions current. Read checkpointNotes: what the parser noticed (a `#` or `###` heading instead of `##`; unknown, missing, aliased or duplicated sections); fix the checkpoint when it is not empty.",
  inputSchema: wakeCheckpointInput,
  outputSchema: wakeCheckpointOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  handler: async (input) => {
    const { Effect, wake, store, run } = await loadWake()
    const result = await run(
      Effect.gen(function* () {
        // A completed job refuses the write itself (JobRefused), so arm never meets one here.
        const written = yield* wake.writeJobCheckpoint(store, input.jobId, input.checkpoint)
        let stored = written.stored
        let armRefused: string | null = null
        if (input.arm === true) {
          if (written.problems.length > 0)
            armRefused = `the checkpoint is not ready: ${written.problems.join("; ")}`
          else stored = (yield* wake.armJob(store, input.jobId)).stored
        }
        return { stored, problems: written.problems, armRefused }
      }),
    )
    if (result._tag === "Failure") return toolFailure(result.failure)
    const { stored, problems, armRefused } = result.success
    return toolSuccess({
      jobId: stored.job.jobId,
      state: stored.job.state,
      ready: problems.length === 0,
      problems: [...problems],
      capsuleBytes: stored.job.memory.capsuleBytes,
      projections: stored.job.memory.projections,
      armed: input.arm === true && armRefused === null,
      armRefused,
      maskedSecrets: stored.job.memory.maskedSecrets ?? 0,
      checkpointNotes: [...wake.checkpointNotes(input.checkpoint)],
    })
  },
})

const nullableNumber = z.number().nullable()

const statusReport = z.object({
  jobId: z.string(),
  state: states,
  cwd: z.string(),
  originalThreadId: z.string().nullable(),
  continuationThreadId: z.string().nullable(),
  delivery: z.string(),
  deliveryLabel: z
    .string()
    .describe(
      "cli_continuation_only: continuations are new `codex exec` threads, not the original chat",
    ),
  generation: z.number().int(),
  windows: z.number().int(),
  retryCount: z.number().int(),
  nextRetryAt: nullableNumber,
  unknownUsageCount: z.number().int(),
  resetsAt: nullableNumber.describe("epoch ms; only schedules checks"),
  pressure: z
    .string()
    .describe("unknown, normal (<80 %), prepare, high (≥90 %, sealed), final (≥95 %)"),
  usedPercent: nullableNumber,
  running: z
    .object({ generation: z.number().int(), pid: nullableNumber, threadId: z.string().nullable() })
    .nullable(),
  lastRun: z
    .object({
      generation: z.number().int(),
      failure: z.string(),
      detail: z.string().nullable(),
      exitCode: nullableNumber,
    })
    .nullable(),
  pauseReason: z.string().nullable(),
  lastError: z.string().nullable(),
  capsule: z.object({
    ready: z.boolean(),
    bytes: nullableNumber,
    checkpointNewerThanCapsule: z.boolean(),
    problems: z.array(z.string()),
  }),
  sealed: z.boolean(),
  checkpointRequested: z
    .boolean()
    .describe("quota pressure asked for a fresh checkpoint that has not been written since"),
  checkpointPath: z.string(),
  checkpointNotes: checkpointNotesField.describe(
    "what parsing checkpoint.md on disk noticed besides readiness (empty when it cannot be read), one line each; fix the checkpoint when not empty",
  ),
})

/** Input of `wake_status`. */
export const wakeStatusInput = {
  jobId: jobIdInput.optional().describe("A job id; omit to list every job."),
}

/** Output of `wake_status`. */
export const wakeStatusOutput = {
  status: statusReport.nullable().describe("the job asked for, or null when listing"),
  jobs: z.array(
    z.object({
      jobId: z.string(),
      state: states,
      pressure: z.string(),
      generation: z.number().int(),
      updatedAt: z.number(),
    }),
  ),
  orphanJobDirs: z
    .array(z.string())
    .describe(
      "job directories without state.json (a failed or killed create): invisible to the watcher; inspect, then delete",
    ),
  tornTempFiles: z
    .array(z.string())
    .describe(
      "temporary files a killed or failed write left (*.tmp, *.creating, lock.stale-*): safe to delete when no Baton command runs",
    ),
  watcherRunning: z.boolean(),
}

/** The `wake_status` tool. */
export const wakeStatusTool = defineBatonTool({
  name: "wake_status",
  title: "Show wake jobs",
  description:
    "Read-only: a job's state, quota pressure band, continuations and retries, the capsule's freshness and problems, checkpoint notes (sections the parser misread), and whether the watcher runs; without a job id, every job.",
  inputSchema: wakeStatusInput,
  outputSchema: wakeStatusOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (input) => {
    const { Effect, wake, store, fs, run, watcherRunning } = await loadWake()
    const result = await run(
      Effect.gen(function* () {
        const listed = yield* wake.listJobs(store)
        const report =
          input.jobId === undefined
            ? null
            : yield* wake.jobStatus(store, fs, input.jobId, {
                host: hostname(),
                probe: wake.nodeContinuationProcesses.isAlive,
              })
        // What checkpoint.md's sections look like (never its text), as `baton wake status` shows.
        const checkpointText =
          report === null
            ? null
            : yield* Effect.orElseSucceed(store.readCheckpoint(report.jobId), () => null)
        const notes = checkpointText === null ? [] : wake.checkpointNotes(checkpointText)
        return { listed, report, notes }
      }),
    )
    if (result._tag === "Failure") return toolFailure(result.failure)
    const { listed, report, notes } = result.success
    return toolSuccess({
      status:
        report === null
          ? null
          : {
              jobId: report.jobId,
              state: report.state,
              cwd: report.cwd,
              originalThreadId: report.originalThreadId,
              continuationThreadId: report.continuationThreadId,
              delivery: report.delivery,
              deliveryLabel: report.deliveryLabel,
              generation: report.generation,
              windows: report.windows,
              retryCount: report.retryCount,
              nextRetryAt: report.nextRetryAt,
              unknownUsageCount: report.unknownUsageCount,
              resetsAt: report.resetsAt,
              pressure: report.pressure,
              usedPercent: report.usedPercent,
              running:
                report.run === null
                  ? null
                  : {
                      generation: report.run.generation,
                      pid: report.run.pid,
                      threadId: report.run.threadId,
                    },
              lastRun:
                report.lastRun === null
                  ? null
                  : {
                      generation: report.lastRun.generation,
                      failure: report.lastRun.failure,
                      detail: report.lastRun.detail,
                      exitCode: report.lastRun.exitCode,
                    },
              pauseReason: report.pauseReason,
              lastError: report.lastError,
              capsule: {
                ready: report.memory.ready,
                bytes: report.memory.capsuleBytes,
                checkpointNewerThanCapsule: report.memory.checkpointNewerThanCapsule,
                problems: [...report.memory.problems],
              },
              sealed: report.seal !== null,
              checkpointRequested: report.checkpointRequested,
              checkpointPath: report.paths.checkpoint,
              checkpointNotes: [...notes],
            },
      jobs: listed.jobs.map((job) => ({
        jobId: job.jobId,
        state: job.state,
        pressure: job.pressure,
        generation: job.generation,
        updatedAt: job.updatedAt,
      })),
      orphanJobDirs: [...listed.orphanJobDirs],
      tornTempFiles: [...listed.tornTempFiles],
      watcherRunning: await watcherRunning(),
    })
  },
})

/** Input of `wake_complete`. */
export const wakeCompleteInput = { jobId: jobIdInput }

/** Output of `wake_complete`. */
export const wakeCompleteOutput = {
  jobId: z.string(),
  state: states,
  completedAt: z.number().nullable(),
}

/** The `wake_complete` tool. */
export const wakeCompleteTool = defineBatonTool({
  name: "wake_complete",
  title: "Mark a wake job complete",
  description:
    "The explicit success signal: call it when the job's Objective is done (update the checkpoint first). Completed is final; the watcher launches nothing more for the job.",
  inputSchema: wakeCompleteInput,
  outputSchema: wakeCompleteOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  handler: async (input) => {
    const { wake, store, run } = await loadWake()
    const result = await run(wake.completeJob(store, input.jobId))
    if (result._tag === "Failure") return toolFailure(result.failure)
    const job = result.success.stored.job
    return toolSuccess({ jobId: job.jobId, state: job.state, completedAt: job.completedAt })
  },
})

/** Input of `wake_pause`. */
export const wakePauseInput = {
  jobId: jobIdInput,
  reason: z
    .string()
    .trim()
    .min(1, "reason must say what the job waits for: it is empty or only whitespace")
    .max(500)
    .describe("What the job waits for from the user (shown in wake_status)."),
}

/** Output of `wake_pause`. */
export const wakePauseOutput = {
  jobId: z.string(),
  state: states,
  pauseReason: z.string().nullable(),
}

/** The `wake_pause` tool. */
export const wakePauseTool = defineBatonTool({
  name: "wake_pause",
  title: "Pause a wake job for the user",
  description:
    "The job needs the user (a decision, a credential, an approval): update the checkpoint first, then pause it. The watcher launches nothing for a paused job; the user re-arms it (`baton wake arm`, or wake_checkpoint with arm: true) once unblocked.",
  inputSchema: wakePauseInput,
  outputSchema: wakePauseOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  handler: async (input) => {
    const { wake, store, run } = await loadWake()
    const result = await run(wake.pauseJob(store, input.jobId, input.reason))
    if (result._tag === "Failure") return toolFailure(result.failure)
    const job = result.success.stored.job
    return toolSuccess({ jobId: job.jobId, state: job.state, pauseReason: job.pauseReason })
  },
})

/** The five wake tools, in `tools/list` order. */
export const wakeTools = [
  wakeCreateTool,
  wakeCheckpointTool,
  wakeStatusTool,
  wakePauseTool,
  wakeCompleteTool,
] as const

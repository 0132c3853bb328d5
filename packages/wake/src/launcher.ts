/**
 * The launcher: starts one bounded continuation of a job and reads how it ended.
 *
 * Guarantees:
 * - the capsule is re-projected from the checkpoint on disk first, and a checkpoint that is not
 *   ready (placeholders, empty Objective / Next actions) refuses the launch;
 * - the prompt names the exact job id and embeds the capsule; nothing of the old chat;
 * - `run-NNNN.meta.json` is written before the spawn and again right after it with the pid and
 *   the process start time, so a watcher that dies mid-launch leaves enough for the next one to
 *   adopt the run instead of launching it twice;
 * - the outcome is classified from structured data only (the rollout's `codex_error_info`, the
 *   run log's events, the exit status), never from raw text;
 * - the process is stopped through its whole process group, TERM then KILL after a grace.
 * It decides nothing about the job: the watcher feeds what it returns to the transition table.
 */
import { createHash } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { classifyRun } from "./failure-classifier.js"
import type { RunClassification } from "./failure-classifier.js"
import { execPlan } from "./continuation-plan.js"
import type {
  ContinuationProcessesShape,
  ProcessExit,
  SpawnedProcess,
} from "./continuation-processes.js"
import type { JobRecord, DeliveryMode } from "./job-record.js"
import { WAKE_DIR_MODE, WAKE_FILE_MODE } from "./job-paths.js"
import type { JobStoreShape } from "./job-store.js"
import { recoveryPrompt } from "./recovery-prompt.js"
import { decodeRunMeta, encodeRunMeta, runFiles } from "./run-meta.js"
import type { RunFiles, RunMeta } from "./run-meta.js"
import {
  exhaustedWindowResetsAt,
  lastTurnError,
  scanExecLog,
  splitCompleteLines,
} from "./run-signals.js"
import type { SameThreadTurnsShape } from "./same-thread-turns.js"
import type { ThreadSignalsShape } from "./thread-signals.js"
import type { WakeFileSystemShape } from "./wake-file-system.js"

/** What the launcher works with. */
export interface LaunchContext {
  readonly store: JobStoreShape
  readonly fs: WakeFileSystemShape
  readonly processes: ContinuationProcessesShape
  readonly signals: ThreadSignalsShape
  /** `original_thread` delivery through the daemon. */
  readonly sameThread: SameThreadTurnsShape
  /** Absolute path of the `codex` executable. */
  readonly codexBinary: string
  /** How continuations run Baton, e.g. `"/usr/bin/node" "/opt/baton/dist/bin.js"`. */
  readonly batonCommand: string
  /** Environment the continuation inherits (minus `CODEX_THREAD_ID`). */
  readonly baseEnv: Readonly<Record<string, string | undefined>>
}

/** A launch attempt's result. */
export type LaunchResult =
  | {
      readonly _tag: "Spawned"
      readonly process: SpawnedProcess
      readonly files: RunFiles
      readonly mode: DeliveryMode
      /** Set when the preferred delivery was unavailable and a new thread was used instead. */
      readonly fallback: string | null
    }
  /** A turn on the original thread (no process of ours: the daemon runs it). */
  | {
      readonly _tag: "Turn"
      readonly threadId: string
      readonly turnId: string
      readonly files: RunFiles
    }
  | { readonly _tag: "Refused"; readonly detail: string }

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

const describe = (error: { readonly _tag: string; readonly message?: string }) =>
  error.message ?? error._tag

/** Reads a run's meta file (null when absent or torn). */
export const readRunMeta = (
  fs: WakeFileSystemShape,
  files: RunFiles,
): Effect.Effect<RunMeta | null> =>
  fs.readText(files.meta).pipe(
    Effect.map((text) => (text === null ? null : decodeRunMeta(text))),
    Effect.orElseSucceed(() => null),
  )

/** Rewrites a run's meta file with `patch` applied (best effort: meta is a record, not state). */
export const updateRunMeta = (
  fs: WakeFileSystemShape,
  files: RunFiles,
  patch: Partial<RunMeta>,
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const meta = yield* readRunMeta(fs, files)
    if (meta === null) return
    yield* fs.writeAtomic(files.meta, encodeRunMeta({ ...meta, ...patch }), WAKE_FILE_MODE)
  }).pipe(Effect.ignore)

/** Starts continuation `generation` of `job` (a new `codex exec` thread, or the job's own thread). */
export const launchContinuation = (
  ctx: LaunchContext,
  job: JobRecord,
  generation: number,
): Effect.Effect<LaunchResult> =>
  Effect.gen(function* () {
    const paths = ctx.store.paths(job.jobId)
    const projected = yield* Effect.result(ctx.store.refreshCapsule(job.jobId))
    if (projected._tag === "Failure")
      return { _tag: "Refused", detail: describe(projected.failure) } as const
    const { capsule, stored } = projected.success
    if (!stored.job.memory.ready)
      return {
        _tag: "Refused",
        detail: "the checkpoint is not ready (placeholders, or no Objective / Next actions)",
      } as const
    const files = runFiles(paths, generation)
    const promptFor = (delivery: DeliveryMode) =>
      recoveryPrompt({
        jobId: job.jobId,
        generation,
        cwd: job.cwd,
        statePath: paths.state,
        capsulePath: paths.capsule,
        checkpointPath: paths.checkpoint,
        batonCommand: ctx.batonCommand,
        capsuleText: capsule.text,
        delivery,
      })
    let fallback: string | null = null
    if (job.delivery === "original_thread") {
      if (job.originalThreadId === null) fallback = "the job names no original thread"
      else {
        const prompt = promptFor("original_thread")
        const now = yield* Clock.currentTimeMillis
        const meta: RunMeta = {
          ...emptyMeta(job, generation, now),
          mode: "original_thread",
          label: "same_thread_turn",
          command: "turn/start (app-server daemon)",
          promptSha256: sha256(prompt),
          threadId: job.originalThreadId,
        }
        const written = yield* Effect.result(
          Effect.andThen(
            ctx.fs.ensureDir(paths.runsDir, WAKE_DIR_MODE),
            ctx.fs.writeAtomic(files.meta, encodeRunMeta(meta), WAKE_FILE_MODE),
          ),
        )
        if (written._tag === "Failure")
          return { _tag: "Refused", detail: describe(written.failure) } as const
        const started = yield* ctx.sameThread.start(job.originalThreadId, prompt)
        if (started._tag === "Started") {
          yield* updateRunMeta(ctx.fs, files, { turnId: started.turnId })
          return {
            _tag: "Turn",
            threadId: job.originalThreadId,
            turnId: started.turnId,
            files,
          } as const
        }
        fallback = started.detail
      }
    }
    const resumeThreadId = job.delivery === "job_thread" ? (job.continuationThreadId ?? null) : null
    const mode: DeliveryMode = resumeThreadId === null ? "new_thread" : "job_thread"
    const prompt = promptFor(mode)
    const plan = execPlan({
      codexBinary: ctx.codexBinary,
      job,
      generation,
      jobDir: paths.dir,
      prompt,
      lastMessageFile: files.lastMessage,
      resumeThreadId,
      baseEnv: ctx.baseEnv,
    })
    if (plan._tag === "InvalidJobSetting") return { _tag: "Refused", detail: plan.message } as const
    const now = yield* Clock.currentTimeMillis
    const meta: RunMeta = {
      ...emptyMeta(job, generation, now),
      mode: plan.mode,
      command: plan.command,
      args: plan.args.map((arg) => (arg === prompt ? "<prompt>" : arg)),
      promptSha256: sha256(prompt),
      cwd: plan.cwd,
      threadId: resumeThreadId,
      detail: fallback === null ? null : `original_thread unavailable (${fallback}); new thread`,
    }
    const written = yield* Effect.result(
      Effect.andThen(
        ctx.fs.ensureDir(paths.runsDir, WAKE_DIR_MODE),
        Effect.andThen(
          ctx.fs.writeAtomic(files.meta, encodeRunMeta(meta), WAKE_FILE_MODE),
          // Codex writes `-o` in place: made first, the last message keeps wake's 0600.
          ctx.fs.createExclusive(files.lastMessage, "", WAKE_FILE_MODE),
        ),
      ),
    )
    if (written._tag === "Failure")
      return { _tag: "Refused", detail: describe(written.failure) } as const
    const spawned = yield* Effect.result(
      ctx.processes.spawn({
        command: plan.command,
        args: plan.args,
        cwd: plan.cwd,
        env: plan.env,
        stdoutFile: files.log,
        stderrFile: files.stderr,
      }),
    )
    if (spawned._tag === "Failure") {
      yield* updateRunMeta(ctx.fs, files, {
        endedAt: now,
        failure: "other",
        detail: spawned.failure.message,
      })
      return { _tag: "Refused", detail: spawned.failure.message } as const
    }
    yield* updateRunMeta(ctx.fs, files, {
      pid: spawned.success.pid,
      startTicks: spawned.success.startTicks,
    })
    return {
      _tag: "Spawned",
      process: spawned.success,
      files,
      mode: plan.mode,
      fallback,
    } as const
  })

const emptyMeta = (job: JobRecord, generation: number, now: number): RunMeta => ({
  schemaVersion: 1,
  jobId: job.jobId,
  generation,
  mode: "new_thread",
  label: "cli_continuation",
  command: "",
  args: [],
  promptSha256: "",
  cwd: job.cwd,
  launchedAt: now,
  pid: null,
  startTicks: null,
  threadId: null,
  turnId: null,
  endedAt: null,
  exitCode: null,
  signal: null,
  killedBy: null,
  failure: null,
  detail: null,
  lastAgentMessage: null,
})

/** The thread id a run log names (`thread.started`), once it appears. */
export const discoverRunThread = (
  fs: WakeFileSystemShape,
  files: RunFiles,
): Effect.Effect<string | null> =>
  fs.readText(files.log).pipe(
    Effect.map((text) =>
      text === null ? null : scanExecLog(splitCompleteLines(`${text}\n`).lines).threadId,
    ),
    Effect.orElseSucceed(() => null),
  )

/** How a run ended, as recorded. */
export interface RunOutcome extends RunClassification {
  readonly threadId: string | null
  readonly lastAgentMessage: string | null
  readonly exit: ProcessExit
  readonly killedBy: string | null
  /** For a usage-limit end: when the exhausted window resets (ms), from the rollout's snapshot. */
  readonly resetsAt: number | null
}

/** Reads an ended run's evidence, classifies it, and records it in the meta file. */
export const readRunOutcome = (
  ctx: LaunchContext,
  files: RunFiles,
  exit: ProcessExit,
  killedBy: string | null,
  knownThreadId: string | null,
): Effect.Effect<RunOutcome> =>
  Effect.gen(function* () {
    const logText = yield* ctx.fs.readText(files.log).pipe(Effect.orElseSucceed(() => null))
    const scan = scanExecLog(logText === null ? [] : splitCompleteLines(`${logText}\n`).lines)
    const threadId = scan.threadId ?? knownThreadId
    const rollout = threadId === null ? null : yield* ctx.signals.readAll(threadId)
    const rolloutError = rollout === null ? null : lastTurnError(rollout)
    const lastError =
      rolloutError ??
      (scan.lastTurnFailure === null ? null : { kind: null, message: scan.lastTurnFailure })
    const classification = classifyRun({
      lastError,
      exitCode: exit.code,
      signal: exit.signal,
      killedBy,
    })
    const lastMessageText = yield* ctx.fs
      .readText(files.lastMessage)
      .pipe(Effect.orElseSucceed(() => null))
    const lastAgentMessage =
      lastMessageText !== null && lastMessageText.trim() !== ""
        ? lastMessageText.trim().slice(0, 2000)
        : scan.lastAgentMessage
    const endedAt = yield* Clock.currentTimeMillis
    yield* updateRunMeta(ctx.fs, files, {
      endedAt,
      exitCode: exit.code,
      signal: exit.signal,
      killedBy,
      failure: classification.failure,
      // Keeps the launch's own detail (why original_thread fell back to a new thread) unless the
      // end has one to say; before, a clean end erased it.
      ...(classification.detail === null ? {} : { detail: classification.detail }),
      threadId,
      lastAgentMessage,
    })
    const resetsAt =
      classification.failure === "usage_limit" && rollout !== null
        ? exhaustedWindowResetsAt(rollout)
        : null
    return { ...classification, threadId, lastAgentMessage, exit, killedBy, resetsAt }
  })

/**
 * Stops a continuation's process group: TERM, then KILL after `graceMs` if it still runs. True
 * when the process is gone at the end — also when someone else (the watcher, reacting to the same
 * stop) ended it first; false only when it could not be signalled and still runs.
 */
export const stopContinuation = (
  processes: ContinuationProcessesShape,
  pid: number,
  startTicks: number | null,
  graceMs: number,
): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const signalled = yield* processes.signalGroup(pid, startTicks, "SIGTERM")
    if (!signalled) return !(yield* processes.isAlive(pid, startTicks))
    const step = Math.max(10, Math.min(100, graceMs))
    for (let waited = 0; waited < graceMs; waited += step) {
      if (!(yield* processes.isAlive(pid, startTicks))) return true
      yield* Effect.sleep(step)
    }
    yield* processes.signalGroup(pid, startTicks, "SIGKILL")
    return true
  })

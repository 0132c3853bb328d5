/**
 * `baton compact status|schedule|schedule-with-handoff|cancel`: the compaction jobs of a Codex
 * thread (`probe` reuses `baton codex probe`). Guarantees: the thread id is the argument or
 * `$CODEX_THREAD_ID`, never guessed, and validated before anything loads; a handoff file must be
 * an absolute path and is validated (JSON, schema, size, secrets) before anything is written;
 * scheduling returns as soon as the worker is launched (the agent should end its turn); the
 * output names states, reasons, ids and numbers, never handoff text. @baton/compaction and effect
 * load only when one of these commands runs.
 */
import { isAbsolute } from "node:path"
import type {
  CancelReport,
  CompactionServices,
  CompactionStatus,
  JobIds,
  JobView,
  ScheduleReport,
  WorkerLauncher,
} from "@baton/compaction"
import type { Effect as EffectType } from "effect"
import type { CliIo } from "./cli-io.js"
import type { CommandOutcome, CommandRunner, Invocation } from "./command-spec.js"
import { cliUsageError } from "./errors.js"
import { readInputBytes } from "./handoff-input.js"
import { resolveThreadId } from "./thread-id-argument.js"

type Failed = Extract<CommandOutcome, { _tag: "Failed" }>

const settingFlags = {
  "idle-debounce-ms": "idleDebounceMs",
  "idle-wait-ms": "idleWaitMs",
  "compaction-ms": "compactionMs",
  "continuation-ms": "continuationMs",
  "continuation-turn-ms": "continuationTurnMs",
  headroom: "headroomThreshold",
} as const

/**
 * The job settings given as flags; anything out of range is bad usage naming the flag: budgets are
 * whole milliseconds ≥ 0 written in decimal, `--headroom` a fraction between 0 and 1.
 */
const parseSettings = (
  invocation: Invocation,
  helpCommand: string,
): { readonly _tag: "Settings"; readonly settings: Record<string, number> } | Failed => {
  const settings: Record<string, number> = {}
  for (const [flag, key] of Object.entries(settingFlags)) {
    const value = invocation.flags[flag]
    if (value === undefined) continue
    const text = typeof value === "string" ? value.trim() : ""
    const bad = (problem: string): Failed => ({
      _tag: "Failed",
      json: invocation.flags["json"] === true,
      error: cliUsageError(
        `--${flag} ${problem}, got '${String(value).slice(0, 80)}'`,
        helpCommand,
      ),
    })
    // Decimal only: Number() would also take "0x10", "1e3" or "" (0).
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) return bad("needs a decimal number")
    const n = Number(text)
    if (key === "headroomThreshold") {
      if (!(n >= 0 && n <= 1)) return bad("must be between 0 and 1 (a fraction of the window)")
    } else if (Number.isInteger(n) && n > MAX_BUDGET_MS)
      return bad(`is too large: at most ${MAX_BUDGET_MS} ms (7 days)`)
    else if (!Number.isSafeInteger(n) || n < 0)
      return bad("must be a whole number of milliseconds, 0 or more")
    settings[key] = n
  }
  return { _tag: "Settings", settings }
}

/**
 * Longest budget a flag takes, a week: longer than any wait a compaction needs, and well below
 * 2^31 − 1 ms, past which a Node timer fires at once.
 */
const MAX_BUDGET_MS = 7 * 24 * 60 * 60 * 1000

const load = async (io: CliIo) => {
  const [Effect, compaction] = await Promise.all([
    import("effect/Effect"),
    import("@baton/compaction"),
  ])
  const layer = compaction.nodeCompactionLayer({ env: io.env, cwd: io.cwd })
  return {
    compaction,
    /** Runs an operation on this machine's services: its success, or its tagged failure. */
    run: <A, E extends { readonly _tag: string }>(
      program: EffectType.Effect<A, E, CompactionServices | WorkerLauncher | JobIds>,
    ) => Effect.runPromise(Effect.result(Effect.provide(program, layer))),
  }
}

const pct = (fraction: number | null): string =>
  fraction === null ? "?" : `${Math.round(fraction * 1000) / 10}%`

const num = (n: number | null): string => (n === null ? "?" : n.toLocaleString("en-US"))

/**
 * "reclaimed N", or "grew by N" when the compaction left more tokens than it found (a short
 * thread: the summary is longer than what it replaced); {@link share} is its size either way.
 */
const change = (tokens: number | null): string =>
  tokens !== null && tokens < 0 ? `grew by ${num(-tokens)}` : `reclaimed ${num(tokens)}`

const share = (fraction: number | null): string =>
  pct(fraction === null ? null : Math.abs(fraction))

/** Lines describing one job (no text beyond states, reasons and numbers). */
export const renderJob = (job: JobView): string => {
  const lines = [
    `job ${job.jobId} (#${job.jobNumber}) ${job.status}${job.terminal ? "" : " (in progress)"}`,
  ]
  if (job.reason !== null)
    lines.push(`  reason: ${job.reason}${job.detail === null ? "" : ` — ${job.detail}`}`)
  lines.push(
    `  resume: ${job.resume ? "yes" : "no"}${job.resumeSkipped === null ? "" : ` (skipped: ${job.resumeSkipped}${job.resumeSkipReason === null ? "" : `, ${job.resumeSkipReason}`})`}`,
  )
  if (job.outcomeMayBeUnknown)
    lines.push("  outcome may be unknown: a request was sent and not confirmed; it is never resent")
  if (job.transport !== null) lines.push(`  transport: ${job.transport.kind}`)
  const m = job.metrics
  if (m.tokensBefore !== null && m.tokensAfter === null)
    lines.push(`  tokens: ${num(m.tokensBefore)} before; nothing compacted`)
  else if (m.tokensBefore !== null || m.tokensAfter !== null)
    lines.push(
      `  tokens: ${num(m.tokensBefore)} → ${num(m.tokensAfter)} (${change(m.tokensReclaimed)}, ${share(m.reclaimedFraction)}); window used after ${pct(m.contextWindowUsedFraction)}`,
    )
  if (m.compactionDurationMs !== null) lines.push(`  compaction took ${m.compactionDurationMs} ms`)
  if (m.continuationDelayMs !== null)
    lines.push(`  continuation started ${m.continuationDelayMs} ms after the compaction ended`)
  if (job.continuationOutcome !== null)
    lines.push(`  continuation turn: ${job.continuationOutcome}`)
  return `${lines.join("\n")}\n`
}

/** The text `baton compact cancel` prints. */
export const renderCancelText = (report: CancelReport): string =>
  report.alreadyEnded
    ? `job ${report.job.jobId} had already ended: ${report.job.status}\n`
    : report.refusal !== null
      ? `not cancelled: ${report.message}\n`
      : `cancel requested for job ${report.job.jobId} (${report.job.status}); the worker stands down within a second${
          report.job.status === "scheduled" ||
          report.job.status === "waiting_for_idle" ||
          report.job.status === "idle_settling"
            ? " — nothing was sent"
            : ""
        }\n`

/** The text `baton compact status` prints. */
export const renderStatusText = (status: CompactionStatus): string => {
  const parts: Array<string> = [`thread ${status.threadId}\n`]
  if (status.recovered !== null)
    parts.push(
      `recovered: the worker of job ${status.recovered.jobId} was gone; ${status.recovered.from} → ${status.recovered.to}\n`,
    )
  if (status.current === null) parts.push("no compaction job yet\n")
  else {
    parts.push(renderJob(status.current))
    if (!status.current.terminal)
      parts.push(
        `  worker: ${status.worker.state}${status.worker.pid === null ? "" : ` (pid ${status.worker.pid})`}${status.cancelRequested ? "; cancel requested" : ""}\n`,
      )
  }
  if (status.history.length > 1)
    parts.push(
      `history (${status.history.length} of the last 20):\n${status.history
        .map(
          (h) =>
            `  #${h.jobNumber} ${h.status} ${h.tokensReclaimed === null ? "(nothing compacted)" : `${change(h.tokensReclaimed)} (${share(h.reclaimedFraction)})`}${h.continuationDelayMs === null ? "" : `, continuation after ${h.continuationDelayMs} ms`}`,
        )
        .join("\n")}\n`,
    )
  if (status.tornTempFiles.length > 0)
    parts.push(`note: ${status.tornTempFiles.length} torn temp file(s) left by a crash (ignored)\n`)
  parts.push(`journal: ${status.jobsDir}\n`)
  return parts.join("")
}

const renderScheduled = (report: ScheduleReport): string =>
  `${report.alreadyScheduled ? "already scheduled: " : "scheduled: "}${renderJob(report.job)}${
    report.handoffPath === null ? "" : `  handoff stored at ${report.handoffPath}\n`
  }${
    report.job.terminal
      ? ""
      : `End this turn now; Baton compacts the thread once it is idle${report.job.resume ? " and then continues it" : ""}.\n`
  }`

const print = (io: CliIo, json: boolean, value: object, text: string): CommandOutcome => {
  io.stdout(json ? `${JSON.stringify({ ok: true, ...value })}\n` : text)
  return { _tag: "Completed", exitCode: 0 }
}

/** Runs `baton compact status [threadId]`. */
export const runCompactStatus: CommandRunner = async (invocation, io) => {
  const json = invocation.flags["json"] === true
  const resolved = resolveThreadId(invocation.positionals[0], io, "baton compact status")
  if (resolved._tag === "Invalid") return { _tag: "Failed", json, error: resolved.error }
  const { compaction, run } = await load(io)
  const result = await run(compaction.compactionStatus(resolved.threadId))
  if (result._tag === "Failure") return { _tag: "Failed", json, error: result.failure }
  return print(io, json, { status: result.success }, renderStatusText(result.success))
}

const schedule = async (
  invocation: Invocation,
  io: CliIo,
  threadArg: string | undefined,
  handoff: unknown,
  helpCommand: string,
): Promise<CommandOutcome> => {
  const json = invocation.flags["json"] === true
  const resolved = resolveThreadId(threadArg, io, helpCommand)
  if (resolved._tag === "Invalid") return { _tag: "Failed", json, error: resolved.error }
  const parsed = parseSettings(invocation, helpCommand)
  if (parsed._tag === "Failed") return parsed
  const settings = parsed.settings
  const { compaction, run } = await load(io)
  const result = await run(
    compaction.scheduleCompaction({ threadId: resolved.threadId, handoff, settings }),
  )
  if (result._tag === "Failure") return { _tag: "Failed", json, error: result.failure }
  return print(io, json, { ...result.success }, renderScheduled(result.success))
}

/** Runs `baton compact schedule [threadId]`: compaction without a handoff (never continues). */
export const runCompactSchedule: CommandRunner = (invocation, io) =>
  schedule(invocation, io, invocation.positionals[0], null, "baton compact schedule")

/** Runs `baton compact schedule-with-handoff <abs-path> [threadId]`. */
export const runCompactScheduleWithHandoff: CommandRunner = async (invocation, io) => {
  const json = invocation.flags["json"] === true
  const help = "baton compact schedule-with-handoff"
  const file = invocation.positionals[0] ?? ""
  if (!isAbsolute(file))
    return {
      _tag: "Failed",
      json,
      error: cliUsageError(
        `the handoff file must be an absolute path, got '${file.slice(0, 200)}'`,
        help,
      ),
    }
  const input = await readInputBytes(file, io)
  if (input._tag === "Failure") return { _tag: "Failed", json, error: input.failure }
  const { parseHandoffJsonResult } = await import("@baton/handoff")
  const parsed = parseHandoffJsonResult(input.success)
  if (parsed._tag === "Failure") return { _tag: "Failed", json, error: parsed.failure }
  return schedule(invocation, io, invocation.positionals[1], parsed.success, help)
}

/** Runs `baton compact cancel <threadId> <jobId>`. */
export const runCompactCancel: CommandRunner = async (invocation, io) => {
  const json = invocation.flags["json"] === true
  const resolved = resolveThreadId(invocation.positionals[0], io, "baton compact cancel")
  if (resolved._tag === "Invalid") return { _tag: "Failed", json, error: resolved.error }
  const jobId = invocation.positionals[1] ?? ""
  // A job id is a file-name component the scheduler made (letters, digits, '.', '_', '-').
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(jobId) || jobId.includes(".."))
    return {
      _tag: "Failed",
      json,
      error: cliUsageError(
        jobId === ""
          ? "no job id: pass the job id that schedule or status printed"
          : `'${jobId.slice(0, 80)}' is not a job id (letters, digits, '.', '_', '-'; the id schedule or status printed)`,
        "baton compact cancel",
      ),
    }
  const { compaction, run } = await load(io)
  const result = await run(compaction.cancelCompaction(resolved.threadId, jobId))
  if (result._tag === "Failure") return { _tag: "Failed", json, error: result.failure }
  const report = result.success
  const text = renderCancelText(report)
  return print(io, json, { ...report }, text)
}

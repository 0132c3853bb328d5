/**
 * Text and JSON renderings of `baton wake` results. Guarantees: pure (data in, text out); times
 * print as ISO-8601 UTC; never prints checkpoint or capsule text unless the command is the one
 * that shows it; JSON output is one object with `ok: true`.
 */
import type { JobListEntry, JobStatusReport, Leftovers, WatcherEvent } from "@baton/wake"
import { inertLine } from "./terminal-text.js"

const iso = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? "—" : new Date(ms).toISOString()

/** One JSON line `{ok: true, ...fields}`. */
export const jsonLine = (fields: Readonly<Record<string, unknown>>): string =>
  `${JSON.stringify({ ok: true, ...fields })}\n`

/** What the status says about the original thread: only what holds for the job's delivery. */
const originalThreadRole = (report: JobStatusReport): string => {
  if (report.delivery === "original_thread")
    return "continuations run on it as new turns when it is idle, else on a new thread"
  const ranHere =
    report.lastRun?.mode === "original_thread" || report.run?.mode === "original_thread"
  return ranHere ? "a continuation ran on it as a new turn" : "provenance only; never resumed"
}

/** Checkpoint notes (headings at the wrong level, unknown or missing sections), one line each. */
export const renderCheckpointNotes = (notes: ReadonlyArray<string>): string =>
  notes.map((note) => `note: ${inertLine(note)}\n`).join("")

/** The human status of one job; `notes` are checkpoint notes (see `checkpointNotes`). */
export const renderStatusText = (
  report: JobStatusReport,
  notes: ReadonlyArray<string> = [],
): string => {
  const lines = [
    `${report.jobId}  ${report.state}`,
    `  workspace      ${report.cwd}`,
    `  thread         ${report.originalThreadId ?? "—"} (${originalThreadRole(report)})`,
    `  delivery       ${report.delivery} (${report.deliveryLabel})`,
    `  pressure       ${report.pressure}${report.usedPercent === null ? "" : ` (${report.usedPercent}% used)`}`,
    `  reset hint     ${iso(report.resetsAt)} (schedules checks; only 'allowed' launches)`,
    `  continuations  ${report.generation} of ${report.bounds.maxGenerations}; windows waited ${report.windows}; retries ${report.retryCount}${report.nextRetryAt === null ? "" : ` (next ${iso(report.nextRetryAt)})`}`,
  ]
  if (report.cooldownUntil !== null && report.state === "quota_waiting")
    lines.push(
      `  cooldown       no launch before ${iso(report.cooldownUntil)} (the last continuation hit the usage limit)`,
    )
  if (report.run !== null)
    lines.push(
      `  running        continuation ${report.run.generation}, pid ${report.run.pid ?? "—"}, thread ${report.run.threadId ?? "—"}, since ${iso(report.run.launchedAt)}`,
    )
  if (report.lastRun !== null)
    lines.push(
      `  last run       ${report.lastRun.generation}: ${report.lastRun.failure}${report.lastRun.detail === null ? "" : ` — ${inertLine(report.lastRun.detail)}`} (ended ${iso(report.lastRun.endedAt)})`,
    )
  lines.push(
    `  capsule        ${report.memory.ready ? "ready" : "not ready"}, ${report.memory.capsuleBytes ?? "—"} of ${report.memory.capsuleMaxBytes} bytes${report.memory.maskedSecrets > 0 ? `; ${report.memory.maskedSecrets} likely secret(s) masked (checkpoint.md keeps them: remove them there)` : ""}${report.memory.checkpointNewerThanCapsule ? "; checkpoint changed since: run refresh" : ""}${report.memory.capsuleModified ? "; capsule edited by hand: refresh overwrites it" : ""}`,
  )
  for (const problem of report.memory.problems) lines.push(`  problem        ${inertLine(problem)}`)
  for (const note of notes) lines.push(`  note           ${inertLine(note)}`)
  if (report.seal !== null)
    lines.push(`  sealed         ${iso(report.seal.sealedAt)} (${report.seal.file})`)
  if (report.checkpointRequested && report.checkpointRequest !== null)
    lines.push(
      `  checkpoint     requested at ${report.checkpointRequest.band} (${iso(report.checkpointRequest.requestedAt)}): ${inertLine(report.checkpointRequest.detail)}`,
    )
  if (report.pauseReason !== null) lines.push(`  paused         ${inertLine(report.pauseReason)}`)
  if (report.lastError !== null) lines.push(`  attention      ${inertLine(report.lastError)}`)
  lines.push(
    `  watcher        ${report.watcher.running ? `running (pid ${report.watcher.pid} on ${report.watcher.host})` : "not running — start it with 'baton wake watch --detach'"}`,
    `  checkpoint.md  ${report.paths.checkpoint}`,
  )
  return `${lines.join("\n")}\n`
}

/** The human list of jobs. */
export const renderListText = (
  jobs: ReadonlyArray<JobListEntry>,
  unreadable: ReadonlyArray<{ readonly jobId: string; readonly problem: string }>,
  leftovers: Leftovers = { orphanJobDirs: [], tornTempFiles: [] },
): string => {
  const rows = jobs.map(
    (job) =>
      `${job.jobId}  ${job.state.padEnd(15)}  ${job.pressure.padEnd(7)}  gen ${job.generation}  ${iso(job.updatedAt)}  ${job.cwd}`,
  )
  if (jobs.length === 0 && unreadable.length === 0) rows.push("no wake jobs")
  for (const bad of unreadable) rows.push(`${bad.jobId}  unreadable: ${bad.problem}`)
  for (const dir of leftovers.orphanJobDirs)
    rows.push(
      `orphan job directory (no state.json; a failed or killed create): ${dir} — inspect, then delete it`,
    )
  for (const file of leftovers.tornTempFiles)
    rows.push(
      `leftover temporary file (a killed or failed write): ${file} — safe to delete when no baton command runs`,
    )
  return `${rows.join("\n")}\n`
}

/** One watcher log line for people. */
export const renderWatcherEventText = (event: WatcherEvent): string => {
  const { at, kind, jobId, ...rest } = event
  const fields = Object.entries(rest)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ")
  return `${iso(at)} ${kind}${jobId === undefined ? "" : ` ${jobId}`}${fields === "" ? "" : ` ${fields}`}\n`
}

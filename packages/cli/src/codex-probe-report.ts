/**
 * How `baton codex probe` prints a `ThreadProbeReport` from @baton/ipc-codex: aligned lines for
 * people, or one JSON object (`{ok: true, ...report}`, the report's own stable shape) under
 * `--json`. Pure; imports only the report's type, so loading it costs nothing.
 */
import type { ThreadProbeReport } from "@baton/ipc-codex"

const formatTokens = (n: number): string => n.toLocaleString("en-US")

const contextLine = (context: ThreadProbeReport["context"]): string => {
  if (context.tokens === null) return `unknown — ${context.detail}`
  const window =
    context.window === null
      ? "window unknown"
      : `of ${formatTokens(context.window)} (${((100 * context.tokens) / context.window).toFixed(1)}%)`
  return `${formatTokens(context.tokens)} tokens ${window} — ${context.detail}`
}

const rateLimitsLine = (limits: ThreadProbeReport["rateLimits"]): string => {
  switch (limits.status) {
    case "read": {
      const windows = [
        limits.primaryUsedPercent === null ? null : `primary ${limits.primaryUsedPercent}% used`,
        limits.secondaryUsedPercent === null
          ? null
          : `secondary ${limits.secondaryUsedPercent}% used`,
      ].filter((w) => w !== null)
      const allowed =
        limits.ordinaryUsageAllowed === null
          ? ""
          : limits.ordinaryUsageAllowed
            ? "; ordinary usage allowed"
            : "; ordinary usage NOT allowed"
      return `${windows.length === 0 ? "no windows reported" : windows.join(", ")}${allowed} (via ${limits.via ?? "?"})`
    }
    case "not-signed-in":
      return `not signed in (via ${limits.via ?? "?"})`
    case "unavailable":
      return `unavailable — ${limits.detail}`
  }
}

const compatibilityLine = (compat: ThreadProbeReport["compatibility"]): string => {
  const binary =
    compat.binary === null
      ? "no codex binary"
      : `codex ${compat.binary.version ?? "(version unknown)"} at ${compat.binary.path} (${compat.binary.source})`
  const cached = compat.fromCache === true ? ", cached" : ""
  const failed = compat.failedChecks.length === 0 ? "" : ` [${compat.failedChecks.join(", ")}]`
  return `${compat.status} — ${binary}${cached}; ${compat.detail}${failed}`
}

/** The human report. */
export const renderProbeText = (report: ThreadProbeReport): string => {
  const rows: Array<readonly [string, string]> = [
    ["thread", report.threadId],
    [
      "transport",
      report.selected === null ? "none can reach this thread" : `${report.selected} (chosen)`,
    ],
    ...report.transports.map((t) => [`  ${t.transport}`, `${t.verdict} — ${t.detail}`] as const),
    [
      "owner",
      report.owner.kind === "extension"
        ? `VS Code client ${report.owner.clientId ?? "?"} — ${report.owner.detail}`
        : `${report.owner.kind} — ${report.owner.detail}`,
    ],
    [
      "status",
      report.thread.status === null
        ? `unknown — ${report.thread.detail}`
        : `${report.thread.status}${report.thread.activeFlags.length === 0 ? "" : ` [${report.thread.activeFlags.join(", ")}]`}${report.thread.pendingRequests ? `, ${report.thread.pendingRequests} pending requests` : ""} (${report.thread.detail})`,
    ],
    ["context", contextLine(report.context)],
    ["rate limits", rateLimitsLine(report.rateLimits)],
    ["compatibility", compatibilityLine(report.compatibility)],
  ]
  const width = Math.max(...rows.map(([label]) => label.length))
  return `${rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n")}\n`
}

/** The `--json` report: `{ok: true, ...report}` on one line. */
export const renderProbeJson = (report: ThreadProbeReport): string =>
  `${JSON.stringify({ ok: true, ...report })}\n`

/**
 * Prints doctor's checks: an aligned table for people, one stable JSON object for machines.
 * Guarantees: the JSON shape is `{ok, checks: [{id, status, summary, detail, hint}]}` with every
 * key always present (`hint` is null when there is nothing to do).
 */
import type { DoctorCheck } from "./doctor-checks.js"

/** The `--json` report. */
export interface DoctorReport {
  readonly ok: boolean
  readonly checks: readonly DoctorCheck[]
}

/** True when no check failed (warnings do not fail doctor). */
export const doctorPassed = (checks: readonly DoctorCheck[]): boolean =>
  checks.every((c) => c.status !== "fail")

/** The JSON report, one line. */
export const renderDoctorJson = (checks: readonly DoctorCheck[]): string =>
  `${JSON.stringify({ ok: doctorPassed(checks), checks } satisfies DoctorReport)}\n`

/** The human report: a headline, then one block per check with its detail and hint indented. */
export const renderDoctorText = (checks: readonly DoctorCheck[], version: string): string => {
  const count = (status: DoctorCheck["status"]): number =>
    checks.filter((c) => c.status === status).length
  const idWidth = Math.max(...checks.map((c) => c.id.length))
  const indent = " ".repeat(4 + 2 + idWidth + 2)
  const lines = [
    `baton ${version} doctor — ${count("ok")} ok, ${count("warn")} warn, ${count("fail")} fail`,
    "",
  ]
  for (const c of checks) {
    lines.push(`${c.status.padEnd(4)}  ${c.id.padEnd(idWidth)}  ${c.summary}`)
    if (c.detail !== "") lines.push(`${indent}${c.detail}`)
    if (c.hint !== null) lines.push(`${indent}hint: ${c.hint}`)
  }
  lines.push(
    "",
    doctorPassed(checks) ? "No check failed." : "At least one check failed: see the hints above.",
  )
  return `${lines.join("\n")}\n`
}

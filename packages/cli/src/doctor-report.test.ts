import { describe, expect, it } from "vitest"
import type { DoctorCheck } from "./doctor-checks.js"
import { doctorPassed, renderDoctorJson, renderDoctorText } from "./doctor-report.js"

const checks: DoctorCheck[] = [
  {
    id: "node",
    status: "ok",
    summary: "Node 20.20.2",
    detail: "Baton needs Node 20 or newer",
    hint: null,
  },
  {
    id: "data-dir",
    status: "warn",
    summary: "/d — not private (0755)",
    detail: "mode 0755",
    hint: "Run 'chmod 700 /d'",
  },
  {
    id: "vector-store",
    status: "fail",
    summary: "vector store unavailable (query)",
    detail: "",
    hint: "Reinstall",
  },
]

describe("doctor report", () => {
  it("renders the stable JSON shape", () => {
    expect(JSON.parse(renderDoctorJson(checks))).toEqual({ ok: false, checks })
    expect(JSON.parse(renderDoctorJson(checks.slice(0, 2)))).toMatchObject({ ok: true })
  })

  it("passes with warnings, fails with a fail", () => {
    expect(doctorPassed(checks.slice(0, 2))).toBe(true)
    expect(doctorPassed(checks)).toBe(false)
  })

  it("renders aligned text with details and hints indented under the summary", () => {
    expect(renderDoctorText(checks, "1.0.0")).toBe(
      [
        "baton 1.0.0 doctor — 1 ok, 1 warn, 1 fail",
        "",
        "ok    node          Node 20.20.2",
        "                    Baton needs Node 20 or newer",
        "warn  data-dir      /d — not private (0755)",
        "                    mode 0755",
        "                    hint: Run 'chmod 700 /d'",
        "fail  vector-store  vector store unavailable (query)",
        "                    hint: Reinstall",
        "",
        "At least one check failed: see the hints above.",
        "",
      ].join("\n"),
    )
  })
})

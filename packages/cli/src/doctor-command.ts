/**
 * `baton doctor`: gathers facts read-only, assesses them, prints the report. Guarantees: exit 0
 * when no check fails, 1 otherwise; the vector store probe (effect, better-sqlite3, sqlite-vec)
 * is imported only here, when doctor runs.
 */
import type { CommandRunner } from "./command-spec.js"
import { assessDoctorFacts } from "./doctor-checks.js"
import { gatherDoctorFacts } from "./doctor-facts.js"
import type { VectorStoreFacts } from "./doctor-facts.js"
import { doctorPassed, renderDoctorJson, renderDoctorText } from "./doctor-report.js"
import { readPackageVersion } from "./package-version.js"

/** How long `codex --version` may take before doctor reports it as hanging. */
export const codexVersionTimeoutMs = 5_000

const probeVectorStoreFacts = async (): Promise<VectorStoreFacts> => {
  try {
    const [Effect, Result, { probeVectorStore }] = await Promise.all([
      import("effect/Effect"),
      import("effect/Result"),
      import("@baton/recall-index"),
    ])
    const result = await Effect.runPromise(Effect.result(probeVectorStore()))
    return Result.isSuccess(result)
      ? { _tag: "Available", ...result.success }
      : { _tag: "Unavailable", stage: result.failure.stage, reason: result.failure.reason }
  } catch (error) {
    return {
      _tag: "Unavailable",
      stage: "load-driver",
      reason: error instanceof Error ? error.message : String(error),
    }
  }
}

/** Runs `baton doctor [--json]`. */
export const runDoctor: CommandRunner = async (invocation, io) => {
  const facts = await gatherDoctorFacts({
    env: io.env,
    cwd: io.cwd,
    codexTimeoutMs: codexVersionTimeoutMs,
    probeVectorStore: probeVectorStoreFacts,
  })
  const checks = assessDoctorFacts(facts)
  io.stdout(
    invocation.flags["json"] === true
      ? renderDoctorJson(checks)
      : renderDoctorText(checks, readPackageVersion()),
  )
  return { _tag: "Completed", exitCode: doctorPassed(checks) ? 0 : 1 }
}

/**
 * `baton doctor`: gathers facts read-only, assesses them, prints the report. Guarantees: exit 0
 * when no check fails, 1 otherwise; the vector store probe (effect, better-sqlite3, sqlite-vec)
 * and the embedder probe (@baton/recall-index's configuration reader and word table) are
 * imported only here, when doctor runs.
 */
import { join } from "node:path"
import type { CommandRunner } from "./command-spec.js"
import { assessDoctorFacts } from "./doctor-checks.js"
import { gatherDoctorFacts } from "./doctor-facts.js"
import type {
  DoctorProbes,
  EmbedderFacts,
  RecallIndexFacts,
  VectorStoreFacts,
} from "./doctor-facts.js"
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

const probeEmbedderFacts = async (env: DoctorProbes["env"]): Promise<EmbedderFacts> => {
  const [Effect, Result, recall] = await Promise.all([
    import("effect/Effect"),
    import("effect/Result"),
    import("@baton/recall-index"),
  ])
  const config = await Effect.runPromise(
    Effect.result(recall.embedderConfigFromEnvironment({ ...env })),
  )
  if (Result.isFailure(config)) {
    return { _tag: "Invalid", variable: config.failure.variable, message: config.failure.message }
  }
  const c = config.success
  const table =
    c._tag === "Embedded"
      ? await Effect.runPromise(Effect.result(recall.makeStaticTableEmbedder()))
      : undefined
  return {
    _tag: "Selected",
    choice: recall.embedderChoiceName(c),
    endpoint: c._tag === "Voyage" || c._tag === "OpenAiCompatible" ? c.baseUrl : undefined,
    model: c._tag === "Voyage" || c._tag === "OpenAiCompatible" ? c.model : undefined,
    voyageKeySet: (env["VOYAGE_API_KEY"] ?? "") !== "",
    staticTable:
      table === undefined
        ? undefined
        : Result.isSuccess(table)
          ? { _tag: "Loaded", fingerprint: table.success.info.fingerprint }
          : { _tag: "Failed", reason: table.failure.reason },
  }
}

const probeRecallIndexFacts = async (dataDir: string): Promise<RecallIndexFacts> => {
  try {
    const recall = await import("@baton/recall-index")
    const found = recall.checkRecallIndexFile(join(dataDir, recall.RECALL_DATABASE_FILE))
    return found._tag === "Unusable"
      ? { _tag: "Unusable", path: found.path, message: found.error.message }
      : found
  } catch (error) {
    return {
      _tag: "Unusable",
      path: dataDir,
      message: `the recall index could not be checked: ${error instanceof Error ? error.message : String(error)}`,
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
    probeEmbedder: probeEmbedderFacts,
    probeRecallIndex: probeRecallIndexFacts,
  })
  const checks = assessDoctorFacts(facts)
  io.stdout(
    invocation.flags["json"] === true
      ? renderDoctorJson(checks)
      : renderDoctorText(checks, readPackageVersion()),
  )
  return { _tag: "Completed", exitCode: doctorPassed(checks) ? 0 : 1 }
}

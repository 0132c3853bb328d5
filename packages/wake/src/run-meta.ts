/**
 * One continuation's record under `runs/`: `run-NNNN.jsonl` (its `--json` events),
 * `run-NNNN.stderr.log`, `run-NNNN.last-message.txt` and `run-NNNN.meta.json` — how it was
 * launched (mode, argv without the prompt, the prompt's SHA-256), its process identity (pid and
 * start time, written right after the spawn so a restarted watcher can adopt it), and how it
 * ended (exit code, signal, classification, thread id, last message). Decoded with effect/Schema;
 * a torn meta file reads as absent, never as a run. Pure.
 */
import * as path from "node:path"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { JobPaths } from "./job-paths.js"
import { deliveryModes } from "./job-record.js"

const NullableInt = Schema.NullOr(Schema.Number)
const NullableString = Schema.NullOr(Schema.String)

/** The meta file schema. */
export const RunMetaSchema = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  jobId: Schema.String,
  generation: Schema.Number,
  mode: Schema.Literals(deliveryModes),
  /** `cli_continuation`: a separate `codex exec` run, not the original conversation. */
  label: Schema.Literals(["cli_continuation", "same_thread_turn"]),
  command: Schema.String,
  /** argv with the prompt replaced by `<prompt>`. */
  args: Schema.Array(Schema.String),
  promptSha256: Schema.String,
  cwd: Schema.String,
  launchedAt: Schema.Number,
  pid: NullableInt,
  startTicks: NullableInt,
  threadId: NullableString,
  turnId: NullableString,
  endedAt: NullableInt,
  exitCode: NullableInt,
  signal: NullableString,
  killedBy: NullableString,
  failure: Schema.NullOr(
    Schema.Literals(["none", "usage_limit", "connection", "stream", "overloaded", "other"]),
  ),
  detail: NullableString,
  lastAgentMessage: NullableString,
})

/** A run's meta record. */
export type RunMeta = typeof RunMetaSchema.Type

/** Decodes a meta file (null when torn or foreign). */
export const decodeRunMeta = (text: string): RunMeta | null => {
  try {
    const result = Schema.decodeUnknownResult(RunMetaSchema)(JSON.parse(text))
    return Result.isSuccess(result) ? result.success : null
  } catch {
    return null
  }
}

/** Encodes a meta record. */
export const encodeRunMeta = (meta: RunMeta): string => `${JSON.stringify(meta, null, 2)}\n`

/** The files of continuation `generation`. */
export interface RunFiles {
  readonly log: string
  readonly stderr: string
  readonly lastMessage: string
  readonly meta: string
}

/** Paths of one run's files. */
export const runFiles = (paths: JobPaths, generation: number): RunFiles => {
  const base = path.join(paths.runsDir, `run-${String(generation).padStart(4, "0")}`)
  return {
    log: `${base}.jsonl`,
    stderr: `${base}.stderr.log`,
    lastMessage: `${base}.last-message.txt`,
    meta: `${base}.meta.json`,
  }
}

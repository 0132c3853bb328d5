/**
 * The command line of one continuation, built from the job and nothing else.
 *
 * - `new_thread` (default): `codex exec --json` in a fresh thread, `workspace-write` sandbox in the
 *   job's cwd, the job directory added as a writable root (so `baton wake complete` can write the
 *   job), the last message saved next to the run log. Reported as a CLI continuation.
 * - `job_thread`: `codex exec resume <the job's own continuation thread>` with the same sandbox
 *   expressed as config overrides (resume accepts no `--sandbox`, `-C` or `--add-dir`).
 * Model and reasoning effort are validated before they reach argv; the child environment drops
 * the launching shell's `CODEX_THREAD_ID` (a nested run must not look like its parent) and names
 * the job in `BATON_WAKE_JOB_ID`. Never `--last`, never a recency guess. Pure.
 */
import { InvalidJobSettingError } from "./errors.js"
import type { JobRecord } from "./job-record.js"

const modelPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/
const threadPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$/

/** Whether a model name may reach argv. */
export const isValidModel = (value: string): boolean => modelPattern.test(value)
/**
 * The reasoning efforts a continuation may ask for: the levels the pinned Codex (0.169) offers in
 * its model catalog (`supported_reasoning_levels`). wake's reference list also has `persistent`,
 * which that binary offers for no model; no model offers `minimal` or `none` either.
 */
export const reasoningEfforts = ["low", "medium", "high", "xhigh", "max", "ultra"] as const

/** What an invalid reasoning effort is told. */
export const REASONING_EFFORT_RULE = `one of ${reasoningEfforts.join(", ")}`

/** Whether a reasoning effort may reach argv (one of {@link reasoningEfforts}). */
export const isValidReasoningEffort = (value: string): boolean =>
  (reasoningEfforts as ReadonlyArray<string>).includes(value)

/** What a continuation's command line needs. */
export interface ExecPlanInput {
  readonly codexBinary: string
  readonly job: JobRecord
  readonly generation: number
  readonly jobDir: string
  readonly prompt: string
  readonly lastMessageFile: string
  /** The thread to resume (`job_thread`), or null for a new thread. */
  readonly resumeThreadId: string | null
  readonly baseEnv: Readonly<Record<string, string | undefined>>
}

/** A continuation's command line. */
export interface ExecPlan {
  readonly _tag: "ExecPlan"
  readonly mode: "new_thread" | "job_thread"
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

/** Builds the `codex exec` command line, or says which setting cannot be used. */
export const execPlan = (input: ExecPlanInput): ExecPlan | InvalidJobSettingError => {
  const { job } = input
  if (job.model !== null && !isValidModel(job.model))
    return new InvalidJobSettingError({
      field: "model",
      value: job.model,
      rule: "a letter or digit, then letters, digits, '.', '_', ':' or '-' (at most 128)",
    })
  if (job.reasoningEffort !== null && !isValidReasoningEffort(job.reasoningEffort))
    return new InvalidJobSettingError({
      field: "reasoning effort",
      value: job.reasoningEffort,
      rule: REASONING_EFFORT_RULE,
    })
  if (input.resumeThreadId !== null && !threadPattern.test(input.resumeThreadId))
    return new InvalidJobSettingError({
      field: "continuation thread",
      value: input.resumeThreadId,
      rule: "a Codex thread id",
    })
  const model = job.model === null ? [] : ["-m", job.model]
  const effort =
    job.reasoningEffort === null ? [] : ["-c", `model_reasoning_effort="${job.reasoningEffort}"`]
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(input.baseEnv))
    if (value !== undefined && key !== "CODEX_THREAD_ID") env[key] = value
  env["BATON_WAKE_JOB_ID"] = job.jobId
  env["BATON_WAKE_GENERATION"] = String(input.generation)
  const args =
    input.resumeThreadId === null
      ? [
          "exec",
          "--json",
          "--color",
          "never",
          "--sandbox",
          "workspace-write",
          "--skip-git-repo-check",
          "-C",
          job.cwd,
          "--add-dir",
          input.jobDir,
          "-o",
          input.lastMessageFile,
          ...model,
          ...effort,
          "--",
          input.prompt,
        ]
      : [
          "exec",
          "resume",
          "--json",
          "--skip-git-repo-check",
          "-o",
          input.lastMessageFile,
          "-c",
          'sandbox_mode="workspace-write"',
          "-c",
          `sandbox_workspace_write.writable_roots=[${JSON.stringify(input.jobDir)}]`,
          ...model,
          ...effort,
          "--",
          input.resumeThreadId,
          input.prompt,
        ]
  return {
    _tag: "ExecPlan",
    mode: input.resumeThreadId === null ? "new_thread" : "job_thread",
    command: input.codexBinary,
    args,
    cwd: job.cwd,
    env,
  }
}

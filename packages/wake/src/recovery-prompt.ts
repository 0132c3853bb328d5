/**
 * The prompt a continuation starts with: a capsule-first handoff naming the exact job.
 * Guarantees: deterministic text from its inputs (no clock, no environment); every path and
 * command is given absolute by the caller; it never asks to resume, reread or summarise the old
 * chat. Pure.
 */

/** What the recovery prompt names. Paths are absolute. */
export interface RecoveryPromptInput {
  readonly jobId: string
  readonly generation: number
  readonly cwd: string
  readonly statePath: string
  readonly capsulePath: string
  readonly checkpointPath: string
  /** How the continuation runs Baton, e.g. `"/usr/bin/node" "/opt/baton/bin.js"`. */
  readonly batonCommand: string
  /**
   * The capsule itself (≤ 8 KiB). When given it is embedded at the end, so the continuation
   * starts with its primary memory and spends no tool call reading it.
   */
  readonly capsuleText?: string
  /** How the continuation is delivered (default a new thread); only the opening sentence changes. */
  readonly delivery?: "new_thread" | "job_thread" | "original_thread"
}

const openings = {
  new_thread: "This is a memory-capsule handoff to a new thread, not a resume of any earlier chat.",
  job_thread:
    "This resumes the job's own continuation thread; the capsule, not earlier turns, is the task state.",
  original_thread:
    "Usage is available again; the capsule, not your memory of earlier turns, is the task state.",
} as const

/** The line that opens the embedded capsule. */
export const CAPSULE_BEGIN = "----- BEGIN MEMORY CAPSULE -----"
/** The line that closes the embedded capsule. */
export const CAPSULE_END = "----- END MEMORY CAPSULE -----"

/** Renders the recovery prompt. */
export const recoveryPrompt = (input: RecoveryPromptInput): string => {
  const baton = `${input.batonCommand} wake`
  const job = input.jobId
  const capsuleStep =
    input.capsuleText !== undefined
      ? `2. The memory capsule is embedded below: it is your primary task memory (the same text is in ${input.capsulePath}).`
      : `2. Read the memory capsule as your primary task memory: ${input.capsulePath}`
  const lines = [
    `Continue Baton wake job ${job} (continuation ${input.generation}).`,
    openings[input.delivery ?? "new_thread"],
    "",
    "Recovery order:",
    `1. Read the job state: ${input.statePath}`,
    capsuleStep,
    `3. Inspect only the minimum live workspace state in ${input.cwd}: run \`git rev-parse --is-inside-work-tree\` first, and only if it succeeds run \`git status --short\` and \`git diff --stat\`; otherwise run no git commands.`,
    `4. Read the checkpoint only if the capsule is insufficient, inconsistent with the live workspace, or points to it: ${input.checkpointPath}`,
    "5. Continue from Next actions toward the Objective.",
    "",
    "Rules:",
    "- Do NOT reconstruct, resume, reread, replay or summarise the previous chat. The capsule is task state, not a compressed transcript.",
    "- Do not repeat verified work or approaches listed under Decisions / do not repeat unless live evidence shows the capsule is stale.",
    `- After each milestone and before long, risky or quota-heavy work, update the checkpoint, then run: ${baton} refresh ${job}`,
    `- When the Objective is done: update the checkpoint, then call the \`wake_complete\` tool with job id ${job}, or run: ${baton} complete ${job}`,
    `- When you need the user: update the checkpoint, then run: ${baton} pause ${job} --reason "<what you need>"`,
    "- If usage quota stops execution, exit normally; wake hands the latest capsule to the next continuation.",
    "",
  ]
  if (input.capsuleText !== undefined)
    lines.push(CAPSULE_BEGIN, input.capsuleText.trimEnd(), CAPSULE_END, "")
  return lines.join("\n")
}

/**
 * Where wake keeps its jobs and how job ids look. Layout, under `BATON_WAKE_DIR` or
 * `$CODEX_HOME/baton/wake` (`CODEX_HOME` defaults to `$HOME/.codex`):
 *   jobs/<job-id>/state.json                      job record (schema-versioned, revisioned)
 *   jobs/<job-id>/checkpoint.md                   agent-maintained checkpoint
 *   jobs/<job-id>/memory-capsule.md               projected capsule (≤ 8 KiB)
 *   jobs/<job-id>/checkpoint.previous.md          the checkpoint the last write replaced
 *   jobs/<job-id>/sealed/capsule-<sha256>.md      immutable sealed capsules, keyed by checkpoint hash
 *   jobs/<job-id>/runs/                           continuation run logs (written by the launcher)
 *   jobs/<job-id>/lock                            the job lock (lease)
 *   locks/thread-<sha256>.lock                    a thread's create lock (lease)
 * Pure: the environment arrives as an argument.
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { InvalidJobIdError, WakeIoError } from "./errors.js"

/** Directory mode of every wake directory. */
export const WAKE_DIR_MODE = 0o700
/** File mode of every wake file. */
export const WAKE_FILE_MODE = 0o600

/**
 * The refusal of a relative `BATON_WAKE_DIR` (null for an absolute or unset one): it would be
 * read from each process's working directory, so the watcher, the MCP server and a terminal
 * would each keep jobs of their own. Callers hand the store {@link refusingWakeFileSystem} with
 * it, so every command fails with it before touching a file.
 */
export const relativeWakeDirError = (env: {
  readonly BATON_WAKE_DIR?: string | undefined
}): WakeIoError | null => {
  const value = env.BATON_WAKE_DIR
  return value === undefined || value === "" || path.isAbsolute(value)
    ? null
    : new WakeIoError({
        path: value,
        operation: "resolve",
        code: "ERELATIVE",
        detail:
          "BATON_WAKE_DIR is a relative path: give an absolute path (a relative one is read from each process's working directory, so the watcher, the MCP server and a terminal would each use different jobs)",
      })
}

/** `BATON_WAKE_DIR`, else `$CODEX_HOME/baton/wake`, else `$HOME/.codex/baton/wake`. */
export const wakeDirectory = (env: {
  readonly BATON_WAKE_DIR?: string | undefined
  readonly CODEX_HOME?: string | undefined
  readonly HOME?: string | undefined
}): string => {
  if (env.BATON_WAKE_DIR !== undefined && env.BATON_WAKE_DIR !== "")
    return path.resolve(env.BATON_WAKE_DIR)
  const home =
    env.CODEX_HOME !== undefined && env.CODEX_HOME !== ""
      ? env.CODEX_HOME
      : path.join(env.HOME ?? "", ".codex")
  return path.resolve(home, "baton", "wake")
}

const jobIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{5,95}$/

/** True for a safe job id (wake's rule: 6–96 chars, alphanumeric start, then `._-`; no `..`). */
export const isValidJobId = (value: string): boolean =>
  jobIdPattern.test(value) && !value.includes("..")

/** Checks a job id before it becomes a path. */
export const checkJobId = (value: string): Effect.Effect<string, InvalidJobIdError> =>
  isValidJobId(value) ? Effect.succeed(value) : Effect.fail(new InvalidJobIdError({ value }))

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** `wake-YYYYMMDD-HHMMSS-<8 hex>` (UTC) from a clock reading and 8 random hex digits. */
export const newJobId = (nowMs: number, hex8: string): string => {
  const d = new Date(nowMs)
  const date = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`
  const time = `${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`
  return `wake-${date}-${time}-${hex8
    .toLowerCase()
    .replace(/[^0-9a-f]/g, "0")
    .padEnd(8, "0")
    .slice(0, 8)}`
}

/** Paths of one job's files. */
export interface JobPaths {
  readonly dir: string
  readonly state: string
  readonly checkpoint: string
  /** The checkpoint a write replaced (one level of undo). */
  readonly previousCheckpoint: string
  readonly capsule: string
  readonly sealedDir: string
  readonly runsDir: string
  readonly lock: string
  readonly sealed: (checkpointSha256: string) => string
}

/** Paths of job `jobId` under the wake directory `wakeDir`. */
export const jobPaths = (wakeDir: string, jobId: string): JobPaths => {
  const dir = path.join(wakeDir, "jobs", jobId)
  const sealedDir = path.join(dir, "sealed")
  return {
    dir,
    state: path.join(dir, "state.json"),
    checkpoint: path.join(dir, "checkpoint.md"),
    previousCheckpoint: path.join(dir, "checkpoint.previous.md"),
    capsule: path.join(dir, "memory-capsule.md"),
    sealedDir,
    runsDir: path.join(dir, "runs"),
    lock: path.join(dir, "lock"),
    sealed: (checkpointSha256) => path.join(sealedDir, `capsule-${checkpointSha256}.md`),
  }
}

/**
 * `baton recall index --background` (the plugins' SessionStart hook), ahead of the index
 * command's modules: it only writes a line to the log and starts a detached `baton recall index`
 * child, so it loads no `effect` and no index module and returns in about the time `baton
 * --version` takes (it loaded them all before: ~3× slower, 1.6 s on a busy machine, against the
 * hook's 15 s budget when many sessions start at once). Guarantees: the child and the log are the
 * ones the full command starts; whenever the light path cannot start the child as the full
 * command would (a flag it does not handle, no data directory yet, a log that cannot be
 * written), it leaves it to the full command, which reports the failure as it always has.
 */
import { spawn } from "node:child_process"
import { closeSync, openSync, renameSync, statSync, writeSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { resolveDataDir } from "./baton-paths.js"
import type { CliIo } from "./cli-io.js"
import type { CommandOutcome, CommandRunner, Invocation } from "./command-spec.js"
import { has, stringFlag } from "./recall-flags.js"

/** Set in the environment of a `--background` child. */
export const BACKGROUND_ENV = "BATON_RECALL_BACKGROUND"
/** Name of the background log in the data directory. */
export const RECALL_LOG_FILE = "recall-index.log"
const LOG_ROTATE_BYTES = 1_048_576

/** Opens the background log for appending (rotated past 1 MiB); the directory must exist. */
export const openRecallLog = (dataDir: string): number => {
  const path = join(dataDir, RECALL_LOG_FILE)
  try {
    if (statSync(path).size > LOG_ROTATE_BYTES) renameSync(path, `${path}.1`)
  } catch {
    // No log yet.
  }
  return openSync(path, "a", 0o600)
}

/** The arguments of the background child for this invocation. */
export const backgroundArgs = (invocation: Invocation): Array<string> => {
  const args = ["recall", "index"]
  const source = stringFlag(invocation, "source")
  if (source !== undefined) args.push("--source", source)
  if (has(invocation, "no-embed")) args.push("--no-embed")
  return args
}

/**
 * Logs the start and spawns the detached child, its output to the log (`log` is closed here).
 * Returns the child's pid.
 */
export const spawnBackgroundIndex = (
  io: CliIo,
  args: ReadonlyArray<string>,
  log: number,
): number | undefined => {
  try {
    writeSync(log, `${new Date().toISOString()} baton ${args.join(" ")}\n`)
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL("./bin.js", import.meta.url)), ...args],
      {
        cwd: io.cwd,
        env: { ...io.env, [BACKGROUND_ENV]: "1", BATON_PROGRESS: "0" },
        detached: true,
        stdio: ["ignore", log, log],
      },
    )
    child.unref()
    return child.pid
  } finally {
    closeSync(log)
  }
}

/** What the full command prints when it has started the child. */
export const backgroundStarted = (
  io: CliIo,
  invocation: Invocation,
  pid: number | undefined,
  logPath: string,
): CommandOutcome => {
  if (has(invocation, "json"))
    io.stdout(`${JSON.stringify({ ok: true, background: true, pid: pid ?? null, log: logPath })}\n`)
  else if (!has(invocation, "quiet"))
    io.stdout(`Indexing in the background (pid ${pid ?? "?"}); log: ${logPath}\n`)
  return { _tag: "Completed", exitCode: 0 }
}

const SOURCES = new Set(["all", "claude", "codex"])

/** Runs `baton recall index`, starting a plain `--background` run without the heavy modules. */
export const runRecallIndexEarly: CommandRunner = async (invocation, io) => {
  const source = stringFlag(invocation, "source")
  const light =
    has(invocation, "background") &&
    io.env[BACKGROUND_ENV] !== "1" &&
    !has(invocation, "watch") &&
    stringFlag(invocation, "interval") === undefined &&
    (source === undefined || SOURCES.has(source))
  if (light) {
    const resolved = resolveDataDir(io.env, homedir())
    const dataDir = resolved.path
    let log: number | undefined
    try {
      // A relative BATON_DATA_DIR: the full command refuses it.
      if (resolved.relative !== true && statSync(dataDir).isDirectory())
        log = openRecallLog(dataDir)
    } catch {
      // No data directory yet, or no log: the full command makes it, or says why it cannot.
    }
    if (log !== undefined) {
      const pid = spawnBackgroundIndex(io, backgroundArgs(invocation), log)
      return backgroundStarted(io, invocation, pid, join(dataDir, RECALL_LOG_FILE))
    }
  }
  return (await import("./recall-command.js")).runRecallIndex(invocation, io)
}

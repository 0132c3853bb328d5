/**
 * The `baton wake …` command group as plain data. Guarantees: nothing here imports effect or
 * @baton/wake; each runner arrives through `load` only when its command runs.
 */
import { jsonFlag } from "./command-spec.js"
import type { CommandRunner, CommandSpec, FlagSpec, PositionalSpec } from "./command-spec.js"

const jobArgument: PositionalSpec = {
  name: "job",
  required: false,
  description:
    "job id; default $BATON_WAKE_JOB_ID (set in continuations), else the open job of $CODEX_THREAD_ID",
}

const valueFlag = (name: string, valueName: string, description: string): FlagSpec => ({
  name,
  takesValue: true,
  valueName,
  description,
})

const runners = () => import("./wake-command.js")

const leaf = (
  name: string,
  summary: string,
  details: readonly string[],
  flags: readonly FlagSpec[],
  positionals: readonly PositionalSpec[],
  exitCodes: string,
  load: () => Promise<CommandRunner>,
): CommandSpec => ({
  name,
  summary,
  details,
  flags: [...flags, jsonFlag],
  positionals,
  subcommands: [],
  exitCodes,
  load,
})

const standard = "0 done · 1 failed or refused · 2 bad usage"

const create = leaf(
  "create",
  "Create a wake job (draft) with a checkpoint to fill",
  [
    "The job is bound to the conversation that owns the task ($CODEX_THREAD_ID, or --thread);",
    "an open job of that thread is returned instead of a second one. Fill checkpoint.md, then arm.",
  ],
  [
    valueFlag(
      "objective",
      "text",
      "pre-fill the checkpoint's Objective (one line, at most 2048 bytes)",
    ),
    valueFlag("thread", "id", "owning Codex thread, a UUID (default $CODEX_THREAD_ID)"),
    valueFlag("cwd", "dir", "workspace the continuation runs in (default: current directory)"),
    valueFlag("model", "name", "model for continuations (default: Codex's configuration)"),
    valueFlag("effort", "level", "reasoning effort: low, medium, high, xhigh, max or ultra"),
    valueFlag("delivery", "mode", "new_thread (default), job_thread or original_thread"),
    valueFlag("max-generations", "n", "continuations this job may launch (default 12)"),
    valueFlag("max-hours", "n", "wall-clock budget from creation (default 168)"),
  ],
  [],
  standard,
  async () => (await runners()).runWakeCreate,
)

const arm = leaf(
  "arm",
  "Arm a job (checkpoint must be filled), or re-arm a paused, stopped or failed one",
  [
    "Projects the capsule from checkpoint.md first; a checkpoint with placeholders or without",
    "Objective / Next actions refuses. The watcher then carries the job across quota windows.",
  ],
  [],
  [jobArgument],
  standard,
  async () => (await runners()).runWakeArm,
)

const status = leaf(
  "status",
  "Show a job: state, quota pressure, runs, capsule freshness, watcher",
  ["Without a job (and none from the environment) shows every job and the watcher."],
  [],
  [jobArgument],
  standard,
  async () => (await runners()).runWakeStatus,
)

const list = leaf(
  "list",
  "List every wake job",
  [],
  [],
  [],
  standard,
  async () => (await runners()).runWakeList,
)

const checkpoint = leaf(
  "checkpoint",
  "Print the checkpoint, or replace it (--file) and re-project the capsule",
  ["Keep it current: after each milestone, and before long, risky or quota-heavy work."],
  [valueFlag("file", "path", "new checkpoint markdown, or - for standard input")],
  [jobArgument],
  standard,
  async () => (await runners()).runWakeCheckpoint,
)

const capsule = leaf(
  "capsule",
  "Print the memory capsule (≤ 8 KiB) and whether it is fresh",
  [],
  [],
  [jobArgument],
  standard,
  async () => (await runners()).runWakeCapsule,
)

const refresh = leaf(
  "refresh",
  "Re-project the capsule from checkpoint.md (local, no model call)",
  [],
  [],
  [jobArgument],
  standard,
  async () => (await runners()).runWakeRefresh,
)

const pause = leaf(
  "pause",
  "The agent needs the user: stop automation until 'arm'",
  [],
  [valueFlag("reason", "text", "what the agent needs (default: waiting for the user)")],
  [jobArgument],
  standard,
  async () => (await runners()).runWakePause,
)

const stop = leaf(
  "stop",
  "Disable automation; a running continuation's process group is ended",
  [],
  [valueFlag("reason", "text", "why (default: stopped by the user)")],
  [jobArgument],
  standard,
  async () => (await runners()).runWakeStop,
)

const complete = leaf(
  "complete",
  "Mark the objective done (final; the explicit success signal)",
  [],
  [],
  [jobArgument],
  standard,
  async () => (await runners()).runWakeComplete,
)

const watch = leaf(
  "watch",
  "Run the watcher: one per user; reads quota without model calls; launches continuations",
  [
    "Holds $CODEX_HOME/baton/wake/watcher.lock (lease); a second watcher exits at once.",
    "Logs one line per event on stderr (--json: JSON lines on stdout). Stops on SIGINT/SIGTERM;",
    "--stop sends the running watcher SIGTERM and waits for it to release the lock (running",
    "continuations keep running).",
  ],
  [
    { name: "once", takesValue: false, description: "one pass, then exit" },
    {
      name: "detach",
      takesValue: false,
      description: "start a watcher in the background (log: watcher.log) unless one runs",
    },
    { name: "stop", takesValue: false, description: "stop the watcher that runs on this host" },
    valueFlag("max-concurrent", "n", "continuations running at once (default 1)"),
    valueFlag(
      "limits",
      "json",
      'timing overrides in ms, e.g. {"waitMaxMs":60000,"tailMs":2000,"maxRunMs":7200000}',
    ),
  ],
  [],
  "0 stopped by a signal, --once done, or --stop done · 1 failed (another watcher holds the lock, or --stop could not stop it) · 2 bad usage",
  async () => (await runners()).runWakeWatch,
)

const doctor = leaf(
  "doctor",
  "Check wake: directory, codex binary, quota read, watcher, jobs",
  ["Read-only. Reports the continuation mode honestly (cli_continuation_only by default)."],
  [],
  [],
  "0 no check failed · 1 a check failed · 2 bad usage",
  async () => (await runners()).runWakeDoctor,
)

/** `baton wake`. */
export const wakeCommand: CommandSpec = {
  name: "wake",
  summary: "Carry long tasks across quota windows: checkpoint, capsule, watcher, continuation",
  details: [],
  flags: [],
  positionals: [],
  subcommands: [
    create,
    arm,
    status,
    list,
    checkpoint,
    capsule,
    refresh,
    pause,
    stop,
    complete,
    watch,
    doctor,
  ],
  exitCodes: "2 bad usage",
}

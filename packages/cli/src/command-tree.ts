/**
 * The `baton` command tree. Guarantees: plain data plus `load` thunks; each runner module is
 * imported only when its command runs, so `--version`, `--help` and usage errors load nothing
 * heavy (no effect, no MCP SDK, no SQLite).
 */
import { jsonFlag } from "./command-spec.js"
import type { CommandSpec } from "./command-spec.js"
import { recallCommand } from "./recall-command-spec.js"
import { wakeCommand } from "./wake-command-spec.js"

const fileArgument = {
  name: "file",
  required: true,
  description: "handoff JSON file, or - to read standard input",
} as const

const doctor: CommandSpec = {
  name: "doctor",
  summary:
    "Check this machine: Node, the baton command, directories, the recall index, Codex, Claude Code, vector store, embedders",
  details: [
    "Read-only: reports what it finds and never creates or changes anything.",
    "Every check is ok, warn or fail, with a hint saying what to do.",
  ],
  flags: [jsonFlag],
  positionals: [],
  subcommands: [],
  exitCodes: "0 no check failed · 1 at least one check failed · 2 bad usage",
  load: async () => (await import("./doctor-command.js")).runDoctor,
}

const handoffValidate: CommandSpec = {
  name: "validate",
  summary: "Validate a handoff: JSON, schema, size limit and secret scan",
  details: [
    "Prints the size against the limit and the SHA-256 digest, or each problem with its field and rule.",
  ],
  flags: [jsonFlag],
  positionals: [fileArgument],
  subcommands: [],
  exitCodes: "0 valid · 1 invalid or unreadable input · 2 bad usage",
  load: async () => (await import("./handoff-command.js")).runHandoffValidate,
}

const handoffHash: CommandSpec = {
  name: "hash",
  summary: "Print the SHA-256 of a handoff's canonical encoding (validates first)",
  details: [
    "The digest is SHA-256 over the handoff's canonical JSON encoding: it names the handoff's",
    "content. A compaction job's handoffDigest differs: it covers the stored record (thread, job,",
    "time and the handoff).",
  ],
  flags: [jsonFlag],
  positionals: [fileArgument],
  subcommands: [],
  exitCodes: "0 hashed · 1 invalid or unreadable input · 2 bad usage",
  load: async () => (await import("./handoff-command.js")).runHandoffHash,
}

const handoff: CommandSpec = {
  name: "handoff",
  summary: "Validate and hash handoff files",
  details: [],
  flags: [],
  positionals: [],
  subcommands: [handoffValidate, handoffHash],
  exitCodes: "2 bad usage",
}

const mcp: CommandSpec = {
  name: "mcp",
  summary: "Run the baton MCP server on stdio",
  details: ["Speaks MCP (JSON-RPC) on stdin/stdout until stdin closes; logs go to stderr."],
  flags: [],
  positionals: [],
  subcommands: [],
  exitCodes: "0 stdin closed · 1 the server failed · 2 bad usage",
  load: async () => (await import("./mcp-command.js")).runMcp,
}

const codexProbe: CommandSpec = {
  name: "probe",
  summary: "Report how Baton can reach a Codex thread (read-only)",
  details: [
    "Which transports can reach the thread (VS Code extension owner, app-server daemon, private",
    "stdio app-server) and why not, the owner, the thread's status, context tokens and window,",
    "rate limits (when signed in) and the codex binary's protocol compatibility (cached).",
    "The thread id defaults to $CODEX_THREAD_ID; it is never guessed. Never resumes, compacts",
    "or starts a turn.",
  ],
  flags: [jsonFlag],
  positionals: [
    {
      name: "threadId",
      required: false,
      description: "Codex thread id (a UUID); default $CODEX_THREAD_ID",
    },
  ],
  subcommands: [],
  exitCodes: "0 probe ran (even if nothing can reach the thread) · 1 failed · 2 bad usage",
  load: async () => (await import("./codex-probe-command.js")).runCodexProbe,
}

const codex: CommandSpec = {
  name: "codex",
  summary: "Inspect live Codex threads",
  details: [],
  flags: [],
  positionals: [],
  subcommands: [codexProbe],
  exitCodes: "2 bad usage",
}

const threadArgument = {
  name: "threadId",
  required: false,
  description: "Codex thread id (a UUID); default $CODEX_THREAD_ID",
} as const

const settingsFlags = [
  {
    name: "idle-debounce-ms",
    takesValue: true,
    valueName: "ms",
    description: "how long idle must hold before compacting or continuing (default 100)",
  },
  {
    name: "idle-wait-ms",
    takesValue: true,
    valueName: "ms",
    description: "longest wait for the thread to become idle (default 60 min)",
  },
  {
    name: "compaction-ms",
    takesValue: true,
    valueName: "ms",
    description: "budget from the compaction request to its end (default 15 min)",
  },
  {
    name: "continuation-ms",
    takesValue: true,
    valueName: "ms",
    description: "budget from the compaction's end to the continuation turn (default 15 min)",
  },
  {
    name: "continuation-turn-ms",
    takesValue: true,
    valueName: "ms",
    description: "how long the continuation turn is followed (default 60 min)",
  },
  {
    name: "headroom",
    takesValue: true,
    valueName: "fraction",
    description:
      "highest context-window fraction in use that still allows continuing (default 0.6)",
  },
] as const

const compactProbe: CommandSpec = {
  ...codexProbe,
  details: [...codexProbe.details, "Same as 'baton codex probe'."],
}

const compactStatus: CommandSpec = {
  name: "status",
  summary: "Show the thread's compaction job, its worker, and the last 20 jobs' metrics",
  details: [
    "Recovers a dead worker first: its job is ended by the job table (never restarted, never resent)",
    "and the journal says what happened.",
  ],
  flags: [jsonFlag],
  positionals: [threadArgument],
  subcommands: [],
  exitCodes: "0 reported · 1 failed (journal unreadable) · 2 bad usage",
  load: async () => (await import("./compact-command.js")).runCompactStatus,
}

const compactSchedule: CommandSpec = {
  name: "schedule",
  summary: "Compact the thread once it is idle (no handoff: no continuation)",
  details: [
    "Returns at once; a background worker waits for the thread to be stably idle, asks Codex to",
    "compact it and confirms the compaction. One unfinished job per thread: scheduling again",
    "returns the existing job (alreadyScheduled). End the agent's turn after scheduling.",
  ],
  flags: [jsonFlag, ...settingsFlags],
  positionals: [threadArgument],
  subcommands: [],
  exitCodes: "0 scheduled (or already scheduled) · 1 failed · 2 bad usage",
  load: async () => (await import("./compact-command.js")).runCompactSchedule,
}

const compactScheduleWithHandoff: CommandSpec = {
  name: "schedule-with-handoff",
  summary: "Compact the thread, then continue it with a verified handoff",
  details: [
    "The handoff (summary, preserve, discard, nextStep, resume) is validated, bound to the thread",
    "and job by SHA-256 and stored once. After the compaction, if it says resume: true and the",
    "context has headroom, exactly one continuation turn carrying it is started. If the thread",
    "already has an unfinished job, the same handoff returns it (alreadyScheduled); another",
    "handoff is refused (HandoffNotAttached, exit 1) and not stored.",
  ],
  flags: [jsonFlag, ...settingsFlags],
  positionals: [
    { name: "file", required: true, description: "absolute path of the handoff JSON file" },
    threadArgument,
  ],
  subcommands: [],
  exitCodes:
    "0 scheduled (or already scheduled) · 1 invalid handoff, a job with another handoff, or failed · 2 bad usage",
  load: async () => (await import("./compact-command.js")).runCompactScheduleWithHandoff,
}

const compactCancel: CommandSpec = {
  name: "cancel",
  summary: "Cancel a compaction job",
  details: [
    "Before the compaction request is sent nothing happens to the thread. After it was sent the",
    "request cannot be recalled: the job ends cancelled with outcomeMayBeUnknown.",
  ],
  flags: [jsonFlag],
  positionals: [
    { name: "threadId", required: true, description: "Codex thread id" },
    { name: "jobId", required: true, description: "the job id from schedule or status" },
  ],
  subcommands: [],
  exitCodes: "0 cancel requested or job already ended · 1 failed · 2 bad usage",
  load: async () => (await import("./compact-command.js")).runCompactCancel,
}

const compact: CommandSpec = {
  name: "compact",
  summary: "Compact a Codex thread with a verified handoff and one continuation",
  details: [],
  flags: [],
  positionals: [],
  subcommands: [
    compactProbe,
    compactStatus,
    compactSchedule,
    compactScheduleWithHandoff,
    compactCancel,
  ],
  exitCodes: "2 bad usage",
}

/** The root of the tree: `baton`. */
export const batonCommand: CommandSpec = {
  name: "baton",
  summary: "Continuity for coding agents: verified handoffs, recall, wake",
  details: [],
  flags: [],
  positionals: [],
  subcommands: [doctor, handoff, codex, compact, recallCommand, wakeCommand, mcp],
  exitCodes: "0 ok · 1 failed · 2 bad usage",
}

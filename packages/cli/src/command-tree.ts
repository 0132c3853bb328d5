/**
 * The `baton` command tree. Guarantees: plain data plus `load` thunks; each runner module is
 * imported only when its command runs, so `--version`, `--help` and usage errors load nothing
 * heavy (no effect, no MCP SDK, no SQLite).
 */
import { jsonFlag } from "./command-spec.js"
import type { CommandSpec } from "./command-spec.js"

const fileArgument = {
  name: "file",
  required: true,
  description: "handoff JSON file, or - to read standard input",
} as const

const doctor: CommandSpec = {
  name: "doctor",
  summary: "Check this machine: Node, directories, Codex, Claude Code, vector store, embedders",
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
    "The digest is the one the handoff binding uses: SHA-256 over the canonical JSON encoding.",
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

/** The root of the tree: `baton`. */
export const batonCommand: CommandSpec = {
  name: "baton",
  summary: "Continuity for coding agents: verified handoffs, recall, wake",
  details: [],
  flags: [],
  positionals: [],
  subcommands: [doctor, handoff, codex, mcp],
  exitCodes: "0 ok · 1 failed · 2 bad usage",
}

/**
 * The `baton recall …` command group as plain data: flags, arguments, help text and lazy
 * loaders. Guarantees: imports nothing but types, the shared flag specs and grep's time limits
 * (a module of constants that imports nothing), so `baton --help` and usage errors never load
 * effect, SQLite or an embedder; each runner arrives through `recall-command.js` only when a
 * recall command runs.
 */
import { GREP_REGEX_STOP_MS, GREP_SCAN_MS } from "@baton/recall-index/grep-limits"
import { jsonFlag } from "./command-spec.js"
import type { CommandRunner, CommandSpec, FlagSpec } from "./command-spec.js"

const value = (name: string, valueName: string, description: string, short?: string): FlagSpec =>
  short === undefined
    ? { name, takesValue: true, valueName, description }
    : { name, short, takesValue: true, valueName, description }
const toggle = (name: string, description: string): FlagSpec => ({
  name,
  takesValue: false,
  description,
})

const sourceFlag = value("source", "all|claude|codex", "only this agent's sessions (default: all)")
const filterFlags: readonly FlagSpec[] = [
  sourceFlag,
  value(
    "scope",
    "dir",
    "only sessions in this directory's repository (worktrees count as the main checkout)",
  ),
  toggle("here", "same as --scope with the current directory"),
  value("date", "day", "one calendar day: YYYY-MM-DD, today, yesterday or 7d (7 days ago)"),
  value("start-date", "day", "first day of a range (inclusive), e.g. 7d for the last week"),
  value("end-date", "day", "last day of a range (inclusive)"),
  value("timezone", "zone", "IANA time zone of those days (default: this computer's)"),
  toggle("no-headless", "leave out machine-driven runs (codex exec, claude -p)"),
]
const dateDetails = [
  "Days are calendar days in --timezone (default: this computer's zone), so --date 2026-07-14",
  "means that local day, whatever the UTC times inside the transcripts say.",
]

type RunnerName =
  | "runRecallIndex"
  | "runRecallRecent"
  | "runRecallGrep"
  | "runRecallExpand"
  | "runRecallStep"
  | "runRecallStatus"
  | "runRecallPrune"
  | "runRecallForget"
  | "runRecallVacuum"

const load = (name: RunnerName) => async (): Promise<CommandRunner> =>
  (await import("./recall-command.js"))[name]

const index: CommandSpec = {
  name: "index",
  summary: "Index this machine's Claude Code and Codex history (incremental), then embed it",
  details: [
    "Reads ~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects) and $CODEX_HOME/sessions and",
    "archived_sessions (default ~/.codex), indexes what changed since the last run, then embeds",
    "new text with the configured embedder. The default (BATON_EMBEDDER=auto) is embedded and",
    "offline: USE-lite for a history of up to 30,000 chunks and 3 million characters (slower,",
    "finds more; a few minutes the first time), a static word table beyond. BATON_EMBEDDER=",
    "use-static or use-lite picks one; none indexes words only.",
    "Services (the text leaves the machine): BATON_EMBEDDER=voyage with VOYAGE_API_KEY",
    "(optional BATON_VOYAGE_BASE_URL including /v1, BATON_VOYAGE_MODEL, BATON_VOYAGE_RERANK=off);",
    "BATON_EMBEDDER=openai with BATON_EMBEDDINGS_URL (the part before /embeddings) and",
    "BATON_EMBEDDINGS_MODEL (optional BATON_EMBEDDINGS_KEY, BATON_EMBEDDINGS_DIM).",
    "BATON_EMBED_MAX_TOKENS caps what one run may send to a paid service (default 2,000,000);",
    "BATON_EMBED_TIMEOUT_MS is how long one request to either service may take (default 60000).",
    "Changing the embedder embeds the history again in the new one's space.",
    "The index lives in $BATON_DATA_DIR (default ~/.local/share/baton).",
    "On a terminal a progress bar goes to stderr; --json prints one summary object.",
    "--background starts the same run detached (output in <data dir>/recall-index.log) and",
    "returns at once; it is what the plugin's SessionStart hook runs.",
  ],
  flags: [
    value("source", "all|claude|codex", "which history to index (default all)"),
    toggle("watch", "keep running: re-index when transcripts change (Ctrl-C stops)"),
    value("interval", "seconds", "with --watch: how often to look for changes (default 10)"),
    toggle("background", "run detached under the indexer lock and return at once"),
    toggle("quiet", "print nothing on success (errors still go to stderr)"),
    toggle("no-embed", "index words only; leave the embedding backlog for later"),
    jsonFlag,
  ],
  positionals: [],
  subcommands: [],
  exitCodes:
    "0 indexed (or nothing to index; --watch stopped by Ctrl-C or SIGTERM) · 1 failed, or another indexer is running · 2 bad usage · 130 a run without --watch stopped by Ctrl-C or SIGTERM (what was indexed is kept)",
  load: async () => (await import("./recall-background.js")).runRecallIndexEarly,
}

const search: CommandSpec = {
  name: "search",
  summary: "Search past sessions by meaning and by words",
  details: [
    "Hybrid search: FTS5 bm25 over the words and nearest neighbours over the embeddings, fused",
    "by weighted reciprocal rank, then reranked; the turn right after a strong hit (an answer",
    "to it) is lifted too. At most --per-session hits per session while other sessions have",
    "hits to show (a hit with the query's words is not held back for hits found by meaning",
    "alone); past that the list fills from the same sessions. Each hit shows the session",
    "and turn ids to pass to 'baton recall expand'. Quote a query of several words; a query",
    "is at most 2,000 characters.",
    ...dateDetails,
  ],
  flags: [
    value("limit", "n", "hits to show (default 10)", "k"),
    value(
      "per-session",
      "n",
      "hits from one session before other sessions' (default 3; the rest fill in after them)",
    ),
    toggle("lexical-only", "words only (skip the vector arm, the reranker and context)"),
    toggle("vector-only", "embeddings only (skip the words arm, the reranker and context)"),
    ...filterFlags,
    jsonFlag,
  ],
  positionals: [
    {
      name: "query",
      required: true,
      description: "what to look for (quote it; at most 2,000 characters)",
    },
  ],
  subcommands: [],
  exitCodes: "0 searched (also with no hits) · 1 failed · 2 bad usage",
  load: async () => (await import("./recall-search-entry.js")).runRecallSearchEarly,
}

const recent: CommandSpec = {
  name: "recent",
  summary: "List the most recently active sessions",
  details: [
    "Title or first prompt, last activity, turns, and when each was last indexed.",
    ...dateDetails,
  ],
  flags: [
    value("limit", "n", "sessions to show (default 10)", "n"),
    toggle("subagents", "include subagent sessions"),
    ...filterFlags,
    jsonFlag,
  ],
  positionals: [],
  subcommands: [],
  exitCodes: "0 listed · 1 failed · 2 bad usage",
  load: load("runRecallRecent"),
}

const grep: CommandSpec = {
  name: "grep",
  summary: "Find exact text in every indexed record, including tool output and reasoning",
  details: [
    "Matches decoded text (quotes, backslashes and paths as written), case-insensitively unless",
    "--case-sensitive. --regex takes a JavaScript regular expression; patterns that could run",
    "away (nested repeats, backreferences) are refused, and one that still runs too long is",
    `stopped with an error after ${GREP_REGEX_STOP_MS / 1000} seconds. A scan stops after ${GREP_SCAN_MS / 1000} seconds with the`,
    "matches found so far, newest first. Each record is kept for grep up to its first 16 384",
    "characters; a longer message is still searched whole by 'baton recall search'.",
    ...dateDetails,
  ],
  flags: [
    toggle("regex", "treat the pattern as a regular expression"),
    toggle("case-sensitive", "match case exactly"),
    value("limit", "n", "matches to show (default 100)", "n"),
    value("session", "id", "only this session"),
    toggle(
      "all-records",
      "also scan records that duplicate others (api-request blobs, …) and show copies in forked sessions",
    ),
    ...filterFlags,
    jsonFlag,
  ],
  positionals: [{ name: "pattern", required: true, description: "text (or --regex) to find" }],
  subcommands: [],
  exitCodes:
    "0 scanned (also with no match) · 1 failed or unknown session · 2 bad usage or pattern",
  load: load("runRecallGrep"),
}

const turnViewFlags: readonly FlagSpec[] = [
  toggle("full", "every record kind, records up to 4 000 characters and turn text up to 20 000"),
  value("timezone", "zone", "time zone of the times shown (default: this computer's)"),
  jsonFlag,
]

const expand: CommandSpec = {
  name: "expand",
  summary: "Show the turns around a hit: prompts, answers, tool calls and output",
  details: [
    "Take the session and turn ids from search or grep output; to open a session 'recent' listed, use 'baton recall step <session> next' (or 'prev' for its last turns).",
  ],
  flags: [
    value("before", "n", "turns before the anchor (default 2)"),
    value("after", "n", "turns after the anchor (default 2)"),
    ...turnViewFlags,
  ],
  positionals: [
    { name: "session", required: true, description: "session id" },
    { name: "turn", required: true, description: "turn id" },
  ],
  subcommands: [],
  exitCodes: "0 shown · 1 not found or failed · 2 bad usage",
  load: load("runRecallExpand"),
}

const step: CommandSpec = {
  name: "step",
  summary: "Move from a turn to the next (or previous) turns of its session",
  details: [
    "Prints nothing but a note at the start or end of the session.",
    "Without a turn it opens the session: 'next' shows its first turns, 'prev' its last (e.g. 'baton recall step <session> prev --count 3' for where a session from 'recent' left off).",
  ],
  flags: [value("count", "n", "turns to move, 1 to 20 (default 1)"), ...turnViewFlags],
  positionals: [
    { name: "session", required: true, description: "session id" },
    {
      name: "turn",
      required: false,
      description: "turn id (omit to start at an end of the session)",
    },
    { name: "direction", required: false, description: "next (default) or prev" },
  ],
  subcommands: [],
  exitCodes: "0 shown · 1 not found or failed · 2 bad usage",
  load: load("runRecallStep"),
}

const status: CommandSpec = {
  name: "status",
  summary: "Show what the recall index holds and how fresh it is",
  details: [
    "Counts per agent, the embedding backlog, the last run, files that failed, and where transcripts are looked for.",
  ],
  flags: [jsonFlag],
  positionals: [],
  subcommands: [],
  exitCodes: "0 reported · 1 failed · 2 bad usage",
  load: load("runRecallStatus"),
}

const prune: CommandSpec = {
  name: "prune",
  summary: "Drop the history of transcripts deleted from disk",
  details: [
    "The index keeps sessions whose transcript disappeared (Claude Code deletes old ones); prune",
    "removes them for good.",
  ],
  flags: [jsonFlag],
  positionals: [],
  subcommands: [],
  exitCodes: "0 pruned · 1 failed · 2 bad usage",
  load: load("runRecallPrune"),
}

const forget: CommandSpec = {
  name: "forget",
  summary: "Remove a session, a project, or everything from the index",
  details: [
    "A forgotten session's transcript is left out of later index runs, also when it grows;",
    "'baton recall forget --all --yes' starts the index over and reads every transcript again.",
    "--all empties the index (the next 'baton recall index' reads the history again) and needs --yes.",
    "A --session or --project that matches no indexed session is not found (exit 1); nothing is forgotten.",
  ],
  flags: [
    value("session", "id", "forget this session"),
    value("project", "dir", "forget every session of this directory's repository"),
    toggle("all", "forget everything"),
    toggle("yes", "confirm --all"),
    sourceFlag,
    jsonFlag,
  ],
  positionals: [],
  subcommands: [],
  exitCodes: "0 forgotten · 1 not found or failed · 2 bad usage",
  load: load("runRecallForget"),
}

const vacuum: CommandSpec = {
  name: "vacuum",
  summary: "Give back the disk space that forget and prune freed",
  details: [
    "SQLite keeps freed pages inside the file for later writes, and the full-text index keeps a",
    "forgotten text's words until its segments merge. vacuum merges them and rewrites the file,",
    "so the forgotten text leaves the disk. It needs free space up to twice the index's size while",
    "it runs, waits for nobody (an index run in progress fails it; try again after), and leaves",
    "the file as it was if it fails or is stopped. Searches keep working meanwhile.",
  ],
  flags: [jsonFlag],
  positionals: [],
  subcommands: [],
  exitCodes: "0 done · 1 failed (busy, no space) · 2 bad usage",
  load: load("runRecallVacuum"),
}

/** `baton recall`. */
export const recallCommand: CommandSpec = {
  name: "recall",
  summary: "Search and navigate past Claude Code and Codex sessions (local index)",
  details: [
    "Quick start: 'baton recall index', then 'baton recall search \"what we decided about X\"'.",
    "Everything stays on this machine unless you configure a remote embedder.",
  ],
  flags: [],
  positionals: [],
  subcommands: [index, search, recent, grep, expand, step, status, prune, forget, vacuum],
  exitCodes: "0 ok · 1 failed · 2 bad usage (each command's --help has its own)",
}

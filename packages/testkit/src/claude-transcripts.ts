/**
 * Finding and reading the transcripts Claude Code writes under `~/.claude/projects/`:
 * `<encoded-cwd>/<session-uuid>.jsonl` for sessions and
 * `<encoded-cwd>/<session-uuid>/subagents/**\/agent-<id>.jsonl` for subagents (2.1.x layout).
 * Discovery scans the directory instead of trusting the cwd encoding, and reading is lenient
 * about a trailing partial line (the file may still be appended to). Read-only.
 */
import { readdir, readFile } from "node:fs/promises"
import { basename, join, sep } from "node:path"

/** One transcript file on disk. */
export interface ClaudeTranscriptFile {
  readonly path: string
  /** The session the file belongs to (file stem, or the parent session dir for subagents). */
  readonly sessionId: string
  /** The `<encoded-cwd>` directory name. */
  readonly projectDir: string
  readonly kind: "session" | "subagent"
  /** `<id>` of `agent-<id>.jsonl` for subagent files. */
  readonly agentId: string | undefined
}

/** One JSONL record; fields vary by `type` (see transcripts.md §1 and OBSERVED-claude.md). */
export interface ClaudeTranscriptRecord {
  readonly type: string
  readonly [key: string]: unknown
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The project directory name for a cwd: every non-alphanumeric character becomes `-`
 * (observed for `/`, `.`, `_` and space). Lossy; use it to predict, never to decode.
 */
export const claudeProjectDirName = (cwd: string): string => cwd.replace(/[^A-Za-z0-9]/g, "-")

/** The path Claude Code writes a main session to, given its projects dir, cwd and session id. */
export const claudeTranscriptPath = (projectsDir: string, cwd: string, sessionId: string): string =>
  join(projectsDir, claudeProjectDirName(cwd), `${sessionId}.jsonl`)

/** Every session and subagent transcript under a projects dir, sorted by path; `[]` when it does not exist. */
export const findClaudeTranscripts = async (
  projectsDir: string,
): Promise<ReadonlyArray<ClaudeTranscriptFile>> => {
  let entries: ReadonlyArray<string>
  try {
    entries = await readdir(projectsDir, { recursive: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
    throw error
  }
  const files: Array<ClaudeTranscriptFile> = []
  for (const entry of [...entries].sort()) {
    if (!entry.endsWith(".jsonl")) continue
    const parts = entry.split(sep)
    const projectDir = parts[0]
    if (projectDir === undefined || parts.length < 2) continue
    const stem = basename(entry, ".jsonl")
    const path = join(projectsDir, entry)
    if (parts.length === 2 && UUID.test(stem)) {
      files.push({ path, sessionId: stem, projectDir, kind: "session", agentId: undefined })
    } else if (
      parts.length >= 4 &&
      UUID.test(parts[1] ?? "") &&
      parts[2] === "subagents" &&
      stem.startsWith("agent-")
    ) {
      files.push({
        path,
        sessionId: parts[1] ?? "",
        projectDir,
        kind: "subagent",
        agentId: stem.slice("agent-".length),
      })
    }
  }
  return files
}

/** The main transcript of `sessionId` wherever it was written under the projects dir, if any. */
export const locateClaudeTranscript = async (
  projectsDir: string,
  sessionId: string,
): Promise<string | undefined> =>
  (await findClaudeTranscripts(projectsDir)).find(
    (file) => file.kind === "session" && file.sessionId === sessionId,
  )?.path

/**
 * Parses a JSONL transcript. A trailing line without newline that does not parse is skipped (a
 * write in progress); any other malformed line throws with its file and line number.
 */
export const readClaudeTranscript = async (
  path: string,
): Promise<ReadonlyArray<ClaudeTranscriptRecord>> => {
  const text = await readFile(path, "utf8")
  const lines = text.split("\n")
  const records: Array<ClaudeTranscriptRecord> = []
  for (const [index, line] of lines.entries()) {
    if (line.trim().length === 0) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch (error) {
      if (index === lines.length - 1) break
      throw new Error(`${path}:${index + 1}: not JSON (${String(error)}): ${line.slice(0, 200)}`, {
        cause: error,
      })
    }
    if (
      typeof parsed !== "object" ||
      parsed === null ||
      typeof (parsed as { type?: unknown }).type !== "string"
    ) {
      throw new Error(`${path}:${index + 1}: not a transcript record: ${line.slice(0, 200)}`)
    }
    records.push(parsed as ClaudeTranscriptRecord)
  }
  return records
}

const HARNESS_PREFIXES = [
  "<command-",
  "<local-command-",
  "<system-reminder>",
  "<task-notification>",
  "<bash-",
  "Caveat: ",
]

/**
 * The typed prompts of a transcript in file order: `user` records whose `message.content` is a
 * string, excluding meta, compact-summary and harness-tag records.
 */
export const claudeTranscriptPrompts = (
  records: ReadonlyArray<ClaudeTranscriptRecord>,
): ReadonlyArray<string> =>
  records.flatMap((record) => {
    if (record.type !== "user" || record["isMeta"] === true || record["isCompactSummary"] === true)
      return []
    const message = record["message"]
    const content =
      typeof message === "object" && message !== null
        ? (message as { content?: unknown }).content
        : undefined
    if (typeof content !== "string") return []
    return HARNESS_PREFIXES.some((prefix) => content.startsWith(prefix)) ? [] : [content]
  })

/**
 * The normalised transcript model shared by the Claude Code and Codex readers: sessions, turns,
 * surface text (what gets embedded) and raw records (everything else, for expand / step / grep),
 * plus the parse statistics and the resumable parse state. Plain data only: every value here is
 * JSON-serialisable so an indexer can store `ParseState` and hand it back later.
 */

/** Which agent wrote a transcript. */
export type TranscriptSource = "claude" | "codex"

/** Who speaks in a turn. */
export type TurnRole = "user" | "assistant"

/** One session (Claude `sessionId`, Codex thread) as far as the file has been read. */
export interface TranscriptSession {
  readonly source: TranscriptSource
  readonly sessionId: string
  readonly cwd?: string
  readonly gitBranch?: string
  /** Codex `git.repository_url` (the origin remote), as {@link repositoryUrlKey} keys it. */
  readonly repositoryUrl?: string
  /** ISO-8601 UTC of the earliest / latest timestamped record seen. */
  readonly startedAt?: string
  readonly endedAt?: string
  /** `ai-title` / `custom-title` (Claude) or `thread_name_updated` (Codex). */
  readonly title?: string
  /** The first user surface text (masked, at most 300 characters). */
  readonly firstPrompt?: string
  /** Codex `originator`; Claude `entrypoint`. */
  readonly originator?: string
  readonly cliVersion?: string
  /** Machine-driven run: `codex exec` (`originator: codex_exec` / `source: exec`), `claude -p` (`entrypoint: sdk-*` / `promptSource: sdk`). */
  readonly headless: boolean
  /** Claude: a record came from the interactive CLI (`entrypoint` not `sdk-*`); the session is then never headless. */
  readonly interactive?: boolean
  /** Subagent / sidechain work (Claude `isSidechain`, Codex `source.subagent` and friends). */
  readonly subagent: boolean
  readonly parentSessionId?: string
  readonly agentId?: string
  /** The session this one was forked from (Claude `forkedFrom`, Codex `forked_from_id`). */
  readonly forkedFrom?: string
}

/** What a raw record holds, for display and filtering. */
export type RawRecordKind =
  | "message"
  | "harness"
  | "tool-call"
  | "tool-output"
  | "reasoning"
  | "compaction"
  | "metadata"
  | "progress"
  | "noise"

/** One decoded line of the file, rendered as bounded, secret-masked text. */
export interface RawRecord {
  /** Byte offset of the line in the (decompressed) file, and its length including the newline. */
  readonly offset: number
  readonly length: number
  /** `type` of the line, with the payload type for Codex (`response_item/function_call`). */
  readonly recordType: string
  readonly kind: RawRecordKind
  readonly timestamp?: string
  /** Bounded rendering: never signatures, encrypted content or base64 payloads. */
  readonly text: string
  readonly truncated: boolean
  /**
   * Duplicates other records (`api-request-blob`, `last-prompt`, Codex's second copy of a tool
   * output or a compaction summary, …): grep, expand and step skip it unless asked.
   */
  readonly skipForGrep: boolean
}

/** Which Codex channel a surface text came from (see codex-parser.ts for the dedupe rule). */
export type SurfaceChannel = "record" | "response_item" | "event" | "item_completed"

/** User or assistant words, with harness text stripped and secrets masked: what gets embedded. */
export interface SurfaceText {
  readonly role: TurnRole
  readonly text: string
  readonly offset: number
  readonly length: number
  readonly channel: SurfaceChannel
  /** Codex assistant `phase` (`commentary` / `final_answer`) when written. */
  readonly phase?: string
}

/** A conversational turn: one user prompt, or the assistant's work answering it. */
export interface Turn {
  /** Claude: the opening record's `uuid`; Codex: `codex:<thread-id>:<byte-offset>`. */
  readonly id: string
  readonly sessionId: string
  readonly role: TurnRole
  /** 0-based position among the file's turns; continues across resumed parses. */
  readonly ordinal: number
  readonly timestamp?: string
  /** Byte range `[startOffset, endOffset)` of the lines attributed to the turn so far. */
  readonly startOffset: number
  readonly endOffset: number
  readonly sidechain: boolean
  /** True when this turn was opened by an earlier parse call and this call only extends it. */
  readonly continued: boolean
  readonly surface: ReadonlyArray<SurfaceText>
  readonly records: ReadonlyArray<RawRecord>
}

/** Counters for one parse call; nothing is dropped silently. */
export interface ParseStats {
  readonly firstOffset: number
  /** Offset just past the last complete line: where the next parse resumes. */
  readonly nextOffset: number
  readonly bytesRead: number
  readonly lines: number
  readonly blankLines: number
  /** Invalid JSON or a JSON value that is not an object. */
  readonly malformedLines: number
  /** Valid JSON objects that do not decode as a record (e.g. no string `type`). */
  readonly invalidRecords: number
  readonly invalidUtf8Lines: number
  /** Lines of an unknown record type (Codex: also unknown payload types), by type. */
  readonly unknownRecordTypes: Readonly<Record<string, number>>
  /** Lines carrying at least one top-level field the reader does not know. */
  readonly unknownFieldLines: number
  readonly sidechainRecordsSkipped: number
  /** Codex: surface texts dropped as duplicates of another channel. */
  readonly duplicateSurfaceDropped: number
  readonly surfaceTexts: number
  readonly rawRecords: number
  readonly secretsMasked: number
  /** The input ended inside a line (a live file being written): that line was not consumed. */
  readonly truncatedTail: boolean
  /**
   * The read stopped at `maxBytes` (`parseTranscriptFile`) before the end of the file: parse
   * again from `state` for the rest.
   */
  readonly more?: boolean
}

/** The open turn a resumed parse may extend. */
export interface OpenTurnState {
  readonly id: string
  readonly sessionId: string
  readonly role: TurnRole
  readonly sidechain: boolean
  readonly ordinal: number
}

/** Codex-only state carried between parse calls. */
export interface CodexParseState {
  readonly threadId?: string
  readonly metaSeen: boolean
  readonly subagent: boolean
  /** Surface dedupe window of the current Codex turn: key hash → unmatched count per channel. */
  readonly window: ReadonlyArray<readonly [key: string, counts: Readonly<Record<string, number>>]>
  /** Command outputs of the current Codex turn already recorded: call id → output hash. */
  readonly outputs?: ReadonlyArray<readonly [callId: string, outputHash: string]>
  /** Call ids of the current Codex turn's calls of Baton's own recall tools. */
  readonly recallCalls?: ReadonlyArray<string>
  /** The current Codex turn's last `compaction_output` text (trimmed). */
  readonly lastSummary?: string
}

/** Claude-only state carried between parse calls. */
export interface ClaudeParseState {
  /** Tool call ids of Baton's recall tools whose results were not read yet. */
  readonly recallCalls: ReadonlyArray<string>
}

/** Everything needed to resume parsing an append-only file at `nextOffset`. JSON-serialisable. */
export interface ParseState {
  readonly version: 1
  readonly source: TranscriptSource
  readonly nextOffset: number
  readonly nextOrdinal: number
  readonly openTurn?: OpenTurnState
  readonly sessions: ReadonlyArray<TranscriptSession>
  readonly codex?: CodexParseState
  readonly claude?: ClaudeParseState
}

/** The result of one parse call over `[stats.firstOffset, stats.nextOffset)`. */
export interface ParseResult {
  /** Every session seen in the file so far (cumulative across resumed calls). */
  readonly sessions: ReadonlyArray<TranscriptSession>
  /** Turns opened (or, with `continued`, extended) by this call, in file order. */
  readonly turns: ReadonlyArray<Turn>
  /** Records read before the file's first turn (session meta, snapshots, injected context). */
  readonly preamble: ReadonlyArray<RawRecord>
  readonly stats: ParseStats
  readonly state: ParseState
}

/** Reader options. */
export interface ParseOptions {
  /** Index subagent / sidechain records as turns (flagged `sidechain`); default false: counted and skipped. */
  readonly includeSidechains?: boolean
  /** Treat an unterminated last line as complete (compressed, finished files); default false. */
  readonly completeTail?: boolean
  /** Cap of a raw record's rendered text in characters; default 16 384. */
  readonly maxRawTextChars?: number
}

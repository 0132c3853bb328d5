/**
 * Claude Code line reader: turns each JSONL record of a `~/.claude/projects/…/<session>.jsonl`
 * (or subagent `agent-*.jsonl`) file into a raw record and, for typed prompts and assistant
 * text, surface text. Handles string and block content, split assistant messages, thinking and
 * tool blocks, compaction (boundary + summary, legacy `summary`), forks (`forkedFrom`), resumed
 * files holding several session ids, and in-file / file-level sidechains.
 *
 * Never throws: undecodable lines are counted; unknown record types are counted and skipped;
 * the newer request-bookkeeping records (`api-request-blob`, `api-request`, `api-request-shape`,
 * `cost-state`, `atis-latch`, …) are kept as empty `noise` records marked skip-for-grep because
 * they repeat every prompt.
 */
import { isBatonRecallToolName } from "./baton-tools.js"
import { isClaudeCompactionSummary, stripClaudeHarness } from "./harness-text.js"
import {
  hasUnknownKeys,
  isJsonObject,
  parseJsonLine,
  readBoolean,
  readString,
  readStringOrArray,
  readStruct,
  readUnknown,
} from "./lenient-schema.js"
import type { ReadType } from "./lenient-schema.js"
import type { SplitLine } from "./line-splitter.js"
import { rawRecordBuilder, sanitizedJson } from "./raw-render.js"
import { maskTranscriptText } from "./secret-masking.js"
import type { ClaudeParseState, RawRecord, RawRecordKind, SurfaceText } from "./transcript-model.js"
import { normaliseTimestamp } from "./turn-assembler.js"
import type { TurnAssembler } from "./turn-assembler.js"

const ContentBlock = readStruct(
  {
    type: readString,
    id: readString,
    tool_use_id: readString,
    text: readString,
    thinking: readString,
    name: readString,
    input: readUnknown,
    content: readUnknown,
    is_error: readBoolean,
  },
  ["type"],
)
type ContentBlock = ReadType<typeof ContentBlock>

const Message = readStruct({
  role: readString,
  id: readString,
  model: readString,
  content: readStringOrArray,
})

const ClaudeLine = readStruct(
  {
    type: readString,
    uuid: readString,
    sessionId: readString,
    timestamp: readString,
    cwd: readString,
    gitBranch: readString,
    version: readString,
    isSidechain: readBoolean,
    agentId: readString,
    entrypoint: readString,
    promptSource: readString,
    isMeta: readBoolean,
    isCompactSummary: readBoolean,
    isApiErrorMessage: readBoolean,
    forkedFrom: readStruct({ sessionId: readString }),
    message: Message,
    subtype: readString,
    operation: readString,
    content: readUnknown,
    summary: readString,
    leafUuid: readString,
    aiTitle: readString,
    customTitle: readString,
    lastPrompt: readString,
    data: readUnknown,
    attachment: readUnknown,
  },
  ["type"],
)
type ClaudeLine = ReadType<typeof ClaudeLine>

/** Record types that repeat other records (whole model requests, bookkeeping). */
const noiseTypes = new Set([
  "api-request-blob",
  "api-request",
  "api-request-shape",
  "cost-state",
  "atis-latch",
  "file-history-snapshot",
  "tools-used",
])

const metadataTypes = new Set([
  "queue-operation",
  "ai-title",
  "custom-title",
  "last-prompt",
  "tag",
  "agent-name",
  "agent-color",
  "agent-setting",
  "mode",
  "permission-mode",
  "worktree-state",
  "pr-link",
  "content-replacement",
])

/** Title kinds by precedence: a higher rank replaces a lower one, never the reverse. */
const titleRanks = { summary: 1, ai: 2, custom: 3 } as const

/** Attachment kinds that carry whole system prompts or listings. */
const noisyAttachments = new Set([
  "prompt_snapshot",
  "skill_listing",
  "deferred_tools_delta",
  "agent_listing_delta",
])

/** Top-level fields of conversation records this reader knows (others are counted). */
const knownConversationFields = new Set([
  "type",
  "uuid",
  "parentUuid",
  "logicalParentUuid",
  "sessionId",
  "timestamp",
  "cwd",
  "gitBranch",
  "version",
  "isSidechain",
  "userType",
  "slug",
  "agentId",
  "teamName",
  "entrypoint",
  "forkedFrom",
  "isMeta",
  "promptId",
  "apiError",
  "requestId",
  "permissionMode",
  "promptSource",
  "message",
  "toolUseResult",
  "sourceToolAssistantUUID",
  "sourceToolUseID",
  "thinkingMetadata",
  "todos",
  "isCompactSummary",
  "isVisibleInTranscriptOnly",
  "subtype",
  "content",
  "level",
  "compactMetadata",
  "microcompactMetadata",
  "turnOrigin",
  "turnPosition",
  "permissionDecision",
  "sandboxed",
  "apiBlockIndex",
  "effort",
  "perTurnEffort",
  "madeBy",
  "promptCacheRequested",
  "requestRef",
  "requestedModel",
  "toolInputStreamMs",
  "isApiErrorMessage",
  "error",
  "retryAttempt",
  "maxRetries",
  "retryInMs",
  "cause",
  "durationMs",
  "toolUseID",
  "parentToolUseID",
  "hookCount",
  "hookInfos",
  "hookErrors",
  "preventedContinuation",
  "stopReason",
  "hasOutput",
])

/** Options of the Claude reader. */
export interface ClaudeReaderContext {
  readonly assembler: TurnAssembler
  readonly includeSidechains: boolean
  readonly maxRawTextChars: number
  /** Session id used when a record has none (the file name's UUID, else its stem). */
  readonly fallbackSessionId: string
  /** What the previous parse call of this file carried over. */
  readonly prior: ClaudeParseState | undefined
}

/** Most recall calls remembered awaiting their results (the oldest are forgotten first). */
const PENDING_RECALL_CALLS = 64

/** Renders a tool_result `content` (string, blocks, null). */
const renderToolResult = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .map((item) => {
      const block = ContentBlock(item)
      if (block === undefined) return ""
      if (block.type === "text") return block.text ?? ""
      if (block.type === "tool_reference") return `[tool_reference]`
      return `[${block.type}]`
    })
    .filter((s) => s !== "")
    .join("\n")
}

const blocksOf = (content: ReadonlyArray<unknown>): Array<ContentBlock> => {
  const blocks: Array<ContentBlock> = []
  for (const item of content) {
    const block = ContentBlock(item)
    if (block !== undefined) blocks.push(block)
  }
  return blocks
}

/** Creates the line handler for one Claude parse call. */
export const createClaudeReader = (context: ClaudeReaderContext) => {
  const { assembler, includeSidechains, maxRawTextChars } = context

  const raw = rawRecordBuilder(assembler.stats, maxRawTextChars)
  // Tool call ids of recall tools whose results have not been read yet, carried across parse
  // calls: a live session's file is often read between a call and its result (the SessionStart
  // hook's index run during the session).
  const recallCalls = new Set<string>(context.prior?.recallCalls ?? [])

  const surfaceOf = (line: SplitLine, role: "user" | "assistant", text: string): SurfaceText => {
    const masked = maskTranscriptText(text)
    assembler.stats.secretsMasked += masked.masked
    return { role, text: masked.text, offset: line.offset, length: line.length, channel: "record" }
  }

  const updateSession = (
    sessionId: string,
    rec: ClaudeLine,
    timestamp: string | undefined,
  ): void => {
    const s = assembler.session(sessionId)
    if (rec.cwd !== undefined) s.cwd = rec.cwd
    // Claude writes "HEAD" outside a git repository and on a detached head: not a branch.
    if (rec.gitBranch !== undefined && rec.gitBranch !== "" && rec.gitBranch !== "HEAD") {
      s.gitBranch = rec.gitBranch
    }
    if (rec.version !== undefined) s.cliVersion = rec.version
    if (rec.entrypoint !== undefined) s.originator = rec.entrypoint
    // A session is headless while every record that says where it came from says `claude -p`: one
    // typed at the interactive CLI (a `claude --resume` of a `-p` session, or the other way round)
    // makes it someone's work, which `--no-headless` must not hide.
    if (rec.entrypoint?.startsWith("sdk") === true || rec.promptSource === "sdk") {
      if (s.interactive !== true) s.headless = true
    } else if (rec.entrypoint !== undefined) {
      s.interactive = true
      s.headless = false
    }
    if (rec.forkedFrom?.sessionId !== undefined) s.forkedFrom = rec.forkedFrom.sessionId
    assembler.touch(sessionId, timestamp)
  }

  const userRecord = (
    line: SplitLine,
    rec: ClaudeLine,
    timestamp: string | undefined,
  ): { record: RawRecord; surface: Array<SurfaceText> } => {
    const content = rec.message?.content
    let promptText: string | undefined
    let toolOutput: string | undefined
    let recallOutput = false
    if (typeof content === "string") promptText = content
    else if (content !== undefined) {
      const blocks = blocksOf(content)
      const results = blocks.filter((b) => b.type === "tool_result")
      if (results.length > 0) {
        toolOutput = results.map((b) => renderToolResult(b.content)).join("\n")
        recallOutput = results.every(
          (b) => b.tool_use_id !== undefined && recallCalls.has(b.tool_use_id),
        )
        for (const b of results) if (b.tool_use_id !== undefined) recallCalls.delete(b.tool_use_id)
      } else {
        promptText = blocks
          .map((b) =>
            b.type === "text"
              ? (b.text ?? "")
              : b.type === "image" || b.type === "document"
                ? `[${b.type}]`
                : "",
          )
          .filter((s) => s !== "")
          .join("\n\n")
      }
    }
    if (toolOutput !== undefined) {
      return {
        record: raw(line, "user", "tool-output", toolOutput, timestamp, recallOutput),
        surface: [],
      }
    }
    const text = promptText ?? ""
    if (rec.isCompactSummary === true || isClaudeCompactionSummary(text)) {
      return { record: raw(line, "user", "compaction", text, timestamp), surface: [] }
    }
    if (rec.isMeta === true)
      return { record: raw(line, "user", "harness", text, timestamp), surface: [] }
    const words = stripClaudeHarness(text.replace(/\[(?:image|document)\]/g, ""))
    if (words === "") return { record: raw(line, "user", "harness", text, timestamp), surface: [] }
    return {
      record: raw(line, "user", "message", text, timestamp),
      surface: [surfaceOf(line, "user", words)],
    }
  }

  const assistantRecord = (
    line: SplitLine,
    rec: ClaudeLine,
    timestamp: string | undefined,
  ): { record: RawRecord; surface: Array<SurfaceText> } => {
    const content = rec.message?.content
    const blocks =
      typeof content === "string" ? [{ type: "text", text: content }] : blocksOf(content ?? [])
    const synthetic = rec.message?.model === "<synthetic>" || rec.isApiErrorMessage === true
    // The record's text leads with what its kind names, whatever the block order: tool calls,
    // then text, then other blocks, reasoning last. Thinking comes first in the line and can be
    // longer than the record's cap, which would cut the command out of expand and grep.
    const parts: Array<{ readonly rank: number; readonly text: string }> = []
    const surface: Array<SurfaceText> = []
    let kind: RawRecordKind = "message"
    for (const b of blocks) {
      switch (b.type) {
        case "text":
          parts.push({ rank: 1, text: b.text ?? "" })
          if (!synthetic && (b.text ?? "").trim() !== "")
            surface.push(surfaceOf(line, "assistant", b.text!.trim()))
          break
        case "thinking":
          parts.push({ rank: 3, text: b.thinking ?? "" })
          if (kind === "message" && surface.length === 0) kind = "reasoning"
          break
        case "redacted_thinking":
          if (kind === "message" && surface.length === 0) kind = "reasoning"
          break
        case "tool_use":
          if (b.id !== undefined && isBatonRecallToolName(b.name)) {
            recallCalls.add(b.id)
            if (recallCalls.size > PENDING_RECALL_CALLS)
              recallCalls.delete(recallCalls.values().next().value!)
          }
          parts.push({
            rank: 0,
            text: `${b.name ?? "tool"} ${sanitizedJson(b.input ?? {}, maxRawTextChars)}`,
          })
          kind = "tool-call"
          break
        default:
          parts.push({ rank: 2, text: `[${b.type}]` })
      }
    }
    if (surface.length > 0 && kind === "reasoning") kind = "message"
    const text = parts
      .sort((a, b) => a.rank - b.rank)
      .map((p) => p.text)
      .join("\n")
    return { record: raw(line, "assistant", kind, text, timestamp), surface }
  }

  const otherRecord = (
    line: SplitLine,
    rec: ClaudeLine,
    timestamp: string | undefined,
  ): RawRecord | undefined => {
    const type = rec.type
    if (noiseTypes.has(type)) return raw(line, type, "noise", "", timestamp, true)
    switch (type) {
      case "system": {
        const compaction =
          rec.subtype === "compact_boundary" || rec.subtype === "microcompact_boundary"
        const text = typeof rec.content === "string" ? rec.content : (rec.subtype ?? "")
        return raw(
          line,
          `system/${rec.subtype ?? "?"}`,
          compaction ? "compaction" : "metadata",
          text,
          timestamp,
        )
      }
      case "summary":
        return raw(line, type, "compaction", rec.summary ?? "", timestamp)
      case "progress": {
        const kindOfData =
          isJsonObject(rec.data) && typeof rec.data["type"] === "string" ? rec.data["type"] : "?"
        // agent_progress repeats the subagent's messages (the subagent file holds them).
        return raw(
          line,
          `progress/${kindOfData}`,
          "progress",
          sanitizedJson(rec.data ?? null, maxRawTextChars),
          timestamp,
          kindOfData === "agent_progress",
        )
      }
      case "attachment": {
        const kindOfAttachment =
          isJsonObject(rec.attachment) && typeof rec.attachment["type"] === "string"
            ? rec.attachment["type"]
            : "?"
        return raw(
          line,
          `attachment/${kindOfAttachment}`,
          "harness",
          sanitizedJson(rec.attachment ?? null, maxRawTextChars),
          timestamp,
          noisyAttachments.has(kindOfAttachment),
        )
      }
      case "queue-operation": {
        const text = typeof rec.content === "string" ? rec.content : ""
        // enqueue / dequeue repeat the prompt; remove is steering input and stays searchable.
        return raw(
          line,
          `queue-operation/${rec.operation ?? "?"}`,
          "metadata",
          text,
          timestamp,
          rec.operation !== "remove",
        )
      }
      case "last-prompt":
        return raw(line, type, "metadata", rec.lastPrompt ?? "", timestamp, true)
      default:
        if (metadataTypes.has(type))
          return raw(line, type, "metadata", sanitizedJson(rec, maxRawTextChars), timestamp)
        return undefined
    }
  }

  // Titles: a `custom-title` beats an `ai-title`, which beats a trusted legacy `summary`; within
  // a kind the newest wins (file order; among summaries, the one whose leaf comes last). Ranks of
  // the titles set in this call, per session. A title carried from an earlier call on the file
  // (an append, a slice) is of a kind the parse state does not keep: it counts as an `ai-title`,
  // the kind a live session writes again and again.
  const titleRank = new Map<string, number>()
  const setTitle = (sessionId: string, title: string, rank: number): boolean => {
    const s = assembler.session(sessionId)
    const held = titleRank.get(sessionId) ?? (s.title !== undefined ? titleRanks.ai : 0)
    if (rank < held) return false
    // Masked like every other text (a title is shown by `recent` and stored in `sessions`).
    s.title = maskTranscriptText(title).text
    titleRank.set(sessionId, rank)
    return true
  }

  // A `summary` names a session only when its `leafUuid` is a record of this file (Claude also
  // appends other sessions' summaries): the leaf's session takes it. A summary may come before or
  // after its leaf, so each waits for the other, within the call.
  const leaves = new Map<string, readonly [sessionId: string, offset: number]>()
  const waitingSummaries = new Map<string, string>()
  const summaryLeaf = new Map<string, number>()
  const trustSummary = (summary: string, sessionId: string, leafOffset: number): void => {
    const held = summaryLeaf.get(sessionId)
    if (titleRank.get(sessionId) === titleRanks.summary && held !== undefined && leafOffset < held)
      return
    if (setTitle(sessionId, summary, titleRanks.summary)) summaryLeaf.set(sessionId, leafOffset)
  }
  const summaryRead = (summary: string | undefined, leafUuid: string | undefined): void => {
    if (summary === undefined || summary.trim() === "" || leafUuid === undefined) return
    const leaf = leaves.get(leafUuid)
    if (leaf !== undefined) trustSummary(summary, leaf[0], leaf[1])
    else waitingSummaries.set(leafUuid, summary)
  }
  const leafRead = (uuid: string, sessionId: string, offset: number): void => {
    leaves.set(uuid, [sessionId, offset])
    const summary = waitingSummaries.get(uuid)
    if (summary === undefined) return
    waitingSummaries.delete(uuid)
    trustSummary(summary, sessionId, offset)
  }

  /** Handles one non-blank line. */
  const handle = (line: SplitLine): void => {
    const json = parseJsonLine(line.text)
    if (!isJsonObject(json)) {
      assembler.stats.malformedLines++
      return
    }
    const rec = ClaudeLine(json)
    if (rec === undefined) {
      assembler.stats.invalidRecords++
      return
    }
    const timestamp = normaliseTimestamp(rec.timestamp)
    const baseSession = rec.sessionId ?? context.fallbackSessionId
    const sidechain = rec.isSidechain === true
    const sessionId = sidechain
      ? `${baseSession}/${rec.agentId !== undefined ? `agent-${rec.agentId}` : "sidechain"}`
      : baseSession
    const conversation = rec.type === "user" || rec.type === "assistant" || rec.type === "system"
    if (conversation && hasUnknownKeys(json, knownConversationFields))
      assembler.stats.unknownFieldLines++

    if (rec.type === "ai-title" && rec.aiTitle !== undefined)
      setTitle(baseSession, rec.aiTitle, titleRanks.ai)
    if (rec.type === "custom-title" && rec.customTitle !== undefined)
      setTitle(baseSession, rec.customTitle, titleRanks.custom)
    if (rec.type === "summary") summaryRead(rec.summary, rec.leafUuid)
    if (rec.uuid !== undefined) leafRead(rec.uuid, sessionId, line.offset)
    if (conversation || rec.sessionId !== undefined) {
      if (conversation) updateSession(sessionId, rec, timestamp)
      if (sidechain) {
        const s = assembler.session(sessionId)
        s.subagent = true
        s.parentSessionId = baseSession
        if (rec.agentId !== undefined) s.agentId = rec.agentId
      }
    }
    if (sidechain && !includeSidechains) {
      assembler.stats.sidechainRecordsSkipped++
      return
    }
    let record: RawRecord | undefined
    let surface: Array<SurfaceText> = []
    let side: "user" | "assistant" | undefined
    if (rec.type === "user") {
      ;({ record, surface } = userRecord(line, rec, timestamp))
      side = "user"
    } else if (rec.type === "assistant") {
      ;({ record, surface } = assistantRecord(line, rec, timestamp))
      side = "assistant"
    } else {
      record = otherRecord(line, rec, timestamp)
      if (record === undefined) {
        assembler.unknownType(rec.type)
        return
      }
    }
    const firstUser = surface.find((s) => s.role === "user")
    if (firstUser !== undefined) {
      const s = assembler.session(sessionId)
      if (s.firstPrompt === undefined) s.firstPrompt = firstUser.text.slice(0, 300)
    }
    // A turn opened by a line without a timestamp takes the session's latest time so far (only a
    // conversation line opens a turn, and it has made its session).
    const turnTime = timestamp ?? (conversation ? assembler.session(sessionId).endedAt : undefined)
    assembler.place(
      {
        sessionId,
        sidechain,
        ...(side !== undefined ? { side } : {}),
        ...(rec.uuid !== undefined ? { idCandidate: rec.uuid } : {}),
        ...(turnTime !== undefined ? { timestamp: turnTime } : {}),
      },
      line.offset,
      line.length,
      record,
      surface,
      `claude:${sessionId}:${line.offset}`,
    )
  }

  /** State to carry into the next call. */
  const state = (): ClaudeParseState => ({ recallCalls: [...recallCalls] })

  return { handle, state }
}

/**
 * Codex rollout line reader for every format era: bare (no envelope, `record_type` markers),
 * wrapped `{timestamp, type, payload}` lines, paginated / 0.169 files whose words arrive as
 * `event_msg item_completed` UserMessage / AgentMessage items, and `compacted` lines.
 *
 * Surface dedupe rule (deterministic): the same words reach a rollout through up to three
 * channels — `response_item` messages, `user_message` / `agent_message` events and
 * `item_completed` items. Within one Codex turn (reset at `task_started` / `turn_started`), each
 * (role, text) occurrence is taken from whichever channel writes it first in file order; a later
 * copy from a *different* channel is matched to that occurrence and dropped (counted in
 * `duplicateSurfaceDropped`). A copy from the *same* channel is a new occurrence (the user said
 * it twice). The dropped copy stays a raw record. Assistant messages flagged
 * `compaction_output` and the compaction bridge are never surface.
 *
 * Never throws; injected context (environment, AGENTS.md, permissions, …) is stripped from
 * surface text and kept as raw `harness` records.
 */
import { createHash } from "node:crypto"
import { isBatonRecallToolCall, isBatonRecallToolName } from "./baton-tools.js"
import { isCodexInjected, stripCodexInjected } from "./harness-text.js"
import {
  hasUnknownKeys,
  isJsonObject,
  parseJsonLine,
  readArray,
  readString,
  readStruct,
  readUnknown,
} from "./lenient-schema.js"
import type { ReadType } from "./lenient-schema.js"
import type { SplitLine } from "./line-splitter.js"
import { rawRecordBuilder, sanitizedJson } from "./raw-render.js"
import { maskTranscriptText } from "./secret-masking.js"
import type {
  CodexParseState,
  RawRecord,
  SurfaceChannel,
  SurfaceText,
  TurnRole,
} from "./transcript-model.js"
import { repositoryUrlKey } from "./repo-root.js"
import { normaliseTimestamp } from "./turn-assembler.js"
import type { TurnAssembler } from "./turn-assembler.js"

const Envelope = readStruct(
  { timestamp: readString, type: readString, payload: readUnknown, metadata: readUnknown },
  ["type"],
)

const SessionMeta = readStruct({
  id: readString,
  session_id: readString,
  timestamp: readString,
  cwd: readString,
  originator: readString,
  cli_version: readString,
  source: readUnknown,
  thread_source: readString,
  forked_from_id: readString,
  parent_thread_id: readString,
  agent_path: readString,
  agent_nickname: readString,
  git: readStruct({ branch: readString, repository_url: readString }),
})
type SessionMeta = ReadType<typeof SessionMeta>

const ContentItem = readStruct({ type: readString, text: readString }, ["type"])

const ResponseItem = readStruct(
  {
    type: readString,
    role: readString,
    content: readArray,
    summary: readArray,
    name: readString,
    /** `mcp__baton` for an MCP tool's call (0.169): `name` is then the tool alone. */
    namespace: readString,
    arguments: readUnknown,
    input: readUnknown,
    output: readUnknown,
    action: readUnknown,
    phase: readString,
    call_id: readString,
  },
  ["type"],
)
type ResponseItem = ReadType<typeof ResponseItem>

const TurnItem = readStruct(
  {
    type: readString,
    id: readString,
    content: readArray,
    text: readString,
    aggregated_output: readString,
    command: readUnknown,
    exit_code: readUnknown,
    /** An `McpToolCall` item's server and tool. */
    server: readString,
    tool: readString,
  },
  ["type"],
)

const EventMsg = readStruct(
  {
    type: readString,
    message: readString,
    phase: readString,
    text: readString,
    item: TurnItem,
    thread_name: readString,
    aggregated_output: readString,
    command: readUnknown,
    call_id: readString,
    exit_code: readUnknown,
    /** `mcp_tool_call_end`: `{server, tool, arguments}`. */
    invocation: readStruct({ server: readString, tool: readString }),
    /** `task_complete` of a turn that failed: `{message, codex_error_info}` (0.169). */
    error: readUnknown,
  },
  ["type"],
)
type EventMsg = ReadType<typeof EventMsg>

/**
 * The text of a turn-ending record: "" for a turn that completed, else the error that ended it
 * (a usage limit, a server error), so grep and expand show why the turn stopped.
 */
const turnEndError = (error: unknown): string => {
  if (!isJsonObject(error)) return ""
  const message = typeof error["message"] === "string" ? error["message"] : ""
  const info = error["codex_error_info"]
  const kind =
    typeof info === "string" ? info : isJsonObject(info) ? Object.keys(info)[0] : undefined
  if (message === "" && kind === undefined) return ""
  return `Turn ended with an error${kind === undefined ? "" : ` (${kind})`}: ${message}`.trimEnd()
}

const TurnContext = readStruct({ cwd: readString })

const Compacted = readStruct({ message: readString })

const knownEnvelopeFields = new Set(["timestamp", "ordinal", "type", "payload", "metadata"])

const knownLineTypes = new Set([
  "session_meta",
  "response_item",
  "event_msg",
  "turn_context",
  "compacted",
  "world_state",
  "inter_agent_communication",
  "inter_agent_communication_metadata",
  "token_usage_record",
])

const toolCallTypes = new Set([
  "function_call",
  "custom_tool_call",
  "local_shell_call",
  "web_search_call",
  "tool_search_call",
  "image_generation_call",
])
const toolOutputTypes = new Set([
  "function_call_output",
  "custom_tool_call_output",
  "local_shell_call_output",
  "tool_search_output",
])
/**
 * The command output inside a `function_call_output` text: after the "Output:" line of the
 * unified-exec and shell formats ("Chunk ID: …", "Wall time: …", "Process exited with code 0",
 * …), or the `output` field of the older JSON form; else the whole text.
 */
const commandOutputOf = (text: string): string => {
  const at = text.indexOf("\nOutput:\n")
  if (at !== -1) return text.slice(at + 9)
  if (text.startsWith("Output:\n")) return text.slice(8)
  if (text.startsWith("{") && text.length <= 1_048_576) {
    const json = parseJsonLine(text)
    if (isJsonObject(json) && typeof json["output"] === "string") return json["output"]
  }
  return text
}

/** A command's failing exit code, after its output (the model's copy of it says so too). */
const exitNote = (code: unknown): string =>
  typeof code === "number" && code !== 0 ? `\n[exit code ${code}]` : ""

const compactionItemTypes = new Set(["compaction", "context_compaction", "ghost_snapshot"])
const otherItemTypes = new Set(["agent_message", "additional_tools", "message", "reasoning"])

const knownEvents = new Set([
  "user_message",
  "agent_message",
  "agent_reasoning",
  "agent_reasoning_raw_content",
  "agent_reasoning_section_break",
  "token_count",
  "context_compacted",
  "entered_review_mode",
  "exited_review_mode",
  "thread_rolled_back",
  "turn_aborted",
  "task_started",
  "turn_started",
  "task_complete",
  "turn_complete",
  "item_completed",
  "item_started",
  "image_generation_end",
  "thread_name_updated",
  "patch_apply_end",
  "mcp_tool_call_end",
  "web_search_end",
  "sub_agent_activity",
  "thread_settings_applied",
  "error",
  "warning",
  "exec_command_end",
  "view_image_tool_call",
  "plan_update",
  "collab_agent_spawn_end",
  "collab_agent_interaction_end",
  "dynamic_tool_call_end",
  "undo_completed",
  "shutdown_complete",
])

const channelBit: Readonly<Record<SurfaceChannel, number>> = {
  record: 1,
  response_item: 2,
  event: 4,
  item_completed: 8,
}
const maxWindowKeys = 256

/** Options of the Codex reader. */
export interface CodexReaderContext {
  readonly assembler: TurnAssembler
  readonly includeSidechains: boolean
  readonly maxRawTextChars: number
  /** Thread id used until a `session_meta` names one (the file name's UUID, else its stem). */
  readonly fallbackThreadId: string
  readonly prior: CodexParseState | undefined
}

const textsOf = (
  items: ReadonlyArray<unknown> | undefined,
  types: ReadonlySet<string>,
): Array<string> =>
  (items ?? []).flatMap((raw) => {
    const item = ContentItem(raw)
    return item !== undefined && types.has(item.type) && item.text !== undefined ? [item.text] : []
  })

const userTextTypes = new Set(["input_text", "text"])
const assistantTextTypes = new Set(["output_text", "Text", "text"])

/**
 * An item Codex (0.169) writes around each attached image in a prompt's `response_item` copy: the
 * `input_text` `<image name=[Image #1] path="…">` before the `input_image` and `</image>` after
 * it. Harness text: the `item_completed` copy of the same prompt has neither (only a
 * `local_image`), so keeping them would make the prompt two user turns, one holding a local path.
 */
const imageWrapper = /^(?:<image(?:\s[^<>\n]*)?>|<\/image>)$/

/**
 * The user's words in a prompt's text items, injected context and image wrappers removed; a prompt
 * that is only images (wrappers and nothing else) is `[image]`, as a Claude Code image block is.
 */
const joinUserTexts = (texts: ReadonlyArray<string>): string => {
  const own = texts.filter((t) => !imageWrapper.test(t.trim()))
  const words = own
    .map(stripCodexInjected)
    .filter((t) => t !== "")
    .join("\n\n")
  return words === "" && own.length < texts.length ? "[image]" : words
}

/** The subagent parent named by a `source` value, if it is a subagent source. */
const subagentSource = (source: unknown): { readonly parent?: string } | undefined => {
  if (source === "subagent") return {}
  if (!isJsonObject(source) || !("subagent" in source)) return undefined
  const sub = source["subagent"]
  if (isJsonObject(sub) && isJsonObject(sub["thread_spawn"])) {
    const parent = sub["thread_spawn"]["parent_thread_id"]
    return typeof parent === "string" ? { parent } : {}
  }
  return {}
}

/** Creates the line handler for one Codex parse call. */
export const createCodexReader = (context: CodexReaderContext) => {
  const { assembler, includeSidechains, maxRawTextChars } = context
  let threadId = context.prior?.threadId
  let metaSeen = context.prior?.metaSeen ?? false
  let subagent = context.prior?.subagent ?? false
  const window = new Map<string, Array<number>>(
    (context.prior?.window ?? []).map(([key, counts]) => [key, Object.values(counts)]),
  )
  const sessionId = (): string => threadId ?? context.fallbackThreadId
  // The command outputs of the current turn already recorded (call id → hash of the output),
  // and the text of the turn's last compaction summary: Codex writes a command's output twice
  // (an `exec_command_end` event or a `CommandExecution` item, and the `function_call_output`
  // the model reads) and a compaction's summary twice (the `compaction_output` answer, and
  // inside the `compacted` line's message). A later copy with the same output stays a raw
  // record, flagged `skipForGrep`, so grep, expand and step show the work once; a copy that
  // differs (a long-running command's first output, then the whole of it) is kept as it is.
  const outputs = new Map<string, string>(context.prior?.outputs ?? [])
  // Call ids of the current turn's calls of Baton's own recall tools: their outputs are copies of
  // records already indexed, kept raw and flagged `skipForGrep` (see baton-tools.ts).
  const recallCalls = new Set<string>(context.prior?.recallCalls ?? [])
  let lastSummary = context.prior?.lastSummary

  /**
   * True when the same output of `callId` was recorded before in this turn; records the first.
   * `output` is the command's output alone, without the channel's header. A huge output is
   * compared by its length and first 64 KiB, so a copy costs no more than its bounded record.
   */
  const repeatedOutput = (callId: string | undefined, output: string): boolean => {
    if (callId === undefined || callId === "") return false
    const trimmed = output.trim()
    const hash = createHash("sha256")
      .update(`${trimmed.length}\u0000${trimmed.slice(0, 65_536)}`)
      .digest("hex")
      .slice(0, 16)
    const first = outputs.get(callId)
    if (first === undefined) outputs.set(callId, hash)
    return first === hash
  }

  /** Applies the dedupe rule; true when this copy is new surface. */
  const admit = (channel: SurfaceChannel, role: TurnRole, text: string): boolean => {
    const key = createHash("sha256").update(`${role}\u0000${text}`).digest("hex").slice(0, 32)
    const bit = channelBit[channel]
    const occurrences = window.get(key) ?? []
    const match = occurrences.findIndex((mask) => (mask & bit) === 0)
    if (match !== -1) {
      occurrences[match] = occurrences[match]! | bit
      assembler.stats.duplicateSurfaceDropped++
      return false
    }
    occurrences.push(bit)
    window.delete(key)
    window.set(key, occurrences)
    if (window.size > maxWindowKeys) window.delete(window.keys().next().value!)
    return true
  }

  const raw = rawRecordBuilder(assembler.stats, maxRawTextChars)

  const surfaceOf = (
    line: SplitLine,
    channel: SurfaceChannel,
    role: TurnRole,
    text: string,
    phase: string | undefined,
  ): Array<SurfaceText> => {
    const words = text.trim()
    if (words === "" || !admit(channel, role, words)) return []
    const masked = maskTranscriptText(words)
    assembler.stats.secretsMasked += masked.masked
    if (role === "user") {
      const s = assembler.session(sessionId())
      if (s.firstPrompt === undefined) s.firstPrompt = masked.text.slice(0, 300)
    }
    return [
      {
        role,
        text: masked.text,
        offset: line.offset,
        length: line.length,
        channel,
        ...(phase !== undefined ? { phase } : {}),
      },
    ]
  }

  /** Bare-era files name their cwd only inside `<environment_context><cwd>`. */
  const recoverCwd = (text: string): void => {
    const s = assembler.session(sessionId())
    if (s.cwd !== undefined) return
    const match = /<environment_context>[\s\S]*?<cwd>([^<]+)<\/cwd>/.exec(text)
    if (match?.[1] !== undefined) s.cwd = match[1].trim()
  }

  const applyMeta = (meta: SessionMeta, timestamp: string | undefined): void => {
    const first = !metaSeen
    metaSeen = true
    if (first) threadId = meta.id ?? meta.session_id ?? threadId
    const s = assembler.session(sessionId())
    if (meta.cwd !== undefined) s.cwd = meta.cwd
    if (meta.git?.branch !== undefined) s.gitBranch = meta.git.branch
    const remote = meta.git?.repository_url
    if (remote !== undefined) {
      const url = repositoryUrlKey(remote)
      if (url !== undefined) s.repositoryUrl = url
    }
    if (!first) return
    if (meta.originator !== undefined) s.originator = meta.originator
    if (meta.cli_version !== undefined) s.cliVersion = meta.cli_version
    if (meta.forked_from_id !== undefined) s.forkedFrom = meta.forked_from_id
    if (meta.originator === "codex_exec" || meta.source === "exec") s.headless = true
    if (
      meta.thread_source === "memory_consolidation" ||
      (isJsonObject(meta.source) && "internal" in meta.source)
    ) {
      s.headless = true
    }
    const spawned = subagentSource(meta.source)
    if (
      spawned !== undefined ||
      meta.thread_source === "subagent" ||
      meta.agent_path !== undefined ||
      meta.parent_thread_id !== undefined
    ) {
      subagent = true
      s.subagent = true
      const parent = spawned?.parent ?? meta.parent_thread_id
      if (parent !== undefined) s.parentSessionId = parent
      if (meta.agent_nickname !== undefined) s.agentId = meta.agent_nickname
    }
    assembler.touch(sessionId(), normaliseTimestamp(meta.timestamp) ?? timestamp)
  }

  interface Classified {
    readonly record: RawRecord | undefined
    readonly surface: Array<SurfaceText>
    readonly side?: TurnRole
  }

  const responseItem = (
    line: SplitLine,
    item: ResponseItem,
    envelopeMeta: unknown,
    timestamp: string | undefined,
  ): Classified | undefined => {
    const type = `response_item/${item.type}`
    if (item.type === "message") {
      if (item.role === "user") {
        const texts = textsOf(item.content, userTextTypes)
        const all = texts.join("\n\n")
        const words = joinUserTexts(texts)
        recoverCwd(all)
        const surface = surfaceOf(line, "response_item", "user", words, undefined)
        const kind = words === "" || texts.every(isCodexInjected) ? "harness" : "message"
        return { record: raw(line, type, kind, all, timestamp), surface, side: "user" }
      }
      if (item.role === "assistant") {
        const text = textsOf(item.content, assistantTextTypes).join("\n\n")
        const compaction = isJsonObject(envelopeMeta) && envelopeMeta["compaction_output"] === true
        if (compaction) {
          if (text.trim() !== "") lastSummary = text.trim()
          return { record: raw(line, type, "compaction", text, timestamp), surface: [] }
        }
        return {
          record: raw(line, type, "message", text, timestamp),
          surface: surfaceOf(line, "response_item", "assistant", text, item.phase),
          side: "assistant",
        }
      }
      const text = textsOf(item.content, userTextTypes).join("\n\n")
      return {
        record: raw(line, `${type}/${item.role ?? "?"}`, "harness", text, timestamp),
        surface: [],
      }
    }
    if (item.type === "reasoning") {
      const text = [
        ...textsOf(item.summary, new Set(["summary_text"])),
        ...textsOf(item.content, new Set(["reasoning_text", "text"])),
      ].join("\n")
      return {
        record: raw(line, type, "reasoning", text, timestamp),
        surface: [],
        side: "assistant",
      }
    }
    if (toolCallTypes.has(item.type)) {
      const qualified =
        item.namespace !== undefined && item.name !== undefined
          ? `${item.namespace}__${item.name}`
          : item.name
      if (item.call_id !== undefined && isBatonRecallToolName(qualified)) {
        recallCalls.add(item.call_id)
      }
      const body =
        typeof item.arguments === "string"
          ? item.arguments
          : typeof item.input === "string"
            ? item.input
            : sanitizedJson(item.action ?? item.arguments ?? null, maxRawTextChars)
      return {
        record: raw(line, type, "tool-call", `${item.name ?? item.type} ${body}`, timestamp),
        surface: [],
        side: "assistant",
      }
    }
    if (toolOutputTypes.has(item.type)) {
      const out = item.output
      const text =
        typeof out === "string"
          ? out
          : Array.isArray(out)
            ? textsOf(out, new Set(["input_text", "output_text", "text"])).join("\n")
            : sanitizedJson(out ?? null, maxRawTextChars)
      return {
        record: raw(
          line,
          type,
          "tool-output",
          text,
          timestamp,
          (item.call_id !== undefined && recallCalls.has(item.call_id)) ||
            repeatedOutput(item.call_id, commandOutputOf(text)),
        ),
        surface: [],
      }
    }
    if (compactionItemTypes.has(item.type)) {
      return { record: raw(line, type, "compaction", "", timestamp), surface: [] }
    }
    if (otherItemTypes.has(item.type)) {
      return {
        record: raw(line, type, "metadata", sanitizedJson(item, maxRawTextChars), timestamp),
        surface: [],
      }
    }
    return undefined
  }

  const eventMsg = (
    line: SplitLine,
    event: EventMsg,
    timestamp: string | undefined,
  ): Classified | undefined => {
    const type = `event_msg/${event.type}`
    switch (event.type) {
      case "task_started":
      case "turn_started":
        window.clear()
        outputs.clear()
        recallCalls.clear()
        lastSummary = undefined
        return { record: raw(line, type, "metadata", "", timestamp, true), surface: [] }
      case "user_message": {
        const text = event.message ?? ""
        const words = joinUserTexts([text])
        const surface = surfaceOf(line, "event", "user", words, undefined)
        return {
          record: raw(line, type, words === "" ? "harness" : "message", text, timestamp),
          surface,
          side: "user",
        }
      }
      case "agent_message": {
        const text = event.message ?? ""
        return {
          record: raw(line, type, "message", text, timestamp),
          surface: surfaceOf(line, "event", "assistant", text, event.phase),
          side: "assistant",
        }
      }
      case "agent_reasoning":
      case "agent_reasoning_raw_content":
        return {
          record: raw(line, type, "reasoning", event.text ?? "", timestamp),
          surface: [],
          side: "assistant",
        }
      case "item_completed": {
        const item = event.item
        const itemType = `${type}/${item?.type ?? "?"}`
        if (item === undefined)
          return { record: raw(line, itemType, "metadata", "", timestamp), surface: [] }
        switch (item.type) {
          case "UserMessage": {
            const texts = textsOf(item.content, userTextTypes)
            const words = joinUserTexts(texts)
            const surface = surfaceOf(line, "item_completed", "user", words, undefined)
            return {
              record: raw(
                line,
                itemType,
                words === "" ? "harness" : "message",
                texts.join("\n\n"),
                timestamp,
              ),
              surface,
              side: "user",
            }
          }
          case "AgentMessage": {
            const text = textsOf(item.content, assistantTextTypes).join("\n\n")
            return {
              record: raw(line, itemType, "message", text, timestamp),
              surface: surfaceOf(line, "item_completed", "assistant", text, undefined),
              side: "assistant",
            }
          }
          case "CommandExecution": {
            const command = Array.isArray(item.command) ? item.command.map(String).join(" ") : ""
            return {
              record: raw(
                line,
                itemType,
                "tool-output",
                `${command}\n${item.aggregated_output ?? ""}${exitNote(item.exit_code)}`,
                timestamp,
                repeatedOutput(item.id, item.aggregated_output ?? ""),
              ),
              surface: [],
            }
          }
          case "Reasoning":
            return {
              record: raw(line, itemType, "reasoning", item.text ?? "", timestamp),
              surface: [],
              side: "assistant",
            }
          case "ContextCompaction":
            return { record: raw(line, itemType, "compaction", "", timestamp), surface: [] }
          default:
            return {
              record: raw(
                line,
                itemType,
                "tool-output",
                sanitizedJson(item, maxRawTextChars),
                timestamp,
                item.type === "McpToolCall" && isBatonRecallToolCall(item.server, item.tool),
              ),
              surface: [],
            }
        }
      }
      case "exec_command_end":
        return {
          record: raw(
            line,
            type,
            "tool-output",
            `${event.aggregated_output ?? ""}${exitNote(event.exit_code)}`,
            timestamp,
            repeatedOutput(event.call_id, event.aggregated_output ?? ""),
          ),
          surface: [],
        }
      case "mcp_tool_call_end":
        return {
          record: raw(
            line,
            type,
            "tool-output",
            sanitizedJson(event, maxRawTextChars),
            timestamp,
            isBatonRecallToolCall(event.invocation?.server, event.invocation?.tool),
          ),
          surface: [],
        }
      case "patch_apply_end":
      case "web_search_end":
      case "image_generation_end":
      case "view_image_tool_call":
        return {
          record: raw(line, type, "tool-output", sanitizedJson(event, maxRawTextChars), timestamp),
          surface: [],
        }
      case "context_compacted":
        return { record: raw(line, type, "compaction", "", timestamp), surface: [] }
      case "thread_name_updated":
        if (event.thread_name !== undefined)
          assembler.session(sessionId()).title = maskTranscriptText(event.thread_name).text
        return {
          record: raw(line, type, "metadata", event.thread_name ?? "", timestamp),
          surface: [],
        }
      case "task_complete":
      case "turn_complete": {
        const failed = turnEndError(event.error)
        return {
          record: raw(line, type, "metadata", failed, timestamp, failed === ""),
          surface: [],
        }
      }
      case "token_count":
      case "thread_settings_applied":
        return { record: raw(line, type, "metadata", "", timestamp, true), surface: [] }
      default:
        if (knownEvents.has(event.type)) {
          return {
            record: raw(line, type, "metadata", sanitizedJson(event, maxRawTextChars), timestamp),
            surface: [],
          }
        }
        return undefined
    }
  }

  /** Classifies one decoded line (envelope or bare era). `undefined` = unknown type. */
  const classify = (
    line: SplitLine,
    json: Record<string, unknown>,
  ):
    | {
        readonly type: string
        readonly timestamp?: string
        readonly result: Classified | undefined
      }
    | "invalid" => {
    const envelope = Envelope(json)
    if (envelope === undefined || !("payload" in json)) {
      // Bare era: a bare meta, `record_type` markers and bare response items.
      if (typeof json["record_type"] === "string") {
        return {
          type: "record_type",
          result: {
            record: raw(line, "record_type", "metadata", "", undefined, true),
            surface: [],
          },
        }
      }
      if (typeof json["type"] === "string") {
        const item = ResponseItem(json)
        if (item === undefined) return "invalid"
        return {
          type: `response_item/${item.type}`,
          result: responseItem(line, item, undefined, undefined),
        }
      }
      if (typeof json["id"] === "string") {
        const meta = SessionMeta(json)
        if (meta === undefined) return "invalid"
        applyMeta(meta, undefined)
        return {
          type: "session_meta",
          result: {
            record: raw(
              line,
              "session_meta",
              "metadata",
              sanitizedJson(json, maxRawTextChars),
              undefined,
            ),
            surface: [],
          },
        }
      }
      return "invalid"
    }
    const timestamp = normaliseTimestamp(envelope.timestamp)
    if (hasUnknownKeys(json, knownEnvelopeFields)) assembler.stats.unknownFieldLines++
    const payload = envelope.payload
    const at = timestamp !== undefined ? { timestamp } : {}
    switch (envelope.type) {
      case "session_meta": {
        const meta = SessionMeta(payload)
        if (meta !== undefined) applyMeta(meta, timestamp)
        return {
          type: envelope.type,
          ...at,
          result: {
            record: raw(
              line,
              "session_meta",
              "metadata",
              sanitizedJson(payload, maxRawTextChars),
              timestamp,
            ),
            surface: [],
          },
        }
      }
      case "response_item": {
        const item = ResponseItem(payload)
        if (item === undefined) return "invalid"
        return {
          type: `response_item/${item.type}`,
          ...at,
          result: responseItem(line, item, envelope.metadata, timestamp),
        }
      }
      case "event_msg": {
        const event = EventMsg(payload)
        if (event === undefined) return "invalid"
        return { type: `event_msg/${event.type}`, ...at, result: eventMsg(line, event, timestamp) }
      }
      case "turn_context": {
        const ctx = TurnContext(payload)
        if (ctx?.cwd !== undefined) assembler.session(sessionId()).cwd = ctx.cwd
        return {
          type: envelope.type,
          ...at,
          result: {
            record: raw(line, "turn_context", "metadata", "", timestamp, true),
            surface: [],
          },
        }
      }
      case "compacted": {
        const compacted = Compacted(payload)
        const message = compacted?.message ?? ""
        // The summary again, after Codex's fixed preamble: a copy of the turn's
        // `compaction_output` answer when there was one.
        const copy = lastSummary !== undefined && message.trimEnd().endsWith(lastSummary)
        return {
          type: envelope.type,
          ...at,
          result: {
            record: raw(line, "compacted", "compaction", message, timestamp, copy),
            surface: [],
          },
        }
      }
      default:
        if (knownLineTypes.has(envelope.type)) {
          const noisy = envelope.type === "world_state" || envelope.type === "token_usage_record"
          const text = noisy ? "" : sanitizedJson(payload ?? null, maxRawTextChars)
          return {
            type: envelope.type,
            ...at,
            result: {
              record: raw(line, envelope.type, "metadata", text, timestamp, noisy),
              surface: [],
            },
          }
        }
        return { type: envelope.type, ...at, result: undefined }
    }
  }

  /** Handles one non-blank line. */
  const handle = (line: SplitLine): void => {
    const json = parseJsonLine(line.text)
    if (!isJsonObject(json)) {
      assembler.stats.malformedLines++
      return
    }
    const wasSubagent = subagent
    const classified = classify(line, json)
    if (classified === "invalid") {
      assembler.stats.invalidRecords++
      return
    }
    assembler.touch(sessionId(), classified.timestamp)
    if ((subagent || wasSubagent) && !includeSidechains) {
      assembler.stats.sidechainRecordsSkipped++
      return
    }
    const result = classified.result
    if (result === undefined) {
      assembler.unknownType(classified.type)
      return
    }
    // A turn opened by a line without a timestamp (every line of a bare-era rollout) takes the
    // thread's latest time so far: the bare meta's `timestamp`, or the latest envelope's. Only a
    // line with a side or surface opens a turn; it lands in this thread's turns either way.
    const opens = result.side !== undefined || result.surface.length > 0
    const turnTime =
      classified.timestamp ?? (opens ? assembler.session(sessionId()).endedAt : undefined)
    assembler.place(
      {
        sessionId: sessionId(),
        sidechain: subagent,
        ...(result.side !== undefined ? { side: result.side } : {}),
        ...(turnTime !== undefined ? { timestamp: turnTime } : {}),
      },
      line.offset,
      line.length,
      result.record,
      result.surface,
      `codex:${sessionId()}:${line.offset}`,
    )
  }

  /** State to carry into the next call. */
  const state = (): CodexParseState => ({
    ...(threadId !== undefined ? { threadId } : {}),
    metaSeen,
    subagent,
    ...(outputs.size > 0 ? { outputs: [...outputs.entries()] } : {}),
    ...(recallCalls.size > 0 ? { recallCalls: [...recallCalls] } : {}),
    ...(lastSummary !== undefined && lastSummary.length <= 65_536 ? { lastSummary } : {}),
    window: [...window.entries()].map(
      ([key, masks]) => [key, Object.fromEntries(masks.map((m, i) => [String(i), m]))] as const,
    ),
  })

  return { handle, state }
}

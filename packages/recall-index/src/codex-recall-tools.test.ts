// The results of Baton's own recall tools in a Codex rollout are copies of records already
// indexed: they stay raw records (expand and step show them) but grep skips them, else every
// recall call would come back as a hit of the next grep. Record shapes copied from a real 0.169
// `codex exec` rollout with the plugin (`namespace: "mcp__baton"`, an `McpToolCall` item), plus
// the one-name call and `mcp_tool_call_end` event of earlier releases.
import { describe, expect, it } from "vitest"
import { parseTranscriptBytes } from "./transcript-parser.js"
import type { ParseResult } from "./transcript-model.js"

const encoder = new TextEncoder()
const ID = "01a23f2a-c229-7040-a336-66d1881850bc"
const file = {
  source: "codex" as const,
  path: `/c/sessions/2026/12/04/rollout-2026-12-04T03-48-16-${ID}.jsonl`,
}
const at = (ms: number) => new Date(Date.UTC(2026, 11, 4, 3, 48, 16) + ms).toISOString()
let clock = 0
const line = (type: string, payload: Record<string, unknown>) =>
  JSON.stringify({ timestamp: at((clock += 10)), type, payload }) + "\n"

const head = [
  line("session_meta", { session_id: ID, id: ID, timestamp: at(0), cwd: "/w" }),
  line("event_msg", { type: "task_started", turn_id: ID }),
  line("response_item", {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: "what did we decide about retries?" }],
  }),
].join("")

const call = (callId: string, name: string, namespace?: string) =>
  line("response_item", {
    type: "function_call",
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    arguments: '{"query":"retry policy"}',
    call_id: callId,
  })
const output = (callId: string) =>
  line("response_item", {
    type: "function_call_output",
    call_id: callId,
    output: `Wall time: 0.4 seconds\nOutput:\n{"hits":[{"text":"the retry policy (${callId})"}]}`,
  })
const mcpItem = (callId: string, server: string, tool: string) =>
  line("event_msg", {
    type: "item_completed",
    thread_id: ID,
    turn_id: ID,
    item: {
      type: "McpToolCall",
      id: callId,
      server,
      tool,
      arguments: { query: "retry policy" },
      status: "completed",
      result: { content: [{ type: "text", text: `{"hits":["the retry policy (${callId})"]}` }] },
    },
  })
const mcpEnd = (callId: string, server: string, tool: string) =>
  line("event_msg", {
    type: "mcp_tool_call_end",
    call_id: callId,
    invocation: { server, tool, arguments: { query: "retry policy" } },
    result: { Ok: { content: [{ type: "text", text: `the retry policy (${callId})` }] } },
  })

const toolOutputs = (...results: ReadonlyArray<ParseResult>) =>
  results
    .flatMap((r) => r.turns)
    .flatMap((t) => t.records)
    .filter((rec) => rec.kind === "tool-output")
    .map((rec) => [/\bc\d\b/.exec(rec.text)?.[0], rec.recordType, rec.skipForGrep])

describe("results of Baton's own recall tools in a Codex rollout", () => {
  it("are kept but skipped by grep; other tools' results are not", () => {
    const text =
      head +
      call("c1", "recall_search", "mcp__baton") +
      mcpItem("c1", "baton", "recall_search") +
      output("c1") +
      call("c2", "mcp__baton__grep") +
      mcpEnd("c2", "baton", "grep") +
      output("c2") +
      call("c3", "grep", "mcp__other") +
      mcpItem("c3", "other", "grep") +
      output("c3") +
      call("c4", "schedule_compaction", "mcp__baton") +
      mcpEnd("c4", "baton", "schedule_compaction") +
      output("c4")
    expect(toolOutputs(parseTranscriptBytes(file, encoder.encode(text)))).toEqual([
      ["c1", "event_msg/item_completed/McpToolCall", true],
      ["c1", "response_item/function_call_output", true],
      ["c2", "event_msg/mcp_tool_call_end", true],
      ["c2", "response_item/function_call_output", true],
      ["c3", "event_msg/item_completed/McpToolCall", false],
      ["c3", "response_item/function_call_output", false],
      ["c4", "event_msg/mcp_tool_call_end", false],
      ["c4", "response_item/function_call_output", false],
    ])
  })

  it("remembers a call across a resumed parse, and forgets it at the next turn", () => {
    const first = head + call("c1", "step", "mcp__baton")
    const bytes = encoder.encode(
      first +
        output("c1") +
        line("event_msg", { type: "task_started", turn_id: "t2" }) +
        output("c1"),
    )
    const split = encoder.encode(first).length
    const a = parseTranscriptBytes(file, bytes.subarray(0, split))
    const b = parseTranscriptBytes(
      file,
      bytes.subarray(split),
      JSON.parse(JSON.stringify(a.state)) as ParseResult["state"],
    )
    expect(toolOutputs(a, b)).toEqual([
      ["c1", "response_item/function_call_output", true],
      ["c1", "response_item/function_call_output", false],
    ])
  })
})

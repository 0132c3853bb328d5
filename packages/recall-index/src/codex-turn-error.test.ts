// A Codex 0.169 turn that a usage limit (or another error) ended writes the reason only into its
// `task_complete` event (`error: {message, codex_error_info}`); the record keeps it, so grep finds
// "hit your usage limit" and expand shows why the turn stopped. A turn that completed stays an
// empty record left out of grep. Record shapes copied from a real 0.169 `codex exec` rollout.
import { describe, expect, it } from "vitest"
import { parseTranscriptBytes } from "./transcript-parser.js"

const encoder = new TextEncoder()
const ID = "01a23e76-896c-7110-a474-238762e85e63"
const file = {
  source: "codex" as const,
  path: `/c/sessions/2026/12/04/rollout-2026-12-04T00-31-25-${ID}.jsonl`,
}
const at = (ms: number) => new Date(Date.UTC(2026, 11, 4, 0, 31, 25) + ms).toISOString()

const rollout = (completion: Record<string, unknown>) =>
  [
    {
      timestamp: at(0),
      type: "session_meta",
      payload: { session_id: ID, id: ID, timestamp: at(0), cwd: "/w", originator: "codex_exec" },
    },
    { timestamp: at(10), type: "event_msg", payload: { type: "task_started", turn_id: ID } },
    {
      timestamp: at(20),
      type: "response_item",
      payload: {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "this turn hits the limit" }],
      },
    },
    {
      timestamp: at(170),
      type: "event_msg",
      payload: {
        type: "task_complete",
        root_turn_id: ID,
        turn_id: ID,
        last_agent_message: null,
        started_at: 1796344285,
        completed_at: 1796344285,
        duration_ms: 170,
        ...completion,
      },
    },
  ]
    .map((l) => JSON.stringify(l))
    .join("\n") + "\n"

const completionRecord = (completion: Record<string, unknown>) => {
  const parsed = parseTranscriptBytes(file, encoder.encode(rollout(completion)))
  return parsed.turns.flatMap((t) => t.records).find((r) => r.recordType.endsWith("task_complete"))
}

describe("a Codex turn that an error ended", () => {
  it("keeps the error in its task_complete record, findable by grep", () => {
    const record = completionRecord({
      error: {
        message:
          "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 12:41 AM.",
        codex_error_info: "usage_limit_exceeded",
      },
    })
    expect(record?.text).toBe(
      "Turn ended with an error (usage_limit_exceeded): You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 12:41 AM.",
    )
    expect(record?.skipForGrep).toBe(false)
  })

  it("names an object-shaped error kind, and masks a secret in the message", () => {
    const record = completionRecord({
      error: {
        message: "request failed with Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789",
        codex_error_info: { http_connection_failed: { http_status_code: 502 } },
      },
    })
    expect(record?.text).toContain("Turn ended with an error (http_connection_failed): ")
    expect(record?.text).not.toContain("abcdefghijklmnopqrstuvwxyz0123456789")
  })

  it("leaves a completed turn's record empty and out of grep", () => {
    const record = completionRecord({})
    expect(record?.text).toBe("")
    expect(record?.skipForGrep).toBe(true)
  })
})

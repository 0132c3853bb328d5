// Codex reader: the time of a turn whose line has none — every line of a bare-era rollout, whose
// only timestamp is the bare meta's — so a date filter keeps what `recent` lists on that date.
import { describe, expect, it } from "vitest"
import { mergeParseResults, parseTranscriptBytes } from "./transcript-parser.js"

const encoder = new TextEncoder()
const ID = "bcdd45be-d03f-4678-9881-efdf646a9628"
const file = {
  source: "codex" as const,
  path: `/c/sessions/2025/09/01/rollout-2025-09-01T10-00-00-${ID}.jsonl`,
}
const bytes = (lines: ReadonlyArray<unknown>) =>
  encoder.encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
const parse = (lines: ReadonlyArray<unknown>) => parseTranscriptBytes(file, bytes(lines))

const HEADER = "2025-09-01T10:00:00.000Z"
const bareMeta = (timestamp?: string) => ({
  id: ID,
  ...(timestamp !== undefined ? { timestamp } : {}),
  instructions: "INSTR",
  git: { branch: "main" },
})
const message = (role: string, text: string) => ({
  type: "message",
  role,
  content: [{ type: role === "user" ? "input_text" : "output_text", text }],
})
const bare = (timestamp?: string) => [
  bareMeta(timestamp),
  { record_type: "state" },
  message("user", "<environment_context>\n  <cwd>/w/alpha</cwd>\n</environment_context>"),
  message("user", "bare prompt"),
  { type: "reasoning", summary: [{ type: "summary_text", text: "thinking" }] },
  message("assistant", "bare answer"),
  message("user", "second prompt"),
]

describe("codex turn timestamps", () => {
  it("gives every turn of a bare-era rollout the header's timestamp", () => {
    const r = parse(bare(HEADER))
    expect(r.sessions[0]).toMatchObject({ startedAt: HEADER, endedAt: HEADER, cwd: "/w/alpha" })
    expect(r.turns.map((t) => [t.role, t.timestamp])).toEqual([
      ["user", HEADER],
      ["assistant", HEADER],
      ["user", HEADER],
    ])
    // Records keep what their line said: no timestamp.
    expect(r.turns.flatMap((t) => t.records).every((x) => x.timestamp === undefined)).toBe(true)
  })

  it("invents no time for a bare rollout whose header has none", () => {
    expect(parse(bare()).turns.map((t) => t.timestamp)).toEqual([undefined, undefined, undefined])
  })

  it("carries the header's time into a resumed parse", () => {
    const lines = bare(HEADER)
    const whole = parseTranscriptBytes(file, bytes(lines))
    const head = parseTranscriptBytes(file, bytes(lines.slice(0, 4)))
    const rest = parseTranscriptBytes(file, bytes(lines.slice(4)), head.state)
    expect(rest.turns.map((t) => t.timestamp)).toEqual([HEADER, HEADER])
    expect(mergeParseResults(head, rest).turns).toEqual(whole.turns)
  })

  it("gives a wrapped line without a timestamp the thread's latest time so far", () => {
    const line = (payload: unknown, timestamp?: string) => ({
      ...(timestamp !== undefined ? { timestamp } : {}),
      type: "response_item",
      payload,
    })
    const r = parse([
      {
        timestamp: "2025-10-02T08:00:00.000Z",
        type: "session_meta",
        payload: { id: ID, cwd: "/w" },
      },
      line(message("user", "first"), "2025-10-02T08:01:00.000Z"),
      line(message("assistant", "reply"), "2025-10-02T08:02:00.000Z"),
      line(message("user", "no timestamp")),
      line(message("assistant", "bad timestamp"), "not a time"),
    ])
    expect(r.turns.map((t) => t.timestamp)).toEqual([
      "2025-10-02T08:01:00.000Z",
      "2025-10-02T08:02:00.000Z",
      "2025-10-02T08:02:00.000Z",
      "2025-10-02T08:02:00.000Z",
    ])
  })
})

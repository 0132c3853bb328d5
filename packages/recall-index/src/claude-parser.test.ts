// Claude reader rules on small hand-written files: the time of a turn whose line has none, the
// session title (custom-title > ai-title > trusted legacy summary, newest first), and the text
// of an assistant line that holds reasoning and a tool call.
import { describe, expect, it } from "vitest"
import type { ParseResult } from "./transcript-model.js"
import { mergeParseResults, parseTranscriptBytes } from "./transcript-parser.js"

const encoder = new TextEncoder()
const SID = "0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c"
const OTHER = "9e1d2c3b-4a5f-4e6d-8c7b-6a5f4e3d2c1b"
const file = { source: "claude" as const, path: `/p/-w/${SID}.jsonl` }
const bytes = (lines: ReadonlyArray<string>) => encoder.encode(lines.join("\n") + "\n")
const parse = (lines: ReadonlyArray<string>, options = {}) =>
  parseTranscriptBytes(file, bytes(lines), undefined, options)

/** Parses `lines` in two calls, the second resuming after the first `at` lines. */
const parseSplit = (lines: ReadonlyArray<string>, at: number): ParseResult => {
  const head = parseTranscriptBytes(file, bytes(lines.slice(0, at)))
  const rest = parseTranscriptBytes(file, bytes(lines.slice(at)), head.state)
  return mergeParseResults(head, rest)
}

const record = (fields: Record<string, unknown>) =>
  JSON.stringify({ sessionId: SID, cwd: "/w", ...fields })
const user = (uuid: string, text: string, timestamp?: string, sessionId = SID) =>
  record({
    type: "user",
    uuid,
    sessionId,
    ...(timestamp !== undefined ? { timestamp } : {}),
    message: { role: "user", content: text },
  })
const assistant = (uuid: string, content: ReadonlyArray<unknown>, timestamp?: string) =>
  record({
    type: "assistant",
    uuid,
    ...(timestamp !== undefined ? { timestamp } : {}),
    message: { id: `msg-${uuid}`, role: "assistant", model: "claude-x", content },
  })
const answer = (uuid: string, text: string, timestamp?: string) =>
  assistant(uuid, [{ type: "text", text }], timestamp)
const aiTitle = (title: string) => record({ type: "ai-title", aiTitle: title })
const customTitle = (title: string) => record({ type: "custom-title", customTitle: title })
const summary = (text: string, leafUuid: string) =>
  JSON.stringify({ type: "summary", summary: text, leafUuid })

const titleOf = (r: ParseResult, sessionId = SID) =>
  r.sessions.find((s) => s.sessionId === sessionId)?.title

describe("claude turn timestamps", () => {
  it("gives a turn whose line has no timestamp the session's latest time so far", () => {
    const r = parse([
      user("u1", "first", "2026-03-01T10:00:00.000Z"),
      answer("a1", "reply", "2026-03-01T10:05:00.000Z"),
      user("u2", "second, no timestamp"),
      answer("a2", "again none"),
      user("u3", "third", "2026-03-01T11:00:00.000Z"),
    ])
    expect(r.turns.map((t) => [t.role, t.timestamp])).toEqual([
      ["user", "2026-03-01T10:00:00.000Z"],
      ["assistant", "2026-03-01T10:05:00.000Z"],
      ["user", "2026-03-01T10:05:00.000Z"],
      ["assistant", "2026-03-01T10:05:00.000Z"],
      ["user", "2026-03-01T11:00:00.000Z"],
    ])
    // The line's own record still says it had none.
    expect(r.turns[2]!.records[0]!.timestamp).toBeUndefined()
  })

  it("invents no time for a file that has none, nor before the session's first one", () => {
    const none = parse([user("u1", "first"), answer("a1", "reply")])
    expect(none.turns.map((t) => t.timestamp)).toEqual([undefined, undefined])
    const late = parse([user("u1", "first"), answer("a1", "reply", "2026-03-01T10:05:00.000Z")])
    expect(late.turns.map((t) => t.timestamp)).toEqual([undefined, "2026-03-01T10:05:00.000Z"])
  })

  it("takes the time from the session the turn belongs to, across a resumed parse", () => {
    const lines = [
      user("u1", "mine", "2026-03-01T10:00:00.000Z"),
      user("o1", "other session", "2026-03-05T09:00:00.000Z", OTHER),
      user("u2", "mine again, no timestamp"),
    ]
    const whole = parse(lines)
    expect(whole.turns.map((t) => t.timestamp)).toEqual([
      "2026-03-01T10:00:00.000Z",
      "2026-03-05T09:00:00.000Z",
      "2026-03-01T10:00:00.000Z",
    ])
    expect(parseSplit(lines, 2).turns).toEqual(whole.turns)
  })
})

describe("claude session title", () => {
  const conversation = [
    user("u1", "the first prompt", "2026-03-01T10:00:00.000Z"),
    answer("a1", "ok"),
  ]

  it("ranks custom-title over ai-title over a trusted summary, in any order", () => {
    const kinds = [customTitle("Custom"), aiTitle("AI"), summary("Summary", "a1")]
    const orders = [
      [0, 1, 2],
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0],
    ]
    for (const order of orders) {
      const r = parse([...conversation, ...order.map((i) => kinds[i]!)])
      expect(titleOf(r), `order ${order.join(",")}`).toBe("Custom")
      const noCustom = parse([
        ...conversation,
        ...order.filter((i) => i !== 0).map((i) => kinds[i]!),
      ])
      expect(titleOf(noCustom), `order ${order.join(",")}`).toBe("AI")
    }
    const summaryOnly = parse([summary("Summary", "a1"), ...conversation])
    expect(titleOf(summaryOnly)).toBe("Summary")
    expect(titleOf(parse(conversation))).toBeUndefined()
    expect(parse(conversation).sessions[0]?.firstPrompt).toBe("the first prompt")
  })

  it("takes the newest of each kind", () => {
    expect(titleOf(parse([...conversation, aiTitle("Old AI"), aiTitle("New AI")]))).toBe("New AI")
    expect(
      titleOf(parse([customTitle("Old"), ...conversation, customTitle("Renamed"), aiTitle("AI")])),
    ).toBe("Renamed")
  })

  it("trusts a summary only when its leaf is a record of the same file, before or after it", () => {
    expect(titleOf(parse([...conversation, summary("After", "a1")]))).toBe("After")
    expect(titleOf(parse([summary("Before", "a1"), ...conversation]))).toBe("Before")
    const foreign = parse([...conversation, summary("Someone else's", "not-in-this-file")])
    expect(titleOf(foreign)).toBeUndefined()
    // An empty summary names nothing.
    expect(titleOf(parse([...conversation, summary(" ", "a1")]))).toBeUndefined()
  })

  it("among trusted summaries, takes the one whose leaf comes last", () => {
    const more = [user("u2", "more", "2026-03-01T11:00:00.000Z"), answer("a2", "done")]
    expect(
      titleOf(parse([summary("Late", "a2"), summary("Early", "a1"), ...conversation, ...more])),
    ).toBe("Late")
    expect(
      titleOf(parse([...conversation, ...more, summary("Late", "a2"), summary("Early", "a1")])),
    ).toBe("Late")
  })

  it("gives a summary to the session its leaf belongs to", () => {
    const r = parse([
      user("o1", "copied from the earlier session", "2026-03-01T09:00:00.000Z", OTHER),
      ...conversation,
      summary("The earlier session", "o1"),
    ])
    expect(titleOf(r, OTHER)).toBe("The earlier session")
    expect(titleOf(r, SID)).toBeUndefined()
  })

  it("counts a title carried from an earlier call on the file as an ai-title", () => {
    const ai = [...conversation, aiTitle("First AI")]
    expect(titleOf(parseSplit([...ai, aiTitle("Later AI")], 3))).toBe("Later AI")
    expect(titleOf(parseSplit([...ai, customTitle("Renamed")], 3))).toBe("Renamed")
    expect(titleOf(parseSplit([...ai, answer("a2", "more"), summary("Summary", "a2")], 3))).toBe(
      "First AI",
    )
    expect(titleOf(parseSplit([...ai, customTitle("Renamed"), aiTitle("Later AI")], 3))).toBe(
      "Renamed",
    )
  })
})

describe("claude assistant line with reasoning and a tool call", () => {
  const command = { command: "pnpm test --filter recall-index" }

  it("is one tool-call record whose text leads with the call, reasoning last", () => {
    const r = parse([
      user("u1", "run the tests", "2026-03-01T10:00:00.000Z"),
      assistant("a1", [
        { type: "thinking", thinking: "Weighing which tests to run.", signature: "c2ln" },
        { type: "tool_use", id: "toolu_1", name: "Bash", input: command },
      ]),
    ])
    const records = r.turns[1]!.records
    expect(records.map((x) => x.kind)).toEqual(["tool-call"])
    expect(records[0]!.text).toBe(
      'Bash {"command":"pnpm test --filter recall-index"}\nWeighing which tests to run.',
    )
  })

  it("keeps the call in the record when the reasoning alone outgrows the cap", () => {
    const r = parse(
      [
        user("u1", "run the tests", "2026-03-01T10:00:00.000Z"),
        assistant("a1", [
          { type: "thinking", thinking: "long reasoning ".repeat(2_000), signature: "c2ln" },
          { type: "text", text: "Running the tests." },
          { type: "tool_use", id: "toolu_1", name: "Bash", input: command },
        ]),
      ],
      { maxRawTextChars: 1_000 },
    )
    const [call] = r.turns[1]!.records
    expect(call?.kind).toBe("tool-call")
    expect(call?.truncated).toBe(true)
    expect(call?.text.startsWith('Bash {"command":"pnpm test --filter recall-index"}\n')).toBe(true)
    expect(call?.text).toContain("Running the tests.\nlong reasoning")
  })

  it("puts an answer's text before its reasoning", () => {
    const r = parse([
      user("u1", "why", "2026-03-01T10:00:00.000Z"),
      assistant("a1", [
        { type: "thinking", thinking: "Thinking it over.", signature: "c2ln" },
        { type: "text", text: "Because." },
      ]),
    ])
    const [message] = r.turns[1]!.records
    expect([message?.kind, message?.text]).toEqual(["message", "Because.\nThinking it over."])
    expect(r.turns[1]!.surface.map((s) => s.text)).toEqual(["Because."])
  })
})

describe("results of Baton's own recall tools", () => {
  const call = (uuid: string, id: string, name: string) =>
    assistant(uuid, [{ type: "tool_use", id, name, input: { query: "retry policy" } }])
  const result = (uuid: string, ids: ReadonlyArray<string>) =>
    record({
      type: "user",
      uuid,
      message: {
        role: "user",
        content: ids.map((id) => ({
          type: "tool_result",
          tool_use_id: id,
          content: `{"hits":[{"text":"we decided the retry policy (${id})"}]}`,
        })),
      },
    })
  const outputs = (r: ParseResult) =>
    r.turns
      .flatMap((t) => t.records)
      .filter((rec) => rec.kind === "tool-output")
      .map((rec) => [/\((t\d)\)/.exec(rec.text)?.[1], rec.skipForGrep])

  it("are kept but skipped by grep; other tools' results and mixed lines are not", () => {
    const r = parse([
      user("u0", "what did we decide about retries?"),
      call("a1", "t1", "mcp__plugin_baton_baton__recall_search"),
      result("u1", ["t1"]),
      call("a2", "t2", "mcp__baton__grep"),
      result("u2", ["t2"]),
      call("a3", "t3", "mcp__other__grep"),
      result("u3", ["t3"]),
      call("a4", "t4", "Bash"),
      result("u4", ["t4"]),
      call("a5", "t5", "mcp__baton__expand_around"),
      result("u5", ["t5", "t4"]),
      call("a6", "t6", "mcp__baton__schedule_compaction"),
      result("u6", ["t6"]),
    ])
    expect(outputs(r)).toEqual([
      ["t1", true],
      ["t2", true],
      ["t3", false],
      ["t4", false],
      ["t5", false],
      ["t6", false],
    ])
  })

  it("remembers a call whose result the next parse call reads (a live session's file)", () => {
    const lines = [
      user("u0", "what did we decide about retries?"),
      call("a1", "t1", "mcp__plugin_baton_baton__recall_search"),
      result("u1", ["t1"]),
      call("a2", "t2", "Bash"),
      result("u2", ["t2"]),
    ]
    const head = parseTranscriptBytes(file, bytes(lines.slice(0, 2)))
    // Carried as JSON, as the index stores it; only calls still awaiting a result.
    expect(head.state.claude).toEqual({ recallCalls: ["t1"] })
    const rest = parseTranscriptBytes(
      file,
      bytes(lines.slice(2)),
      JSON.parse(JSON.stringify(head.state)) as ParseResult["state"],
    )
    expect(outputs(rest)).toEqual([
      ["t1", true],
      ["t2", false],
    ])
    expect(rest.state.claude).toBeUndefined()
  })
})

// The hand-written `files` row check agrees with the Schema it stands in for, on good rows and on
// rows with one field broken; a broken row still fails with the Schema's message.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeFileRows, decodeParseState, isStoredFileRow, StoredFileRow } from "./stored-rows.js"
import { parseTranscriptBytes } from "./transcript-parser.js"

const goodRow = fc.record({
  id: fc.integer(),
  path: fc.string(),
  source: fc.constantFrom("claude", "codex"),
  compression: fc.constantFrom("none", "zstd"),
  size: fc.integer({ min: 0 }),
  mtime_ms: fc.double({ noNaN: true }),
  inode: fc.integer({ min: 0 }),
  head_hash: fc.string(),
  indexed_offset: fc.integer({ min: 0 }),
  resumable: fc.constantFrom(0, 1),
  status: fc.constantFrom("indexed", "failed", "quarantined", "missing", "forgotten"),
  failure_count: fc.integer({ min: 0 }),
  failed_signature: fc.option(fc.string(), { nil: null }),
  parser_version: fc.integer({ min: 1 }),
})

const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom("claude", "codex", "none", "zstd", "indexed", "bogus", 0, 1, 2),
)

/** A good row with one field replaced by anything (often still valid) or removed. */
const brokenRow = fc
  .tuple(goodRow, fc.integer({ min: 0, max: 13 }), anyValue, fc.boolean())
  .map(([row, at, value, remove]) => {
    const key = Object.keys(row)[at]!
    const copy: Record<string, unknown> = { ...row }
    if (remove) delete copy[key]
    else copy[key] = value
    return copy
  })

const isRow = Schema.is(StoredFileRow)

describe("isStoredFileRow", () => {
  it("accepts exactly what StoredFileRow accepts", () => {
    fc.assert(
      fc.property(fc.oneof(goodRow, brokenRow, anyValue), (row) => {
        expect(isStoredFileRow(row)).toBe(isRow(row))
      }),
      { numRuns: 2_000 },
    )
  })

  it("passes good rows through and fails a broken one with the Schema's message", async () => {
    const rows = fc.sample(goodRow, { numRuns: 20, seed: 3 })
    await expect(Effect.runPromise(decodeFileRows("/db", rows))).resolves.toBe(rows)
    const broken = [...rows, { ...rows[0], status: "bogus" }]
    const failure = await Effect.runPromise(Effect.flip(decodeFileRows("/db", broken)))
    expect(failure).toMatchObject({ _tag: "RecallStorageError", operation: "decode", path: "/db" })
    expect(failure.reason).toMatch(/Expected "indexed" \| "failed"/)
  })
})

describe("a stored parse state", () => {
  it("keeps everything a Codex parse carries to the next call", async () => {
    const line = (type: string, payload: Record<string, unknown>) =>
      JSON.stringify({ timestamp: "2026-12-04T03:48:16.000Z", type, payload }) + "\n"
    const bytes = new TextEncoder().encode(
      line("session_meta", { id: "01a23f2a-c229-7040-a336-66d1881850bc", cwd: "/w" }) +
        line("event_msg", { type: "task_started" }) +
        line("response_item", { type: "message", role: "user", content: [] }) +
        line("response_item", {
          type: "function_call",
          name: "grep",
          namespace: "mcp__baton",
          arguments: "{}",
          call_id: "c1",
        }) +
        line("event_msg", { type: "exec_command_end", call_id: "c2", aggregated_output: "ok" }),
    )
    const { state } = parseTranscriptBytes({ source: "codex", path: "/r.jsonl" }, bytes)
    expect(state.codex?.recallCalls).toEqual(["c1"])
    expect(state.codex?.outputs).toHaveLength(1)
    const decoded = await Effect.runPromise(decodeParseState("/r.jsonl", JSON.stringify(state)))
    expect(decoded).toEqual(state)
  })

  it("keeps the recall calls a Claude parse carries to the next call", async () => {
    const call = {
      type: "assistant",
      uuid: "a1",
      sessionId: "0d1f7c52-5b8e-4a8e-9f3a-2b7c9d1e4f60",
      timestamp: "2026-12-04T03:48:16.000Z",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: "mcp__baton__grep", input: {} }],
      },
    }
    const { state } = parseTranscriptBytes(
      { source: "claude", path: "/p/0d1f7c52-5b8e-4a8e-9f3a-2b7c9d1e4f60.jsonl" },
      new TextEncoder().encode(JSON.stringify(call) + "\n"),
    )
    expect(state.claude).toEqual({ recallCalls: ["t1"] })
    const decoded = await Effect.runPromise(decodeParseState("/p", JSON.stringify(state)))
    expect(decoded).toEqual(state)
  })
})

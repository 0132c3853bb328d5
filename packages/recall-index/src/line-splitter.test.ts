// A crash or power loss while a transcript is appended to can leave a run of NUL bytes; the agent
// then appends its next record right after them. That record is read, not skipped as malformed.
import { describe, expect, it } from "vitest"
import { createLineSplitter } from "./line-splitter.js"
import type { SplitLine } from "./line-splitter.js"
import { parseTranscriptBytes } from "./transcript-parser.js"
import type { Turn } from "./transcript-model.js"

const encoder = new TextEncoder()
const concat = (...parts: ReadonlyArray<Uint8Array | string>): Uint8Array => {
  const bytes = parts.map((p) => (typeof p === "string" ? encoder.encode(p) : p))
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0))
  let at = 0
  for (const b of bytes) {
    out.set(b, at)
    at += b.length
  }
  return out
}
const nuls = (n: number) => new Uint8Array(n)

const split = (bytes: Uint8Array): Array<SplitLine> => {
  const lines: Array<SplitLine> = []
  const s = createLineSplitter(0, (l) => lines.push(l))
  // In two pieces, so the padding straddles a chunk boundary.
  s.push(bytes.subarray(0, 100))
  s.push(bytes.subarray(100))
  s.end(true)
  return lines
}

describe("line splitter and NUL padding", () => {
  it("drops NUL padding (and whitespace among it) before a line's text, keeping exact offsets", () => {
    const bytes = concat('{"a":1}\n', nuls(4096), ' \t{"b":2}\r\n', '{"c":3}\n')
    const lines = split(bytes)
    expect(lines.map((l) => l.text)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}'])
    expect(lines.map((l) => [l.offset, l.length])).toEqual([
      [0, 8],
      [8, 4096 + 11],
      [8 + 4096 + 11, 8],
    ])
  })

  it("keeps a line of nothing but padding as it is, and leaves other lines alone", () => {
    const lines = split(concat(nuls(300), "\n", "  indented\n", "a\u0000b\n"))
    expect(lines.map((l) => l.text)).toEqual(["\u0000".repeat(300), "  indented", "a\u0000b"])
  })
})

const textOf = (t: Turn): string => t.surface.map((x) => x.text).join("\n\n")

describe("a transcript with NUL padding from a crash", () => {
  it("Claude: the record appended after the padding is indexed, and nothing is skipped", () => {
    const SESSION = "5a0c1e7e-8f0b-4c55-9d1e-000000000003"
    const user = (uuid: string, content: string) =>
      JSON.stringify({
        type: "user",
        sessionId: SESSION,
        uuid,
        timestamp: "2026-11-20T10:00:00.000Z",
        cwd: "/w/a",
        message: { role: "user", content },
      })
    const r = parseTranscriptBytes(
      { source: "claude", path: `/c/projects/-w-a/${SESSION}.jsonl` },
      concat(
        user("aaaaaaaa-0000-4000-8000-000000000001", "before the crash"),
        "\n",
        nuls(4096),
        user("aaaaaaaa-0000-4000-8000-000000000002", "NULPAD_AFTER_CRASH resumed prompt"),
        "\n",
      ),
    )
    expect(r.turns.map(textOf)).toEqual(["before the crash", "NULPAD_AFTER_CRASH resumed prompt"])
    expect(r.stats.malformedLines).toBe(0)
    expect(r.stats.lines).toBe(2)
  })

  it("Codex: the same", () => {
    const ID = "bcdd45be-d03f-4678-9881-efdf646a9629"
    const line = (payload: unknown) =>
      JSON.stringify({ timestamp: "2026-11-20T10:00:00.000Z", type: "response_item", payload })
    const r = parseTranscriptBytes(
      { source: "codex", path: `/c/sessions/2026/11/20/rollout-2026-11-20T10-00-00-${ID}.jsonl` },
      concat(
        JSON.stringify({
          timestamp: "2026-11-20T10:00:00.000Z",
          type: "session_meta",
          payload: { id: ID, timestamp: "2026-11-20T10:00:00.000Z", cwd: "/w/a" },
        }),
        "\n",
        line({ type: "message", role: "user", content: [{ type: "input_text", text: "first" }] }),
        "\n",
        nuls(512),
        line({ type: "message", role: "user", content: [{ type: "input_text", text: "after" }] }),
        "\n",
      ),
    )
    expect(r.turns.map(textOf)).toEqual(["first", "after"])
    expect(r.stats.malformedLines).toBe(0)
  })
})

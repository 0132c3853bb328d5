import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { TranscriptSource } from "./transcript-model.js"
import {
  createTranscriptParser,
  mergeParseResults,
  parseTranscriptBytes,
  sessionIdFromPath,
} from "./transcript-parser.js"
import { generateFixtureCorpus } from "./testing/fixture-corpus.js"

const corpus = generateFixtureCorpus({ seed: 3 })
const encoder = new TextEncoder()
const bytesOf = (content: string | Uint8Array): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content
const samples = corpus.expectations
  .filter((e) => bytesOf(corpus.files[e.path]!).length > 0)
  .map((e) => ({ source: e.source, path: e.path, bytes: bytesOf(corpus.files[e.path]!) }))
const sample = fc.constantFrom(...samples)
const source = fc.constantFrom<TranscriptSource>("claude", "codex")

const lineStarts = (bytes: Uint8Array): Array<number> => {
  const out = [0]
  bytes.forEach((b, i) => {
    if (b === 0x0a) out.push(i + 1)
  })
  return out
}

describe("parser robustness (property)", () => {
  it("never throws on arbitrary lines, and counts every complete line", () => {
    const line = fc.oneof(
      fc.string(),
      fc.json(),
      fc.constantFrom(
        '{"type":"user"}',
        '{"type":"assistant","message":{"content":[1,null,{"type":"text"}]}}',
        '{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":"x"}}}',
        '{"type":"session_meta","payload":{"id":7,"source":{"subagent":null}}}',
        '{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":5}]}}',
      ),
    )
    fc.assert(
      fc.property(source, fc.array(line, { minLength: 1, maxLength: 30 }), (src, lines) => {
        const text = lines.map((l) => l.replace(/\n/g, " ")).join("\n") + "\n"
        const r = parseTranscriptBytes(
          { source: src, path: "/x/rollout-a.jsonl" },
          encoder.encode(text),
        )
        expect(r.stats.lines).toBe(lines.length)
        expect(r.stats.nextOffset).toBe(encoder.encode(text).length)
      }),
      { numRuns: 300 },
    )
  })

  it("never throws on arbitrary byte corruption of real-shaped files", () => {
    fc.assert(
      fc.property(
        sample,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 20 }),
        (s, flips) => {
          const bytes = s.bytes.slice()
          for (const [at, value] of flips) bytes[at % bytes.length] = value
          const r = parseTranscriptBytes(s, bytes)
          expect(r.stats.nextOffset).toBeLessThanOrEqual(bytes.length)
        },
      ),
      { numRuns: 200 },
    )
  })

  it("truncation at any byte: consumes exactly the complete lines and flags the cut tail", () => {
    fc.assert(
      fc.property(sample, fc.nat(), (s, n) => {
        const cut = n % (s.bytes.length + 1)
        const prefix = s.bytes.subarray(0, cut)
        const r = parseTranscriptBytes(s, prefix)
        const last = prefix.lastIndexOf(0x0a) + 1
        expect(r.stats.nextOffset).toBe(last)
        expect(r.state.nextOffset).toBe(last)
        expect(r.stats.truncatedTail).toBe(last < cut)
      }),
      { numRuns: 300 },
    )
  })
})

describe("resuming (property)", () => {
  it("parse(whole) == merge(parse(prefix up to a line boundary), parse(rest from its state))", () => {
    fc.assert(
      fc.property(sample, fc.nat(), fc.boolean(), (s, n, sidechains) => {
        const starts = lineStarts(s.bytes)
        const at = starts[n % starts.length]!
        const options = { includeSidechains: sidechains }
        const whole = parseTranscriptBytes(s, s.bytes, undefined, options)
        const head = parseTranscriptBytes(s, s.bytes.subarray(0, at), undefined, options)
        const rest = parseTranscriptBytes(s, s.bytes.subarray(at), head.state, options)
        const merged = mergeParseResults(head, rest)
        expect(merged.turns).toEqual(whole.turns)
        expect(merged.preamble).toEqual(whole.preamble)
        expect(merged.sessions).toEqual(whole.sessions)
        expect(merged.state).toEqual(whole.state)
        for (const key of [
          "lines",
          "malformedLines",
          "surfaceTexts",
          "rawRecords",
          "duplicateSurfaceDropped",
          "sidechainRecordsSkipped",
        ] as const) {
          expect(merged.stats[key]).toBe(whole.stats[key])
        }
        // The state survives a JSON round trip (an indexer stores it).
        const again = parseTranscriptBytes(
          s,
          s.bytes.subarray(at),
          JSON.parse(JSON.stringify(head.state)),
          options,
        )
        expect(again).toEqual(rest)
      }),
      { numRuns: 200 },
    )
  })

  it("pushing in arbitrary chunks equals one push", () => {
    fc.assert(
      fc.property(
        sample,
        fc.array(fc.integer({ min: 1, max: 4096 }), { minLength: 1, maxLength: 50 }),
        (s, sizes) => {
          const parser = createTranscriptParser(s)
          let at = 0
          let i = 0
          while (at < s.bytes.length) {
            const size = sizes[i++ % sizes.length]!
            parser.push(s.bytes.subarray(at, at + size))
            at += size
          }
          expect(parser.end()).toEqual(parseTranscriptBytes(s, s.bytes))
        },
      ),
      { numRuns: 100 },
    )
  })
})

describe("codex surface dedupe", () => {
  const line = (type: string, payload: unknown) =>
    JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", type, payload })
  const user = (text: string) =>
    line("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text }],
    })
  const event = (text: string) => line("event_msg", { type: "user_message", message: text })
  const item = (text: string) =>
    line("event_msg", {
      type: "item_completed",
      item: { type: "UserMessage", content: [{ type: "text", text }] },
    })
  const started = line("event_msg", { type: "task_started", turn_id: "t" })
  const parse = (lines: ReadonlyArray<string>) =>
    parseTranscriptBytes(
      { source: "codex", path: "/r/rollout-x.jsonl" },
      encoder.encode(lines.join("\n") + "\n"),
    )

  it("takes each occurrence once across the three channels, whichever comes first", () => {
    const r = parse([started, item("hi"), user("hi"), event("hi")])
    expect(r.turns.flatMap((t) => t.surface.map((s) => [s.channel, s.text]))).toEqual([
      ["item_completed", "hi"],
    ])
    expect(r.stats.duplicateSurfaceDropped).toBe(2)
  })

  it("keeps a repeat from the same channel, and repeats across turns", () => {
    const r = parse([
      started,
      user("again"),
      user("again"),
      event("again"),
      event("again"),
      started,
      user("again"),
    ])
    expect(r.turns.flatMap((t) => t.surface.map((s) => s.text))).toEqual([
      "again",
      "again",
      "again",
    ])
  })
})

describe("codex repeated tool output and compaction summary", () => {
  const line = (type: string, payload: unknown, metadata?: unknown) =>
    JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", type, payload, metadata })
  const started = line("event_msg", { type: "task_started", turn_id: "t" })
  const prompt = line("response_item", {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: "run it" }],
  })
  const ended = (callId: string, exit: number) =>
    line("event_msg", {
      type: "exec_command_end",
      call_id: callId,
      aggregated_output: `out ${callId}\n`,
      exit_code: exit,
    })
  const item = (callId: string) =>
    line("event_msg", {
      type: "item_completed",
      item: {
        type: "CommandExecution",
        id: callId,
        command: ["bash", "-lc", "ls"],
        aggregated_output: `out ${callId}\n`,
        exit_code: 0,
      },
    })
  // The model's copy: unified exec's text form, or the older JSON form.
  const output = (callId: string, out = `out ${callId}\n`) =>
    line("response_item", {
      type: "function_call_output",
      call_id: callId,
      output: `Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n${out}`,
    })
  const jsonOutput = (callId: string) =>
    line("response_item", {
      type: "function_call_output",
      call_id: callId,
      output: JSON.stringify({ output: `out ${callId}\n`, metadata: { exit_code: 0 } }),
    })
  const summary = line(
    "response_item",
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Sum." }] },
    { compaction_output: true },
  )
  const compacted = (message: string) => line("compacted", { message })
  const bytes = (lines: ReadonlyArray<string>) => encoder.encode(lines.join("\n") + "\n")
  const file = { source: "codex" as const, path: "/r/rollout-x.jsonl" }
  const flags = (r: ReturnType<typeof parseTranscriptBytes>) =>
    r.turns
      .flatMap((t) => t.records)
      .filter((x) => x.kind === "tool-output" || x.kind === "compaction")
      .map((x) => [x.recordType, x.skipForGrep])

  it("flags the later copy of a call's same output, in every era and either order", () => {
    const r = parseTranscriptBytes(
      file,
      bytes([
        started,
        prompt,
        ended("a", 2), // the older event, then the model's copy
        output("a"),
        item("b"), // 0.169's item, then the model's copy
        output("b"),
        output("c"), // the model's copy first, then the item
        item("c"),
        output("d"), // only one copy: kept
        ended("e", 0), // the oldest era's JSON form
        jsonOutput("e"),
        output("f", "Process running with session ID 7\n"), // a long run's first output…
        item("f"), // …then all of it: not the same, both kept
        started,
        prompt,
        output("a"), // a new turn starts over
      ]),
    )
    expect(flags(r)).toEqual([
      ["event_msg/exec_command_end", false],
      ["response_item/function_call_output", true],
      ["event_msg/item_completed/CommandExecution", false],
      ["response_item/function_call_output", true],
      ["response_item/function_call_output", false],
      ["event_msg/item_completed/CommandExecution", true],
      ["response_item/function_call_output", false],
      ["event_msg/exec_command_end", false],
      ["response_item/function_call_output", true],
      ["response_item/function_call_output", false],
      ["event_msg/item_completed/CommandExecution", false],
      ["response_item/function_call_output", false],
    ])
    // A failing command says so after its output; a passing one adds nothing.
    const texts = r.turns.flatMap((t) => t.records).map((x) => x.text)
    expect(texts).toContain("out a\n\n[exit code 2]")
    expect(texts).toContain("bash -lc ls\nout b\n")
  })

  it("flags the compacted line that repeats the turn's compaction_output summary", () => {
    const preamble = "Another language model started to solve this problem…:\n"
    expect(
      flags(
        parseTranscriptBytes(file, bytes([started, prompt, summary, compacted(preamble + "Sum.")])),
      ),
    ).toEqual([
      ["response_item/message", false],
      ["compacted", true],
    ])
    // Without the answer (older files), or with a different summary, the compacted line is kept.
    expect(
      flags(parseTranscriptBytes(file, bytes([started, prompt, compacted(preamble + "Sum.")]))),
    ).toEqual([["compacted", false]])
    expect(
      flags(parseTranscriptBytes(file, bytes([started, prompt, summary, compacted("Other.")]))),
    ).toEqual([
      ["response_item/message", false],
      ["compacted", false],
    ])
  })

  it("carries what it has seen across a resumed parse", () => {
    const head = bytes([started, prompt, item("b"), summary])
    const tail = bytes([output("b"), compacted("…\nSum.")])
    const first = parseTranscriptBytes(file, head)
    const rest = parseTranscriptBytes(file, tail, first.state)
    expect(flags(rest)).toEqual([
      ["response_item/function_call_output", true],
      ["compacted", true],
    ])
    // The state is JSON, as the index stores it.
    const stored = JSON.parse(JSON.stringify(first.state))
    expect(flags(parseTranscriptBytes(file, tail, stored))).toEqual(flags(rest))
  })
})

describe("codex session_meta git", () => {
  it("keys the origin remote without its credentials, beside the branch", () => {
    const meta = (git: unknown) =>
      JSON.stringify({
        timestamp: "2026-01-01T00:00:00Z",
        type: "session_meta",
        payload: { id: "th-1", cwd: "/w/pay", git },
      }) + "\n"
    const parse = (git: unknown) =>
      parseTranscriptBytes(
        { source: "codex", path: "/r/rollout-x.jsonl" },
        encoder.encode(meta(git)),
      ).sessions[0]
    expect(
      parse({ branch: "main", repository_url: "https://bot:ghp_token123@github.com/acme/pay.git" }),
    ).toMatchObject({ gitBranch: "main", repositoryUrl: "https://github.com/acme/pay" })
    expect(parse({ branch: "main" })?.repositoryUrl).toBeUndefined()
    expect(parse({ repository_url: 42 })?.repositoryUrl).toBeUndefined()
  })
})

describe("sessionIdFromPath", () => {
  it("takes the last UUID in the name, else the stem", () => {
    expect(
      sessionIdFromPath(
        "/a/rollout-2026-01-01T00-00-00-0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c.jsonl.zst",
      ),
    ).toBe("0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c")
    expect(sessionIdFromPath("/a/agent-1a2b.jsonl")).toBe("agent-1a2b")
  })
})

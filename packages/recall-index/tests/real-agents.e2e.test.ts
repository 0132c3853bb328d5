// The readers against transcripts written by the REAL pinned binaries (codex 0.169.0 over
// app-server and `codex exec`, Claude Code 2.1.328 over stream-json and `-p`), recorded by the
// testkit's corpus builder against loopback mocks; and the indexer reading them in slices.
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildCorpus, CORPUS_COMPACTION_SUMMARY } from "@baton/testkit"
import type { Corpus } from "@baton/testkit"
import {
  discoverTranscripts,
  mergeParseResults,
  nodeTranscriptFileSystemLayer,
  parseTranscriptBytes,
  parseTranscriptFile,
} from "@baton/recall-index"
import type { DiscoveredTranscript, ParseResult } from "@baton/recall-index"
import { runIndex, snapshot, tempDir } from "./index-harness.js"

let corpus: Corpus
let files: ReadonlyArray<DiscoveredTranscript>
const results = new Map<string, ParseResult>()

const run = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(effect)

beforeAll(async () => {
  corpus = await buildCorpus()
  const found = await run(
    discoverTranscripts({
      env: { CODEX_HOME: corpus.codexHome, CLAUDE_CONFIG_DIR: corpus.claudeConfigDir },
      homeDir: corpus.root,
    }).pipe(Effect.provide(nodeTranscriptFileSystemLayer)),
  )
  files = found.files
  for (const file of files) {
    results.set(
      file.path,
      await run(parseTranscriptFile(file).pipe(Effect.provide(nodeTranscriptFileSystemLayer))),
    )
  }
}, 300_000)

afterAll(async () => {
  await corpus?.dispose()
})

const surfaceOf = (r: ParseResult) =>
  r.turns.flatMap((t) => t.surface.map((s) => ({ role: s.role, text: s.text })))
const rawTextOf = (r: ParseResult) =>
  [...r.preamble, ...r.turns.flatMap((t) => t.records)].map((x) => x.text).join("\n")

describe("recall readers on real agent transcripts", () => {
  it("discovers exactly the four recorded sessions", () => {
    expect(files.map((f) => f.path).sort()).toEqual(corpus.sessions.map((s) => s.path).sort())
    expect(files.every((f) => f.role === "session" && f.compression === "none")).toBe(true)
  })

  it("extracts exactly the scripted prompts and answers, in order, for each session", () => {
    expect(corpus.sessions).toHaveLength(4)
    for (const session of corpus.sessions) {
      const r = results.get(session.path)!
      const expected = session.spec.turns.flatMap((t) => [
        { role: "user", text: t.user },
        { role: "assistant", text: t.assistant },
      ])
      expect(surfaceOf(r), `${session.spec.agent} ${session.spec.project}`).toEqual(expected)
      expect(r.turns.filter((t) => t.surface.length > 0).map((t) => t.role)).toEqual(
        expected.map((e) => e.role),
      )
      expect(r.sessions.map((s) => s.sessionId)).toEqual([session.sessionId])
      expect(r.sessions[0]!.cwd).toBe(session.cwd)
      expect(r.stats).toMatchObject({
        malformedLines: 0,
        invalidRecords: 0,
        truncatedTail: false,
        unknownRecordTypes: {},
      })
    }
  })

  it("keeps tool output in raw records, never in surface text", () => {
    for (const [agent, marker] of [
      ["codex", "handlers=7"],
      ["claude", "migrations=12"],
    ] as const) {
      const session = corpus.sessions.find(
        (s) => s.spec.agent === agent && s.spec.headless !== true,
      )!
      const r = results.get(session.path)!
      expect(rawTextOf(r)).toContain(marker)
      expect(JSON.stringify(surfaceOf(r))).not.toContain(marker)
      expect(
        r.turns
          .flatMap((t) => t.records)
          .some((x) => x.kind === "tool-output" && x.text.includes(marker)),
      ).toBe(true)
    }
  })

  it("does not take the Codex compaction bridge or the compaction summary as surface text", () => {
    const session = corpus.sessions.find((s) => s.spec.compactAfterTurn !== undefined)!
    const r = results.get(session.path)!
    const surface = JSON.stringify(surfaceOf(r))
    expect(surface).not.toContain("Here is the summary produced by the other language model")
    expect(surface).not.toContain(CORPUS_COMPACTION_SUMMARY)
    const compaction = r.turns.flatMap((t) => t.records).filter((x) => x.kind === "compaction")
    expect(
      compaction.some(
        (x) =>
          x.recordType === "compacted" &&
          x.text.includes("Here is the summary produced by the other language model"),
      ),
    ).toBe(true)
    expect(r.stats.duplicateSurfaceDropped).toBe(6)
  })

  it("flags Codex's second copy of a command's output and of the compaction summary", () => {
    const session = corpus.sessions.find((s) => s.spec.compactAfterTurn !== undefined)!
    const records = results.get(session.path)!.turns.flatMap((t) => t.records)
    // The binary writes the command's output as a `CommandExecution` item and again as the
    // `function_call_output` the model reads: the first is kept, the second flagged.
    const outputs = records.filter((x) => x.kind === "tool-output" && x.text.includes("handlers=7"))
    expect(outputs.map((x) => [x.recordType, x.skipForGrep])).toEqual([
      ["event_msg/item_completed/CommandExecution", false],
      ["response_item/function_call_output", true],
    ])
    const summaries = records.filter(
      (x) => x.kind === "compaction" && x.text.includes(CORPUS_COMPACTION_SUMMARY),
    )
    expect(summaries.map((x) => [x.recordType, x.skipForGrep])).toEqual([
      ["response_item/message", false],
      ["compacted", true],
    ])
  })

  it("marks headless runs: codex exec and claude -p (the stream-json session is `claude -p` too)", () => {
    const flags = corpus.sessions.map((s) => [
      s.spec.agent,
      s.spec.headless === true,
      results.get(s.path)!.sessions[0]!.headless,
    ])
    expect(flags).toEqual([
      ["codex", false, false],
      ["codex", true, true],
      ["claude", false, true],
      ["claude", true, true],
    ])
    const exec = corpus.sessions.find((s) => s.spec.agent === "codex" && s.spec.headless === true)!
    expect(results.get(exec.path)!.sessions[0]).toMatchObject({
      originator: "codex_exec",
      cliVersion: "0.169.0",
      subagent: false,
    })
  })

  it("lets nothing from api-request-blob (or the harness reminders it carries) into surface text", () => {
    for (const session of corpus.sessions.filter((s) => s.spec.agent === "claude")) {
      const r = results.get(session.path)!
      const blobs = r.turns
        .flatMap((t) => [...t.records])
        .concat(r.preamble)
        .filter((x) => x.recordType === "api-request-blob")
      expect(blobs.length).toBeGreaterThan(0)
      expect(blobs.every((x) => x.text === "" && x.skipForGrep && x.kind === "noise")).toBe(true)
      expect(readFileSync(session.path, "utf8")).toContain("<system-reminder>")
      expect(JSON.stringify(surfaceOf(r))).not.toContain("system-reminder")
    }
  })

  it("resumes every real file at each line boundary to the same result", () => {
    for (const session of corpus.sessions) {
      const bytes = new Uint8Array(readFileSync(session.path))
      const input = { source: session.spec.agent, path: session.path }
      const whole = parseTranscriptBytes(input, bytes)
      for (let at = 0; at < bytes.length; at++) {
        if (at !== 0 && bytes[at - 1] !== 0x0a) continue
        const head = parseTranscriptBytes(input, bytes.subarray(0, at))
        const merged = mergeParseResults(
          head,
          parseTranscriptBytes(input, bytes.subarray(at), head.state),
        )
        expect(merged.turns).toEqual(whole.turns)
        expect(merged.state).toEqual(whole.state)
      }
    }
  })

  it("indexes every real file in 2 KiB slices to the same rows as at once", async () => {
    const environment = {
      env: { CODEX_HOME: corpus.codexHome, CLAUDE_CONFIG_DIR: corpus.claudeConfigDir },
      homeDir: corpus.root,
    }
    const whole = tempDir("real-whole")
    const sliced = tempDir("real-sliced")
    try {
      await runIndex(whole.path, { environment })
      const report = await runIndex(sliced.path, { environment, sliceBytes: 2048 })
      expect(report).toMatchObject({ indexedNew: 4, failed: [] })
      const words = ["retry", "SQLite", "frost", "backoff"]
      expect(await snapshot(sliced.path, words)).toEqual(await snapshot(whole.path, words))
      expect(await runIndex(sliced.path, { environment, sliceBytes: 2048 })).toMatchObject({
        unchanged: 4,
      })
    } finally {
      whole.dispose()
      sliced.dispose()
    }
  })
})

// Recall end to end on transcripts written by the REAL pinned binaries (codex 0.169.0 over
// app-server and `codex exec`, Claude Code 2.1.328 over stream-json and `-p`, recorded by the
// testkit against loopback mocks): index, embed with the default embedded embedder (`auto`:
// USE-lite at this size), then search, expand, step, grep, recent sessions and status as an
// agent would use them.
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildCorpus, CORPUS_COMPACTION_SUMMARY } from "@baton/testkit"
import type { Corpus } from "@baton/testkit"
import {
  expandAround,
  formatDate,
  grepRecords,
  hostTimeZone,
  indexTranscripts,
  localDateOf,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
  recallStatus,
  recentSessions,
  searchRecall,
  step,
} from "@baton/recall-index"
import type {
  Embedder,
  RecallSearchProviders,
  IndexerProcess,
  RecallDatabase,
  TranscriptFileSystem,
} from "@baton/recall-index"
import { embedLikeTheProduct, tempDir } from "./index-harness.js"

let corpus: Corpus
let data: { path: string; dispose: () => void }
let embedder: Embedder | undefined
let configured: RecallSearchProviders = {}
let run: <A, E>(
  effect: Effect.Effect<A, E, RecallDatabase | TranscriptFileSystem | IndexerProcess>,
) => Promise<A>

const session = (agent: "codex" | "claude", headless: boolean) =>
  corpus.sessions.find((s) => s.spec.agent === agent && (s.spec.headless === true) === headless)!

beforeAll(async () => {
  corpus = await buildCorpus()
  data = tempDir("recall-e2e")
  const layers = Layer.mergeAll(
    recallDatabaseLayer({ dataDir: join(data.path, "baton") }),
    nodeTranscriptFileSystemLayer,
    nodeIndexerProcessLayer,
  )
  run = (effect) => Effect.runPromise(effect.pipe(Effect.provide(layers)))
  const environment = {
    env: { CODEX_HOME: corpus.codexHome, CLAUDE_CONFIG_DIR: corpus.claudeConfigDir },
    homeDir: corpus.root,
  }
  const report = await run(indexTranscripts({ environment }))
  expect(report.failed).toEqual([])
  expect(report.indexedNew).toBe(4)
  // The product's path: the default (`auto`) picks its embedder from the index the run left
  // (USE-lite for a history this small), and a search follows the space that was filled.
  const product = await embedLikeTheProduct(run)
  expect(product.forIndex.embedder?.info.model).toBe("use-lite")
  expect(product.forSearch).toBe(product.forIndex)
  embedder = product.forSearch.embedder
  configured = product.providers
}, 300_000)

afterAll(async () => {
  if (embedder?.close !== undefined) await Effect.runPromise(embedder.close())
  data?.dispose()
  await corpus?.dispose()
})

describe("recall on real agent transcripts", () => {
  it("finds a Codex answer by meaning and words, scoped to its repository", async () => {
    const codex = session("codex", false)
    const result = await run(
      searchRecall(
        { query: "which backoff should payment webhook retries use", scopeCwd: codex.cwd },
        configured,
      ),
    )
    expect(result.degraded).toBeNull()
    expect(result.arms.vector.ran).toBe(true)
    expect(result.arms.rerank.ran).toBe(true)
    expect(result.hits.length).toBeGreaterThan(0)
    expect(result.hits.every((h) => h.cwd === codex.cwd)).toBe(true)
    const texts = result.hits.slice(0, 3).map((h) => h.text)
    expect(texts).toContain("What retry policy should the payment webhook client use?")
    expect(texts).toContain(
      "Use exponential backoff: 3 attempts, starting at 200 ms, doubling, with jitter.",
    )
    const hit = result.hits.find((h) => h.text.startsWith("Use exponential backoff"))!
    expect(hit).toMatchObject({
      source: "codex",
      sessionId: codex.sessionId,
      role: "assistant",
      project: "payments-service",
    })
    expect(hit.scores.lexicalRank).not.toBeNull()
    expect(hit.scores.vectorRank).not.toBeNull()
  })

  it("finds a Claude answer across projects and opens the turns around it with tool output", async () => {
    const claude = session("claude", false)
    const result = await run(
      searchRecall({ query: "which database did we pick", source: "claude" }, { embedder }),
    )
    const hit = result.hits.find((h) => h.text.startsWith("We picked SQLite"))!
    expect(hit).toMatchObject({
      sessionId: claude.sessionId,
      cwd: claude.cwd,
      project: "garden-planner",
    })
    const window = await run(
      expandAround({ sessionId: hit.sessionId, turnId: hit.turnId, before: 1, after: 2 }),
    )
    expect(window.turns.map((t) => t.text)).toEqual([
      "Which database did we pick for the garden planner?",
      "We picked SQLite with WAL mode, because the app is single-user and local.",
      "Count the migration files.",
      "There are 12 migration files.",
    ])
    const tools = window.turns[3]!.records
    expect(
      tools.some((r) => r.kind === "tool-call" && r.text.includes("echo migrations=$((2*6))")),
    ).toBe(true)
    expect(tools.some((r) => r.kind === "tool-output" && r.text.includes("migrations=12"))).toBe(
      true,
    )
    // No harness text or request blobs leak into the window.
    expect(JSON.stringify(window)).not.toContain("system-reminder")
    const next = await run(
      step({
        sessionId: hit.sessionId,
        turnId: window.turns[3]!.turnId,
        direction: "next",
        count: 2,
      }),
    )
    expect(next.turns.map((t) => t.text)).toEqual([
      "Plan the frost-date feature.",
      "Frost dates come from a lookup table keyed by postcode; cache it per session.",
    ])
    const end = await run(
      step({ sessionId: hit.sessionId, turnId: next.turns[1]!.turnId, direction: "next" }),
    )
    expect(end).toMatchObject({ turns: [], atEnd: true })
  })

  it("greps Codex tool output and the compaction summary, which are not search chunks", async () => {
    const codex = session("codex", false)
    const handlers = await run(grepRecords({ pattern: "handlers=7" }))
    // Once each, though Codex writes both twice (the second copies are flagged duplicates).
    const inCodex = handlers.hits.filter((h) => h.sessionId === codex.sessionId)
    expect(inCodex.map((h) => [h.kind, h.recordType])).toEqual([
      ["tool-output", "event_msg/item_completed/CommandExecution"],
    ])
    const summary = await run(
      grepRecords({ pattern: CORPUS_COMPACTION_SUMMARY, kinds: ["compaction"] }),
    )
    expect(summary.hits.filter((h) => h.sessionId === codex.sessionId)).toHaveLength(1)
    const everyCopy = await run(
      grepRecords({
        pattern: CORPUS_COMPACTION_SUMMARY,
        kinds: ["compaction"],
        includeDuplicates: true,
      }),
    )
    expect(everyCopy.hits.filter((h) => h.sessionId === codex.sessionId)).toHaveLength(2)
    // expand shows the turn's work once too.
    const recordsOfTurn = async (includeDuplicates: boolean) => {
      const anchor = { sessionId: codex.sessionId, turnId: inCodex[0]!.turnId! }
      const view = await run(expandAround({ ...anchor, before: 0, after: 0, includeDuplicates }))
      return view.turns.flatMap((t) => t.records)
    }
    const shown = await recordsOfTurn(false)
    expect(shown.filter((r) => r.text.includes("handlers=7")).map((r) => r.kind)).toEqual([
      "tool-output",
    ])
    expect(shown.filter((r) => r.text.includes(CORPUS_COMPACTION_SUMMARY))).toHaveLength(1)
    const all = await recordsOfTurn(true)
    expect(all.filter((r) => r.text.includes("handlers=7"))).toHaveLength(2)
    const asSearch = await run(
      searchRecall({ query: CORPUS_COMPACTION_SUMMARY, k: 20, arms: ["lexical"] }, {}),
    )
    expect(asSearch.hits.some((h) => h.text.includes("Compacted:"))).toBe(false)
  })

  it("lists the four sessions newest first and filters headless runs and days", async () => {
    const all = await run(recentSessions({ limit: 10 }))
    expect(new Set(all.map((s) => s.sessionId))).toEqual(
      new Set(corpus.sessions.map((s) => s.sessionId)),
    )
    const times = all.map((s) => s.lastActivity ?? "")
    expect(times).toEqual([...times].sort().reverse())
    expect(all.find((s) => s.sessionId === session("codex", false).sessionId)).toMatchObject({
      title: "What retry policy should the payment webhook client use?",
      headless: false,
      transcript: "indexed",
    })
    // Every `claude -p` run (stream-json too) is headless; only the app-server Codex thread is not.
    const interactive = await run(recentSessions({ excludeHeadless: true }))
    expect(interactive.map((s) => s.sessionId)).toEqual([session("codex", false).sessionId])
    const zone = hostTimeZone()
    const day = formatDate(localDateOf(Date.parse(all[0]!.lastActivity!), zone))
    const today = await run(recentSessions({ onDate: day, timezone: zone }))
    expect(today.length).toBeGreaterThan(0)
    const before = await run(recentSessions({ endDate: "2020-01-01", timezone: zone }))
    expect(before).toEqual([])
  })

  it("reports status with both sources and a full vector space", async () => {
    const status = await run(recallStatus())
    expect(status).toMatchObject({ empty: false, sessions: 4, embeddingBacklog: 0 })
    expect(status.bySource.codex.sessions).toBe(2)
    expect(status.bySource.claude.sessions).toBe(2)
    expect(status.embedders).toEqual([
      expect.objectContaining({ fingerprint: embedder!.info.fingerprint, active: true }),
    ])
  })
})

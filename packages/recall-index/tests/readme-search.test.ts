// The README "Search and navigation" example, run against the hand-written history (its Codex
// payments session is on 2026-03-12), embedded as `baton recall index` embeds it (the default,
// `auto`, picks USE-lite for a history this small) and searched with the default resolved.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  embedderFromEnvironment,
  embeddingForSearch,
  embedForIndex,
  expandAround,
  grepRecordsIsolated,
  recallDatabaseLayer,
  recentSessions,
  searchRecall,
} from "@baton/recall-index"
import { defaultHistory, indexedHistory } from "./recall-fixtures.js"

describe("README search example", () => {
  it("searches, expands, greps and lists recent sessions", async () => {
    const history = await indexedHistory(defaultHistory)
    try {
      const embedded = await history.run(
        Effect.flatMap(embedderFromEnvironment({}), (configured) => embedForIndex(configured)),
      )
      expect(embedded?.report.fingerprint).toMatch(/^embedded\/use-lite\//)
      const program = Effect.gen(function* () {
        const configured = yield* embedderFromEnvironment({})
        const { embedder, reranker, expandQuery, fusion } = yield* embeddingForSearch(configured)
        const found = yield* searchRecall(
          {
            query: "which retry policy did we pick",
            scopeCwd: "/work/payments",
            onDate: "2026-03-12",
            timezone: "Europe/Berlin",
          },
          { embedder, reranker, expandQuery, fusion, configured },
        )
        const hit = found.hits[0]
        const around =
          hit === undefined
            ? undefined
            : yield* expandAround({
                sessionId: hit.sessionId,
                turnId: hit.turnId,
                before: 1,
                after: 2,
              })
        const exact = yield* grepRecordsIsolated({ pattern: "handlers=(7|8)", regex: true })
        const recent = yield* recentSessions({ limit: 5, scopeCwd: "/work/payments" })
        return { found, around, exact, recent }
      })
      const out = await Effect.runPromise(
        program.pipe(
          Effect.provide(Layer.mergeAll(recallDatabaseLayer({ dataDir: history.dataDir }))),
        ),
      )
      expect(out.found.degraded).toBeNull()
      expect(out.found.arms.vector.ran).toBe(true)
      // The answer comes first: it follows the question that matches (conversation context).
      expect(out.found.hits.slice(0, 2).map((h) => h.text)).toEqual([
        "Use exponential backoff with jitter: 3 attempts, starting at 200 ms, doubling.",
        "What retry policy should the payment webhook client use?",
      ])
      expect(out.found.hits[0]?.whenHuman).toMatch(/^2026-03-12 09:00 Europe\/Berlin/)
      expect(out.around?.turns.map((t) => t.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
      ])
      expect(out.exact.hits).toHaveLength(1)
      expect(out.recent.map((s) => s.project)).toEqual(["payments"])
    } finally {
      history.dispose()
    }
  })
})

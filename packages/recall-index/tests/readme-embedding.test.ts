// The README embedding example (default embedder, backlog, both arms, fusion) on a synthetic
// home indexed into a temp data directory.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  embedderFromEnvironment,
  embeddingForSearch,
  embedForIndex,
  fuseRanks,
  lexicalQuery,
  matchChunks,
  nodeIndexerProcessLayer,
  recallDatabaseLayer,
  searchVectors,
} from "@baton/recall-index"
import { generateFixtureCorpus } from "@baton/recall-index/testing"
import { runIndex, tempDir, writeTree } from "./index-harness.js"

describe("README embedding example", () => {
  it("embeds the backlog with the default embedder and fuses both arms", async () => {
    const home = tempDir("readme-emb-home")
    const data = tempDir("readme-emb-data")
    try {
      const corpus = generateFixtureCorpus({ seed: 5, homeDir: home.path })
      writeTree(corpus.files)
      await runIndex(data.path, {
        environment: {
          env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
          homeDir: home.path,
        },
      })
      const progress: string[] = []
      const program = Effect.gen(function* () {
        const configured = yield* embedderFromEnvironment({})
        const run = yield* embedForIndex(configured, {
          onProgress: (p) => progress.push(`${p.done}/${p.total}`),
        })
        const { embedder, expandQuery, fusion } = yield* embeddingForSearch(configured)
        if (embedder === undefined || run === undefined) return undefined
        const backlog = run.report
        const query = "retry the frost cache policy"
        const lexical = yield* matchChunks(lexicalQuery(query), {
          limit: 100,
          mode: "any",
          expansion: expandQuery(query), // related words, scored only when selective
        })
        const vector = yield* searchVectors({
          vector: yield* embedder.embedQuery(query),
          k: 100,
          fingerprint: embedder.info.fingerprint,
        })
        const fused = fuseRanks([
          { name: "lexical", weight: fusion.lexical, ids: lexical.map((m) => m.chunkId) },
          { name: "vector", weight: fusion.vector, ids: vector.map((h) => h.chunkId) },
        ])
        return { backlog, lexical, vector, fused }
      })
      const layers = Layer.mergeAll(
        recallDatabaseLayer({ dataDir: data.path }),
        nodeIndexerProcessLayer,
      )
      const out = await Effect.runPromise(program.pipe(Effect.provide(layers)))
      expect(out).toBeDefined()
      expect(out!.backlog.remaining).toBe(0)
      // The search resolved the default to the space the index run embedded in.
      expect(out!.backlog.fingerprint).toMatch(/^embedded\/use-lite\//)
      expect(out!.vector.length).toBeGreaterThan(0)
      expect(progress.at(-1)).toBe(`${out!.backlog.total}/${out!.backlog.total}`)
      expect(out!.vector.length).toBeGreaterThan(0)
      expect(out!.fused.length).toBeGreaterThanOrEqual(Math.max(out!.lexical.length, 1))
      expect(out!.fused[0]!.ranks).toHaveProperty("vector")
    } finally {
      home.dispose()
      data.dispose()
    }
  })
})

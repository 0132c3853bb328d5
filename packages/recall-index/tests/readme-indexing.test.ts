// The README indexing example, run against a synthetic home on disk and a temp data directory.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  batonDataDir,
  indexStatus,
  indexTranscripts,
  matchChunks,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
} from "@baton/recall-index"
import { generateFixtureCorpus } from "@baton/recall-index/testing"
import { tempDir, writeTree } from "./index-harness.js"

describe("README indexing example", () => {
  it("indexes, looks up escaped text and reports status", async () => {
    const home = tempDir("readme-home")
    const data = tempDir("readme-data")
    try {
      const corpus = generateFixtureCorpus({ seed: 11, homeDir: home.path })
      writeTree(corpus.files)
      const environment = {
        env: {
          CLAUDE_CONFIG_DIR: corpus.claudeConfigDir,
          CODEX_HOME: corpus.codexHome,
          BATON_DATA_DIR: data.path,
        },
        homeDir: home.path,
      }
      const progress: Array<string> = []
      const program = Effect.gen(function* () {
        const report = yield* indexTranscripts({
          environment,
          onProgress: (e) => e._tag === "FileIndexed" && progress.push(`${e.done}/${e.total}`),
        })
        const hits = yield* matchChunks('retry "policy')
        const frost = yield* matchChunks("frost")
        const status = yield* indexStatus(Date.now())
        return { report, hits, frost, status }
      })
      const layers = Layer.mergeAll(
        recallDatabaseLayer({ dataDir: batonDataDir(environment.env, environment.homeDir) }),
        nodeTranscriptFileSystemLayer,
        nodeIndexerProcessLayer,
      )
      const out = await Effect.runPromise(program.pipe(Effect.provide(layers)))
      expect(progress.at(-1)).toBe(`${out.report.indexedNew}/${out.report.indexedNew}`)
      expect(out.frost.length).toBeGreaterThan(0)
      expect(Array.isArray(out.hits)).toBe(true)
      expect(out.status.embeddingBacklog).toBe(out.status.chunks)
      expect(out.status.lastRun?.indexedNew).toBe(out.report.indexedNew)
    } finally {
      home.dispose()
      data.dispose()
    }
  })
})

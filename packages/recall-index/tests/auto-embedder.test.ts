// The `auto` embedded default on a real temp-file database: an index run picks USE-lite up to
// the size limits and the static table beyond; a search follows the space the index was last
// embedded in; `embedderFromConfig` builds each pick once.
import { Effect } from "effect"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  AUTO_LIMITS,
  autoChoiceForIndex,
  autoChoiceForSearch,
  embedBacklog,
  embedForIndex,
  EmbedderError,
  EMBEDDED_FUSION_PLAN,
  embedderFromConfig,
  embedderFromEnvironment,
  embeddingForIndex,
  embeddingForSearch,
  RecallDatabase,
  USE_LITE_FUSION_PLAN,
} from "@baton/recall-index"
import type { ConfiguredEmbedding, Embedder } from "@baton/recall-index"
import { generateFixtureCorpus, makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { runIndex, tempDir, withIndex, writeTree } from "./index-harness.js"

const home = tempDir("auto-home")
const data = tempDir("auto-data")
afterAll(() => {
  home.dispose()
  data.dispose()
})

let dataDir = ""
let size = { chunks: 0, chars: 0 }
let environment: Parameters<typeof runIndex>[1]["environment"]
beforeAll(async () => {
  const corpus = generateFixtureCorpus({ seed: 5, homeDir: home.path })
  writeTree(corpus.files)
  dataDir = join(data.path, "index")
  environment = {
    env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
    homeDir: home.path,
  }
  await runIndex(dataDir, { environment })
  size = await withIndex(
    dataDir,
    RecallDatabase.use((db) =>
      Effect.sync(
        () =>
          db.sqlite
            .prepare("select count(*) as chunks, sum(length(text)) as chars from chunks")
            .get() as { chunks: number; chars: number },
      ),
    ),
  )
})

/** The deterministic embedder under another fingerprint (a stand-in for a real model's space). */
const spaceOf = (fingerprint: string): Embedder => {
  const inner = makeDeterministicEmbedder({ dim: 16 })
  return { ...inner, info: { ...inner.info, fingerprint } }
}

describe("autoChoiceForIndex", () => {
  it("picks USE-lite up to both limits and the static table past either", async () => {
    expect(size.chunks).toBeGreaterThan(10)
    const choose = (maxChunks: number, maxChars: number) =>
      withIndex(dataDir, autoChoiceForIndex({ maxChunks, maxChars }))
    expect(await withIndex(dataDir, autoChoiceForIndex())).toEqual({
      name: "use-lite",
      chunks: size.chunks,
      chars: size.chars,
    })
    expect((await choose(size.chunks, size.chars)).name).toBe("use-lite")
    expect((await choose(size.chunks, size.chars - 1)).name).toBe("use-static")
    // Past the chunk limit the scan stops: it counts one chunk more than the limit.
    expect(await choose(size.chunks - 2, AUTO_LIMITS.maxChars)).toMatchObject({
      name: "use-static",
      chunks: size.chunks - 1,
    })
  })
})

describe("autoChoiceForSearch", () => {
  it("follows the space the index was last embedded in", async () => {
    const dir = join(data.path, "search")
    await runIndex(dir, { environment: { env: {}, homeDir: join(home.path, "nowhere") } })
    expect(await withIndex(dir, autoChoiceForSearch)).toBe("use-static")
    await withIndex(dataDir, embedBacklog(spaceOf("embedded/use-lite/16/test")))
    expect(await withIndex(dataDir, autoChoiceForSearch)).toBe("use-lite")
    await withIndex(dataDir, embedBacklog(spaceOf("embedded/use-static@test/16")))
    expect(await withIndex(dataDir, autoChoiceForSearch)).toBe("use-static")
    // Back to use-lite, then a run with a service: the newest embedded space with vectors stays
    // the one `auto` searches (it used to fall to the static table, which had none then).
    await withIndex(dataDir, embedBacklog(spaceOf("embedded/use-lite/16/test")))
    await withIndex(dataDir, embedBacklog(spaceOf("voyage/voyage-4-large/16")))
    expect(await withIndex(dataDir, autoChoiceForSearch)).toBe("use-lite")
  })
})

describe("the auto configuration", () => {
  it("is the default, starts as the static table and builds each pick once", async () => {
    const auto = await Effect.runPromise(embedderFromEnvironment({}))
    expect(auto.config).toEqual({ _tag: "Embedded", name: "auto" })
    expect(auto.embedder?.info.model).toMatch(/^use-static/)
    expect(auto.fusion).toEqual(EMBEDDED_FUSION_PLAN)
    const pick = auto.pick
    if (pick === undefined) throw new Error("auto has no pick")
    const lite = pick("use-lite")
    expect(lite.embedder?.info.model).toBe("use-lite")
    expect(lite.fusion).toEqual(USE_LITE_FUSION_PLAN)
    expect(lite.reranker).toBe(auto.reranker)
    expect(pick("use-lite")).toBe(lite)
    expect(pick("use-static").embedder).toBe(auto.embedder)
    // A named embedder has nothing to pick.
    const named = await Effect.runPromise(
      embedderFromConfig({ _tag: "Embedded", name: "use-static" }),
    )
    expect(named.pick).toBeUndefined()
  })

  it("resolves through the index for an index run and a search; others stay as they are", async () => {
    const picked: string[] = []
    const marker = (name: string): ConfiguredEmbedding => ({
      config: { _tag: "Embedded", name: "auto" },
      embedder: undefined,
      reranker: undefined,
      expandQuery: (q) => q,
      fusion: EMBEDDED_FUSION_PLAN,
      pick: (choice) => {
        picked.push(`${name}:${choice}`)
        return marker(choice)
      },
    })
    await withIndex(dataDir, embedBacklog(spaceOf("embedded/use-lite/16/test")))
    await withIndex(dataDir, embeddingForIndex(marker("index")))
    await withIndex(dataDir, embeddingForIndex(marker("small"), { maxChunks: 1, maxChars: 1 }))
    await withIndex(dataDir, embeddingForSearch(marker("search")))
    expect(picked).toEqual(["index:use-lite", "small:use-static", "search:use-lite"])
    const plain: ConfiguredEmbedding = { ...marker("plain"), pick: undefined }
    expect(await withIndex(dataDir, embeddingForIndex(plain))).toBe(plain)
    expect(await withIndex(dataDir, embeddingForSearch(plain))).toBe(plain)
    expect(picked).toHaveLength(3)
  })
})

describe("embedForIndex", () => {
  const failingLite = (): Embedder => {
    const inner = spaceOf("embedded/use-lite/16/broken")
    return {
      ...inner,
      info: { ...inner.info, model: "use-lite" },
      embedDocuments: () =>
        Effect.fail(
          new EmbedderError({
            provider: "embedded",
            failure: "unavailable",
            retryable: false,
            reason: "the USE-lite worker exited with code 1",
          }),
        ),
    }
  }
  const autoWith = (lite: Embedder, table: Embedder): ConfiguredEmbedding => {
    const base = {
      config: { _tag: "Embedded" as const, name: "auto" as const },
      reranker: undefined,
      expandQuery: (q: string) => q,
      fusion: EMBEDDED_FUSION_PLAN,
    }
    const staticTable: ConfiguredEmbedding = { ...base, embedder: table }
    const useLite: ConfiguredEmbedding = { ...base, embedder: lite }
    return {
      ...staticTable,
      pick: (name) => (name === "use-lite" ? useLite : staticTable),
    }
  }

  it("falls back to the static table when USE-lite cannot run, and says why", async () => {
    const dir = join(data.path, "fallback")
    await runIndex(dir, { environment })
    const lite = failingLite()
    const table = spaceOf("embedded/use-static@test/16")
    const out = await withIndex(dir, embedForIndex(autoWith(lite, table)))
    expect(out?.fallback).toBe(
      "use-lite could not run (the USE-lite worker exited with code 1); embedded with hash-bow-v1 instead",
    )
    expect(out?.report).toMatchObject({ fingerprint: table.info.fingerprint, remaining: 0 })
    expect(out?.report.embedded).toBeGreaterThan(0)
    // Searches follow the space that was filled.
    expect(await withIndex(dir, autoChoiceForSearch)).toBe("use-static")
    // A named embedder's failure is the caller's.
    const named: ConfiguredEmbedding = { ...autoWith(lite, table), embedder: lite, pick: undefined }
    const failure = await withIndex(dir, Effect.flip(embedForIndex(named)))
    expect(failure).toMatchObject({ _tag: "EmbedderError", failure: "unavailable" })
  })

  it("uses what auto picks when it runs, with no fallback", async () => {
    const lite = spaceOf("embedded/use-lite/16/works")
    const table = spaceOf("embedded/use-static@test2/16")
    const out = await withIndex(dataDir, embedForIndex(autoWith(lite, table)))
    expect(out).toMatchObject({ fallback: null, report: { fingerprint: lite.info.fingerprint } })
  })
})

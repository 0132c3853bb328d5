// How searchRecall's vector arm applies a scope: with usable search codes it pre-filters any scope
// of up to PREFILTER_MAX_CHUNKS chunks (one key lookup each), even where (scope × stored
// vectors) exceeds PREFILTER_BUDGET; without codes (here: an embedder whose dimension is not a
// multiple of 8) it keeps the budget rule. Pre- and post-filtering agree on this small index.
import { Effect } from "effect"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  codesUsableFor,
  embedBacklog,
  PREFILTER_BUDGET,
  PREFILTER_MAX_CHUNKS,
  RecallDatabase,
  searchRecall,
} from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { insertChunkRows, tempDir, withIndex } from "./index-harness.js"

const data = tempDir("vector-filter-mode")
afterAll(() => data.dispose())
const dataDir = join(data.path, "index")

// Two repositories: 1 100 chunks in /work/alpha, 1 000 in /work/beta, every text distinct.
const SIZES = { alpha: 1100, beta: 1000 }
const words = ["retry", "backoff", "ledger", "frost", "upload", "kestrel", "policy", "queue"]
const textOf = (i: number) =>
  `${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5 + 1) % 8]} note ${i}`

const withCodes = makeDeterministicEmbedder({ dim: 64 })
const withoutCodes = makeDeterministicEmbedder({ dim: 60, model: "hash-bow-60" })

beforeAll(async () => {
  const texts = Array.from({ length: SIZES.alpha + SIZES.beta }, (_, i) => textOf(i))
  await insertChunkRows(dataDir, [
    { sessionId: "alpha", repoRoot: "/work/alpha", texts: texts.slice(0, SIZES.alpha) },
    { sessionId: "beta", repoRoot: "/work/beta", texts: texts.slice(SIZES.alpha) },
  ])
  await withIndex(dataDir, embedBacklog(withCodes))
  await withIndex(dataDir, embedBacklog(withoutCodes))
})

const scoped = (embedder: typeof withCodes, vectorFilter?: "pre" | "post") =>
  withIndex(
    dataDir,
    searchRecall(
      {
        query: "retry backoff policy",
        scopeCwd: "/work/alpha",
        arms: ["vector"],
        k: 20,
        perSession: 20,
        ...(vectorFilter === undefined ? {} : { vectorFilter }),
      },
      { embedder },
    ),
  )

describe("the vector arm's filter mode", () => {
  it("pre-filters a scope over the budget when the codes are usable", async () => {
    expect(SIZES.alpha * (SIZES.alpha + SIZES.beta)).toBeGreaterThan(PREFILTER_BUDGET)
    expect(SIZES.alpha).toBeLessThanOrEqual(PREFILTER_MAX_CHUNKS)
    const usable = await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() => [
          codesUsableFor(db.sqlite, withCodes.info.fingerprint),
          codesUsableFor(db.sqlite, withoutCodes.info.fingerprint),
        ]),
      ),
    )
    expect(usable).toEqual([true, false])
    const auto = await scoped(withCodes)
    expect(auto.arms.vector.filterMode).toBe("prefilter")
    expect(auto.hits).toHaveLength(20)
    expect(auto.hits.every((h) => h.sessionId === "alpha")).toBe(true)
    const post = await scoped(withCodes, "post")
    expect(post.arms.vector.filterMode).toBe("postfilter")
    expect(post.hits.map((h) => h.chunkId)).toEqual(auto.hits.map((h) => h.chunkId))
  })

  it("keeps the budget rule without codes", async () => {
    const auto = await scoped(withoutCodes)
    expect(auto.arms.vector.filterMode).toBe("postfilter")
    expect(auto.hits.every((h) => h.sessionId === "alpha")).toBe(true)
    const pre = await scoped(withoutCodes, "pre")
    expect(pre.hits.map((h) => h.chunkId)).toEqual(auto.hits.map((h) => h.chunkId))
  })
})

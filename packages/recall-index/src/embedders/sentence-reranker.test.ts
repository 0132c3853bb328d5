import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { Embedder, RerankResult } from "../embedder.js"
import { sentenceCutProbes } from "../testing/sentence-probes.js"
import { seededRandom } from "../testing/seeded-random.js"
import {
  DEFAULT_STATIC_TABLE_PATH,
  loadStaticTable,
  makeStaticTableEmbedder,
} from "./embedded-static.js"
import { makeSentenceReranker } from "./sentence-reranker.js"
import type { SentenceRerankerOptions } from "./sentence-reranker.js"

const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)

/** The same embedder without `embedParts`: the reranker's two-embedding path. */
const withoutParts = (embedder: Embedder): Embedder => ({
  info: embedder.info,
  embedDocuments: embedder.embedDocuments,
  embedQuery: embedder.embedQuery,
})

/** The same embedder, counting what each of its calls received. */
const counting = (embedder: Embedder) => {
  const calls = { parts: 0, documentTexts: 0 }
  const embedParts = embedder.embedParts
  if (embedParts === undefined) throw new Error("expected an embedder with embedParts")
  const counted: Embedder = {
    ...withoutParts(embedder),
    embedDocuments: (texts) => {
      calls.documentTexts += texts.length
      return embedder.embedDocuments(texts)
    },
    embedParts: (text, parts) => {
      calls.parts += 1
      return embedParts(text, parts)
    },
  }
  return { calls, embedder: counted }
}

/** Same order, and scores within 1e-6. */
const expectSameRanking = (
  fast: ReadonlyArray<RerankResult>,
  slow: ReadonlyArray<RerankResult>,
  label: string,
) => {
  expect(
    fast.map((r) => r.index),
    label,
  ).toEqual(slow.map((r) => r.index))
  fast.forEach((r, i) => {
    expect(Math.abs(r.score - slow[i]!.score), label).toBeLessThan(1e-6)
  })
}

// The shared sentence-cut probes, then texts for the queries below, more lines than
// `maxSentences`, and duplicates (ties keep the lower index).
const documents = [
  ...sentenceCutProbes,
  "first line about caching\nsecond line about redis\r\n\nthird line: the stripe webhook\n\n",
  "We looked at the build. The tests pass. The stripe webhook signature check needs the raw body. Nothing else changed.",
  "Café déjà vu. Naïve façade! The cache was cold.",
  Array.from({ length: 40 }, (_, i) => `Line ${i} of the deploy log`).join("\n"),
  "The deploy failed.   Rolled back the release.",
  "The deploy failed.   Rolled back the release.",
  "zzqx qqxv. blorft vrrk!",
]

const queries = [
  "stripe webhook signature raw body",
  "why did the deploy fail",
  "redis cache timeout",
  "retry backoff http server",
  "",
]

const optionSets: ReadonlyArray<SentenceRerankerOptions> = [
  {},
  { maxSentences: 3 },
  { maxSentences: 1, wholeWeight: 0.6 },
  { wholeWeight: 0 },
  { maxSentences: 0 },
]

describe("sentence reranker over the static table", () => {
  it("ranks and scores the same with embedParts as with two embeddings", async () => {
    for (const removeCommon of [false, true]) {
      const table = await run(makeStaticTableEmbedder({ removeCommon }))
      for (const options of optionSets) {
        const fast = makeSentenceReranker(table, options)
        const slow = makeSentenceReranker(withoutParts(table), options)
        for (const query of queries) {
          const label = JSON.stringify({ removeCommon, options, query })
          const a = await run(fast.rerank(query, documents, documents.length))
          const b = await run(slow.rerank(query, documents, documents.length))
          expect(a).toHaveLength(documents.length)
          expectSameRanking(a, b, label)
          expectSameRanking(
            await run(fast.rerank(query, documents, 4)),
            b.slice(0, 4),
            `${label} top 4`,
          )
        }
      }
    }
  })

  it("ranks and scores the same on generated candidates", async () => {
    const table = await run(makeStaticTableEmbedder())
    const words = (await run(loadStaticTable(DEFAULT_STATIC_TABLE_PATH))).header.words
    const random = seededRandom(20_240_611)
    const separators = [" ", " ", " ", ". ", "! ", "? ", "; ", "\n", "\n\n", ", ", "  ", ".\n"]
    const word = () => {
      const w = random.next() < 0.1 ? `${random.hex(4)}` : random.pick(words)
      const shape = random.next()
      if (shape < 0.1) return w.toUpperCase()
      if (shape < 0.2) return `${w}${random.pick(words).replace(/^./u, (c) => c.toUpperCase())}`
      if (shape < 0.3) return w.replace(/^./u, (c) => c.toUpperCase())
      return w
    }
    const candidate = () => {
      const n = random.int(0, 120)
      let text = ""
      for (let i = 0; i < n; i++) text += word() + random.pick(separators)
      return text
    }
    const candidates = Array.from({ length: 60 }, candidate)
    const fast = makeSentenceReranker(table)
    const slow = makeSentenceReranker(withoutParts(table))
    for (let q = 0; q < 10; q++) {
      const query = Array.from({ length: random.int(1, 8) }, () => random.pick(words)).join(" ")
      expectSameRanking(
        await run(fast.rerank(query, candidates, candidates.length)),
        await run(slow.rerank(query, candidates, candidates.length)),
        query,
      )
    }
  })

  it("embeds each candidate once unless it has more sentences than it considers", async () => {
    const { calls, embedder } = counting(await run(makeStaticTableEmbedder()))
    const reranker = makeSentenceReranker(embedder, { maxSentences: 5 })
    const long = "One cache. Two caches. Three. Four. Five. Six. Seven caches."
    await run(reranker.rerank("cache", ["A cache. A redis.", long, "", "No sentence end"], 4))
    // Three candidates in one pass each; the long one: its first five sentences, then itself.
    expect(calls).toEqual({ parts: 3, documentTexts: 5 + 1 })
  })

  it("counts the query's words a sentence holds, even words the table does not know", async () => {
    const table = await run(makeStaticTableEmbedder())
    // "zorblax" is in no table row: both candidates embed to the same vectors.
    const documents = ["We deploy the fix on Monday.", "We deploy the zorblax fix on Monday."]
    const query = "zorblax deploy"
    const [a, b] = await run(table.embedDocuments(documents))
    expect([...a!]).toEqual([...b!])
    const bySimilarity = await run(
      makeSentenceReranker(table, { termWeight: 0 }).rerank(query, documents, 2),
    )
    expect(bySimilarity.map((r) => r.index)).toEqual([0, 1]) // a tie, kept in index order
    expect(bySimilarity[0]!.score).toBe(bySimilarity[1]!.score)
    const withTerms = await run(makeSentenceReranker(table).rerank(query, documents, 2))
    expect(withTerms.map((r) => r.index)).toEqual([1, 0])
    // Weights over 2 candidates: zorblax (in 1) ln 2, deploy (in both) ln(5/3); each candidate is
    // one sentence, scored 0.7 × (similarity + 0.3 × share) + 0.3 × whole similarity.
    const zorblax = Math.log(2)
    const deploy = Math.log(5 / 3)
    const gap = 0.7 * 0.3 * (1 - deploy / (zorblax + deploy))
    expect(withTerms[0]!.score - withTerms[1]!.score).toBeCloseTo(gap, 6)
    expect(withTerms[1]!.score - bySimilarity[0]!.score).toBeCloseTo(
      0.7 * 0.3 * (deploy / (zorblax + deploy)),
      6,
    )
  })

  it("counts the query's personal pronouns as words: the sentence where the user wrote them", async () => {
    const table = await run(makeStaticTableEmbedder())
    const documents = ["The beagle is called Biscuit.", "My beagle is called Biscuit."]
    const query = "what is my beagle called"
    const gap = (results: ReadonlyArray<{ index: number; score: number }>) =>
      results.find((r) => r.index === 1)!.score - results.find((r) => r.index === 0)!.score
    const withTerms = await run(makeSentenceReranker(table).rerank(query, documents, 2))
    const bySimilarity = await run(
      makeSentenceReranker(table, { termWeight: 0 }).rerank(query, documents, 2),
    )
    expect(withTerms[0]!.index).toBe(1)
    // Words: beagle and call (in both candidates, ln(5/3) each) and my (in one, ln 2): only the
    // second candidate holds "my", which widens its lead by 0.7 × 0.3 × its weight share.
    const my = Math.log(2)
    const both = Math.log(5 / 3)
    expect(gap(withTerms) - gap(bySimilarity)).toBeCloseTo((0.7 * 0.3 * my) / (my + 2 * both), 6)
  })
})

// The lexical arm drops OR-ed terms found in most chunks (FTS5 bm25 gives them an IDF of ~0):
// scores of rows matching another term are unchanged, rows matching only a common term go, stems
// are counted as bm25 sees them, and a query of only common terms keeps its rarest term.
// Expansion terms (a query expander's additions) have their own, lower share.
import { Effect } from "effect"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRecallDatabasePool, matchChunks, rankChunks } from "@baton/recall-index"
import { appendChunkRows, insertChunkRows, tempDir, withIndex } from "./index-harness.js"

const data = tempDir("lexical-pruning")
afterAll(() => data.dispose())
const dataDir = join(data.path, "index")

// 40 chunks: "retrying" in every one, "ledger" in 30, "heron" in 12, "osprey" in 8, "kestrel"
// in 4.
const textOf = (i: number): string =>
  [
    "we were retrying the upload",
    i < 30 ? "the ledger balanced" : "",
    i % 13 === 0 ? "a kestrel watched" : "",
    i % 10 < 2 ? "an osprey dived" : "",
    i % 10 < 3 ? "a heron stood" : "",
    `note ${i}`,
  ]
    .filter((s) => s !== "")
    .join(", ")

beforeAll(() =>
  insertChunkRows(dataDir, [
    { sessionId: "s", texts: Array.from({ length: 40 }, (_, i) => textOf(i)) },
  ]),
)

const search = (query: string, maxDocShare?: number) =>
  withIndex(
    dataDir,
    matchChunks(query, {
      limit: 100,
      mode: "any",
      ...(maxDocShare === undefined ? {} : { maxDocShare }),
    }),
  )

describe("matchChunks any-mode term pruning", () => {
  it("drops a term in most chunks (by stem) and keeps every other row's score", async () => {
    // "retried" never occurs literally; its stem is that of "retrying", in all 40 chunks.
    const pruned = await search("retried kestrel")
    const all = await search("retried kestrel", 1)
    expect(all).toHaveLength(40)
    expect(pruned.map((m) => m.chunkId).sort((a, b) => a - b)).toEqual([1, 14, 27, 40])
    const scoreIn = new Map(all.map((m) => [m.chunkId, m.rank]))
    // Equal up to the common term's clamped IDF (1e-6 per occurrence).
    for (const m of pruned) expect(m.rank).toBeCloseTo(scoreIn.get(m.chunkId)!, 4)
    // Same order as the unpruned list's head.
    expect(pruned.map((m) => m.chunkId)).toEqual(all.slice(0, 4).map((m) => m.chunkId))
  })

  it("keeps terms at or under the share and compares per term (30 of 40 = 75 % goes at 0.5)", async () => {
    const hits = await search("ledger osprey")
    expect(hits).toHaveLength(8) // osprey (20 %) kept, ledger (75 %) dropped
    expect((await search("ledger osprey", 0.8)).length).toBe(32) // both kept: 30 + 2 more
  })

  it("drops a term in over a quarter of the chunks by default (0.25)", async () => {
    // heron: 12 of 40 (30 %); kestrel: 4, three of them without a heron.
    expect((await search("heron kestrel")).map((m) => m.chunkId).sort((a, b) => a - b)).toEqual([
      1, 14, 27, 40,
    ])
    expect(await search("heron kestrel", 0.5)).toHaveLength(15)
  })

  it("falls back to a dropped term bm25 still weighs when the kept terms occur nowhere", async () => {
    // heron: 12 of 40 (30 %), over the default share; albatross: in no chunk.
    const heron = await search("heron")
    expect(heron).toHaveLength(12)
    const hits = await search("heron albatross")
    expect(hits.map((m) => m.chunkId)).toEqual(heron.map((m) => m.chunkId))
    // ledger (75 %) is past half the chunks, where bm25 gives it no weight: still nothing.
    expect(await search("ledger albatross")).toEqual([])
    // Only when nothing is found: kestrel occurs, so heron stays dropped (as above).
    expect(await search("heron kestrel")).toHaveLength(4)
    // And only within the row budget: heron's 12 rows do not fit in 11.
    const budgeted = (maxScoredRows: number) =>
      withIndex(dataDir, matchChunks("heron albatross", { limit: 100, mode: "any", maxScoredRows }))
    expect(await budgeted(11)).toEqual([])
    expect(await budgeted(12)).toHaveLength(12)
  })

  it("keeps the rarest term when every term is common", async () => {
    const hits = await search("retrying ledger")
    expect(hits).toHaveLength(30) // ledger (30) is rarer than retrying (40)
  })

  it("treats a multi-token term by its rarest token and leaves all-mode alone", async () => {
    // "kestrel-watched" is one phrase term, selective through "kestrel" (4 chunks).
    const hits = await search("retrying kestrel-watched")
    expect(hits.map((m) => m.chunkId).sort((a, b) => a - b)).toEqual([1, 14, 27, 40])
    expect(await withIndex(dataDir, matchChunks("retrying kestrel", { limit: 100 }))).toHaveLength(
      4,
    )
  })
})

describe("matchChunks any-mode row budget", () => {
  // kestrel (4 rows) and osprey (8) fit a budget of 12 rows; heron (12) does not.
  const query = "heron osprey kestrel"
  const ranked = (
    limit: number,
    maxScoredRows: number,
    filter?: { sql: string; args: Array<string | number> },
  ) =>
    withIndex(
      dataDir,
      matchChunks(query, {
        limit,
        mode: "any",
        maxDocShare: 1,
        maxScoredRows,
        ...(filter === undefined ? {} : { filter }),
      }),
    )
  const kestrelOrOsprey = (id: number) => (id - 1) % 13 === 0 || (id - 1) % 10 < 2

  it("past the budget, scores only rows with a selecting term, each with its whole-query score", async () => {
    const whole = await ranked(100, Infinity)
    expect(whole).toHaveLength(15) // 11 with kestrel or osprey, 4 with only a heron
    const split = await ranked(11, 12)
    expect(split.map((m) => m.chunkId).sort((a, b) => a - b)).toEqual(
      whole
        .map((m) => m.chunkId)
        .filter(kestrelOrOsprey)
        .sort((a, b) => a - b),
    )
    const wholeRank = new Map(whole.map((m) => [m.chunkId, m.rank]))
    for (const m of split) expect(m.rank).toBe(wholeRank.get(m.chunkId))
    // heron still scores: rows with it rank as in the whole query, ahead of rows without.
    expect(split.map((m) => m.chunkId)).toEqual(
      whole.filter((m) => kestrelOrOsprey(m.chunkId)).map((m) => m.chunkId),
    )
    // Within the budget nothing is split: 24 rows (12 + 8 + 4) keeps the heron-only rows.
    expect(await ranked(100, 24)).toEqual(whole)
  })

  it("runs the whole query when the selecting terms find fewer rows than asked", async () => {
    const whole = await ranked(12, Infinity)
    expect(whole.some((m) => !kestrelOrOsprey(m.chunkId))).toBe(true)
    expect(await ranked(12, 12)).toEqual(whole)
  })

  it("splits a filtered query the same way", async () => {
    const filter = { sql: "t.ordinal < ?", args: [30] }
    const whole = await ranked(100, Infinity, filter)
    expect(whole.some((m) => !kestrelOrOsprey(m.chunkId))).toBe(true)
    const split = await ranked(8, 12, filter)
    // Notes 0, 1, 10, 11, 13, 20, 21 and 26: all 8 under ordinal 30 with a kestrel or an osprey.
    expect(split).toHaveLength(8)
    expect(split).toEqual(whole.filter((m) => kestrelOrOsprey(m.chunkId)))
  })
})

describe("matchChunks expansion terms", () => {
  const expand = (query: string, expansion: string, expansionMaxDocShare?: number) =>
    withIndex(
      dataDir,
      matchChunks(query, {
        limit: 100,
        mode: "any",
        expansion,
        ...(expansionMaxDocShare === undefined ? {} : { expansionMaxDocShare }),
      }),
    )
  const ids = (hits: ReadonlyArray<{ readonly chunkId: number }>) =>
    hits.map((m) => m.chunkId).sort((a, b) => a - b)

  it("ORs selective expansion terms in and drops common ones at the default 5 % share", async () => {
    // kestrel: 4 of 40 (10 %) is over 5 %, so only the query's own term matches by default.
    expect(ids(await expand("osprey", "kestrel"))).toEqual(ids(await search("osprey")))
    // At 0.2, kestrel (10 %) is kept: osprey's 12 rows plus kestrel's rows.
    const widened = await expand("osprey", "kestrel", 0.2)
    expect(widened).toHaveLength(ids(await search("osprey kestrel")).length)
    expect(ids(widened)).toEqual(ids(await search("osprey kestrel")))
  })

  it("scores exactly like the same terms in the query, and never repeats a query term", async () => {
    const asExpansion = await expand("osprey", "kestrel osprey", 1)
    const asQuery = await search("osprey kestrel")
    expect(asExpansion.map((m) => [m.chunkId, m.rank])).toEqual(
      asQuery.map((m) => [m.chunkId, m.rank]),
    )
  })

  it("prunes query terms at maxDocShare and expansion terms at their own share", async () => {
    // ledger (75 %) goes from the query at 0.5; kestrel (10 %) stays as an expansion at 0.2.
    expect(ids(await expand("ledger osprey", "kestrel", 0.2))).toEqual(
      ids(await search("osprey kestrel")),
    )
  })

  it("is ignored in all-mode", async () => {
    const hits = await withIndex(
      dataDir,
      matchChunks("kestrel", { limit: 100, expansion: "osprey", expansionMaxDocShare: 1 }),
    )
    expect(ids(hits)).toEqual([1, 14, 27, 40])
  })
})

describe("matchChunks scoring terms", () => {
  const scored = (
    query: string,
    scoring: string,
    options: { scoringMaxDocShare?: number; maxScoredRows?: number; limit?: number } = {},
  ) =>
    withIndex(
      dataDir,
      matchChunks(query, { limit: 100, mode: "any", maxDocShare: 1, scoring, ...options }),
    )
  const whole = (query: string) =>
    withIndex(dataDir, matchChunks(query, { limit: 100, mode: "any", maxDocShare: 1 }))
  const ids = (hits: ReadonlyArray<{ readonly chunkId: number }>) =>
    hits.map((m) => m.chunkId).sort((a, b) => a - b)

  it("score the rows the query selects as one OR of every term, and select none", async () => {
    // kestrel: chunks 1, 14, 27, 40; osprey (8 rows, 20 %) is only in chunk 1 of them.
    const hits = await scored("kestrel", "osprey", { scoringMaxDocShare: 0.25 })
    expect(ids(hits)).toEqual([1, 14, 27, 40])
    const asOr = new Map((await whole("kestrel osprey")).map((m) => [m.chunkId, m.rank]))
    for (const m of hits) expect(m.rank).toBe(asOr.get(m.chunkId))
    expect(hits[0]!.chunkId).toBe(1) // the one with an osprey too
    expect(hits[0]!.rank).toBeLessThan(hits[1]!.rank)
  })

  it("are dropped above their share (10 % by default) and never repeat a query term", async () => {
    const kestrel = await whole("kestrel")
    expect(await scored("kestrel", "osprey")).toEqual(kestrel) // osprey: 20 % > 10 %
    expect(await scored("kestrel", "kestrel", { scoringMaxDocShare: 1 })).toEqual(kestrel)
  })

  it("still select nothing when a row budget splits the query", async () => {
    // kestrel (4 rows) selects within a budget of 4; osprey only scores; heron (30 %) is the
    // scoring term. Asking for 100 rows runs the fallback over kestrel or osprey rows.
    const asOr = new Map((await whole("kestrel osprey heron")).map((m) => [m.chunkId, m.rank]))
    const fallback = await scored("kestrel osprey", "heron", {
      scoringMaxDocShare: 1,
      maxScoredRows: 4,
    })
    expect(ids(fallback)).toEqual(ids(await whole("kestrel osprey")))
    for (const m of fallback) expect(m.rank).toBe(asOr.get(m.chunkId))
    // Asking for 3: the best 3 kestrel rows, scored by all three terms.
    const split = await scored("kestrel osprey", "heron", {
      scoringMaxDocShare: 1,
      maxScoredRows: 4,
      limit: 3,
    })
    const kestrel = [1, 14, 27, 40]
    const best = [...asOr].filter(([id]) => kestrel.includes(id)).sort((a, b) => a[1] - b[1])
    expect(split.map((m) => m.chunkId)).toEqual(best.slice(0, 3).map(([id]) => id))
    for (const m of split) expect(m.rank).toBe(asOr.get(m.chunkId))
  })

  it("are ignored in all-mode", async () => {
    const hits = await withIndex(
      dataDir,
      matchChunks("kestrel", { limit: 100, scoring: "osprey", scoringMaxDocShare: 1 }),
    )
    expect(hits).toEqual(await withIndex(dataDir, matchChunks("kestrel", { limit: 100 })))
  })
})

describe("rankChunks", () => {
  it("ranks exactly like matchChunks, without the text", async () => {
    const cases = [
      { query: "osprey kestrel", options: { limit: 100, mode: "any" as const } },
      { query: "retried kestrel", options: { limit: 3, mode: "any" as const, maxDocShare: 1 } },
      { query: "ledger", options: { limit: 100, expansion: "osprey" } },
      {
        query: "osprey",
        options: { limit: 100, mode: "any" as const, filter: { sql: "t.ordinal < ?", args: [20] } },
      },
    ]
    for (const { query, options } of cases) {
      const matched = await withIndex(dataDir, matchChunks(query, options))
      const ranked = await withIndex(dataDir, rankChunks(query, options))
      expect(matched.length).toBeGreaterThan(0)
      expect(ranked).toEqual(matched.map((m) => ({ chunkId: m.chunkId, rank: m.rank })))
    }
    expect(await withIndex(dataDir, rankChunks("  ", { mode: "any" }))).toEqual([])
  })
})

describe("document frequencies on a kept connection", () => {
  it("are counted again once another connection changes the index", async () => {
    const dir = join(data.path, "kept")
    // 40 chunks: "heron" in 4 (10 %), "kestrel" in 2.
    await insertChunkRows(dir, [
      {
        sessionId: "k",
        texts: Array.from(
          { length: 40 },
          (_, i) =>
            `${i < 4 ? "a heron stood" : "grey water"}, ${i >= 38 ? "a kestrel" : "wind"} ${i}`,
        ),
      },
    ])
    const pool = makeRecallDatabasePool()
    const kept = pool.layer({ dataDir: dir })
    const ranked = () =>
      Effect.runPromise(
        rankChunks("heron kestrel", { limit: 100, mode: "any" }).pipe(Effect.provide(kept)),
      )
    try {
      expect(await ranked()).toHaveLength(6)
      expect(await ranked()).toHaveLength(6) // counted once, then remembered
      // The indexer's connection adds 40 chunks that all say "heron": 44 of 80 is over a quarter.
      await appendChunkRows(
        dir,
        1,
        Array.from({ length: 40 }, () => "heron again"),
      )
      expect(await ranked()).toHaveLength(2) // heron is common now: only the kestrels
    } finally {
      await Effect.runPromise(pool.close())
    }
  })
})

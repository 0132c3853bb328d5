// searchRecall over a small hand-written history indexed into a real temp-file database, with
// the deterministic embedder filling the vector arm: fusion, each arm alone, filters (source,
// repository scope with worktrees and a prefix-sharing sibling, calendar days in time zones),
// the per-session cap, text de-duplication, reranking and graceful degradation.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  EmbedderError,
  lexicalQuery,
  normalizeVector,
  RecallDatabase,
  searchRecall,
} from "@baton/recall-index"
import type {
  Embedder,
  RecallSearchInput,
  RecallSearchProviders,
  Reranker,
} from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { defaultHistory, indexedHistory } from "./recall-fixtures.js"

const embedder = makeDeterministicEmbedder({ dim: 64 })
let history: Awaited<ReturnType<typeof indexedHistory>>

beforeAll(async () => {
  history = await indexedHistory(defaultHistory, embedder)
})
afterAll(() => history?.dispose())

const search = (input: RecallSearchInput, providers: RecallSearchProviders = { embedder }) =>
  history.run(searchRecall(input, providers))
const failure = (input: RecallSearchInput) =>
  history.run(Effect.flip(searchRecall(input, { embedder })))

const GARDEN = "aaaaaaaa-1111-4111-8111-000000000001"
const WORKTREE = "bbbbbbbb-2222-4222-8222-000000000002"
const PAYMENTS = "019c0000-cccc-7ccc-8ccc-000000000003"
const BACKEND = "019c0000-dddd-7ddd-8ddd-000000000004"
const MARATHON = "eeeeeeee-5555-4555-8555-000000000005"

describe("searchRecall", () => {
  it("finds the answer by words and by vector, with both arms' evidence on the hit", async () => {
    const result = await search({ query: "which database for the garden planner", timezone: "UTC" })
    expect(result.indexEmpty).toBe(false)
    expect(result.degraded).toBeNull()
    expect(result.arms.lexical).toMatchObject({ ran: true })
    expect(result.arms.vector).toMatchObject({
      ran: true,
      fingerprint: embedder.info.fingerprint,
      skipped: null,
    })
    const top = result.hits[0]!
    expect(top).toMatchObject({
      rank: 1,
      source: "claude",
      sessionId: GARDEN,
      role: "user",
      cwd: "/work/garden",
      project: "garden",
      timestamp: "2026-03-10T10:00:00.000Z",
      text: "Which database did we pick for the garden planner?",
      headless: false,
      subagent: false,
    })
    expect(top.whenHuman).toMatch(/^2026-03-10 10:00 UTC \(/)
    expect(top.snippet).toContain("database")
    expect(top.scores.lexicalRank).toBe(1)
    expect(top.scores.bm25).toBeLessThan(0)
    expect(top.scores.vectorRank).toBeGreaterThanOrEqual(1)
    expect(top.scores.similarity).toBeGreaterThan(0)
    expect(top.scores.fused).toBeCloseTo(1 / 61 + 1 / (60 + top.scores.vectorRank!), 10)
    // Every hit is addressable: its turn id comes back from the index.
    expect(result.hits.every((h) => h.turnId !== "" && h.sessionId !== "")).toBe(true)
  })

  it("runs each arm alone, so each can be measured", async () => {
    const lexical = await search({ query: "exponential backoff", arms: ["lexical"] })
    expect(lexical.arms.vector).toMatchObject({
      ran: false,
      skipped: "not requested",
      candidates: 0,
    })
    expect(lexical.hits[0]?.sessionId).toBe(PAYMENTS)
    expect(
      lexical.hits.every((h) => h.scores.vectorRank === null && h.scores.lexicalRank !== null),
    ).toBe(true)

    const vector = await search({ query: "exponential backoff", arms: ["vector"] })
    expect(vector.arms.lexical.ran).toBe(false)
    expect(vector.hits[0]?.sessionId).toBe(PAYMENTS)
    expect(
      vector.hits.every((h) => h.scores.lexicalRank === null && h.scores.vectorRank !== null),
    ).toBe(true)
    const ranks = vector.hits.map((h) => h.scores.vectorRank!)
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b))
  })

  it("is lexical-only without an embedder, and says why", async () => {
    const result = await search({ query: "migration files" }, {})
    expect(result.arms.vector).toMatchObject({ ran: false, skipped: "no embedder configured" })
    expect(
      result.hits
        .slice(0, 2)
        .map((h) => h.text)
        .sort(),
    ).toEqual(["Count the migration files.", "There are 12 migration files."])
    expect(result.hits.every((h) => h.scores.vectorRank === null)).toBe(true)
  })

  it("cautions when no indexed text holds a word of the query, and only then", async () => {
    const nonsense = await search({ query: "zeppelin quokka", timezone: "UTC" })
    expect(nonsense.arms.lexical).toEqual({ ran: true, candidates: 0 })
    expect(nonsense.hits.length).toBeGreaterThan(0)
    expect(nonsense.meaningOnly).toBe(
      "none of these hits holds a word of the query: they are only the nearest by meaning " +
        "(a paraphrase, or unrelated)",
    )
    const found = await search({ query: "which database for the garden planner" })
    expect(found.meaningOnly).toBeNull()
    // The vector arm alone asked for: no words arm, no caution.
    const vectorOnly = await search({ query: "zeppelin quokka", arms: ["vector"] })
    expect(vectorOnly.hits.length).toBeGreaterThan(0)
    expect(vectorOnly.meaningOnly).toBeNull()
    // No hits, nothing to caution about.
    const none = await search({ query: "zeppelin quokka" }, {})
    expect(none.hits).toEqual([])
    expect(none.meaningOnly).toBeNull()
  })

  it("skips the vector arm for an embedder whose vectors do not exist yet", async () => {
    const other = makeDeterministicEmbedder({ dim: 32, model: "other" })
    const result = await search({ query: "migration files" }, { embedder: other })
    expect(result.arms.vector.skipped).toContain(`made by ${embedder.info.fingerprint}`)
    // The index holds another space's vectors: the message names the embedder that made them
    // and that indexing here would embed everything again (search-notes.test.ts has the rest).
    expect(result.degraded).toBe(
      `lexical only: the index's vectors were made by ${embedder.info.fingerprint}: configure ` +
        "that embedder here to search them by meaning, or run 'baton recall index' to embed " +
        "with deterministic:other:32 instead (re-embeds the whole history)",
    )
    expect(result.hits.length).toBeGreaterThan(0)
  })

  it("masks secrets in the query before the embedder and reranker see it", async () => {
    const seen: Array<string> = []
    const spying: Embedder = {
      ...embedder,
      embedQuery: (text) => {
        seen.push(text)
        return embedder.embedQuery(text)
      },
    }
    const reranker: Reranker = {
      provider: "test",
      model: "spy",
      rerank: (query, documents) => {
        seen.push(query)
        return Effect.succeed(documents.map((_, index) => ({ index, score: 0 })))
      },
    }
    const secret = "postgres://admin:S3cr3tPassw0rd@db.internal/prod"
    await search(
      { query: `retry policy ${secret} password=hunter2hunter2` },
      { embedder: spying, reranker },
    )
    expect(seen).toHaveLength(2)
    for (const text of seen) {
      expect(text).toBe(
        "retry policy postgres://admin:[redacted url-password]@db.internal/prod password=[redacted credential-assignment]",
      )
    }
  })

  it("skips the vector arm for a query vector with no direction", async () => {
    const blank: Embedder = {
      ...embedder,
      embedQuery: () => Effect.succeed(new Float32Array(embedder.info.dim)),
    }
    const result = await search({ query: "frost dates postcode" }, { embedder: blank })
    expect(result.arms.vector).toMatchObject({
      ran: false,
      skipped: "the query has no vector (no word the embedder knows)",
    })
    expect(result.hits[0]?.text).toContain("Frost dates come from a lookup table")
  })

  it("goes on without an embedder or reranker that does not answer in time", async () => {
    // Services (not `inProcess`): a hung one is left behind after the deadline.
    const hung: Embedder = {
      ...embedder,
      info: { ...embedder.info, inProcess: false },
      embedQuery: () => Effect.never,
    }
    const slowReranker: Reranker = { provider: "test", model: "hung", rerank: () => Effect.never }
    const started = Date.now()
    const result = await search(
      { query: "frost dates postcode", providerTimeoutMs: 100 },
      { embedder: hung, reranker: slowReranker },
    )
    expect(Date.now() - started).toBeLessThan(5000)
    expect(result.degraded).toBe(
      `lexical only: the embedder failed: ${embedder.info.provider} did not embed the query within 100 ms; ` +
        "not reranked: test did not rerank within 100 ms",
    )
    expect(result.hits[0]?.text).toContain("Frost dates come from a lookup table")
    // A model in this process is not timed: its first call may load the model for longer.
    const loading: Embedder = {
      ...embedder,
      info: { ...embedder.info, inProcess: true },
      embedQuery: (text) => Effect.delay(embedder.embedQuery(text), "300 millis"),
    }
    const patient = await search(
      { query: "frost dates postcode", providerTimeoutMs: 100 },
      { embedder: loading },
    )
    expect(patient.arms.vector.ran).toBe(true)
    expect(patient.degraded).toBeNull()
  })

  it("degrades to lexical when the embedder fails", async () => {
    const broken: Embedder = {
      ...embedder,
      embedQuery: () =>
        Effect.fail(
          new EmbedderError({
            provider: "deterministic",
            failure: "unavailable",
            retryable: true,
            reason: "model not loaded",
          }),
        ),
    }
    const result = await search({ query: "frost dates postcode" }, { embedder: broken })
    expect(result.degraded).toBe("lexical only: the embedder failed: model not loaded")
    expect(result.arms.vector.ran).toBe(false)
    expect(result.hits[0]?.text).toContain("Frost dates come from a lookup table")
  })

  it("filters by source inside each arm", async () => {
    const codex = await search({ query: "retry", source: "codex", k: 20 })
    expect(codex.hits.length).toBeGreaterThan(0)
    expect(codex.hits.every((h) => h.source === "codex")).toBe(true)
    expect(codex.applied.source).toBe("codex")
    const claude = await search({ query: "frost", source: "claude", k: 20 })
    expect(claude.hits.every((h) => h.source === "claude")).toBe(true)
  })

  it("scopes to a repository: worktrees collapse in, a sibling with the same prefix stays out", async () => {
    const garden = await search({
      query: "frost watering calendar",
      scopeCwd: "/work/garden/.claude/worktrees/feature-x/src",
      k: 30,
      perSession: 30,
    })
    expect(garden.applied.scopeRoot).toBe("/work/garden")
    expect(new Set(garden.hits.map((h) => h.sessionId))).toEqual(
      new Set([GARDEN, WORKTREE, MARATHON]),
    )

    const repo = await search({
      query: "frost watering calendar",
      scopeCwd: "/work/garden",
      k: 30,
      perSession: 30,
    })
    expect(repo.applied.scopeRoot).toBe("/work/garden")
    expect(new Set(repo.hits.map((h) => h.sessionId))).toEqual(
      new Set([GARDEN, WORKTREE, MARATHON]),
    )

    const payments = await search({ query: "retry", scopeCwd: "/work/payments/", k: 30 })
    expect(payments.applied.scopeRoot).toBe("/work/payments")
    expect(payments.hits.length).toBeGreaterThan(0)
    expect(payments.hits.every((h) => h.sessionId === PAYMENTS)).toBe(true)
    const backend = await search({ query: "retry", scopeCwd: "/work/payments-backend", k: 30 })
    expect(new Set(backend.hits.map((h) => h.sessionId))).toEqual(new Set([BACKEND]))
  })

  it("applies filters to the vector arm before or after the KNN with the same result on a small index", async () => {
    const input = {
      query: "frost watering calendar",
      scopeCwd: "/work/garden",
      arms: ["vector"] as const,
      k: 30,
      perSession: 30,
    }
    const pre = await search({ ...input, vectorFilter: "pre" })
    const post = await search({ ...input, vectorFilter: "post" })
    const auto = await search(input)
    expect(pre.arms.vector.filterMode).toBe("prefilter")
    expect(post.arms.vector.filterMode).toBe("postfilter")
    expect(auto.arms.vector.filterMode).toBe("prefilter")
    expect(post.hits.map((h) => h.chunkId)).toEqual(pre.hits.map((h) => h.chunkId))
    expect(pre.hits.every((h) => [GARDEN, WORKTREE, MARATHON].includes(h.sessionId))).toBe(true)
    const unscoped = await search({ query: "frost", arms: ["vector"] })
    expect(unscoped.arms.vector.filterMode).toBe("unfiltered")
  })

  it("reads dates as calendar days in the given time zone", async () => {
    // The worktree session is at 2026-03-11 23:30 UTC: 03-12 in Kolkata, 03-11 in New York.
    const kolkata = await search({
      query: "watering schedule",
      onDate: "2026-03-12",
      timezone: "Asia/Kolkata",
      k: 30,
    })
    expect(kolkata.hits.some((h) => h.sessionId === WORKTREE)).toBe(true)
    expect(kolkata.applied).toMatchObject({
      startDate: "2026-03-12",
      endDate: "2026-03-12",
      timezone: "Asia/Kolkata",
    })
    const newYork = await search({
      query: "watering schedule",
      onDate: "2026-03-12",
      timezone: "America/New_York",
      k: 30,
    })
    expect(newYork.hits.some((h) => h.sessionId === WORKTREE)).toBe(false)
    const ny11 = await search({
      query: "watering schedule",
      onDate: "2026-03-11",
      timezone: "America/New_York",
    })
    expect(ny11.hits[0]?.sessionId).toBe(WORKTREE)
    expect(ny11.hits[0]?.whenHuman).toMatch(/^2026-03-11 19:30 America\/New_York/)
    const range = await search({
      query: "frost",
      startDate: "2026-03-10",
      endDate: "2026-03-11",
      timezone: "UTC",
      k: 30,
      perSession: 30,
    })
    expect(range.hits.length).toBeGreaterThan(0)
    expect(
      range.hits.every((h) => h.timestamp! >= "2026-03-10" && h.timestamp! < "2026-03-12"),
    ).toBe(true)
    expect(range.hits.some((h) => h.sessionId === MARATHON)).toBe(false)
  })

  it("caps hits per session so a marathon session cannot crowd the list", async () => {
    // Other sessions hold the word too: the marathon's word hits are spread among theirs.
    const capped = await search({ query: "frost", k: 10 })
    const sessions = capped.hits.map((h) => h.sessionId)
    const others = capped.hits.filter((h) => h.sessionId !== MARATHON && /frost/i.test(h.text))
    expect(others.length).toBeGreaterThanOrEqual(3)
    // Three of the marathon's, then every other session's word hit, then the marathon's rest
    // (word hits before hits by meaning alone).
    const fourth = sessions.findIndex(
      (id, at) =>
        id === MARATHON && sessions.slice(0, at).filter((s) => s === MARATHON).length === 3,
    )
    expect(fourth).toBeGreaterThan(0)
    expect(sessions.slice(0, fourth).filter((id) => id === MARATHON)).toHaveLength(3)
    expect(others.every((h) => h.rank <= fourth)).toBe(true)
    expect(capped.hits.every((h) => /frost/i.test(h.text))).toBe(true)
    const wide = await search({ query: "frost seedling", k: 10, perSession: 10 })
    expect(wide.hits.filter((h) => h.sessionId === MARATHON)).toHaveLength(10)
    expect(wide.hits.map((h) => h.rank)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1))
  })

  it("fills the list from a capped session when the other sessions run out", async () => {
    // That day holds only the marathon session: the cap spreads hits, it does not drop them.
    const oneDay = { query: "frost seedling", onDate: "2026-03-09", timezone: "UTC" }
    const filled = await search({ ...oneDay, k: 10 })
    expect(filled.hits).toHaveLength(10)
    expect(new Set(filled.hits.map((h) => h.sessionId))).toEqual(new Set([MARATHON]))
    expect(filled.hits.map((h) => h.rank)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1))
    // In the order an uncapped search gives them.
    const uncapped = await search({ ...oneDay, k: 10, perSession: 100 })
    expect(filled.hits.map((h) => h.turnId)).toEqual(uncapped.hits.map((h) => h.turnId))
  })

  it("holds a session's word hits back for other sessions' word hits, not for hits by meaning alone", async () => {
    // One session holds every turn with the query's word; the others only what the vector arm
    // brings back for any query. Before, the list showed three of the matches, then seven turns
    // without the word, and the other nine matches after every chunk of the index.
    const matches = Array.from({ length: 12 }, (_, i) => ({
      user: `Step ${i} of the zorblax migration: check the zorblax table.`,
      assistant: `Zorblax step ${i} done.`,
    }))
    const others = ["11111111", "22222222", "33333333"].map((prefix, n) => ({
      source: "claude" as const,
      id: `${prefix}-aaaa-4aaa-8aaa-00000000000${n}`,
      cwd: `/home/me/other-${n}`,
      at: `2026-03-0${n + 1}T10:00:00.000Z`,
      exchanges: gardenExchanges(6),
    }))
    const history = await indexedHistory(
      [
        {
          source: "claude",
          id: "99999999-aaaa-4aaa-8aaa-000000000009",
          cwd: "/home/me/db",
          at: "2026-03-05T10:00:00.000Z",
          exchanges: matches,
        },
        ...others,
      ],
      embedder,
    )
    try {
      const result = await history.run(searchRecall({ query: "zorblax", k: 10 }, { embedder }))
      expect(result.hits).toHaveLength(10)
      expect(result.hits.filter((h) => /zorblax/i.test(h.text))).toHaveLength(10)
      // Among other sessions' word hits the cap still spreads: the marathon test above.
    } finally {
      history.dispose()
    }
  })

  it("reranks the fused head when a reranker is given, and survives a failing one", async () => {
    const preferShort: Reranker = {
      provider: "test",
      model: "shortest-first",
      rerank: (_query, documents) =>
        Effect.succeed(documents.map((d, index) => ({ index, score: 1 / d.length }))),
    }
    const reranked = await search(
      { query: "frost", k: 5, perSession: 10, weights: { rerank: 1000 } },
      { embedder, reranker: preferShort },
    )
    expect(reranked.arms.rerank).toEqual({ ran: true, model: "shortest-first" })
    const lengths = reranked.hits.map((h) => h.text.length)
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b))
    expect(reranked.hits.every((h) => h.scores.rerank !== null)).toBe(true)

    const failing: Reranker = {
      provider: "test",
      model: "down",
      rerank: () =>
        Effect.fail(
          new EmbedderError({
            provider: "test",
            failure: "server_error",
            retryable: true,
            reason: "HTTP 503",
          }),
        ),
    }
    const degraded = await search({ query: "frost", k: 5 }, { embedder, reranker: failing })
    expect(degraded.degraded).toBe("not reranked: HTTP 503")
    expect(degraded.arms.rerank.ran).toBe(false)
    expect(degraded.hits).toHaveLength(5)
  })

  it("fuses the reranker's order as a third weighted list, and the lexical arm takes the expansion", async () => {
    const byLength: Reranker = {
      provider: "test",
      model: "shortest-first",
      rerank: (_query, documents) =>
        Effect.succeed(documents.map((d, index) => ({ index, score: 1 / d.length }))),
    }
    const result = await search(
      { query: "frost seedling", k: 5, perSession: 10 },
      {
        embedder,
        reranker: byLength,
        fusion: { lexical: 2, vector: 1, rerank: 3, rerankDepth: 30 },
      },
    )
    for (const h of result.hits) {
      const part = (weight: number, rank: number | null) =>
        rank === null ? 0 : weight / (60 + rank)
      expect(h.scores.fused).toBeCloseTo(
        part(2, h.scores.lexicalRank) + part(1, h.scores.vectorRank) + part(3, h.scores.rerankRank),
        12,
      )
      expect(h.scores.rerankRank).not.toBeNull()
    }
    const expanded = await search(
      { query: "zzzz", arms: ["lexical"] },
      { expandQuery: (q) => (q === "zzzz" ? "postcode" : q) },
    )
    expect(expanded.hits[0]?.text).toContain("keyed by postcode")
  })

  it("bounds text and snippets", async () => {
    const result = await search({
      query: "exponential backoff jitter",
      textChars: 40,
      snippetChars: 40,
    })
    const hit = result.hits.find((h) => h.text.startsWith("Use exponential"))!
    expect(hit.textTruncated).toBe(true)
    expect(hit.text.length).toBeLessThanOrEqual(41)
    expect(hit.snippet.replace(/^…|…$/g, "").length).toBeLessThanOrEqual(40)
  })

  it("rejects bad input as tagged errors", async () => {
    expect(await failure({ query: "   " })).toMatchObject({
      _tag: "RecallQueryError",
      field: "query",
    })
    expect(await failure({ query: "x", timezone: "Mars/Base" })).toMatchObject({
      _tag: "RecallQueryError",
      field: "timezone",
    })
    expect(await failure({ query: "x", onDate: "yesterday-ish" })).toMatchObject({ field: "date" })
    expect(await failure({ query: "x", source: "cursor" as "codex" })).toMatchObject({
      field: "source",
    })
  })

  it("treats FTS syntax in the query as words", async () => {
    const result = await search({ query: 'handlers" OR NEAR( * webhook:' })
    expect(result.hits.some((h) => h.sessionId === PAYMENTS)).toBe(true)
  })
})

describe("searchRecall on an empty index", () => {
  it("reports indexEmpty instead of failing", async () => {
    const empty = await indexedHistory([], embedder)
    try {
      const result = await empty.run(searchRecall({ query: "anything" }, { embedder }))
      expect(result).toMatchObject({ hits: [], indexEmpty: true })
    } finally {
      empty.dispose()
    }
  })
})

describe("searchRecall de-duplication", () => {
  it("keeps one hit per identical text (fork and resume copies)", async () => {
    const copy = (id: string, at: string) => ({
      source: "claude" as const,
      id,
      cwd: "/work/fork",
      at,
      exchanges: [
        {
          user: "Where do the invoices go?",
          assistant: "Invoices are archived under ledger/2026 as PDF.",
        },
      ],
    })
    const forked = await indexedHistory(
      [
        copy("11111111-aaaa-4aaa-8aaa-000000000001", "2026-03-01T10:00:00.000Z"),
        copy("22222222-bbbb-4bbb-8bbb-000000000002", "2026-03-02T10:00:00.000Z"),
      ],
      embedder,
    )
    try {
      const result = await forked.run(
        searchRecall({ query: "invoices archived ledger", k: 10 }, { embedder }),
      )
      const texts = result.hits.map((h) => h.text)
      expect(texts.filter((t) => t.startsWith("Invoices are archived"))).toHaveLength(1)
      expect(new Set(texts).size).toBe(texts.length)
      // Each hit counts the other session holding its text, instead of listing it.
      expect(result.hits.map((h) => h.sameTextSessions)).toEqual(result.hits.map(() => 1))
    } finally {
      forked.dispose()
    }
  })
})

describe("searchRecall per turn", () => {
  it("returns one hit per turn: a long reply's other windows do not take the other slots", async () => {
    // One reply of many paragraphs that all match, next to short turns that match less.
    const paragraphs = Array.from(
      { length: 12 },
      (_, i) =>
        `Paragraph ${i}: the glacier sensor calibration drifted again on node ${i}. ` +
        `The readings before the drift were steady for weeks, then the offset grew every night.`,
    )
    const history = await indexedHistory(
      [
        {
          source: "claude",
          id: "33333333-cccc-4ccc-8ccc-000000000003",
          cwd: "/work/glacier",
          at: "2026-03-03T10:00:00.000Z",
          exchanges: [
            { user: "Why is the glacier sensor off?", assistant: paragraphs.join("\n\n") },
            { user: "Log the calibration of the sensor once a day.", assistant: "Done." },
            { user: "Which glacier node fails most?", assistant: "Node 4, by far." },
          ],
        },
      ],
      embedder,
    )
    try {
      const result = await history.run(
        searchRecall({ query: "glacier sensor calibration", k: 10, perSession: 10 }, { embedder }),
      )
      const turns = result.hits.map((h) => h.turnId)
      expect(new Set(turns).size).toBe(turns.length)
      // The reply really is several chunks, and the other turns still make the list.
      const replyChunks = await history.run(
        Effect.map(
          RecallDatabase,
          (db) =>
            db.sqlite
              .prepare("select count(*) as n from chunks where text like '%calibration drifted%'")
              .get() as { n: number },
        ),
      )
      expect(replyChunks.n).toBeGreaterThan(3)
      expect(result.hits.length).toBeGreaterThanOrEqual(3)
    } finally {
      history.dispose()
    }
  })
})

/** `n` exchanges of filler text about garden beds, numbered from 0. */
const gardenExchanges = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    user: `Plan the garden bed number ${i} for spring.`,
    assistant: `Bed ${i}: compost first, then seedlings in rows.`,
  }))

describe("searchRecall personal pronouns", () => {
  it("score with the lexical arm's words: 'my beagle' ranks the turn where the user wrote 'my'", async () => {
    const filler = gardenExchanges(12)
    const history = await indexedHistory(
      [
        {
          source: "claude",
          id: "44444444-dddd-4ddd-8ddd-000000000004",
          cwd: "/home/me",
          at: "2026-03-04T10:00:00.000Z",
          exchanges: [
            ...filler,
            {
              user: "My beagle Biscuit hates the rain, by the way.",
              assistant: "A beagle hates rain; Biscuit the beagle hates the rain like any beagle.",
            },
          ],
        },
      ],
      embedder,
    )
    try {
      const lexical = (query: string) =>
        history.run(
          searchRecall(
            { query, k: 2, arms: ["lexical"], perSession: 10 },
            { expandQuery: lexicalQuery },
          ),
        )
      const mine = await lexical("what does my beagle hate")
      expect(mine.hits.map((h) => h.role)).toEqual(["user", "assistant"])
      // Without the pronoun the assistant's reply, with more of the words, comes first.
      const plain = await lexical("what does the beagle hate")
      expect(plain.hits.map((h) => h.role)).toEqual(["assistant", "user"])
    } finally {
      history.dispose()
    }
  })
})

describe("searchRecall conversation context", () => {
  it("lifts the answer turn that follows a matching question (FusionPlan.context), within the filters", async () => {
    const filler = gardenExchanges(8)
    const history = await indexedHistory(
      [
        {
          source: "claude",
          id: "55555555-eeee-4eee-8eee-000000000005",
          cwd: "/home/me",
          // Five seconds a line: the question is the last line of March 4th, its answer the first of
          // March 5th.
          at: "2026-03-04T23:59:15.000Z",
          exchanges: [
            ...filler.slice(0, 4),
            {
              user: "Did you ever adopt that beagle from the shelter?",
              assistant: "Yes! We picked her up on Saturday, she is two years old.",
            },
            ...filler.slice(4),
          ],
        },
      ],
      embedder,
    )
    try {
      const lexical = (query: string, weights: { context: number }, onDate?: string) =>
        history.run(
          searchRecall(
            {
              query,
              k: 3,
              arms: ["lexical"],
              perSession: 10,
              weights,
              timezone: "UTC",
              ...(onDate === undefined ? {} : { onDate }),
            },
            { expandQuery: lexicalQuery },
          ),
        )
      const without = await lexical("adopt beagle shelter", { context: 0 })
      expect(without.hits.map((h) => h.text)).toEqual([
        "Did you ever adopt that beagle from the shelter?",
      ])
      const withContext = await lexical("adopt beagle shelter", { context: 0.3 })
      expect(withContext.hits.map((h) => h.text)).toEqual([
        "Did you ever adopt that beagle from the shelter?",
        "Yes! We picked her up on Saturday, she is two years old.",
        // The turn before the question gains half as much.
        "Bed 3: compost first, then seedlings in rows.",
      ])
      // Neighbours obey the filters: the answer, on the next day, stays out.
      const sameDay = await lexical("adopt beagle shelter", { context: 0.3 }, "2026-03-04")
      expect(sameDay.hits.map((h) => h.text)).toEqual([
        "Did you ever adopt that beagle from the shelter?",
        "Bed 3: compost first, then seedlings in rows.",
      ])
    } finally {
      history.dispose()
    }
  })
})

describe("searchRecall conversation context after a question", () => {
  it("lifts the answer to a short question above a weaker hit elsewhere, not the reply to a statement", async () => {
    const sessionWith = (id: string, opener: string) => ({
      source: "claude" as const,
      id,
      cwd: "/home/me",
      at: "2026-03-04T10:00:00.000Z",
      exchanges: [
        { user: opener, assistant: "Yes! We picked her up on Saturday, she is two years old." },
      ],
    })
    const other = {
      source: "claude" as const,
      id: "77777777-aaaa-4aaa-8aaa-000000000007",
      cwd: "/home/me",
      at: "2026-03-05T10:00:00.000Z",
      exchanges: [{ user: "The shelter near the station was closed today.", assistant: "Odd." }],
    }
    // Enough other text that "shelter" stays a selective term (DEFAULT_MAX_DOC_SHARE).
    const filler = {
      source: "claude" as const,
      id: "88888888-bbbb-4bbb-8bbb-000000000008",
      cwd: "/home/me",
      at: "2026-03-06T10:00:00.000Z",
      exchanges: gardenExchanges(6),
    }
    const order = async (opener: string) => {
      const history = await indexedHistory(
        [sessionWith("66666666-ffff-4fff-8fff-000000000006", opener), other, filler],
        embedder,
      )
      try {
        const result = await history.run(
          searchRecall(
            {
              query: "adopt beagle shelter",
              k: 3,
              arms: ["lexical"],
              perSession: 10,
              // rrfK 1: rank 1 scores 1/2, rank 2 1/3; the answer gains 0.3 of 1/2, three times
              // that after a question.
              weights: { context: 0.3, rrfK: 1 },
            },
            { expandQuery: lexicalQuery },
          ),
        )
        return result.hits.map((h) => h.text)
      } finally {
        history.dispose()
      }
    }
    expect(await order("Did you ever adopt that beagle from the shelter?")).toEqual([
      "Did you ever adopt that beagle from the shelter?",
      "Yes! We picked her up on Saturday, she is two years old.",
      "The shelter near the station was closed today.",
    ])
    expect(await order("I will adopt that beagle from the shelter.")).toEqual([
      "I will adopt that beagle from the shelter.",
      "The shelter near the station was closed today.",
      "Yes! We picked her up on Saturday, she is two years old.",
    ])
  })
})

describe("searchRecall conversation context and boilerplate", () => {
  it("gives nothing to a reply repeated across the history ('Noted.'); a question's answer is the next line past it", async () => {
    const noted = (id: string, at: string, lines: ReadonlyArray<string>) => ({
      source: "claude" as const,
      id,
      cwd: "/home/me",
      at,
      exchanges: lines.map((user) => ({ user, assistant: "Noted." })),
    })
    // Both speakers of a conversation as user prompts, each acknowledged the same way.
    const history = await indexedHistory(
      [
        noted("99999999-aaaa-4aaa-8aaa-000000000009", "2026-03-04T10:00:00.000Z", [
          "Did you ever adopt that beagle from the shelter?",
          "Yes! We picked her up on Saturday, she is two years old.",
          "The new shelter downtown opens in May.",
        ]),
        noted(
          "99999999-bbbb-4bbb-8bbb-000000000009",
          "2026-03-05T10:00:00.000Z",
          gardenExchanges(6).map((e) => e.user),
        ),
      ],
      embedder,
    )
    try {
      const hits = async (context: number) =>
        (
          await history.run(
            searchRecall(
              {
                query: "adopt beagle shelter",
                k: 3,
                arms: ["lexical"],
                perSession: 10,
                weights: { context, rrfK: 1 },
              },
              { expandQuery: lexicalQuery },
            ),
          )
        ).hits.map((h) => h.text)
      expect(await hits(0)).toEqual([
        "Did you ever adopt that beagle from the shelter?",
        "The new shelter downtown opens in May.",
      ])
      // "Noted." right after the question gains nothing; the line after it is the answer.
      expect(await hits(0.3)).toEqual([
        "Did you ever adopt that beagle from the shelter?",
        "Yes! We picked her up on Saturday, she is two years old.",
        "The new shelter downtown opens in May.",
      ])
    } finally {
      history.dispose()
    }
  })
})

describe("searchRecall conversation context from a question that is not a hit", () => {
  // Directions of a 4-dimensional space: the palette, databases, SQLite, everything else.
  const towards = (...parts: ReadonlyArray<number>) => normalizeVector(Float32Array.from(parts))
  const vectorOf = (text: string): Float32Array =>
    text.includes("Moss and Clay")
      ? towards(1, 0, 0, 0)
      : text.startsWith("Which database")
        ? towards(0.4, 0.92, 0, 0)
        : text.startsWith("We picked SQLite")
          ? towards(0.2, 0, 0.98, 0)
          : text.startsWith("storage engine")
            ? towards(0, 1, 0, 0)
            : text.startsWith("Plan the garden")
              ? towards(0.05, 0, 0, 1)
              : towards(0, 0, 0, 1)
  const scripted: Embedder = {
    info: {
      provider: "deterministic",
      model: "scripted-directions",
      dim: 4,
      fingerprint: "deterministic:scripted-directions:4",
      paid: false,
      maxBatch: 64,
      remote: false,
      inProcess: true,
    },
    embedDocuments: (texts) => Effect.sync(() => texts.map(vectorOf)),
    embedQuery: (text) => Effect.sync(() => vectorOf(text)),
  }

  it("passes no answer gain from a short question far from the query; a near one still does", async () => {
    const history = await indexedHistory(
      [
        {
          source: "claude",
          id: "12121212-aaaa-4aaa-8aaa-000000000012",
          cwd: "/home/me/garden",
          at: "2026-03-04T10:00:00.000Z",
          exchanges: [
            {
              user: "Name the colour palette we chose.",
              assistant: "The palette is called Moss and Clay.",
            },
          ],
        },
        {
          source: "claude",
          id: "13131313-bbbb-4bbb-8bbb-000000000013",
          cwd: "/home/me/garden",
          at: "2026-03-05T10:00:00.000Z",
          exchanges: [{ user: "Which database did we pick?", assistant: "We picked SQLite." }],
        },
        {
          source: "claude",
          id: "14141414-cccc-4ccc-8ccc-000000000014",
          cwd: "/home/me/garden",
          at: "2026-03-06T10:00:00.000Z",
          exchanges: gardenExchanges(6),
        },
      ],
      scripted,
    )
    try {
      const top = async (query: string) =>
        (
          await history.run(
            searchRecall(
              {
                query,
                k: 3,
                perSession: 10,
                weights: { lexical: 1, vector: 2, rerank: 0, rrfK: 10, context: 0.3 },
              },
              { embedder: scripted, expandQuery: lexicalQuery },
            ),
          )
        ).hits[0]?.text
      // Every turn is a vector candidate here: "Which database did we pick?" ranks second by
      // meaning (similarity 0.4 of the nearest 1.0) but is no hit, so its answer gains only
      // the plain share and stays below the one turn holding the query's words.
      expect(await top("Moss and Clay")).toBe("The palette is called Moss and Clay.")
      // A question near the query by meaning alone (no shared word) still lifts its answer.
      expect(await top("storage engine")).toBe("We picked SQLite.")
    } finally {
      history.dispose()
    }
  })
})

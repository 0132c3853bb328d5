/**
 * Safe FTS5 queries over chunk text. User text never reaches `MATCH` raw: each whitespace-split
 * term becomes a quoted FTS5 string (inner `"` doubled), so quotes, punctuation, `AND` / `OR` /
 * `NEAR`, `*` and column filters are plain words. This is the lexical arm of `searchRecall`;
 * filters (source, scope, days) run inside the query, so a small scope is never starved.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { RecallStorageError } from "./errors.js"
import type { Database } from "better-sqlite3"
import { ftsQueryTerms } from "./fts-text.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { FTS_TOKENIZER } from "./recall-schema.js"
import { decodeRows } from "./stored-rows.js"
import type { SqlClause } from "./recall-filters.js"

/** `all`: every term must occur (FTS5 implicit AND); `any`: at least one (OR). */
export type FtsTermMode = "all" | "any"

/**
 * The searchable terms of `text`: whitespace-split, control characters dropped, CJK runs split
 * into their bigrams and identifiers followed by their words, as the index holds them
 * (`fts-text.ts`), deduplicated.
 */
const termsOf = (text: string): string[] => [
  ...new Set(
    text
      .normalize("NFC")
      .split(/\s+/u)
      // Control characters are never part of a token; drop them so the quoted string stays valid.
      .map((term) => term.replace(/\p{Cc}/gu, ""))
      .flatMap(ftsQueryTerms)
      .filter((term) => /[\p{L}\p{N}]/u.test(term)),
  ),
]

const quoted = (terms: ReadonlyArray<string>, mode: FtsTermMode): string | undefined =>
  terms.length === 0
    ? undefined
    : terms.map((term) => `"${term.replace(/"/g, '""')}"`).join(mode === "all" ? " " : " OR ")

/** An FTS5 MATCH expression for `text`, or `undefined` when it has no searchable term. */
export const ftsMatchExpression = (text: string, mode: FtsTermMode = "all"): string | undefined =>
  quoted(termsOf(text), mode)

/**
 * Share of chunks above which an OR-ed term is dropped by default ({@link MatchOptions}
 * `maxDocShare`). bm25 scores every row a term is in, and a common term's IDF is small: FTS5
 * clamps it to 1e-6 from half the rows (dropping such a term leaves every other row's score
 * unchanged), and from a quarter it is at most ln 3 ≈ 1.1, against 5–9 for a selective term.
 * Measured at 100 k chunks (README "Benchmarks"): 0.25 instead of 0.5 cut the lexical arm's p95
 * from 120 to 52 ms and kept 97 % of its top-10s; the retrieval eval scored the same.
 */
export const DEFAULT_MAX_DOC_SHARE = 0.25

/**
 * Share of chunks up to which FTS5's bm25 still gives a term weight (from half the rows its IDF
 * is clamped to 1e-6). A query term dropped at {@link DEFAULT_MAX_DOC_SHARE} selects rows again,
 * when no other term finds any, only up to this share.
 */
const INFORMATIVE_DOC_SHARE = 0.5

/**
 * Share of chunks above which an expansion term ({@link MatchOptions} `expansion`) is dropped
 * by default. Expansion words are guesses; a common one adds little to bm25 (its IDF is low) but
 * costs scoring every row it is in (measured at 100 k chunks: half the lexical arm's time).
 */
export const DEFAULT_EXPANSION_MAX_DOC_SHARE = 0.05

/**
 * Share of chunks above which a scoring-only term ({@link MatchOptions} `scoring`) is dropped by
 * default. Such a term never selects a row, but each row it is in among the selected ones costs
 * scoring: measured at 1 M chunks, a term in 5 % of them cost nothing at p50, one in 9–18 %
 * 20–30 ms. On the retrieval eval's chat corpus 0.1 kept all but a point of what 0.25 gained.
 */
export const DEFAULT_SCORING_MAX_DOC_SHARE = 0.1

/**
 * Rows an OR query scores by default before it is split ({@link MatchOptions} `maxScoredRows`),
 * counted as the sum of its terms' document frequencies. bm25 costs FTS5 about 1.5 µs a row, and
 * a few moderately common words can match a tenth of a large index. Past the budget, the rarest
 * terms that fit it (at least one) select the rows and every term scores them, so each selected
 * row gets exactly its full-query score; only rows holding nothing but the commoner terms are
 * left out, unless the rarer terms find fewer rows than asked for (then the full query runs).
 * Measured at 1 M chunks (README "Benchmarks"): 60 queries kept all 600 of their top-10 chunks,
 * and the lexical arm's p50 went from 136 to 85 ms.
 */
export const DEFAULT_MAX_SCORED_ROWS = 60_000

/**
 * Document frequencies already counted on a connection, valid while the FTS5 index's structure
 * record (`chunks_fts_data` row 10: its segments and write counter, rewritten by every change to
 * the index) is byte-for-byte the one they were counted under. `fts5vocab` counts a term by
 * walking its whole doclist, so the common words most queries share ("how", "did", "we") cost the
 * most; a kept connection (the MCP server's pool) counts each once per index state.
 */
interface DfCache {
  readonly structure: Buffer
  readonly df: Map<string, number>
}
const dfCaches = new WeakMap<Database, DfCache>()
/** Terms remembered per connection; past it the cache starts over. */
const DF_CACHE_TERMS = 20_000

const ftsStructure = (sqlite: Database): Buffer =>
  (sqlite.prepare("select block from chunks_fts_data where id = 10").pluck().get() as
    Buffer | undefined) ?? Buffer.alloc(0)

/** The rarest token's document count of each of `terms` (a multi-token term is a phrase). */
const documentFrequencies = (sqlite: Database, terms: ReadonlyArray<string>): Array<number> => {
  const structure = ftsStructure(sqlite)
  let cache = dfCaches.get(sqlite)
  if (cache === undefined || !cache.structure.equals(structure) || cache.df.size > DF_CACHE_TERMS) {
    cache = { structure, df: new Map() }
    dfCaches.set(sqlite, cache)
  }
  const { df } = cache
  const missing = [...new Set(terms.filter((term) => !df.has(term)))]
  if (missing.length > 0) {
    sqlite.exec(
      `create virtual table if not exists temp.baton_query_terms using fts5(t, tokenize='${FTS_TOKENIZER}');
       create virtual table if not exists temp.baton_query_tokens using fts5vocab(temp, baton_query_terms, 'instance');
       create virtual table if not exists temp.baton_chunk_terms using fts5vocab(main, chunks_fts, 'row');
       delete from temp.baton_query_terms;`,
    )
    const put = sqlite.prepare("insert into temp.baton_query_terms (rowid, t) values (?, ?)")
    missing.forEach((term, i) => put.run(i + 1, term))
    const rows = sqlite
      .prepare(
        `select q.doc as at, coalesce(c.doc, 0) as df from temp.baton_query_tokens q
         left join temp.baton_chunk_terms c on c.term = q.term`,
      )
      .all() as Array<{ at: number; df: number }>
    sqlite.exec("delete from temp.baton_query_terms")
    const rarest = new Map<number, number>()
    for (const row of rows) rarest.set(row.at, Math.min(rarest.get(row.at) ?? Infinity, row.df))
    // A term without a token (punctuation only) counts as in no chunk.
    missing.forEach((term, i) => df.set(term, rarest.get(i + 1) ?? 0))
  }
  return terms.map((term) => df.get(term) ?? 0)
}

/** The terms an OR query scores: those that select rows, and those that only score them. */
interface ScoredTerms {
  readonly selecting: ReadonlyArray<string>
  /** Terms past the row budget: they score the rows the others select; empty within it. */
  readonly unselective: ReadonlyArray<string>
  /** Kept scoring-only terms ({@link MatchOptions} `scoring`): they never select a row. */
  readonly scoring: ReadonlyArray<string>
}

/**
 * The terms of an OR query worth scoring: query terms whose rarest token is in at most
 * `maxDocShare` of the indexed chunks (the single rarest query term when none is), then
 * expansion terms within `expansionMaxDocShare` (when none of these is in any chunk, the dropped
 * query terms in at most half of them and within `maxScoredRows` as well); of those, the rarest
 * whose document counts sum to at most `maxScoredRows` (at least one) select rows, the rest only
 * score them (see {@link DEFAULT_MAX_SCORED_ROWS}). Scoring-only terms are kept within
 * `scoringMaxDocShare`. Tokens are taken with the index's own tokenizer (a temp FTS5 table) and
 * counted with `fts5vocab`, so stems match what bm25 sees. Costs a few index lookups per term not
 * yet counted under the index's current state.
 */
const selectiveTerms = (
  sqlite: Database,
  queryTerms: ReadonlyArray<string>,
  expansionTerms: ReadonlyArray<string>,
  scoringTerms: ReadonlyArray<string>,
  maxDocShare: number,
  expansionMaxDocShare: number,
  scoringMaxDocShare: number,
  maxScoredRows: number,
): ScoredTerms => {
  const terms = [...queryTerms, ...expansionTerms]
  if (expansionTerms.length === 0 && scoringTerms.length === 0 && terms.length < 2)
    return { selecting: terms, unselective: [], scoring: [] }
  const counts = documentFrequencies(sqlite, [...terms, ...scoringTerms])
  const total = (sqlite.prepare("select max(id) from chunks").pluck().get() as number | null) ?? 0
  const within = (i: number, share: number) => counts[i]! <= share * total
  const kept = queryTerms.filter((_, i) => within(i, maxDocShare))
  if (kept.length === 0 && queryTerms.length > 0) {
    let best = 0
    queryTerms.forEach((_, i) => {
      if (counts[i]! < counts[best]!) best = i
    })
    kept.push(queryTerms[best]!)
  }
  const at = queryTerms.length
  const chosen = [
    ...kept.map((term) => ({ term, df: counts[queryTerms.indexOf(term)]! })),
    ...expansionTerms
      .map((term, i) => ({ term, df: counts[at + i]! }))
      .filter((_, i) => within(at + i, expansionMaxDocShare)),
  ]
  // Nothing left to find a row (the selective terms occur nowhere): the dropped query terms that
  // bm25 still weighs — in at most half the chunks — select instead, within the row budget. In
  // a small history a topic word easily passes a quarter of the chunks ("retry" in "retry
  // policy" when "policy" was never written), and dropping it left the query with no row at
  // all; in a large one such a word is hardly a topic, and scoring its rows would cost seconds.
  if (chosen.every(({ df }) => df === 0)) {
    queryTerms.forEach((term, i) => {
      const df = counts[i]!
      if (!kept.includes(term) && within(i, INFORMATIVE_DOC_SHARE) && df <= maxScoredRows)
        chosen.push({ term, df })
    })
  }
  let rows = 0
  const selecting = new Set(
    [...chosen]
      .sort((a, b) => a.df - b.df)
      .filter(({ df }, i) => {
        if (i > 0 && rows + df > maxScoredRows) return false
        rows += df
        return true
      })
      .map(({ term }) => term),
  )
  const termsWhere = (selects: boolean) =>
    chosen.filter(({ term }) => selecting.has(term) === selects).map(({ term }) => term)
  const scoring = scoringTerms.filter((_, i) => within(terms.length + i, scoringMaxDocShare))
  return { selecting: termsWhere(true), unselective: termsWhere(false), scoring }
}

/** One chunk that matched, best first. */
export interface ChunkMatch {
  readonly chunkId: number
  readonly source: string
  readonly sessionId: string
  readonly turnId: string
  readonly role: string
  readonly text: string
  /** FTS5 bm25 rank: lower is better. */
  readonly rank: number
}

const MatchRows = Schema.Array(
  Schema.Struct({
    chunk_id: Schema.Number,
    source: Schema.String,
    session_id: Schema.String,
    turn_id: Schema.String,
    role: Schema.String,
    text: Schema.String,
    rank: Schema.Number,
  }),
)

/** Options of {@link matchChunks}. */
export interface MatchOptions {
  readonly limit?: number
  readonly mode?: FtsTermMode
  /** Extra WHERE clause over `s` (sessions) and `t` (turns), e.g. from `compileFilters`. */
  readonly filter?: SqlClause
  /**
   * `any` mode only: drop terms found in more than this share of chunks (see
   * {@link DEFAULT_MAX_DOC_SHARE}, the default); 1 keeps every term.
   */
  readonly maxDocShare?: number
  /**
   * `any` mode only: more terms OR-ed with the query's (a query expansion: synonyms, related
   * words), each kept only when in at most `expansionMaxDocShare` of chunks; terms already in
   * the query are not repeated.
   */
  readonly expansion?: string
  /** Default {@link DEFAULT_EXPANSION_MAX_DOC_SHARE}; 1 keeps every expansion term. */
  readonly expansionMaxDocShare?: number
  /**
   * `any` mode only: terms that add to the bm25 of the rows the other terms select but never
   * select a row themselves (e.g. the personal pronouns of a question: "my" helps rank the turn
   * where the user wrote "my dog", but a row matching only "my" is no answer). Kept only when in
   * at most `scoringMaxDocShare` of chunks; terms already in the query or the expansion are not
   * repeated.
   */
  readonly scoring?: string
  /** Default {@link DEFAULT_SCORING_MAX_DOC_SHARE}. */
  readonly scoringMaxDocShare?: number
  /**
   * `any` mode only: rows to score before the query is split (see
   * {@link DEFAULT_MAX_SCORED_ROWS}, the default); Infinity always runs the whole query.
   */
  readonly maxScoredRows?: number
}

/** One chunk that matched, without its text: see {@link rankChunks}. */
export interface RankedChunk {
  readonly chunkId: number
  /** FTS5 bm25 rank: lower is better. */
  readonly rank: number
}

/**
 * Runs `query`'s ranking (see {@link rankingPlan}) wrapped by `select` (the ranking as the
 * common table `top (chunk_id, score)`), as arrays when `raw`; no rows when it has no term.
 */
const rankedRows = (
  query: string,
  options: MatchOptions,
  select: string,
  raw: boolean,
): Effect.Effect<
  { readonly path: string; readonly rows: unknown[] },
  RecallStorageError,
  RecallDatabase
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const plan = yield* rankingPlan(db.sqlite, db.path, query, options)
    if (plan === undefined) return { path: db.path, rows: [] }
    const rows = yield* Effect.try({
      try: () => {
        const run = ({ sql, args }: RankingQuery) => {
          const statement = db.sqlite.prepare(`with top as (${sql}) ${select}`)
          return (raw ? statement.raw() : statement).all(...args)
        }
        const rows = run(plan)
        // Fewer rows than asked: rows with only the commoner terms may belong; run them all.
        return plan.whole !== undefined && rows.length < plan.limit ? run(plan.whole) : rows
      },
      catch: storageFailure("read", db.path),
    })
    return { path: db.path, rows }
  })

/**
 * The ids and bm25 ranks of the chunks {@link matchChunks} would return, in the same order,
 * without loading text or session (the lexical arm of `searchRecall` needs only these).
 */
export const rankChunks = (
  query: string,
  options: MatchOptions = {},
): Effect.Effect<ReadonlyArray<RankedChunk>, RecallStorageError, RecallDatabase> =>
  rankedRows(query, options, "select chunk_id, score from top order by score, chunk_id", true).pipe(
    Effect.map(({ rows }) =>
      (rows as Array<[number, number]>).map(([chunkId, rank]) => ({ chunkId, rank })),
    ),
  )

/** Chunks whose text matches `query` (escaped), in bm25 order, optionally filtered in the query. */
export const matchChunks = (
  query: string,
  options: MatchOptions = {},
): Effect.Effect<ReadonlyArray<ChunkMatch>, RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    // The outer query loads text and session for the `limit` winners only.
    const { path, rows } = yield* rankedRows(
      query,
      options,
      `select top.chunk_id, s.source, s.session_id, t.turn_id, c.role, c.text, top.score as rank
       from top
       join chunks c on c.id = top.chunk_id
       join turns t on t.id = c.turn_row
       join sessions s on s.id = t.session_row
       order by top.score, top.chunk_id`,
      false,
    )
    const decoded = yield* decodeRows(MatchRows, path, rows)
    return decoded.map((r) => ({
      chunkId: r.chunk_id,
      source: r.source,
      sessionId: r.session_id,
      turnId: r.turn_id,
      role: r.role,
      text: r.text,
      rank: r.rank,
    }))
  })

/** A ranking statement (chunk_id, score) and its arguments. */
interface RankingQuery {
  readonly sql: string
  readonly args: ReadonlyArray<unknown>
}

/** The ranking of a query, and the whole query when the ranking is split (see selectiveTerms). */
interface RankingPlan extends RankingQuery {
  readonly limit: number
  readonly whole?: RankingQuery
}

/** The ranking query (chunk_id, score) of `query` and its arguments; undefined: no term. */
const rankingPlan = (
  sqlite: Database,
  path: string,
  query: string,
  options: MatchOptions,
): Effect.Effect<RankingPlan | undefined, RecallStorageError> =>
  Effect.gen(function* () {
    const mode = options.mode ?? "all"
    const share = options.maxDocShare ?? DEFAULT_MAX_DOC_SHARE
    const budget = options.maxScoredRows ?? DEFAULT_MAX_SCORED_ROWS
    const queryTerms = termsOf(query)
    const asked = new Set(queryTerms)
    const expansionTerms =
      mode === "any" && options.expansion !== undefined
        ? termsOf(options.expansion).filter((t) => !asked.has(t))
        : []
    const expansionShare = options.expansionMaxDocShare ?? DEFAULT_EXPANSION_MAX_DOC_SHARE
    const known = new Set([...queryTerms, ...expansionTerms])
    const scoringTerms =
      mode === "any" && options.scoring !== undefined
        ? termsOf(options.scoring).filter((t) => !known.has(t))
        : []
    const scored: ScoredTerms =
      mode === "any" &&
      (share < 1 ||
        budget < Infinity ||
        scoringTerms.length > 0 ||
        (expansionTerms.length > 0 && expansionShare < 1))
        ? yield* Effect.try({
            try: () =>
              selectiveTerms(
                sqlite,
                queryTerms,
                expansionTerms,
                scoringTerms,
                share,
                expansionShare,
                options.scoringMaxDocShare ?? DEFAULT_SCORING_MAX_DOC_SHARE,
                budget,
              ),
            catch: storageFailure("read", path),
          })
        : { selecting: [...queryTerms, ...expansionTerms], unselective: [], scoring: [] }
    const { selecting, unselective, scoring } = scored
    // Selecting terms first in every form of the query, so bm25 sums its phrases in one order.
    const expression = quoted([...selecting, ...unselective], mode)
    if (expression === undefined) return undefined
    const filter = options.filter ?? { sql: "1 = 1", args: [] }
    const unfiltered = filter.sql === "1 = 1" && filter.args.length === 0
    const limit = Math.max(1, Math.floor(options.limit ?? 20))
    // Measured at 100 000 chunks (README "Benchmarks"): ranking by `bm25()` and keeping only
    // (id, score) keeps text out of the sorter and avoids FTS5's slower `order by rank` sorter;
    // the joins run for the filter only when there is one. Same scores as `rank` (bm25 with
    // default weights); ties go to the lower chunk id.
    const matching = unfiltered
      ? `select chunks_fts.rowid as chunk_id, bm25(chunks_fts) as score
         from chunks_fts where chunks_fts match ?`
      : `select c.id as chunk_id, bm25(chunks_fts) as score
         from chunks_fts
         join chunks c on c.id = chunks_fts.rowid
         join turns t on t.id = c.turn_row
         join sessions s on s.id = t.session_row
         where chunks_fts match ? and (${filter.sql})`
    const argsOf = (match: string) => [match, ...(unfiltered ? [] : filter.args)]
    // The rows holding a term of `select`, with and without one of `score`: two queries with
    // every term as a phrase, in the same order, so bm25 scores each row as one OR of them all.
    const split = (select: ReadonlyArray<string>, score: ReadonlyArray<string>): RankingQuery => {
      const some = quoted(select, "any")!
      const rest = quoted(score, "any")!
      return {
        sql: `select chunk_id, score from (${matching} union all ${matching})
              order by score, chunk_id limit ?`,
        args: [...argsOf(`(${some}) AND (${rest})`), ...argsOf(`(${some}) NOT (${rest})`), limit],
      }
    }
    // Every row a selecting or unselective term is in; scoring terms only score them.
    const whole: RankingQuery =
      scoring.length === 0
        ? {
            sql: `${matching} order by score, chunk_id limit ?`,
            args: [...argsOf(expression), limit],
          }
        : split([...selecting, ...unselective], scoring)
    if (unselective.length === 0) return { ...whole, limit }
    // Past the row budget: the rows a selecting term is in; the unselective terms score them.
    return { ...split(selecting, [...unselective, ...scoring]), limit, whole }
  })

/**
 * Safe FTS5 queries over chunk text. User text never reaches `MATCH` raw: each whitespace-split
 * term becomes a quoted FTS5 string (inner `"` doubled), so quotes, punctuation, `AND` / `OR` /
 * `NEAR`, `*` and column filters are plain words. This is the lexical arm of `searchRecall`;
 * filters (source, scope, days) run inside the query, so a small scope is never starved.
 */
import { Effect, Schema } from "effect"
import type { RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { decodeRows } from "./stored-rows.js"
import type { SqlClause } from "./recall-filters.js"

/** `all`: every term must occur (FTS5 implicit AND); `any`: at least one (OR). */
export type FtsTermMode = "all" | "any"

/** An FTS5 MATCH expression for `text`, or `undefined` when it has no searchable term. */
export const ftsMatchExpression = (text: string, mode: FtsTermMode = "all"): string | undefined => {
  const terms = text
    .normalize("NFC")
    .split(/\s+/u)
    // Control characters are never part of a token; drop them so the quoted string stays valid.
    .map((term) => term.replace(/\p{Cc}/gu, ""))
    .filter((term) => /[\p{L}\p{N}]/u.test(term))
    .map((term) => `"${term.replace(/"/g, '""')}"`)
  if (terms.length === 0) return undefined
  return terms.join(mode === "all" ? " " : " OR ")
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
}

/** Chunks whose text matches `query` (escaped), in bm25 order, optionally filtered in the query. */
export const matchChunks = (
  query: string,
  options: MatchOptions = {},
): Effect.Effect<ReadonlyArray<ChunkMatch>, RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const expression = ftsMatchExpression(query, options.mode)
    if (expression === undefined) return []
    const filter = options.filter ?? { sql: "1 = 1", args: [] }
    const unfiltered = filter.sql === "1 = 1" && filter.args.length === 0
    // Two stages (measured at 100 000 chunks, README "Benchmarks"): the inner query ranks by
    // `bm25()` and keeps only (id, score), so the sorter never carries chunk text and FTS5's
    // slower `order by rank` sorter is not used; the joins run for the filter only when there
    // is one; the outer query loads text and session for the `limit` winners only. Same scores
    // as `rank` (bm25 with default weights); ties go to the lower chunk id.
    const ranked = unfiltered
      ? `select chunks_fts.rowid as chunk_id, bm25(chunks_fts) as score
         from chunks_fts where chunks_fts match ?
         order by score, chunk_id limit ?`
      : `select c.id as chunk_id, bm25(chunks_fts) as score
         from chunks_fts
         join chunks c on c.id = chunks_fts.rowid
         join turns t on t.id = c.turn_row
         join sessions s on s.id = t.session_row
         where chunks_fts match ? and (${filter.sql})
         order by score, chunk_id limit ?`
    const rows = yield* Effect.try({
      try: () =>
        db.sqlite
          .prepare(
            `with top as (${ranked})
             select top.chunk_id, s.source, s.session_id, t.turn_id, c.role, c.text, top.score as rank
             from top
             join chunks c on c.id = top.chunk_id
             join turns t on t.id = c.turn_row
             join sessions s on s.id = t.session_row
             order by top.score, top.chunk_id`,
          )
          .all(
            expression,
            ...(unfiltered ? [] : filter.args),
            Math.max(1, Math.floor(options.limit ?? 20)),
          ),
      catch: storageFailure("read", db.path),
    })
    const decoded = yield* decodeRows(MatchRows, db.path, rows)
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

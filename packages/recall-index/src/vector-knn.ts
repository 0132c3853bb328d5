/**
 * Nearest-neighbour search over one embedder's vectors, mapped back to chunks through
 * `vector_keys` (vectors are shared by content hash, so one vector may stand for several
 * chunks: each is returned, with the vector's distance). Guarantees: results ordered by distance
 * ascending, then chunk id; `similarity` is the cosine similarity of the unit vectors
 * (1 − d²/2 for the L2 distance d); vectors of another fingerprint are never consulted; an
 * embedder with no table yet gives `[]`; a vector of the wrong length is a
 * `RecallStorageError`. Two ways to search:
 * - `exact`: sqlite-vec's brute-force KNN over the vec0 table: cosine distance between int8
 *   values (the query quantized like the stored vectors, similarities within about 1e-2 of the
 *   float ones), or L2 over floats in a table of an earlier version not yet converted
 *   (`convertVectorsToInt8`);
 * - `quantized`: a first pass over the sign-bit codes of every vector (asymmetric scores, see
 *   `vector-codes.ts`) keeps a pool of candidates, which are rescored with their int8 codes
 *   (similarities within about 1e-3 of the float ones). Used only while the codes cover every
 *   vector (`usableCodes`); otherwise the search is exact.
 * `auto` (default) is quantized when the codes are usable and exact otherwise; with a small
 * pre-filter (at most the pool size) every allowed vector is rescored directly.
 * Synchronous and free of `effect`, so the vector worker (`vector-search-worker.ts`) loads only
 * this and the code store; `vector-search.ts` wraps it as an effect.
 */
import type { Database } from "better-sqlite3"
import { hasLookupIndex } from "./lookup-indexes.js"
import {
  blobOf,
  codeTablesOf,
  readSignScanner,
  scanSignCodes,
  SEGMENT_CACHE_BYTES,
  SEGMENT_CACHE_TABLES,
  int8VectorBlob,
  usableCodes,
  vectorElementsOf,
} from "./vector-code-store.js"
import type { CodeState } from "./vector-code-store.js"
import { bitBytes, dotInt8, signLookupTable, TopScores } from "./vector-codes.js"

/** What to search. */
export interface VectorSearchOptions {
  /** The query vector (unit length, the embedder's dimension). */
  readonly vector: Float32Array | ReadonlyArray<number>
  /** How many nearest vectors to take (1..4096); every chunk sharing them is returned. */
  readonly k: number
  /** The embedder whose vector space to search. */
  readonly fingerprint: string
  /** Pre-filter: only these chunks are candidates (e.g. a repo, source or date scope). */
  readonly withinChunkIds?: ReadonlyArray<number>
  /**
   * `exact` brute-forces the stored vectors (sqlite-vec KNN); `quantized` runs the sign-bit first
   * pass + int8 rescoring (exact when the codes are not usable); `auto` (default) is quantized
   * when usable.
   */
  readonly mode?: "auto" | "exact" | "quantized"
  /** Candidates the first pass keeps for rescoring; default {@link DEFAULT_POOL} (at least k). */
  readonly pool?: number
}

/** How a process keeps the sign codes between searches. */
export interface CodeHolding {
  /**
   * Largest code set (bytes of keys and bits) kept in this process's cache, so the next search
   * only scans; a larger set is streamed from the database one segment at a time on every
   * search. Default `SEGMENT_CACHE_BYTES` (256 MiB): right for a long-lived host. A one-shot
   * process gains nothing from keeping codes it will not search again (see `baton recall search`).
   */
  readonly holdBytes?: number
}

/**
 * What a one-shot process (a CLI search) holds: nothing. Its one search streams the codes one
 * segment at a time, so the call's peak memory does not grow with the collection. Measured in
 * a fresh process against reading them ahead (while the query is embedded) and scanning them
 * held: 419 k codes 520–554 ms / 142–153 MB streamed against 567–618 ms / 165–170 MB held;
 * 2.09 M codes 712–749 ms / 155 MB against 1.42–1.65 s / 298–303 MB.
 */
export const ONE_SHOT_HOLD_BYTES = 0

/** One chunk near the query. */
export interface VectorHit {
  readonly chunkId: number
  /** L2 distance between the unit vectors (0 = identical, 2 = opposite). */
  readonly distance: number
  /** Cosine similarity, in [-1, 1]. */
  readonly similarity: number
}

/**
 * Whether `searchVectors` would scan the search codes of `fingerprint` now (rather than
 * brute-force the float vectors): constant time, see `usableCodes`.
 */
export const codesUsableFor = (sqlite: Database, fingerprint: string): boolean => {
  const embedder = sqlite
    .prepare("select dim, vec_table from embedders where fingerprint = ?")
    .get(fingerprint) as { dim: number; vec_table: string } | undefined
  return (
    embedder !== undefined &&
    embedder.dim % 8 === 0 &&
    usableCodes(sqlite, embedder.vec_table, fingerprint) !== undefined
  )
}

/** sqlite-vec 0.1.9 refuses larger `k`. */
export const MAX_KNN_K = 4096

/** Candidates rescored after the sign-bit pass by default (measured in `bench/query-bench.mjs`). */
export const DEFAULT_POOL = 1000

/** Bytes of a float vector, as sqlite-vec reads them. */
export const vectorBlob = (v: Float32Array): Buffer => blobOf(v)

const clampSimilarity = (s: number): number => Math.max(-1, Math.min(1, s))

/**
 * `searchVectors` on a raw connection, synchronously (for a worker thread that opens its
 * own connection, see `vector-search-worker.ts`): the hits, or why the request is invalid.
 * Driver failures throw.
 */
export const searchVectorsIn = (
  sqlite: Database,
  options: VectorSearchOptions,
  holding: CodeHolding = {},
): ReadonlyArray<VectorHit> | string => {
  const embedder = sqlite
    .prepare("select dim, vec_table from embedders where fingerprint = ?")
    .get(options.fingerprint) as { dim: number; vec_table: string } | undefined
  if (embedder === undefined) return []
  const query = Float32Array.from(options.vector)
  if (query.length !== embedder.dim) {
    return `query vector has ${query.length} dimensions; embedder ${options.fingerprint} stores ${embedder.dim}`
  }
  const bad = query.findIndex((x) => !Number.isFinite(x))
  if (bad !== -1) return `the query vector holds ${String(options.vector[bad])} at index ${bad}`
  if (!Number.isInteger(options.k) || options.k < 1) {
    return `k must be a whole number of at least 1 (at most ${MAX_KNN_K} is used); got ${String(options.k)}`
  }
  if (options.pool !== undefined && (!Number.isInteger(options.pool) || options.pool < 1)) {
    return `pool must be a whole number of at least 1; got ${String(options.pool)}`
  }
  const k = Math.min(MAX_KNN_K, options.k)
  return search(sqlite, embedder, query, k, options, holding.holdBytes ?? SEGMENT_CACHE_BYTES)
}

/**
 * Reads the sign codes of every embedder whose codes are usable into this process's segment
 * cache (see `readSignScanner`), so that the next {@link searchVectorsIn} on this database file
 * only scans: a worker warms while its caller is still loading and embedding the query. At most
 * `SEGMENT_CACHE_TABLES` embedders, newest first, each only if it fits `holding.holdBytes`.
 * Returns how many codes are now cached.
 */
export const warmVectorsIn = (sqlite: Database, holding: CodeHolding = {}): number => {
  const embedders = sqlite
    .prepare(
      "select fingerprint, dim, vec_table from embedders order by created_at desc, rowid desc limit ?",
    )
    .all(SEGMENT_CACHE_TABLES) as Array<{ fingerprint: string; dim: number; vec_table: string }>
  const holdBytes = holding.holdBytes ?? SEGMENT_CACHE_BYTES
  let warmed = 0
  for (const e of embedders) {
    if (e.dim % 8 !== 0) continue
    const codes = usableCodes(sqlite, e.vec_table, e.fingerprint)
    if (codes === undefined) continue
    warmed += readSignScanner(sqlite, e.vec_table, codes, bitBytes(e.dim), holdBytes)?.count ?? 0
  }
  return warmed
}

type Sqlite = Database

const search = (
  sqlite: Sqlite,
  embedder: { readonly dim: number; readonly vec_table: string },
  query: Float32Array,
  k: number,
  options: VectorSearchOptions,
  holdBytes: number,
): ReadonlyArray<VectorHit> => {
  const vecTable = embedder.vec_table
  // Candidate vectors of a pre-filter: the keys of the allowed chunks' content hashes.
  let allowedKeys: ReadonlyArray<number> | undefined
  let allowedChunks: Set<number> | undefined
  if (options.withinChunkIds !== undefined) {
    allowedChunks = new Set(options.withinChunkIds)
    if (allowedChunks.size === 0) return []
    const keys = sqlite
      .prepare(
        // Driven from the id list (CROSS JOIN fixes the loop order): each allowed chunk looks up
        // its key through the (fingerprint, content_hash) index, instead of every stored vector
        // being checked against the list.
        `select distinct k.id as id from json_each(?) j
         cross join chunks c on c.id = j.value
         cross join vector_keys k on k.fingerprint = ? and k.content_hash = c.content_hash`,
      )
      .pluck()
      .all(JSON.stringify([...allowedChunks]), options.fingerprint) as number[]
    if (keys.length === 0) return []
    allowedKeys = keys
  }
  const mode = options.mode ?? "auto"
  const pool = Math.max(k, Math.floor(options.pool ?? DEFAULT_POOL))
  const codes =
    mode !== "exact" && embedder.dim % 8 === 0
      ? usableCodes(sqlite, vecTable, options.fingerprint)
      : undefined
  const nearest =
    codes !== undefined
      ? codesKnn(sqlite, vecTable, codes, embedder.dim, query, k, pool, allowedKeys, holdBytes)
      : exactKnn(sqlite, vecTable, query, k, allowedKeys)
  if (nearest.length === 0) return []
  const nearestKeys = JSON.stringify(nearest.map((n) => n.key))
  const chunkRows = (
    hasLookupIndex(sqlite, "chunks_content_hash")
      ? sqlite
          .prepare(
            // Driven from the key list (CROSS JOIN fixes the loop order), not from every key of
            // the fingerprint.
            `select k.id as key, c.id as chunk_id from json_each(?) j
             cross join vector_keys k on k.id = j.value
             cross join chunks c on c.content_hash = k.content_hash
             where k.fingerprint = ?
             order by c.id`,
          )
          .all(nearestKeys, options.fingerprint)
      : sqlite
          .prepare(
            // Without the hash index (a large indexing run defers it): one pass over the chunks,
            // each probed against the keys' hashes, instead of one pass per key.
            `select k.id as key, c.id as chunk_id from chunks c
             join vector_keys k on k.fingerprint = ? and k.content_hash = c.content_hash
             where c.content_hash in (
               select h.content_hash from json_each(?) j join vector_keys h on h.id = j.value)
             order by c.id`,
          )
          .all(options.fingerprint, nearestKeys)
  ) as Array<{ key: number; chunk_id: number }>
  const chunksByKey = new Map<number, number[]>()
  for (const row of chunkRows) {
    if (allowedChunks !== undefined && !allowedChunks.has(row.chunk_id)) continue
    const list = chunksByKey.get(row.key)
    if (list === undefined) chunksByKey.set(row.key, [row.chunk_id])
    else list.push(row.chunk_id)
  }
  const hits: VectorHit[] = []
  for (const n of nearest) {
    for (const chunkId of chunksByKey.get(n.key) ?? []) {
      hits.push({ chunkId, distance: n.distance, similarity: n.similarity })
    }
  }
  return hits
}

interface Nearest {
  readonly key: number
  readonly distance: number
  readonly similarity: number
}

const exactKnn = (
  sqlite: Sqlite,
  vecTable: string,
  query: Float32Array,
  k: number,
  allowedKeys: ReadonlyArray<number> | undefined,
): Nearest[] => {
  const filter = allowedKeys === undefined ? "" : "and rowid in (select value from json_each(?))"
  // An int8 table is searched by cosine distance with the query's own int8 values; a float one
  // (an earlier version's, not converted yet) by L2 distance with the floats.
  const int8 = vectorElementsOf(sqlite, vecTable) === "int8"
  const params: unknown[] = [int8 ? int8VectorBlob(query) : vectorBlob(query), k]
  if (allowedKeys !== undefined) params.push(JSON.stringify(allowedKeys))
  const rows = sqlite
    .prepare(
      `select rowid as key, distance from ${vecTable}
       where embedding match ${int8 ? "vec_int8(?)" : "?"} and k = ? ${filter} order by distance`,
    )
    .all(...params) as Array<{ key: number; distance: number }>
  return rows
    .map((r) => {
      if (!int8) {
        const similarity = clampSimilarity(1 - (r.distance * r.distance) / 2)
        return { key: r.key, distance: r.distance, similarity }
      }
      const similarity = clampSimilarity(1 - r.distance)
      return { key: r.key, similarity, distance: Math.sqrt(Math.max(0, 2 - 2 * similarity)) }
    })
    .sort((a, b) => a.distance - b.distance || a.key - b.key)
}

/** First pass over the sign bits (or the allowed keys directly), then int8 rescoring. */
const codesKnn = (
  sqlite: Sqlite,
  vecTable: string,
  codes: CodeState,
  dim: number,
  query: Float32Array,
  k: number,
  pool: number,
  allowedKeys: ReadonlyArray<number> | undefined,
  holdBytes: number,
): Nearest[] => {
  const tables = codeTablesOf(vecTable)
  let candidates: ReadonlyArray<number>
  if (allowedKeys !== undefined && allowedKeys.length <= pool) candidates = allowedKeys
  else {
    const table = signLookupTable(query, codes.center)
    const allowed = allowedKeys === undefined ? undefined : new Set(allowedKeys)
    const top = new TopScores(pool)
    let floor = top.floor
    const visit = (keys: Int32Array, scores: Float32Array, count: number) => {
      for (let i = 0; i < count; i++) {
        const score = scores[i]!
        if (score <= floor) continue
        const key = keys[i]!
        if (allowed !== undefined && !allowed.has(key)) continue
        top.offer(key, score)
        floor = top.floor
      }
    }
    scanSignCodes(sqlite, vecTable, codes, bitBytes(dim), table, visit, holdBytes)
    candidates = top.sorted().map((c) => c.id)
  }
  if (candidates.length === 0) return []
  // Keys ascending: the lookups walk the codes' b-tree in order (measured ~2x faster than in
  // score order for a pool of 1 000 at 100 k codes); raw rows (no object per row) about halve
  // the rest of the fetch.
  const rows = sqlite
    .prepare(`select key, code from ${tables.codes} where key in (select value from json_each(?))`)
    .raw()
    .all(JSON.stringify([...candidates].sort((a, b) => a - b))) as Array<[number, Buffer]>
  const best = new TopScores(k)
  for (const [key, code] of rows) best.offer(key, dotInt8(query, code))
  return best.sorted().map(({ id, score }) => {
    const similarity = clampSimilarity(score)
    return { key: id, similarity, distance: Math.sqrt(Math.max(0, 2 - 2 * similarity)) }
  })
}

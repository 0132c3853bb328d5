/**
 * Nearest-neighbour search over one embedder's vectors (its vec0 table), mapped back to chunks
 * through `vector_keys` (vectors are shared by content hash, so one vector may stand for several
 * chunks: each is returned, with the vector's distance). Guarantees: results ordered by distance
 * ascending, then chunk id; `similarity` is the cosine similarity of the unit vectors
 * (1 − d²/2 for the L2 distance d); vectors of another fingerprint are never consulted; an
 * embedder with no table yet gives `[]`; a vector of the wrong length is a
 * {@link RecallStorageError}. `mode: "quantized"` searches in two passes: Hamming KNN over the
 * 1-bit companion table (`<vec table>_bits`, kept by the backlog), over-fetched (100..400
 * candidates), then exact float rescoring. `auto` stays exact up to `exactLimit` (default: no
 * limit) because with sqlite-vec 0.1.9 the two passes measured slower than exact float KNN at
 * 100 k and 1 M vectors (README "Benchmarks").
 */
import type { Database } from "better-sqlite3"
import { Effect } from "effect"
import { RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"

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
   * `exact` brute-forces the float vectors; `quantized` runs the bit first pass + float
   * rescoring; `auto` (default) is exact up to `exactLimit` vectors, quantized above.
   */
  readonly mode?: "auto" | "exact" | "quantized"
  /** Largest table searched exactly in `auto` mode; default unlimited (see the module header). */
  readonly exactLimit?: number
  /**
   * Candidates per wanted vector in the bit first pass; default 4. The pool is kept within
   * 100..400: sqlite-vec's KNN cost grows with its `k`, so a larger pool is slower than exact.
   */
  readonly oversample?: number
}

/** One chunk near the query. */
export interface VectorHit {
  readonly chunkId: number
  /** L2 distance between the unit vectors (0 = identical, 2 = opposite). */
  readonly distance: number
  /** Cosine similarity, in [-1, 1]. */
  readonly similarity: number
}

/** sqlite-vec 0.1.9 refuses larger `k`. */
export const MAX_KNN_K = 4096

/** Name of the 1-bit companion table of a vec0 table. */
export const bitTableOf = (vecTable: string): string => `${vecTable}_bits`

/** Bytes of a float vector, as sqlite-vec reads them. */
export const vectorBlob = (v: Float32Array): Buffer =>
  Buffer.from(v.buffer, v.byteOffset, v.byteLength)

const floatsOf = (blob: Buffer): Float32Array => {
  const out = new Float32Array(blob.byteLength / 4)
  for (let i = 0; i < out.length; i++) out[i] = blob.readFloatLE(i * 4)
  return out
}

const clampSimilarity = (s: number): number => Math.max(-1, Math.min(1, s))

/** The k nearest chunks to `vector` in the space of `fingerprint`. */
export const searchVectors = (
  options: VectorSearchOptions,
): Effect.Effect<ReadonlyArray<VectorHit>, RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const fail = (reason: string) =>
      Effect.fail(new RecallStorageError({ operation: "read", path: db.path, reason }))
    const embedder = yield* Effect.try({
      try: () =>
        db.sqlite
          .prepare("select dim, vec_table from embedders where fingerprint = ?")
          .get(options.fingerprint) as { dim: number; vec_table: string } | undefined,
      catch: storageFailure("read", db.path),
    })
    if (embedder === undefined) return []
    const query = Float32Array.from(options.vector)
    if (query.length !== embedder.dim) {
      return yield* fail(
        `query vector has ${query.length} dimensions; embedder ${options.fingerprint} stores ${embedder.dim}`,
      )
    }
    const k = Math.max(1, Math.min(MAX_KNN_K, Math.floor(options.k)))
    if (!Number.isFinite(k)) return yield* fail(`k must be a number, got ${options.k}`)
    return yield* Effect.try({
      try: () => search(db.sqlite, embedder, query, k, options),
      catch: storageFailure("read", db.path),
    })
  })

type Sqlite = Database

const search = (
  sqlite: Sqlite,
  embedder: { readonly dim: number; readonly vec_table: string },
  query: Float32Array,
  k: number,
  options: VectorSearchOptions,
): ReadonlyArray<VectorHit> => {
  const vecTable = embedder.vec_table
  // Candidate vectors of a pre-filter: the keys of the allowed chunks' content hashes.
  let allowedKeys: string | undefined
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
    allowedKeys = JSON.stringify(keys)
  }
  const mode = options.mode ?? "auto"
  const quantized =
    mode === "quantized" ||
    (mode === "auto" &&
      allowedKeys === undefined &&
      options.exactLimit !== undefined &&
      hasBitTable(sqlite, vecTable) &&
      vectorCount(sqlite, options.fingerprint) > options.exactLimit)
  const nearest = quantized
    ? quantizedKnn(sqlite, vecTable, query, k, options.oversample ?? 4, allowedKeys)
    : exactKnn(sqlite, vecTable, query, k, allowedKeys)
  if (nearest.length === 0) return []
  const chunkRows = sqlite
    .prepare(
      `select k.id as key, c.id as chunk_id from vector_keys k
       join chunks c on c.content_hash = k.content_hash
       where k.fingerprint = ? and k.id in (select value from json_each(?))
       order by c.id`,
    )
    .all(options.fingerprint, JSON.stringify(nearest.map((n) => n.key))) as Array<{
    key: number
    chunk_id: number
  }>
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
  allowedKeys: string | undefined,
): Nearest[] => {
  const filter = allowedKeys === undefined ? "" : "and rowid in (select value from json_each(?))"
  const params: unknown[] = [vectorBlob(query), k]
  if (allowedKeys !== undefined) params.push(allowedKeys)
  const rows = sqlite
    .prepare(
      `select rowid as key, distance from ${vecTable}
       where embedding match ? and k = ? ${filter} order by distance`,
    )
    .all(...params) as Array<{ key: number; distance: number }>
  return rows
    .map((r) => ({
      key: r.key,
      distance: r.distance,
      similarity: clampSimilarity(1 - (r.distance * r.distance) / 2),
    }))
    .sort((a, b) => a.distance - b.distance || a.key - b.key)
}

const quantizedKnn = (
  sqlite: Sqlite,
  vecTable: string,
  query: Float32Array,
  k: number,
  oversample: number,
  allowedKeys: string | undefined,
): Nearest[] => {
  const bits = bitTableOf(vecTable)
  const filter = allowedKeys === undefined ? "" : "and rowid in (select value from json_each(?))"
  const pool = Math.max(k, Math.min(400, Math.max(100, k * Math.max(1, oversample))))
  const params: unknown[] = [vectorBlob(query), Math.min(MAX_KNN_K, pool)]
  if (allowedKeys !== undefined) params.push(allowedKeys)
  const candidates = sqlite
    .prepare(
      `select rowid from ${bits}
       where embedding match vec_quantize_binary(?) and k = ? ${filter}`,
    )
    .pluck()
    .all(...params) as number[]
  if (candidates.length === 0) return []
  const rows = sqlite
    .prepare(
      `select rowid as key, embedding from ${vecTable}
       where rowid in (select value from json_each(?))`,
    )
    .all(JSON.stringify(candidates)) as Array<{ key: number; embedding: Buffer }>
  const scored = rows.map((r) => {
    const v = floatsOf(r.embedding)
    let dot = 0
    for (let i = 0; i < v.length; i++) dot += (v[i] ?? 0) * (query[i] ?? 0)
    const similarity = clampSimilarity(dot)
    return { key: r.key, similarity, distance: Math.sqrt(Math.max(0, 2 - 2 * similarity)) }
  })
  scored.sort((a, b) => a.distance - b.distance || a.key - b.key)
  return scored.slice(0, k)
}

const hasBitTable = (sqlite: Sqlite, vecTable: string): boolean =>
  sqlite
    .prepare("select 1 from sqlite_master where type = 'table' and name = ?")
    .get(bitTableOf(vecTable)) !== undefined

const vectorCount = (sqlite: Sqlite, fingerprint: string): number =>
  (
    sqlite
      .prepare("select count(*) as n from vector_keys where fingerprint = ?")
      .get(fingerprint) as { n: number }
  ).n

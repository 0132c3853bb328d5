/**
 * Storage of the search codes of one embedder's vectors (see `vector-codes.ts`), in three plain
 * tables beside its vec0 table `<vec>`:
 * - `<vec>_codes (key, code)`: the int8 code of each vector, keyed like the vec0 rowid
 *   (`vector_keys.id`); point lookups for rescoring;
 * - `<vec>_segments (id, count, keys, bits)`: sign bits packed {@link SEGMENT_SIZE} vectors per
 *   row, so a full first pass reads a few dozen blobs instead of one row per vector;
 * - `<vec>_center`: the centre the sign bits are taken against, how many vectors it was computed
 *   from, and a generation bumped by every change to the segments (readers cache segments by it).
 * Guarantees: codes are written in the same transaction as their vector; the segments are
 * usable only while their total count equals the embedder's vector count and a centre exists
 * ({@link usableCodes}), otherwise search falls back to exact KNN, never to stale codes;
 * {@link syncCodes} repairs every divergence (missing or orphan codes, stale segments) and
 * recomputes the centre each time the collection has doubled since the last centre (amortised
 * linear cost), rebuilding the segments against it.
 */
import type { Database } from "better-sqlite3"
import { scanSignSegments, streamSignScanner } from "./sign-scan.js"
import type { SignScanner, SignSegment } from "./sign-scan.js"
import { bitBytes, decodeInt8Into, int8Code, writeSignBits } from "./vector-codes.js"

/** Vectors per segment row. */
export const SEGMENT_SIZE = 4096

/**
 * How a vec0 table keeps its vectors: `int8` (tables this version creates: the int8 values
 * of each vector's code, searched by cosine distance, a quarter of the bytes) or `float32`
 * (tables of earlier versions, L2 distance, until {@link convertVectorsToInt8} rewrites them).
 * Read from the table's declaration on every call: another process may have converted it.
 */
export type VectorElements = "float32" | "int8"

/** The element type of `vecTable`'s vectors (see {@link VectorElements}). */
export const vectorElementsOf = (sqlite: Database, vecTable: string): VectorElements => {
  const sql = sqlite
    .prepare("select sql from sqlite_master where type = 'table' and name = ?")
    .pluck()
    .get(vecTable)
  return typeof sql === "string" && /\bint8\[/i.test(sql) ? "int8" : "float32"
}

/** The vec0 declaration of a new embedder table of dimension `dim`. */
export const int8VectorTable = (vecTable: string, dim: number): string =>
  `create virtual table ${vecTable} using vec0(embedding int8[${dim}] distance_metric=cosine)`

/** The int8 values of a code (what an int8 vec0 table stores), without its scale. */
export const int8ValuesOf = (code: Uint8Array): Uint8Array => code.subarray(4)

/** What an int8 vec0 table stores for the float vector `vector` (its code's int8 values). */
export const int8VectorBlob = (vector: Float32Array): Buffer =>
  blobOf(int8ValuesOf(int8Code(vector)))

/**
 * The code of a vector stored as int8 values only: the vectors are unit length, so the scale
 * that restores them is 1 / ‖values‖ (0 for a zero vector).
 */
const codeOfInt8Values = (values: Uint8Array): Uint8Array => {
  const ints = new Int8Array(values.buffer, values.byteOffset, values.byteLength)
  let sum = 0
  for (let i = 0; i < ints.length; i++) sum += ints[i]! * ints[i]!
  const out = new Uint8Array(4 + ints.length)
  new DataView(out.buffer).setFloat32(0, sum === 0 ? 0 : 1 / Math.sqrt(sum), true)
  out.set(values, 4)
  return out
}

/**
 * Rewrites the float32 vec0 table `vecTable` as an int8 one holding the same int8 values a new
 * table stores, in one transaction: the vectors' bytes fall to a quarter (2 KB to 512 bytes at
 * 512 dimensions; the freed pages are reused by later writes). At a dimension that is a multiple
 * of 8 the values come from the codes, whose keys and segments stay untouched, so quantized search
 * is unchanged; at another dimension (no codes exist) each float vector is quantized the way a
 * code is. Exact search becomes cosine KNN over the int8 values. Does nothing (0) when the table
 * is already int8 or, at a multiple of 8, when some key of `fingerprint` has no code
 * (`syncCodes` first); else the vectors converted.
 */
export const convertVectorsToInt8 = (
  sqlite: Database,
  fingerprint: string,
  vecTable: string,
  dim: number,
): number =>
  sqlite
    .transaction((): number => {
      if (vectorElementsOf(sqlite, vecTable) === "int8") return 0
      if (dim % 8 !== 0) return convertUncodedVectors(sqlite, vecTable, dim)
      ensureCodeTables(sqlite, vecTable)
      const t = codeTablesOf(vecTable)
      const count = (sql: string): number => sqlite.prepare(sql).pluck().get(fingerprint) as number
      const keys = count("select count(*) from vector_keys where fingerprint = ?")
      const coded = count(
        `select count(*) from vector_keys k join ${t.codes} c on c.key = k.id
         where k.fingerprint = ? and length(c.code) = ${4 + dim}`,
      )
      if (coded !== keys) return 0
      sqlite.exec(`drop table ${vecTable}`)
      sqlite.exec(int8VectorTable(vecTable, dim))
      // In key order by scanning the codes by rowid: no sort, which would drop the int8 subtype
      // `vec_int8` gives its value (vec0 then refuses it as float32).
      return sqlite
        .prepare(
          `insert into ${vecTable} (rowid, embedding)
           select c.key, vec_int8(substr(c.code, 5)) from ${t.codes} c
           where c.key in (select id from vector_keys where fingerprint = ?)`,
        )
        .run(fingerprint).changes
    })
    .immediate()

/**
 * The float32 → int8 rewrite of a table without codes (inside {@link convertVectorsToInt8}'s
 * transaction): each vector quantized as its code would be, through a staging table, because a
 * vec0 table can be neither renamed nor dropped while it is read.
 */
const convertUncodedVectors = (sqlite: Database, vecTable: string, dim: number): number => {
  const staging = `${vecTable}_int8_staging`
  sqlite.exec(
    `drop table if exists ${staging};
     create table ${staging} (key integer primary key, vals blob not null) strict;`,
  )
  const put = sqlite.prepare(`insert into ${staging} (key, vals) values (?, ?)`)
  const rows = sqlite
    .prepare(`select rowid as key, embedding from ${vecTable}`)
    .iterate() as IterableIterator<{ key: number; embedding: Buffer }>
  // Streamed as `syncCodes` streams (unsafe mode: writing another table while reading vec0).
  sqlite.unsafeMode(true)
  try {
    for (const row of rows) put.run(row.key, int8VectorBlob(floatsOf(row.embedding)))
  } finally {
    sqlite.unsafeMode(false)
  }
  sqlite.exec(`drop table ${vecTable}`)
  sqlite.exec(int8VectorTable(vecTable, dim))
  // By the staging table's rowid, no sort (which would drop `vec_int8`'s subtype).
  const converted = sqlite
    .prepare(
      `insert into ${vecTable} (rowid, embedding) select key, vec_int8(vals) from ${staging}`,
    )
    .run().changes
  sqlite.exec(`drop table ${staging}`)
  return converted
}

/** Table names of the codes of vec0 table `vecTable`. */
export const codeTablesOf = (vecTable: string) => ({
  codes: `${vecTable}_codes`,
  segments: `${vecTable}_segments`,
  center: `${vecTable}_center`,
})

/** Creates the code tables of `vecTable` when missing. */
export const ensureCodeTables = (sqlite: Database, vecTable: string): void => {
  const t = codeTablesOf(vecTable)
  // Tables of an earlier layout (a centre row without an epoch) are rebuilt from the vectors.
  const columns = sqlite.prepare(`select name from pragma_table_info(?)`).pluck().all(t.center)
  if (columns.length > 0 && !columns.includes("epoch")) dropCodeTables(sqlite, vecTable)
  sqlite.exec(
    `create table if not exists ${t.codes} (key integer primary key, code blob not null) strict;
     create table if not exists ${t.segments} (
       id integer primary key, count integer not null, keys blob not null, bits blob not null
     ) strict;
     create table if not exists ${t.center} (
       id integer primary key check (id = 1), basis integer not null, center blob not null,
       generation integer not null, epoch text not null
     ) strict;`,
  )
}

const tableExists = (sqlite: Database, name: string): boolean =>
  sqlite.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(name) !==
  undefined

const floatsOf = (blob: Buffer): Float32Array => {
  const out = new Float32Array(blob.byteLength / 4)
  for (let i = 0; i < out.length; i++) out[i] = blob.readFloatLE(i * 4)
  return out
}

/** The bytes of a typed array as a Buffer (no copy), as better-sqlite3 binds blobs. */
export const blobOf = (bytes: Uint8Array | Float32Array | Int32Array): Buffer =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** Sets the centre and basis, bumping the generation. */
const centerUpsert = (table: string): string =>
  `insert into ${table} (id, basis, center, generation, epoch)
   values (1, ?, ?, 1, lower(hex(randomblob(8))))
   on conflict (id) do update set basis = excluded.basis, center = excluded.center,
     generation = generation + 1`

/** The stored centre of `vecTable`, or undefined. */
export const readCenter = (
  sqlite: Database,
  vecTable: string,
): { readonly basis: number; readonly center: Float32Array } | undefined => {
  const t = codeTablesOf(vecTable)
  if (!tableExists(sqlite, t.center)) return undefined
  const row = sqlite.prepare(`select basis, center from ${t.center} where id = 1`).get() as
    { basis: number; center: Buffer } | undefined
  return row === undefined ? undefined : { basis: row.basis, center: floatsOf(row.center) }
}

/** What a reader needs of usable codes. */
export interface CodeState {
  readonly center: Float32Array
  /** Changes whenever the segments change. */
  readonly generation: number
  /** Random, set when the centre row is created: tells one database's codes from another's. */
  readonly epoch: string
  /** How many vectors the centre was computed from. */
  readonly basis: number
}

/**
 * The codes' state when they can stand in for the float vectors, else undefined: a centre
 * exists, the segments are not emptied (a forget empties them), and the newest code is the
 * newest vector of `fingerprint` (vectors are only added by the backlog, which writes their codes
 * in the same transaction; a vector written without codes, e.g. by an older version, makes this
 * undefined until {@link syncCodes}). Constant time: no count over the vectors.
 */
export const usableCodes = (
  sqlite: Database,
  vecTable: string,
  fingerprint: string,
): CodeState | undefined => {
  try {
    return readCodeState(sqlite, vecTable, fingerprint)
  } catch {
    // Tables of another layout: exact search until the next run rebuilds them.
    return undefined
  }
}

const readCodeState = (
  sqlite: Database,
  vecTable: string,
  fingerprint: string,
): CodeState | undefined => {
  const t = codeTablesOf(vecTable)
  if (!tableExists(sqlite, t.segments) || !tableExists(sqlite, t.center)) return undefined
  const row = sqlite
    .prepare(`select center, generation, epoch, basis from ${t.center} where id = 1`)
    .get() as { center: Buffer; generation: number; epoch: string; basis: number } | undefined
  if (row === undefined) return undefined
  if (sqlite.prepare(`select 1 from ${t.segments} limit 1`).get() === undefined) return undefined
  const newestCode = sqlite.prepare(`select max(key) from ${t.codes}`).pluck().get() as
    number | null
  // `+fingerprint`: walk the rowids backwards instead of the (fingerprint, hash) index.
  const newestVector = sqlite
    .prepare("select id from vector_keys where +fingerprint = ? order by id desc limit 1")
    .pluck()
    .get(fingerprint) as number | undefined
  if (newestVector === undefined || newestCode !== newestVector) return undefined
  return {
    center: floatsOf(row.center),
    generation: row.generation,
    epoch: row.epoch,
    basis: row.basis,
  }
}

const aligned = (blob: Buffer): Uint8Array =>
  blob.byteOffset % 4 === 0 ? blob : new Uint8Array(blob)

function* segmentsOf(
  rows: Iterable<{ count: number; keys: Buffer; bits: Buffer }>,
): Generator<SignSegment> {
  for (const row of rows) {
    const keys = aligned(row.keys)
    yield {
      count: row.count,
      keys: new Int32Array(keys.buffer, keys.byteOffset, keys.byteLength >> 2),
      bits: aligned(row.bits),
    }
  }
}

interface CachedScanner {
  readonly epoch: string
  readonly generation: number
  readonly scanner: SignScanner
}

/** Per (database file, table); the last {@link SEGMENT_CACHE_TABLES} read are kept. */
const scannerCache = new Map<string, CachedScanner>()

/** Tables whose codes stay cached in a process. */
export const SEGMENT_CACHE_TABLES = 2

/** Largest code set held in the cache by default (bytes of keys + bits); larger ones are streamed. */
export const SEGMENT_CACHE_BYTES = 256 * 1024 * 1024

const cacheKey = (sqlite: Database, vecTable: string): string => `${sqlite.name}\u0000${vecTable}`

const cachedScanner = (
  sqlite: Database,
  vecTable: string,
  codes: CodeState,
): SignScanner | undefined => {
  const cached = scannerCache.get(cacheKey(sqlite, vecTable))
  return cached !== undefined &&
    cached.epoch === codes.epoch &&
    cached.generation === codes.generation
    ? cached.scanner
    : undefined
}

/**
 * Runs `read` in one read transaction with the segment count of `vecTable` and its rows as a
 * lazy stream (holding them all first doubled a search's memory at 2 M codes; unread, no
 * statement is started).
 */
const withSegments = <A>(
  sqlite: Database,
  vecTable: string,
  read: (total: number, segments: Iterable<SignSegment>) => A,
): A => {
  const table = codeTablesOf(vecTable).segments
  return sqlite.transaction((): A => {
    const total = sqlite
      .prepare(`select coalesce(sum(count), 0) from ${table}`)
      .pluck()
      .get() as number
    function* segments(): Generator<SignSegment> {
      yield* segmentsOf(
        sqlite
          .prepare(`select count, keys, bits from ${table} order by id`)
          .iterate() as IterableIterator<{ count: number; keys: Buffer; bits: Buffer }>,
      )
    }
    return read(total, segments())
  })()
}

const heldBytes = (total: number, codeBytes: number): number => total * (4 + codeBytes)

/**
 * The codes of `vecTable` in the state `codes`, handed to `held` as a {@link SignScanner} when
 * they take at most `holdBytes` (from the process cache, or read and cached), else to `streamed`
 * as the segment rows of one read transaction, not kept.
 */
const heldOrStreamed = <A>(
  sqlite: Database,
  vecTable: string,
  codes: CodeState,
  codeBytes: number,
  holdBytes: number,
  held: (scanner: SignScanner) => A,
  streamed: (segments: Iterable<SignSegment>) => A,
): A => {
  const cached = cachedScanner(sqlite, vecTable, codes)
  if (cached !== undefined) return held(cached)
  return withSegments(sqlite, vecTable, (total, segments) =>
    heldBytes(total, codeBytes) > holdBytes
      ? streamed(segments)
      : held(holdScanner(sqlite, vecTable, codes, streamSignScanner(total, segments, codeBytes))),
  )
}

/**
 * The sign codes of `vecTable` in the state `codes`, as a {@link SignScanner} over `codeBytes`
 * bytes per code, when they take at most `holdBytes` (keys and bits; default
 * {@link SEGMENT_CACHE_BYTES}), else undefined without reading them: from the process cache when
 * the database file, epoch and generation all match (connections are opened per call, so the
 * cache is keyed by file, not by connection: the MCP server and a benchmark loop read the
 * segments once per change), otherwise read and cached.
 */
export const readSignScanner = (
  sqlite: Database,
  vecTable: string,
  codes: CodeState,
  codeBytes: number,
  holdBytes: number = SEGMENT_CACHE_BYTES,
): SignScanner | undefined =>
  heldOrStreamed<SignScanner | undefined>(
    sqlite,
    vecTable,
    codes,
    codeBytes,
    holdBytes,
    (scanner) => scanner,
    () => undefined,
  )

const holdScanner = (
  sqlite: Database,
  vecTable: string,
  codes: CodeState,
  scanner: SignScanner,
): SignScanner => {
  const key = cacheKey(sqlite, vecTable)
  scannerCache.delete(key)
  scannerCache.set(key, { epoch: codes.epoch, generation: codes.generation, scanner })
  while (scannerCache.size > SEGMENT_CACHE_TABLES) {
    scannerCache.delete(scannerCache.keys().next().value as string)
  }
  return scanner
}

/**
 * The first pass over the sign codes of `vecTable` in the state `codes`: each code's key and
 * score against `table` (see `signLookupTable`), handed to `visit` in segment order. Codes that
 * fit in `holdBytes` are scanned from the cache ({@link readSignScanner}, read on a miss); larger
 * sets are streamed from the database one segment at a time and not kept, so a search's memory
 * does not grow with the collection (at 2 M codes of 64 bytes a held set is ~140 MB).
 */
export const scanSignCodes = (
  sqlite: Database,
  vecTable: string,
  codes: CodeState,
  codeBytes: number,
  table: Float64Array,
  visit: (keys: Int32Array, scores: Float32Array, count: number) => void,
  holdBytes: number = SEGMENT_CACHE_BYTES,
): void =>
  heldOrStreamed(
    sqlite,
    vecTable,
    codes,
    codeBytes,
    holdBytes,
    (scanner) => visit(scanner.keys, scanner.scan(table), scanner.count),
    (segments) => scanSignSegments(segments, codeBytes, table, visit),
  )

/** Writes codes of new vectors inside the caller's transaction; `flush` appends their bits. */
export interface CodeWriter {
  /** Writes the code of `vector` (`code` when the caller has computed it) and queues its bits. */
  readonly add: (key: number, vector: Float32Array, code?: Uint8Array) => void
  /** Appends the pending sign bits to the segments; call before the transaction commits. */
  readonly flush: () => void
}

/** A writer for `vecTable` (its code tables must exist). */
export const makeCodeWriter = (sqlite: Database, vecTable: string, dim: number): CodeWriter => {
  const t = codeTablesOf(vecTable)
  const bytes = bitBytes(dim)
  const putCode = sqlite.prepare(`insert or replace into ${t.codes} (key, code) values (?, ?)`)
  const lastSegment = sqlite.prepare(
    `select id, count, keys, bits from ${t.segments} order by id desc limit 1`,
  )
  const putSegment = sqlite.prepare(
    `insert or replace into ${t.segments} (id, count, keys, bits) values (?, ?, ?, ?)`,
  )
  const putCenter = sqlite.prepare(centerUpsert(t.center))
  const bump = sqlite.prepare(`update ${t.center} set generation = generation + 1 where id = 1`)
  let pending: Array<{ key: number; vector: Float32Array }> = []
  return {
    add: (key, vector, code) => {
      putCode.run(key, blobOf(code ?? int8Code(vector)))
      pending.push({ key, vector })
    },
    flush: () => {
      if (pending.length === 0) return
      let center = readCenter(sqlite, vecTable)?.center
      if (center === undefined) {
        // The first vectors seed the centre; syncCodes replaces it as the collection grows.
        center = meanOf(
          pending.map((p) => p.vector),
          dim,
        )
        putCenter.run(pending.length, blobOf(center))
      }
      const last = lastSegment.get() as
        { id: number; count: number; keys: Buffer; bits: Buffer } | undefined
      let id = last?.id ?? 0
      let keys: number[] = []
      let bits = new Uint8Array(0)
      if (last !== undefined && last.count < SEGMENT_SIZE) {
        keys = Array.from(new Int32Array(new Uint8Array(last.keys).buffer))
        bits = new Uint8Array(last.bits)
      } else id += 1
      let at = 0
      while (at < pending.length) {
        const room = SEGMENT_SIZE - keys.length
        const take = pending.slice(at, at + room)
        const grown = new Uint8Array(bits.byteLength + take.length * bytes)
        grown.set(bits)
        take.forEach((p, i) => writeSignBits(p.vector, center, grown, bits.byteLength + i * bytes))
        keys.push(...take.map((p) => p.key))
        bits = grown
        putSegment.run(id, keys.length, blobOf(Int32Array.from(keys)), blobOf(bits))
        at += take.length
        if (keys.length >= SEGMENT_SIZE) {
          id += 1
          keys = []
          bits = new Uint8Array(0)
        }
      }
      bump.run()
      pending = []
    },
  }
}

const meanOf = (vectors: ReadonlyArray<Float32Array>, dim: number): Float32Array => {
  const out = new Float32Array(dim)
  for (const v of vectors) for (let i = 0; i < dim; i++) out[i]! += v[i] ?? 0
  if (vectors.length > 0) for (let i = 0; i < dim; i++) out[i]! /= vectors.length
  return out
}

/** What {@link syncCodes} repaired. */
export interface CodeSync {
  readonly codesAdded: number
  readonly codesRemoved: number
  readonly rebuilt: boolean
}

/**
 * Brings the codes of `vecTable` in step with `vector_keys` of `fingerprint` (one transaction):
 * adds codes of vectors that lack one, removes orphan codes, recomputes the centre when missing
 * or when the collection has doubled since it was computed, and rebuilds the segments whenever
 * anything changed or they do not cover every vector.
 */
export const syncCodes = (
  sqlite: Database,
  fingerprint: string,
  vecTable: string,
  dim: number,
): CodeSync =>
  sqlite
    .transaction((): CodeSync => {
      ensureCodeTables(sqlite, vecTable)
      const t = codeTablesOf(vecTable)
      const count = (sql: string, ...params: unknown[]): number =>
        (sqlite.prepare(sql).get(...params) as { n: number }).n
      // Fast path: codes in step (the same constant-time checks search uses) and the collection
      // not doubled since the centre (the segments' counts stand in for the vector count).
      // Counting 1.5 M keys and codes took ~20 s per run, paid by every no-change index run.
      const usable = usableCodes(sqlite, vecTable, fingerprint)
      if (usable !== undefined) {
        const segmented = count(`select coalesce(sum(count), 0) as n from ${t.segments}`)
        if (segmented < 2 * usable.basis) return { codesAdded: 0, codesRemoved: 0, rebuilt: false }
      }
      const keys = count("select count(*) as n from vector_keys where fingerprint = ?", fingerprint)
      let codesRemoved = 0
      let codesAdded = 0
      if (count(`select count(*) as n from ${t.codes}`) !== keys) {
        codesRemoved = sqlite
          .prepare(
            `delete from ${t.codes} where key not in
               (select id from vector_keys where fingerprint = ?)`,
          )
          .run(fingerprint).changes
        const put = sqlite.prepare(`insert into ${t.codes} (key, code) values (?, ?)`)
        const missing = sqlite
          .prepare(
            `select rowid as key, embedding from ${vecTable}
             where rowid not in (select key from ${t.codes})`,
          )
          .iterate() as IterableIterator<{ key: number; embedding: Buffer }>
        // Streamed (an index of an older version may hold a million vectors without codes):
        // writing `codes` while reading the vec0 table is safe for SQLite, and better-sqlite3
        // allows it in unsafe mode only, switched on for this loop.
        sqlite.unsafeMode(true)
        try {
          for (const row of missing) {
            const code =
              row.embedding.byteLength === dim
                ? codeOfInt8Values(row.embedding)
                : int8Code(floatsOf(row.embedding))
            put.run(row.key, blobOf(code))
            codesAdded += 1
          }
        } finally {
          sqlite.unsafeMode(false)
        }
      }
      const center = readCenter(sqlite, vecTable)
      const recenter = keys > 0 && (center === undefined || keys >= 2 * center.basis)
      const segmented = count(`select coalesce(sum(count), 0) as n from ${t.segments}`)
      const rebuilt = recenter || codesAdded > 0 || codesRemoved > 0 || segmented !== keys
      if (rebuilt) rebuildSegments(sqlite, vecTable, dim, recenter ? undefined : center?.center)
      return { codesAdded, codesRemoved, rebuilt }
    })
    .immediate()

/** Rewrites all segments from the codes, against `center` (recomputed from the codes if absent). */
const rebuildSegments = (
  sqlite: Database,
  vecTable: string,
  dim: number,
  center: Float32Array | undefined,
): void => {
  const t = codeTablesOf(vecTable)
  const bytes = bitBytes(dim)
  const rows = () =>
    sqlite.prepare(`select key, code from ${t.codes} order by key`).iterate() as IterableIterator<{
      key: number
      code: Buffer
    }>
  // One decode buffer for every code (a fresh one per code was half of a rebuild's time).
  const scratch = new Float32Array(dim)
  let c = center
  if (c === undefined) {
    const sum = new Float64Array(dim)
    let n = 0
    for (const row of rows()) {
      const v = decodeInt8Into(row.code, dim, scratch)
      for (let i = 0; i < dim; i++) sum[i]! += v[i]!
      n += 1
    }
    c = new Float32Array(dim)
    for (let i = 0; i < dim; i++) c[i] = n === 0 ? 0 : sum[i]! / n
    sqlite.prepare(centerUpsert(t.center)).run(Math.max(1, n), blobOf(c))
  }
  sqlite.exec(`delete from ${t.segments}`)
  sqlite.exec(`update ${t.center} set generation = generation + 1 where id = 1`)
  const put = sqlite.prepare(
    `insert into ${t.segments} (id, count, keys, bits) values (?, ?, ?, ?)`,
  )
  let id = 0
  let keys = new Int32Array(SEGMENT_SIZE)
  let bits = new Uint8Array(SEGMENT_SIZE * bytes)
  let n = 0
  const emit = () => {
    if (n === 0) return
    put.run(++id, n, blobOf(keys.subarray(0, n)), blobOf(bits.subarray(0, n * bytes)))
    keys = new Int32Array(SEGMENT_SIZE)
    bits = new Uint8Array(SEGMENT_SIZE * bytes)
    n = 0
  }
  // Paged by key: better-sqlite3 cannot write while a statement is iterating, and a full read
  // would hold every code in memory at once.
  const page = sqlite.prepare(`select key, code from ${t.codes} where key > ? order by key limit ?`)
  let after = -Infinity
  for (;;) {
    const batch = page.all(after, SEGMENT_SIZE) as Array<{ key: number; code: Buffer }>
    if (batch.length === 0) break
    for (const row of batch) {
      keys[n] = row.key
      writeSignBits(decodeInt8Into(row.code, dim, scratch), c, bits, n * bytes)
      n += 1
      if (n === SEGMENT_SIZE) emit()
    }
    after = batch[batch.length - 1]!.key
  }
  emit()
}

/** Drops the code tables of `vecTable` (when its embedder goes). */
export const dropCodeTables = (sqlite: Database, vecTable: string): void => {
  const t = codeTablesOf(vecTable)
  sqlite.exec(
    `drop table if exists ${t.codes}; drop table if exists ${t.segments}; drop table if exists ${t.center};`,
  )
}

/**
 * Share of the codes above which {@link forgetCodes} empties the segments (search is exact until
 * the next {@link syncCodes} rebuilds them) instead of taking the keys out of them in place.
 */
const FORGET_IN_PLACE_MAX_SHARE = 0.25

/**
 * Removes the codes of keys about to be deleted (orphans of `fingerprint`) and takes them out
 * of the segments in place — only the segments holding one are rewritten — so search keeps its
 * quantized first pass: emptying them made every search of a 2 M-vector index exact (5–19 s)
 * after forgetting one session, until the next embedding run (~25 s) rebuilt them. Removing more
 * than {@link FORGET_IN_PLACE_MAX_SHARE} of the codes empties the segments instead.
 */
export const forgetCodes = (
  sqlite: Database,
  vecTable: string,
  orphanKeysSql: string,
  ...params: unknown[]
): void => {
  const t = codeTablesOf(vecTable)
  if (!tableExists(sqlite, t.codes)) return
  const removed = sqlite
    .prepare(`delete from ${t.codes} where key in (${orphanKeysSql}) returning key`)
    .pluck()
    .all(...params) as Array<number>
  if (removed.length === 0) return
  // The segments' counts stand in for the number of codes (counting the codes reads them all).
  const segmented = sqlite
    .prepare(`select coalesce(sum(count), 0) from ${t.segments}`)
    .pluck()
    .get() as number
  if (removed.length > FORGET_IN_PLACE_MAX_SHARE * segmented) {
    sqlite.exec(`delete from ${t.segments}`)
  } else {
    removeFromSegments(sqlite, t.segments, new Set(removed))
  }
  sqlite.exec(`update ${t.center} set generation = generation + 1 where id = 1`)
}

/** Rewrites the segments of `table` that hold one of `gone`, without those keys and bits. */
const removeFromSegments = (sqlite: Database, table: string, gone: ReadonlySet<number>): void => {
  const keyRows = sqlite.prepare(`select id, count, keys from ${table}`).all() as Array<{
    id: number
    count: number
    keys: Buffer
  }>
  const bitsOf = sqlite.prepare(`select bits from ${table} where id = ?`).pluck()
  const rewrite = sqlite.prepare(`update ${table} set count = ?, keys = ?, bits = ? where id = ?`)
  const drop = sqlite.prepare(`delete from ${table} where id = ?`)
  for (const row of keyRows) {
    const whole = aligned(row.keys)
    const keys = new Int32Array(whole.buffer, whole.byteOffset, row.count)
    if (!keys.some((key) => gone.has(key))) continue
    const bits = bitsOf.get(row.id) as Buffer
    const bytes = bits.length / row.count
    const keptKeys = new Int32Array(row.count)
    const keptBits = new Uint8Array(bits.length)
    let n = 0
    for (let i = 0; i < row.count; i++) {
      if (gone.has(keys[i]!)) continue
      keptKeys[n] = keys[i]!
      keptBits.set(bits.subarray(i * bytes, (i + 1) * bytes), n * bytes)
      n += 1
    }
    if (n === 0) drop.run(row.id)
    else
      rewrite.run(
        n,
        blobOf(keptKeys.subarray(0, n)),
        blobOf(keptBits.subarray(0, n * bytes)),
        row.id,
      )
  }
}

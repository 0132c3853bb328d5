// Vectors are stored as int8 in sqlite-vec (a quarter of the float bytes): new embedder tables
// are int8, a float table an earlier version wrote is rewritten from its codes by the next
// embedding run, and search — quantized and exact — finds what the float vectors found.
import { afterEach, describe, expect, it } from "vitest"
import {
  convertVectorsToInt8,
  embedBacklog,
  recallStatus,
  searchVectors,
  vectorElementsOf,
} from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { Effect } from "effect"
import { indexedFixture, withIndex, withSqlite } from "./index-harness.js"
import type { RecallDatabaseShape } from "@baton/recall-index"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const embedder = makeDeterministicEmbedder({ dim: 64 })
const { fingerprint, dim } = embedder.info
type Sqlite = RecallDatabaseShape["sqlite"]

const setup = async () => {
  const { dataDir, dispose } = await indexedFixture(11)
  cleanups.push(dispose)
  const report = await withIndex(dataDir, embedBacklog(embedder))
  return { dataDir, report }
}

const vecTableOf = (sqlite: Sqlite, of = fingerprint): string =>
  sqlite.prepare("select vec_table from embedders where fingerprint = ?").pluck().get(of) as string

/** Every stored vector as hex, by key. */
const storedVectors = (sqlite: Sqlite, of = fingerprint): Array<[number, string]> =>
  (
    sqlite
      .prepare(`select rowid, embedding from ${vecTableOf(sqlite, of)} order by rowid`)
      .raw()
      .all() as Array<[number, Buffer]>
  ).map(([key, blob]) => [key, blob.toString("hex")])

/** The int8 values of every code, by key (what an int8 table holds). */
const codeValues = (sqlite: Sqlite): Array<[number, string]> =>
  (
    sqlite
      .prepare(`select key, substr(code, 5) from ${vecTableOf(sqlite)}_codes order by key`)
      .raw()
      .all() as Array<[number, Buffer]>
  ).map(([key, blob]) => [key, blob.toString("hex")])

/** What an earlier version stored: a float table, the vectors decoded from their codes. */
const rewindToFloatVectors = (sqlite: Sqlite): void => {
  const table = vecTableOf(sqlite)
  const codes = sqlite.prepare(`select key, code from ${table}_codes`).raw().all() as Array<
    [number, Buffer]
  >
  sqlite.exec(`drop table ${table}`)
  sqlite.exec(`create virtual table ${table} using vec0(embedding float[${dim}])`)
  const put = sqlite.prepare(`insert into ${table} (rowid, embedding) values (?, ?)`)
  for (const [key, code] of codes) {
    const scale = code.readFloatLE(0)
    const v = new Float32Array(dim)
    for (let i = 0; i < dim; i++) v[i] = code.readInt8(4 + i) * scale
    put.run(BigInt(key), Buffer.from(v.buffer))
  }
}

/** Cosine similarity of the deterministic embedder's float vectors. */
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)

const QUERIES = ["retry policy for uploads", "database migration", "flaky test timeout"]

const search = (dataDir: string, query: string, mode: "exact" | "quantized") =>
  withIndex(
    dataDir,
    Effect.flatMap(embedder.embedQuery(query), (vector) =>
      searchVectors({ vector, k: 8, fingerprint, mode }),
    ),
  )

describe("int8 vectors in sqlite-vec", () => {
  it("stores each vector as its code's int8 values, and exact search ranks like the floats", async () => {
    const { dataDir, report } = await setup()
    expect(report.embedded).toBeGreaterThan(20)
    expect(report.vectorsConverted).toBe(0)
    const { elements, stored, codes, texts } = await withSqlite(dataDir, (sqlite) => ({
      elements: vectorElementsOf(sqlite, vecTableOf(sqlite)),
      stored: storedVectors(sqlite),
      codes: codeValues(sqlite),
      texts: sqlite.prepare("select c.id, c.text from chunks c").raw().all() as Array<
        [number, string]
      >,
    }))
    expect(elements).toBe("int8")
    expect(stored).toEqual(codes)
    expect(stored).toHaveLength(report.embedded)
    const floats = await Effect.runPromise(embedder.embedDocuments(texts.map(([, t]) => t)))
    for (const query of QUERIES) {
      const q = await Effect.runPromise(embedder.embedQuery(query))
      const hits = await search(dataDir, query, "exact")
      expect(hits.length).toBeGreaterThan(0)
      const truth = new Map(texts.map(([id], i) => [id, cosine(q, floats[i]!)]))
      const best = Math.max(...truth.values())
      // The nearest is one of the float-nearest; each similarity is close to the float cosine.
      expect(truth.get(hits[0]!.chunkId)).toBeGreaterThan(best - 0.02)
      for (const hit of hits)
        expect(Math.abs(hit.similarity - truth.get(hit.chunkId)!)).toBeLessThan(0.02)
      for (const hit of hits) expect(hit.distance).toBeCloseTo(Math.sqrt(2 - 2 * hit.similarity), 6)
    }
  })

  it("an embedding run rewrites an earlier version's float table from its codes", async () => {
    const { dataDir } = await setup()
    const before = await withSqlite(dataDir, (sqlite) => storedVectors(sqlite))
    const quantized = await Promise.all(QUERIES.map((q) => search(dataDir, q, "quantized")))
    await withSqlite(dataDir, rewindToFloatVectors)
    const floatExact = await Promise.all(QUERIES.map((q) => search(dataDir, q, "exact")))
    expect(await withSqlite(dataDir, (s) => vectorElementsOf(s, vecTableOf(s)))).toBe("float32")
    const elements = async () =>
      (await withIndex(dataDir, recallStatus())).embedders.map((e) => e.elements)
    expect(await elements()).toEqual(["float32"])

    const announced: Array<number> = []
    const report = await withIndex(
      dataDir,
      embedBacklog(embedder, { onVectorConversion: (n) => announced.push(n) }),
    )
    expect(report).toMatchObject({ embedded: 0, vectorsConverted: before.length })
    expect(announced).toEqual([before.length])
    const after = await withSqlite(dataDir, (sqlite) => ({
      elements: vectorElementsOf(sqlite, vecTableOf(sqlite)),
      stored: storedVectors(sqlite),
    }))
    expect(after).toEqual({ elements: "int8", stored: before })
    expect(await elements()).toEqual(["int8"])
    // Quantized search reads the codes, untouched; exact search finds what the floats found.
    expect(await Promise.all(QUERIES.map((q) => search(dataDir, q, "quantized")))).toEqual(
      quantized,
    )
    const int8Exact = await Promise.all(QUERIES.map((q) => search(dataDir, q, "exact")))
    int8Exact.forEach((hits, i) => {
      expect(hits[0]!.similarity).toBeCloseTo(floatExact[i]![0]!.similarity, 1)
      expect(
        hits
          .map((h) => h.chunkId)
          .slice(0, 3)
          .filter((id) => floatExact[i]!.some((f) => f.chunkId === id)),
      ).toHaveLength(3)
    })
    // Nothing left to convert.
    const again = await withIndex(
      dataDir,
      embedBacklog(embedder, { onVectorConversion: (n) => announced.push(n) }),
    )
    expect(again).toMatchObject({ vectorsConverted: 0 })
    expect(announced).toEqual([before.length])
  })

  it("converts nothing while a key lacks its code, and rebuilds lost codes from int8 values", async () => {
    const { dataDir } = await setup()
    const quantized = await Promise.all(QUERIES.map((q) => search(dataDir, q, "quantized")))
    const refused = await withSqlite(dataDir, (sqlite) => {
      rewindToFloatVectors(sqlite)
      const table = vecTableOf(sqlite)
      sqlite.exec(`delete from ${table}_codes where key = (select max(key) from ${table}_codes)`)
      return {
        converted: convertVectorsToInt8(sqlite, fingerprint, table, dim),
        elements: vectorElementsOf(sqlite, table),
      }
    })
    expect(refused).toEqual({ converted: 0, elements: "float32" })
    // The run repairs the missing code from the float vector, then converts.
    const report = await withIndex(dataDir, embedBacklog(embedder))
    expect(report.vectorsConverted).toBeGreaterThan(0)
    // Every code lost: rebuilt from the int8 values (scale 1 / ‖values‖), search unchanged.
    await withSqlite(dataDir, (sqlite) => sqlite.exec(`delete from ${vecTableOf(sqlite)}_codes`))
    await withIndex(dataDir, embedBacklog(embedder))
    const rebuilt = await Promise.all(QUERIES.map((q) => search(dataDir, q, "quantized")))
    // The same hits; the rebuilt scale (from the int8 values' norm) may swap near ties.
    rebuilt.forEach((hits, i) => {
      const was = new Map(quantized[i]!.map((h) => [h.chunkId, h.similarity]))
      expect(hits.map((h) => h.chunkId).sort()).toEqual([...was.keys()].sort())
      for (const h of hits) expect(Math.abs(h.similarity - was.get(h.chunkId)!)).toBeLessThan(0.01)
    })
  })
  it("rewrites an earlier version's float table of a dimension without codes from its floats", async () => {
    // 60 dimensions: not whole bytes of sign bits, so no codes, only exact search.
    const odd = makeDeterministicEmbedder({ dim: 60 })
    const { dataDir, dispose } = await indexedFixture(11)
    cleanups.push(dispose)
    await withIndex(dataDir, embedBacklog(odd))
    const tableOf = (sqlite: Sqlite) => vecTableOf(sqlite, odd.info.fingerprint)
    const stored = (sqlite: Sqlite) => storedVectors(sqlite, odd.info.fingerprint)
    const exact = (query: string) =>
      withIndex(
        dataDir,
        Effect.flatMap(odd.embedQuery(query), (vector) =>
          searchVectors({ vector, k: 8, fingerprint: odd.info.fingerprint, mode: "exact" }),
        ),
      )
    const before = await withSqlite(dataDir, (sqlite) => {
      expect(vectorElementsOf(sqlite, tableOf(sqlite))).toBe("int8")
      expect(
        sqlite.prepare("select 1 from sqlite_master where name like '%_codes'").get(),
      ).toBeUndefined()
      return stored(sqlite)
    })
    // What an earlier version stored: unit float vectors (here, the int8 values normalised).
    await withSqlite(dataDir, (sqlite) => {
      const table = tableOf(sqlite)
      const rows = sqlite.prepare(`select rowid, embedding from ${table}`).raw().all() as Array<
        [number, Buffer]
      >
      sqlite.exec(`drop table ${table}`)
      sqlite.exec(`create virtual table ${table} using vec0(embedding float[60])`)
      const put = sqlite.prepare(`insert into ${table} (rowid, embedding) values (?, ?)`)
      for (const [key, blob] of rows) {
        const ints = new Int8Array(blob.buffer, blob.byteOffset, blob.byteLength)
        const norm = Math.hypot(...ints)
        put.run(BigInt(key), Buffer.from(Float32Array.from(ints, (x) => x / norm).buffer))
      }
    })
    const floatExact = await Promise.all(QUERIES.map(exact))
    const report = await withIndex(dataDir, embedBacklog(odd))
    expect(report).toMatchObject({ embedded: 0, vectorsConverted: before.length })
    const after = await withSqlite(dataDir, (sqlite) => ({
      elements: vectorElementsOf(sqlite, tableOf(sqlite)),
      stored: stored(sqlite),
      staging: sqlite.prepare("select name from sqlite_master where name like '%staging%'").all(),
    }))
    // The same values a new table holds, and no staging table left behind.
    expect(after).toEqual({ elements: "int8", stored: before, staging: [] })
    const int8Exact = await Promise.all(QUERIES.map(exact))
    int8Exact.forEach((hits, i) => {
      expect(hits.map((h) => h.chunkId)).toEqual(floatExact[i]!.map((h) => h.chunkId))
      hits.forEach((h, j) => expect(h.similarity).toBeCloseTo(floatExact[i]![j]!.similarity, 2))
    })
    expect((await withIndex(dataDir, embedBacklog(odd))).vectorsConverted).toBe(0)
  })
})

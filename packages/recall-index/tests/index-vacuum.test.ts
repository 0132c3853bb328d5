// vacuumIndex gives back what a forget freed: the file shrinks, the forgotten text's bytes (its
// chunk rows and its full-text postings) leave the file, and what is kept is found as before.
import { Effect, Layer } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import {
  embedBacklog,
  forgetSessions,
  IndexerProcess,
  indexStatus,
  lexicalQuery,
  matchChunks,
  searchVectors,
  vacuumIndex,
} from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { checkFullText, insertChunkRows, tempDir, withIndex, withSqlite } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

// Porter stemming leaves a word ending in x as it is, so its full-text term has these bytes too.
const CANARY = "zzqvacuumcanarx"
const FORGOTTEN = "11111111-2222-4333-8444-555555555555"

/** Whether `text` occurs in the database file or its write-ahead log. */
const inFile = (dataDir: string, text: string): boolean =>
  ["recall-index.db", "recall-index.db-wal"].some((name) => {
    const path = join(dataDir, name)
    return existsSync(path) && readFileSync(path).includes(Buffer.from(text))
  })

const filler = (n: number, seed: string) =>
  Array.from(
    { length: n },
    (_, i) => `${seed} note ${i}: the upload retry policy waits ${i % 7} seconds between attempts`,
  )

const setup = async () => {
  const data = tempDir("data")
  cleanups.push(data.dispose)
  const dataDir = join(data.path, "baton")
  await insertChunkRows(dataDir, [
    { sessionId: "kept-session", texts: filler(400, "kept") },
    {
      sessionId: FORGOTTEN,
      texts: [...filler(400, "gone"), `the secret plan mentions ${CANARY} twice: ${CANARY}`],
    },
  ])
  await withSqlite(dataDir, (s) => s.pragma("wal_checkpoint(TRUNCATE)"))
  return dataDir
}

const found = (dataDir: string, words: string) =>
  withIndex(
    dataDir,
    Effect.map(matchChunks(lexicalQuery(words), { limit: 1000, mode: "any" }), (hits) =>
      hits.map((h) => h.chunkId).sort((a, b) => a - b),
    ),
  )

const embedder = makeDeterministicEmbedder({ dim: 32 })

/** Exact (sqlite-vec) and quantized nearest chunks of a few queries. */
const nearest = (dataDir: string) =>
  withIndex(
    dataDir,
    Effect.forEach(["upload retry", "note 7 waits", "seconds between attempts"], (q) =>
      Effect.flatMap(embedder.embedQuery(q), (vector) =>
        Effect.all(
          (["exact", "quantized"] as const).map((mode) =>
            searchVectors({ vector, k: 20, fingerprint: embedder.info.fingerprint, mode }),
          ),
        ),
      ),
    ),
  )

describe("vacuumIndex", () => {
  it("shrinks the file and removes a forgotten session's text from it", async () => {
    const dataDir = await setup()
    expect(inFile(dataDir, CANARY)).toBe(true)
    const keptBefore = await found(dataDir, "kept")
    await withIndex(dataDir, embedBacklog(embedder))
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: FORGOTTEN }))
    const vectorsBefore = await nearest(dataDir)
    for (const hits of vectorsBefore.flat()) expect(hits.length).toBe(20)
    await withSqlite(dataDir, (s) => s.pragma("wal_checkpoint(TRUNCATE)"))
    // Forgotten but still on disk: freed pages and old full-text segments keep the bytes.
    expect(inFile(dataDir, CANARY)).toBe(true)
    expect(await found(dataDir, CANARY)).toEqual([])

    const freeBefore = (await withIndex(dataDir, indexStatus(Date.now()))).freeBytes
    const report = await withIndex(dataDir, vacuumIndex())
    expect(report.freeBytesBefore).toBeGreaterThan(0)
    expect(report.freeBytesBefore).toBe(freeBefore)
    expect((await withIndex(dataDir, indexStatus(Date.now()))).freeBytes).toBe(0)
    expect(report.bytesAfter).toBeLessThan(report.bytesBefore)
    expect(inFile(dataDir, CANARY)).toBe(false)
    expect(await found(dataDir, "kept")).toEqual(keptBefore)
    // sqlite-vec's tables read by row id survive the rewrite: the same nearest chunks.
    expect(await nearest(dataDir)).toEqual(vectorsBefore)
    expect(await checkFullText(dataDir)).toBe(0) // FTS5 integrity-check passes, no backlog
    // Nothing left to give back.
    const again = await withIndex(dataDir, vacuumIndex())
    expect(again.freeBytesBefore).toBe(0)
    expect(again.bytesAfter).toBe(report.bytesAfter)
  })

  it("fails with IndexBusyError while an indexer holds the lock, changing nothing", async () => {
    const dataDir = await setup()
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: FORGOTTEN }))
    await withSqlite(dataDir, (s) =>
      s
        .prepare(
          "insert into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, 4242, 't', ?, ?)",
        )
        .run(Date.now(), Date.now() + 600_000),
    )
    const others = Layer.succeed(IndexerProcess, { pid: 1, isAlive: (pid: number) => pid === 4242 })
    const error = await withIndex(dataDir, Effect.flip(vacuumIndex()), undefined, others)
    expect(error).toMatchObject({ _tag: "IndexBusyError", pid: 4242 })
    await withSqlite(dataDir, (s) => s.pragma("wal_checkpoint(TRUNCATE)"))
    expect(inFile(dataDir, CANARY)).toBe(true)
  })
})

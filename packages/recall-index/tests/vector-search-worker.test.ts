// The vector arm in a worker thread: the same hits as in-process search (codes and exact paths,
// pre-filters), searchRecall gives the same results with and without it (including scoped
// searches), warming is best effort and changes no hits, a worker that cannot start falls back
// to in-process search, bad requests come back as tagged errors, and a closed worker refuses
// work. The worker runs this package's built
// `dist/vector-knn.js` (the test command builds first).
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import type { Worker } from "node:worker_threads"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  builtVectorSearchModule,
  codesUsableFor,
  makeVectorSearchWorker,
  RecallDatabase,
  searchRecall,
  searchVectors,
  warmVectorsIn,
} from "@baton/recall-index"
import type { RecallSearchInput, VectorSearchOptions } from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { defaultHistory, indexedHistory } from "./recall-fixtures.js"

const embedder = makeDeterministicEmbedder({ dim: 64 })
const worker = makeVectorSearchWorker()
let history: Awaited<ReturnType<typeof indexedHistory>>
let databasePath: string

beforeAll(async () => {
  history = await indexedHistory(defaultHistory, embedder)
  databasePath = join(history.dataDir, "recall-index.db")
})
afterAll(async () => {
  await Effect.runPromise(worker.close())
  history?.dispose()
})

const viaWorker = (options: VectorSearchOptions, w = worker, path = databasePath) =>
  Effect.runPromise(Effect.flatten(w.start(path, options)))
const failureViaWorker = (options: VectorSearchOptions, w = worker, path = databasePath) =>
  Effect.runPromise(Effect.flip(Effect.flatten(w.start(path, options))))
const queryVector = (text: string) => Effect.runPromise(embedder.embedQuery(text))

describe("makeVectorSearchWorker", () => {
  it("runs the built module", () => {
    expect(existsSync(fileURLToPath(builtVectorSearchModule()))).toBe(true)
  })

  it("gives the same hits as in-process search: codes, exact, and pre-filtered", async () => {
    const fingerprint = embedder.info.fingerprint
    for (const text of ["frost watering calendar", "exponential backoff retries", "postcode"]) {
      const vector = await queryVector(text)
      const cases: ReadonlyArray<VectorSearchOptions> = [
        { vector, k: 10, fingerprint },
        { vector, k: 10, fingerprint, mode: "exact" },
        { vector, k: 5, fingerprint, withinChunkIds: [1, 2, 3, 5, 8, 13] },
      ]
      for (const options of cases) {
        const local = await history.run(searchVectors(options))
        expect(local.length).toBeGreaterThan(0)
        expect(await viaWorker(options)).toEqual(local)
      }
    }
  })

  // terminate() while the worker was inside a better-sqlite3 call that threw (a damaged
  // database) aborted the process with a V8 fatal error; close lets the worker end itself.
  it("closes by letting the worker end itself (exit code 0), not by terminating it", async () => {
    const spawned: Array<Worker> = []
    const onWorker = (w: Worker) => spawned.push(w)
    process.on("worker", onWorker)
    const own = makeVectorSearchWorker()
    try {
      const vector = await queryVector("frost watering calendar")
      await viaWorker({ vector, k: 3, fingerprint: embedder.info.fingerprint }, own)
    } finally {
      process.off("worker", onWorker)
    }
    expect(spawned).toHaveLength(1)
    const exitCode = new Promise<number>((resolve) => spawned[0]!.once("exit", resolve))
    await Effect.runPromise(own.close())
    expect(await exitCode).toBe(0)
  })

  it("leaves searchRecall's results unchanged, scoped or not", async () => {
    const inputs: ReadonlyArray<RecallSearchInput> = [
      { query: "which database for the garden planner", timezone: "UTC" },
      { query: "frost watering calendar", scopeCwd: "/work/garden", vectorFilter: "pre" },
      { query: "frost watering calendar", scopeCwd: "/work/garden", vectorFilter: "post" },
      { query: "exponential backoff", source: "codex", k: 3 },
    ]
    for (const input of inputs) {
      const local = await history.run(searchRecall(input, { embedder }))
      const remote = await history.run(searchRecall(input, { embedder, vectorWorker: worker }))
      expect(remote.arms.vector.ran).toBe(true)
      expect(remote).toEqual(local)
    }
  })

  it("warms without changing hits, and a warm that cannot happen fails nothing", async () => {
    const fingerprint = embedder.info.fingerprint
    const fresh = makeVectorSearchWorker()
    await Effect.runPromise(fresh.warm(databasePath))
    await Effect.runPromise(fresh.warm(join(history.dataDir, "missing.db")))
    const vector = await queryVector("frost watering calendar")
    const local = await history.run(searchVectors({ vector, k: 10, fingerprint }))
    expect(await viaWorker({ vector, k: 10, fingerprint }, fresh)).toEqual(local)
    await Effect.runPromise(fresh.close())
    await Effect.runPromise(fresh.warm(databasePath)) // closed: a no-op, not a restart
    expect(await failureViaWorker({ vector, k: 10, fingerprint }, fresh)).toMatchObject({
      _tag: "VectorWorkerUnavailable",
    })
    const broken = makeVectorSearchWorker({ moduleUrl: "file:///nonexistent/vector-knn.js" })
    await Effect.runPromise(broken.warm(databasePath))
    await Effect.runPromise(broken.close())
  })

  it("warmVectorsIn reads every usable code set into the process cache", async () => {
    const counts = await history.run(
      RecallDatabase.use((db) =>
        Effect.sync(() => ({
          vectors: db.sqlite.prepare("select count(*) from vector_keys").pluck().get() as number,
          usable: codesUsableFor(db.sqlite, embedder.info.fingerprint),
          warmed: warmVectorsIn(db.sqlite),
        })),
      ),
    )
    expect(counts.usable).toBe(true)
    expect(counts.vectors).toBeGreaterThan(0)
    expect(counts.warmed).toBe(counts.vectors)
  })

  it("streams code sets larger than it may hold: the same hits, nothing warmed", async () => {
    // A fresh database file: the process cache is keyed by file, so nothing is held for it yet.
    const other = await indexedHistory(defaultHistory, embedder)
    try {
      const fingerprint = embedder.info.fingerprint
      const bytesPerCode = 4 + 64 / 8
      const warm = (holdBytes: number) =>
        other.run(
          RecallDatabase.use((db) => Effect.sync(() => warmVectorsIn(db.sqlite, { holdBytes }))),
        )
      const vectors = await other.run(
        RecallDatabase.use((db) =>
          Effect.sync(
            () => db.sqlite.prepare("select count(*) from vector_keys").pluck().get() as number,
          ),
        ),
      )
      expect(await warm(vectors * bytesPerCode - 1)).toBe(0)
      const path = join(other.dataDir, "recall-index.db")
      const streaming = makeVectorSearchWorker({ holding: { holdBytes: 0 } })
      try {
        for (const text of ["frost watering calendar", "exponential backoff retries"]) {
          const vector = await queryVector(text)
          for (const options of [
            { vector, k: 10, fingerprint },
            { vector, k: 5, fingerprint, pool: 8 },
          ]) {
            const local = await other.run(searchVectors(options))
            expect(local.length).toBeGreaterThan(0)
            expect(await viaWorker(options, streaming, path)).toEqual(local)
          }
        }
      } finally {
        await Effect.runPromise(streaming.close())
      }
      // At the limit the set is held (and stays held for the next warm).
      expect(await warm(vectors * bytesPerCode)).toBe(vectors)
      expect(await warm(0)).toBe(vectors)
    } finally {
      other.dispose()
    }
  })

  it("fails a worker that cannot start as unavailable, and searchRecall falls back", async () => {
    const broken = makeVectorSearchWorker({ moduleUrl: "file:///nonexistent/vector-search.js" })
    const vector = await queryVector("postcode")
    const error = await failureViaWorker(
      { vector, k: 5, fingerprint: embedder.info.fingerprint },
      broken,
    )
    expect(error).toMatchObject({ _tag: "VectorWorkerUnavailable" })
    expect(error.reason).toContain("/nonexistent/vector-search.js")
    const input = { query: "keyed by postcode" }
    const local = await history.run(searchRecall(input, { embedder }))
    expect(await history.run(searchRecall(input, { embedder, vectorWorker: broken }))).toEqual(
      local,
    )
    // The fallback keeps the codes as the worker would have: a one-shot worker's streams them.
    const brokenOneShot = makeVectorSearchWorker({
      moduleUrl: "file:///nonexistent/vector-search.js",
      holding: { holdBytes: 0 },
    })
    expect(brokenOneShot.holding).toEqual({ holdBytes: 0 })
    expect(
      await history.run(searchRecall(input, { embedder, vectorWorker: brokenOneShot })),
    ).toEqual(local)
    // A module that does not load in the worker is unavailable too.
    const unloadable = makeVectorSearchWorker({ moduleUrl: "data:text/javascript,throw 1" })
    expect(
      await failureViaWorker({ vector, k: 5, fingerprint: embedder.info.fingerprint }, unloadable),
    ).toMatchObject({ _tag: "VectorWorkerUnavailable" })
    await Effect.runPromise(unloadable.close())
  })

  it("reports bad requests and a missing database as storage errors", async () => {
    const wrongDimension = await failureViaWorker({
      vector: new Float32Array(3),
      k: 5,
      fingerprint: embedder.info.fingerprint,
    })
    expect(wrongDimension).toMatchObject({ _tag: "RecallStorageError", path: databasePath })
    expect(wrongDimension.reason).toContain("query vector has 3 dimensions")
    const vector = await queryVector("postcode")
    const missing = join(history.dataDir, "missing.db")
    const absent = await failureViaWorker(
      { vector, k: 5, fingerprint: embedder.info.fingerprint },
      worker,
      missing,
    )
    expect(absent).toMatchObject({ _tag: "RecallStorageError", path: missing })
    expect(existsSync(missing)).toBe(false)
    // An unknown fingerprint has no vectors: no hits, as in-process.
    expect(await viaWorker({ vector, k: 5, fingerprint: "nobody" })).toEqual([])
  })

  it("refuses work once closed", async () => {
    const closing = makeVectorSearchWorker()
    const vector = await queryVector("postcode")
    const options = { vector, k: 5, fingerprint: embedder.info.fingerprint }
    expect((await viaWorker(options, closing)).length).toBeGreaterThan(0)
    await Effect.runPromise(closing.close())
    expect(await failureViaWorker(options, closing)).toMatchObject({
      _tag: "VectorWorkerUnavailable",
      reason: "the vector worker is closed",
    })
  })
})

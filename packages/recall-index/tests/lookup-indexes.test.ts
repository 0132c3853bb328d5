// Deferred lookup indexes: a run with much to write drops them and builds them at its end, with
// the same rows and the same schema as a run that kept them; a run that stopped before building
// them leaves them to the next indexing or embedding run; status names them meanwhile.
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  buildLookupIndexes,
  DEFER_LOOKUP_INDEXES_MIN_BYTES,
  dropLookupIndexes,
  embedBacklog,
  hasLookupIndex,
  indexStatus,
  LOOKUP_INDEXES,
  missingLookupIndexes,
  searchRecall,
  searchVectors,
  shouldDeferLookupIndexes,
} from "@baton/recall-index"
import type { IndexProgressEvent } from "@baton/recall-index"
import { generateBulkCorpus, makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { runIndex, snapshot, tempDir, withIndex, withSqlite, writeTree } from "./index-harness.js"

const home = tempDir("lookup-home")
const data = tempDir("lookup-data")
afterAll(() => {
  home.dispose()
  data.dispose()
})

const environment = {
  env: { CLAUDE_CONFIG_DIR: join(home.path, ".claude"), CODEX_HOME: join(home.path, ".codex") },
  homeDir: home.path,
}
beforeAll(() => {
  writeTree(
    generateBulkCorpus({ homeDir: home.path, files: 24, seed: 3, exchangesPerFile: 6 }).files,
  )
})

/** Every index of the database with the SQL it was built from, by name. */
const indexSql = (dataDir: string) =>
  withSqlite(
    dataDir,
    (sqlite) =>
      sqlite
        .prepare("select name, sql from sqlite_master where type = 'index' order by name")
        .all() as Array<{ name: string; sql: string | null }>,
  )

const names = LOOKUP_INDEXES.map((i) => i.name)

describe("lookup indexes", () => {
  it("are defined as the migrations create them", async () => {
    const fresh = join(data.path, "fresh")
    const created = await indexSql(fresh)
    for (const { name } of LOOKUP_INDEXES) {
      expect(created.map((i) => i.name)).toContain(name)
    }
    await withSqlite(fresh, (sqlite) => dropLookupIndexes(sqlite))
    expect((await indexSql(fresh)).map((i) => i.name)).not.toContain(names[0])
    await runIndex(fresh, { environment: { env: {}, homeDir: join(home.path, "nobody") } })
    // SQLite stores the statement without `if not exists`: the same text as the migration's.
    expect(await indexSql(fresh)).toEqual(created)
  })

  it("defer only for a run that writes much, against what is already indexed", () => {
    const min = DEFER_LOOKUP_INDEXES_MIN_BYTES
    expect(shouldDeferLookupIndexes(min, 0)).toBe(true)
    expect(shouldDeferLookupIndexes(min - 1, 0)).toBe(false)
    expect(shouldDeferLookupIndexes(min, 4 * min)).toBe(true)
    expect(shouldDeferLookupIndexes(min, 4 * min + 1)).toBe(false)
    expect(shouldDeferLookupIndexes(100 * min, 400 * min)).toBe(true)
  })

  it("a deferring run stores what a row-by-row run stores and ends with the same indexes", async () => {
    const kept = join(data.path, "kept")
    const deferred = join(data.path, "deferred")
    const events: Array<IndexProgressEvent> = []
    const keptReport = await runIndex(kept, { environment, deferLookupIndexes: false })
    const deferredReport = await runIndex(deferred, {
      environment,
      deferLookupIndexes: true,
      onProgress: (e) => events.push(e),
    })
    expect(deferredReport.indexedNew).toBe(24)
    expect(deferredReport.turnsAdded).toBe(keptReport.turnsAdded)
    const building = events.filter((e) => e._tag === "BuildingLookupIndexes")
    expect(building).toEqual([{ _tag: "BuildingLookupIndexes", indexes: names }])
    // Built after the last file and before the run finished.
    expect(events.indexOf(building[0]!)).toBe(events.length - 2)
    const words = ["retry", "frost", "upload"]
    expect(await snapshot(deferred, words)).toEqual(await snapshot(kept, words))
    expect(await indexSql(deferred)).toEqual(await indexSql(kept))
  })

  it("a small run keeps them and builds nothing", async () => {
    const dataDir = join(data.path, "small")
    // The 24 files are far below the threshold: the indexes stay and are never rebuilt.
    const events: Array<IndexProgressEvent> = []
    await runIndex(dataDir, { environment, onProgress: (e) => events.push(e) })
    expect(events.some((e) => e._tag === "BuildingLookupIndexes")).toBe(false)
    expect(await withSqlite(dataDir, missingLookupIndexes)).toEqual([])
  })

  it("are built with the connection's settings back after", async () => {
    const dataDir = join(data.path, "settings")
    await runIndex(dataDir, { environment })
    const { before, after, built } = await withSqlite(dataDir, (sqlite) => {
      const settings = () =>
        ["temp_store", "threads", "cache_size"].map((name) => sqlite.pragma(name, { simple: true }))
      dropLookupIndexes(sqlite)
      const before = settings()
      const built = buildLookupIndexes(sqlite)
      return { before, after: settings(), built }
    })
    expect(built).toEqual(names)
    expect(before).toEqual([2, 0, -65536]) // the connection's: temporary storage in memory
    expect(after).toEqual(before)
  })

  it("are built inside an open transaction, with the temporary storage left as it was", async () => {
    const dataDir = join(data.path, "in-transaction")
    await runIndex(dataDir, { environment })
    const built = await withSqlite(dataDir, (sqlite) => {
      dropLookupIndexes(sqlite)
      return sqlite.transaction(() => buildLookupIndexes(sqlite))()
    })
    expect(built).toEqual(names)
    expect(await withSqlite(dataDir, missingLookupIndexes)).toEqual([])
  })

  it("left missing by a run that stopped, are named by status and built by the next run", async () => {
    const dataDir = join(data.path, "stopped")
    await runIndex(dataDir, { environment })
    await withSqlite(dataDir, (sqlite) => dropLookupIndexes(sqlite))
    const status = await withIndex(dataDir, indexStatus(Date.now()))
    expect(status.missingLookupIndexes).toEqual(names)
    // Nothing changed on disk, yet the run builds them.
    const events: Array<IndexProgressEvent> = []
    const report = await runIndex(dataDir, { environment, onProgress: (e) => events.push(e) })
    expect(report.unchanged).toBe(24)
    expect(events.filter((e) => e._tag === "BuildingLookupIndexes")).toHaveLength(1)
    expect((await withIndex(dataDir, indexStatus(Date.now()))).missingLookupIndexes).toEqual([])
  })

  it("while missing, vector search and searchRecall answer as with them (reading the chunks once)", async () => {
    const dataDir = join(data.path, "answers")
    await runIndex(dataDir, { environment })
    const embedder = makeDeterministicEmbedder()
    await withIndex(dataDir, embedBacklog(embedder))
    const ask = async () => {
      const vector = await withIndex(
        dataDir,
        embedder.embedQuery("retry the upload after a timeout"),
      )
      const knn = await withIndex(
        dataDir,
        searchVectors({ vector, k: 12, fingerprint: embedder.info.fingerprint }),
      )
      const recall = await withIndex(
        dataDir,
        searchRecall({ query: "retry the upload after a timeout", k: 10 }, { embedder }),
      )
      return { knn, hits: recall.hits.map((h) => [h.sessionId, h.turnId]) }
    }
    const withThem = await ask()
    expect(withThem.knn.length).toBeGreaterThan(0)
    expect(withThem.hits.length).toBeGreaterThan(0)
    await withSqlite(dataDir, (sqlite) => dropLookupIndexes(sqlite))
    expect(await ask()).toEqual(withThem)
    // The chunks of the nearest keys come from one pass over the table, not a lookup per key.
    const plan = await withSqlite(dataDir, (sqlite) =>
      sqlite
        .prepare("explain query plan select 1 from chunks where content_hash = ?")
        .all("x")
        .map((r) => (r as { detail: string }).detail)
        .join(" "),
    )
    expect(plan).not.toContain("chunks_content_hash")
    expect(
      await withSqlite(dataDir, (sqlite) => hasLookupIndex(sqlite, "chunks_content_hash")),
    ).toBe(false)
  })

  it("left missing, are built by an embedding run before it looks up copies by content hash", async () => {
    const dataDir = join(data.path, "embed")
    await runIndex(dataDir, { environment })
    await withSqlite(dataDir, (sqlite) => dropLookupIndexes(sqlite))
    const embedded = await withIndex(dataDir, embedBacklog(makeDeterministicEmbedder()))
    expect(embedded.remaining).toBe(0)
    expect(await withSqlite(dataDir, missingLookupIndexes)).toEqual([])
    const plans = await withSqlite(dataDir, (sqlite) =>
      sqlite
        .prepare("explain query plan update chunks set needs_embedding = 0 where content_hash = ?")
        .all("x")
        .map((r) => (r as { detail: string }).detail),
    )
    expect(plans.join(" ")).toContain("chunks_content_hash")
  })
})

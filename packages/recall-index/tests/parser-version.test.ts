// Parser versions (schema 10): a Baton whose parser learned something reads the transcripts still
// on disk again whole in its next run — once — and reuses their vectors; a transcript gone from
// disk keeps what the earlier parser made of it; an index written before the column is version 1.
import { rmSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import {
  embedBacklog,
  indexStatus,
  RECALL_SCHEMA_VERSION,
  TRANSCRIPT_PARSER_VERSION,
} from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import {
  checkFullText,
  indexedFixture,
  rewindParserVersions,
  runIndex,
  snapshot,
  storedCountMismatches,
  withIndex,
  withSqlite,
} from "./index-harness.js"

const fixtures: Array<{ dispose: () => void }> = []
afterAll(() => {
  for (const f of fixtures) f.dispose()
})
const fixture = async (seed: number) => {
  const f = await indexedFixture(seed)
  fixtures.push(f)
  return f
}

const embedder = makeDeterministicEmbedder({ dim: 32 })
const V = TRANSCRIPT_PARSER_VERSION
const WORDS = ["retry", "backoff", "migration", "token"]

const parserVersions = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) =>
    sqlite
      .prepare("select parser_version as v, count(*) as n from files group by v order by v")
      .all(),
  )

/** Makes one chunk and one raw record read as an older parser might have left them. */
const stale = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) => {
    sqlite.prepare("update chunks set text = 'what an older parser made of it' where id = 1").run()
    sqlite.prepare("update raw_records set text = '{}' where id = 1").run()
  })

describe("parser versions", () => {
  it("read every transcript on disk again once after an upgrade, vectors reused", async () => {
    const f = await fixture(21)
    const files = f.report.indexedNew
    expect(files).toBeGreaterThan(3)
    expect(await withIndex(f.dataDir, embedBacklog(embedder))).toMatchObject({ remaining: 0 })
    const fresh = await snapshot(f.dataDir, WORDS)

    await stale(f.dataDir)
    const same = await runIndex(f.dataDir, { environment: f.environment })
    expect(same).toMatchObject({ unchanged: files, reparsed: 0, turnsAdded: 0 })
    expect(await snapshot(f.dataDir, WORDS)).not.toEqual(fresh)

    const upgraded = await runIndex(f.dataDir, { environment: f.environment, parserVersion: V + 1 })
    expect(upgraded).toMatchObject({
      unchanged: 0,
      reparsed: files,
      indexedNew: 0,
      rewritten: 0,
      appended: 0,
      failed: [],
    })
    expect(upgraded.turnsAdded).toBeGreaterThan(0)
    // Same texts, same content hashes: every vector is reused, none embedded again.
    const reembedded = await withIndex(f.dataDir, embedBacklog(embedder))
    expect(reembedded).toMatchObject({ embedded: 0, remaining: 0 })
    expect(reembedded.reused).toBeGreaterThan(0)
    expect(await snapshot(f.dataDir, WORDS)).toEqual(fresh)
    expect(await parserVersions(f.dataDir)).toEqual([{ v: V + 1, n: files }])
    expect(await storedCountMismatches(f.dataDir)).toEqual([])
    expect(await checkFullText(f.dataDir)).toBe(0)

    const after = await runIndex(f.dataDir, { environment: f.environment, parserVersion: V + 1 })
    expect(after).toMatchObject({ unchanged: files, reparsed: 0 })
    // A Baton with an older parser leaves what a newer one made alone.
    expect(await runIndex(f.dataDir, { environment: f.environment })).toMatchObject({
      unchanged: files,
      reparsed: 0,
    })
    const status = await withIndex(f.dataDir, indexStatus(Date.now()))
    expect(status.lastRun).toMatchObject({ reparsed: 0, unchanged: files })
  })

  it("leave a transcript gone from disk as the earlier parser indexed it", async () => {
    const f = await fixture(22)
    const gone = Object.keys(f.corpus.files).find((p) => p.endsWith(".jsonl"))!
    const turnsOf = (path: string) =>
      withSqlite(f.dataDir, (sqlite) =>
        sqlite
          .prepare("select count(*) from turns t join files f on f.id = t.file_id where f.path = ?")
          .pluck()
          .get(path),
      )
    const turns = await turnsOf(gone)
    expect(turns).toBeGreaterThan(0)
    rmSync(gone)
    const upgraded = await runIndex(f.dataDir, { environment: f.environment, parserVersion: V + 1 })
    expect(upgraded).toMatchObject({ markedMissing: 1, reparsed: f.report.indexedNew - 1 })
    expect(await turnsOf(gone)).toBe(turns)
    expect(await parserVersions(f.dataDir)).toEqual([
      { v: V, n: 1 },
      { v: V + 1, n: f.report.indexedNew - 1 },
    ])
  })

  it("of an index written before schema 10 are 1, read again by the next run's parser", async () => {
    const f = await fixture(23)
    await withSqlite(f.dataDir, rewindParserVersions)
    // A stored last run of schema 9 has no `reparsed`: it decodes as 0.
    await withSqlite(f.dataDir, (sqlite) => {
      const report = JSON.parse(
        sqlite.prepare("select value from meta where key = 'last_run'").pluck().get() as string,
      ) as Record<string, unknown>
      delete report.reparsed
      sqlite.prepare("update meta set value = ? where key = 'last_run'").run(JSON.stringify(report))
    })
    expect((await withIndex(f.dataDir, indexStatus(Date.now()))).lastRun?.reparsed).toBe(0)
    const migrated = await withSqlite(f.dataDir, (sqlite) =>
      sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
    )
    expect(migrated).toBe(String(RECALL_SCHEMA_VERSION))
    expect(await parserVersions(f.dataDir)).toEqual([{ v: 1, n: f.report.indexedNew }])
    // Status says how many an earlier parser read, until the next run reads them again.
    const olderParser = async () =>
      (await withIndex(f.dataDir, indexStatus(Date.now()))).olderParserFiles
    expect(await olderParser()).toBe(f.report.indexedNew)
    // Parser 2 masks passwords in URLs, which parser 1 (schema 9's) left as they were.
    expect(V).toBeGreaterThan(1)
    expect(await runIndex(f.dataDir, { environment: f.environment })).toMatchObject({
      unchanged: 0,
      reparsed: f.report.indexedNew,
    })
    expect(await parserVersions(f.dataDir)).toEqual([{ v: V, n: f.report.indexedNew }])
    expect(await olderParser()).toBe(0)
  })
})

// The lexical backlog (schema 8): a bulk run leaves its new chunks out of `chunks_fts` and adds
// them at its end. A run that stops before that leaves a consistent index whose newest chunks the
// lexical arm does not find yet; rewrites, prunes and forgets meanwhile never ask FTS5 to delete a
// row it does not hold; the next run adds the rest. Checked against a twin index that never defers
// and with FTS5's own integrity check against the chunk rows.
import BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"
import fc from "fast-check"
import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  deferLexicalIndex,
  finishLexicalBacklog,
  forgetSessions,
  indexStatus,
  lexicalBacklogSize,
  matchChunks,
  pruneDeleted,
  RECALL_SCHEMA_VERSION,
  RECALL_DATABASE_FILE,
  searchRecall,
  shouldDeferLexicalIndex,
  TRANSCRIPT_PARSER_VERSION,
} from "@baton/recall-index"
import type { IndexOptions, IndexProgressEvent } from "@baton/recall-index"
import { generateBulkCorpus } from "@baton/recall-index/testing"
import {
  checkFullText,
  insertChunkRows,
  rewindLexicalBacklog,
  runIndex,
  snapshot,
  tempDirsForFile,
  withIndex,
  withSqlite,
  writeTree,
} from "./index-harness.js"

const temp = tempDirsForFile()

const environmentOf = (home: string): IndexOptions["environment"] => ({
  env: { CLAUDE_CONFIG_DIR: join(home, ".claude"), CODEX_HOME: join(home, ".codex") },
  homeDir: home,
})

/** Two batches of bulk-corpus transcripts under one home, written as the test asks. */
const corpus = (home: string) => {
  const files = Object.entries(
    generateBulkCorpus({ homeDir: home, files: 16, seed: 5, exchangesPerFile: 6 }).files,
  )
  return {
    first: Object.fromEntries(files.slice(0, 8)),
    second: Object.fromEntries(files.slice(8)),
  }
}

/** A home with both batches generated and the first written and indexed row by row. */
const indexedFirstBatch = async (name: string) => {
  const home = temp(`${name}-home`)
  const batches = corpus(home)
  writeTree(batches.first)
  const dataDir = temp(name)
  const environment = environmentOf(home)
  await runIndex(dataDir, { environment })
  return { ...batches, dataDir, environment }
}

const sessionIdOf = (path: string) =>
  path
    .split("/")
    .pop()!
    .replace(/\.jsonl$/, "")

const words = ["retry", "upload", "frost", "timeout", "cache"]

/** A progress listener that stops the run once its files are written (a kill at that point). */
class StoppedBeforeFullText extends Error {}
const stopAtFullText = (event: IndexProgressEvent) => {
  if (event._tag === "BuildingLexicalIndex") throw new StoppedBeforeFullText()
}

describe("lexical backlog", () => {
  it("a deferring run stores and finds what a row-by-row run does", async () => {
    const home = temp("lexical-home")
    const { first, second } = corpus(home)
    writeTree({ ...first, ...second })
    const kept = temp("lexical-kept")
    const deferred = temp("lexical-deferred")
    const environment = environmentOf(home)
    await runIndex(kept, { environment, deferLexicalIndex: false, deferLookupIndexes: true })
    const events: Array<IndexProgressEvent> = []
    const report = await runIndex(deferred, {
      environment,
      deferLexicalIndex: true,
      deferLookupIndexes: true,
      onProgress: (e) => events.push(e),
    })
    const tags = events.map((e) => e._tag)
    // After the last file, before the lookup indexes; every chunk of the run.
    expect(tags.slice(-3)).toEqual(["BuildingLexicalIndex", "BuildingLookupIndexes", "Finished"])
    expect(events.find((e) => e._tag === "BuildingLexicalIndex")).toEqual({
      _tag: "BuildingLexicalIndex",
      chunks: report.chunksAdded,
    })
    expect(report.chunksAdded).toBeGreaterThan(100)
    expect(await snapshot(deferred, words)).toEqual(await snapshot(kept, words))
    expect(await checkFullText(deferred)).toBe(0)
  })

  it("defers only a large run that rewrites no indexed content", () => {
    const min = 16 * 1024 * 1024
    expect(
      shouldDeferLexicalIndex({
        plannedBytes: min,
        indexedBytes: 0,
        replacesIndexedContent: false,
      }),
    ).toBe(true)
    expect(
      shouldDeferLexicalIndex({ plannedBytes: min, indexedBytes: 0, replacesIndexedContent: true }),
    ).toBe(false)
    expect(
      shouldDeferLexicalIndex({
        plannedBytes: min - 1,
        indexedBytes: 0,
        replacesIndexedContent: false,
      }),
    ).toBe(false)
  })

  it("a large re-parse of indexed sessions keeps every one of them in word search while it runs", async () => {
    const home = temp("lexical-reparse-home")
    // 16 files of ~1.2 MB: above the bulk threshold, mostly tool output (raw records, few chunks).
    const { files } = generateBulkCorpus({
      homeDir: home,
      files: 16,
      seed: 9,
      exchangesPerFile: 12,
      toolOutputChars: 100_000,
    })
    writeTree(files)
    const bytes = Object.values(files).reduce((sum, text) => sum + Buffer.byteLength(text), 0)
    expect(bytes).toBeGreaterThan(16 * 1024 * 1024)
    const dataDir = temp("lexical-reparse")
    const environment = environmentOf(home)
    await runIndex(dataDir, { environment })
    const reader = new BetterSqlite3(join(dataDir, RECALL_DATABASE_FILE), { readonly: true })
    try {
      const sessionsFound = () =>
        reader
          .prepare(
            `select count(distinct t.session_row) from chunks_fts f
               join chunks c on c.id = f.rowid join turns t on t.id = c.turn_row
               where chunks_fts match 'retry'`,
          )
          .pluck()
          .get() as number
      const before = sessionsFound()
      expect(before).toBe(16)
      const seen: Array<number> = []
      const events: Array<IndexProgressEvent> = []
      const report = await runIndex(dataDir, {
        environment,
        parserVersion: TRANSCRIPT_PARSER_VERSION + 1,
        onProgress: (e) => {
          events.push(e)
          if (e._tag === "FileIndexed") seen.push(sessionsFound())
        },
      })
      expect(report.reparsed).toBe(16)
      expect(seen).toEqual(Array.from({ length: 16 }, () => before))
      expect(events.some((e) => e._tag === "BuildingLexicalIndex")).toBe(false)
    } finally {
      reader.close()
    }
    expect(await checkFullText(dataDir)).toBe(0)
  })

  it("a small run adds its chunks row by row", async () => {
    const home = temp("lexical-small-home")
    writeTree(corpus(home).first)
    const events: Array<IndexProgressEvent> = []
    const dataDir = temp("lexical-small")
    await runIndex(dataDir, { environment: environmentOf(home), onProgress: (e) => events.push(e) })
    expect(events.some((e) => e._tag === "BuildingLexicalIndex")).toBe(false)
    expect((await snapshot(dataDir, ["retry"])).fts["retry"]!.length).toBeGreaterThan(0)
  })

  it("a run stopped before its end leaves the newest chunks out; rewrites, prunes and forgets meanwhile keep the index sound; the next run adds them", async () => {
    const home = temp("lexical-stop-home")
    const { first, second } = corpus(home)
    const twins = { kept: temp("lexical-stop-kept"), stopped: temp("lexical-stop-stopped") }
    const environment = environmentOf(home)
    writeTree(first)
    for (const dataDir of Object.values(twins)) await runIndex(dataDir, { environment })
    writeTree(second)
    await runIndex(twins.kept, { environment, deferLexicalIndex: false })
    await expect(
      runIndex(twins.stopped, {
        environment,
        deferLexicalIndex: true,
        onProgress: stopAtFullText,
      }),
    ).rejects.toThrow()

    // The second batch's chunks are stored and counted, not found by words yet.
    const secondChunks = await withSqlite(
      twins.kept,
      (sqlite) =>
        sqlite
          .prepare(
            `select count(*) from chunks c join turns t on t.id = c.turn_row
               join files f on f.id = t.file_id where f.path in (${Object.keys(second)
                 .map(() => "?")
                 .join(", ")})`,
          )
          .pluck()
          .get(...Object.keys(second)) as number,
    )
    expect(secondChunks).toBeGreaterThan(50)
    const status = await withIndex(twins.stopped, indexStatus(Date.now()))
    expect(status.lexicalBacklog).toBe(secondChunks)
    expect(status.chunks).toBe((await withIndex(twins.kept, indexStatus(Date.now()))).chunks)
    const [secondPath] = Object.keys(second)
    const sessionId = sessionIdOf(secondPath!)
    // A word of that session's first chunk.
    const word = await withSqlite(twins.kept, (sqlite) => {
      const text = sqlite
        .prepare(
          `select c.text from chunks c join turns t on t.id = c.turn_row
             join sessions s on s.id = t.session_row where s.session_id = ? order by c.id limit 1`,
        )
        .pluck()
        .get(sessionId) as string
      return /[a-z]{5,}/i.exec(text)![0]
    })
    const found = async (dataDir: string) =>
      (await withIndex(dataDir, matchChunks(word, { limit: 5000 }))).filter(
        (m) => m.sessionId === sessionId,
      ).length
    expect(await found(twins.kept)).toBeGreaterThan(0)
    expect(await found(twins.stopped)).toBe(0)
    // A search says what it lacks.
    const degraded = async (dataDir: string) =>
      (await withIndex(dataDir, searchRecall({ query: word, k: 5 }, {}))).degraded
    expect(await degraded(twins.stopped)).toContain("not in the full-text index yet")
    expect(await degraded(twins.kept)).toBeNull()

    // Meanwhile, on both twins: forget one session of each batch, delete a file of each batch
    // and prune, rewrite a file of each batch (shorter: its chunks are replaced).
    const [forgetFirst, pruneFirst, rewriteFirst] = Object.keys(first)
    const [, forgetSecond, pruneSecond, rewriteSecond] = Object.keys(second)
    for (const path of [pruneFirst!, pruneSecond!]) rmSync(path)
    for (const path of [rewriteFirst!, rewriteSecond!]) {
      const lines = (first[path] ?? second[path])!.split("\n")
      writeFileSync(path, `${lines.slice(0, Math.floor(lines.length / 2)).join("\n")}\n`)
    }
    for (const dataDir of Object.values(twins)) {
      await withIndex(
        dataDir,
        Effect.gen(function* () {
          for (const path of [forgetFirst!, forgetSecond!])
            yield* forgetSessions({ _tag: "Session", sessionId: sessionIdOf(path) })
        }),
      )
      // Marks the deleted files missing and rewrites the truncated ones; the stopped twin adds
      // what its first run left out at the end of this one.
      await runIndex(dataDir, { environment })
      await withIndex(dataDir, pruneDeleted())
    }
    expect(await checkFullText(twins.stopped)).toBe(0)
    expect(await snapshot(twins.stopped, words)).toEqual(await snapshot(twins.kept, words))
    expect(await found(twins.stopped)).toBe(await found(twins.kept))
    expect(await degraded(twins.stopped)).toBeNull()
  })

  it("a chunk given a row id at or below the mark goes into the full-text index at once", async () => {
    const { dataDir } = await indexedFirstBatch("lexical-reuse")
    const { reused, mark, added } = await withSqlite(dataDir, (sqlite) => {
      deferLexicalIndex(sqlite)
      const mark = sqlite.prepare("select above from lexical_backlog").pluck().get() as number
      // The highest chunk goes (taken out of the full-text index: it is at the mark); SQLite
      // hands its row id to the next insert.
      sqlite.prepare("delete from chunks where id = ?").run(mark)
      const reused = sqlite
        .prepare(
          `insert into chunks (turn_row, surface_index, chunk_index, role, char_start, char_end,
             text, content_hash)
           select turn_row, surface_index, chunk_index + 1000, role, char_start, char_end,
             'quokkaphrase ' || text, content_hash from chunks where id = 1`,
        )
        .run().lastInsertRowid
      return { reused: Number(reused), mark, added: finishLexicalBacklog(sqlite) }
    })
    expect(reused).toBe(mark)
    expect(added).toBe(0)
    expect(await checkFullText(dataDir)).toBe(0)
    const hits = await withIndex(dataDir, matchChunks("quokkaphrase", { limit: 10 }))
    expect(hits).toHaveLength(1)
  })

  it("setting the mark again keeps the older one", async () => {
    const { second, dataDir, environment } = await indexedFirstBatch("lexical-mark")
    const marks = await withSqlite(dataDir, (sqlite) => {
      deferLexicalIndex(sqlite)
      return sqlite.prepare("select above from lexical_backlog").pluck().get() as number
    })
    writeTree(second)
    await expect(
      runIndex(dataDir, { environment, deferLexicalIndex: true, onProgress: stopAtFullText }),
    ).rejects.toThrow()
    expect(
      await withSqlite(dataDir, (sqlite) => {
        deferLexicalIndex(sqlite)
        return sqlite.prepare("select above from lexical_backlog").pluck().get()
      }),
    ).toBe(marks)
    await runIndex(dataDir, { environment })
    expect(await checkFullText(dataDir)).toBe(0)
  })

  it("setting the mark again moves it down when no chunk above it is left", async () => {
    const { dataDir } = await indexedFirstBatch("lexical-mark-down")
    const result = await withSqlite(dataDir, (sqlite) => {
      const mark = () => sqlite.prepare("select above from lexical_backlog").pluck().get() as number
      deferLexicalIndex(sqlite)
      const first = mark()
      // The three highest chunks go (at or below the mark: taken out of the full-text index).
      sqlite.prepare("delete from chunks where id > ?").run(first - 3)
      deferLexicalIndex(sqlite)
      const second = mark()
      sqlite.exec(`insert into chunks (turn_row, surface_index, chunk_index, role, char_start,
          char_end, text, content_hash)
        select turn_row, surface_index, chunk_index + 1000, role, char_start, char_end, text,
          content_hash from chunks where id = 1`)
      return {
        first,
        second,
        waiting: lexicalBacklogSize(sqlite),
        added: finishLexicalBacklog(sqlite),
      }
    })
    // The new chunk (id first - 2) waits for the fill instead of going in row by row.
    expect(result).toEqual({ first: result.first, second: result.first - 3, waiting: 1, added: 1 })
    expect(await checkFullText(dataDir)).toBe(0)
  })

  it("migrates a schema 7 index: the triggers gain their condition and a bulk run defers", async () => {
    const { second, dataDir, environment } = await indexedFirstBatch("lexical-migrate")
    await withSqlite(dataDir, rewindLexicalBacklog)
    const schema = await withSqlite(dataDir, (sqlite) => ({
      version: sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
      triggers: (
        sqlite
          .prepare(
            "select sql from sqlite_master where type = 'trigger' and name like 'chunks_fts%'",
          )
          .pluck()
          .all() as Array<string>
      ).every((sql) => sql.includes("lexical_backlog")),
    }))
    expect(schema).toEqual({ version: String(RECALL_SCHEMA_VERSION), triggers: true })
    writeTree(second)
    const events: Array<IndexProgressEvent> = []
    await runIndex(dataDir, {
      environment,
      deferLexicalIndex: true,
      onProgress: (e) => events.push(e),
    })
    expect(events.some((e) => e._tag === "BuildingLexicalIndex")).toBe(true)
    expect(await checkFullText(dataDir)).toBe(0)
  })

  it("keeps exactly the chunks at or below the mark in the full-text index through any writes (property)", async () => {
    type Op =
      | { readonly op: "insert" }
      | { readonly op: "deleteMax" }
      | { readonly op: "delete"; readonly at: number }
      | { readonly op: "update"; readonly at: number }
      | { readonly op: "defer" }
      | { readonly op: "finish" }
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.constant({ op: "insert" as const }), weight: 4 },
      fc.constant({ op: "deleteMax" as const }),
      fc.record({ op: fc.constant("delete" as const), at: fc.nat(50) }),
      fc.record({ op: fc.constant("update" as const), at: fc.nat(50) }),
      fc.constant({ op: "defer" as const }),
      fc.constant({ op: "finish" as const }),
    )
    let run = 0
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        run += 1
        const dataDir = join(temp("lexical-property"), `run-${run}`)
        await insertChunkRows(dataDir, [{ sessionId: "s", texts: ["zz0x start"] }])
        await withSqlite(dataDir, (sqlite) => {
          let word = 0
          const ids = () => sqlite.prepare("select id from chunks order by id").pluck().all()
          const pick = (at: number) => {
            const all = ids() as Array<number>
            return all.length === 0 ? undefined : all[at % all.length]
          }
          for (const step of ops) {
            if (step.op === "insert") {
              word += 1
              sqlite
                .prepare(
                  `insert into chunks (turn_row, surface_index, chunk_index, role, char_start,
                     char_end, text, content_hash) values (1, 0, 0, 'assistant', 0, 1, ?, 'h')`,
                )
                .run(`zz${word}x`)
            } else if (step.op === "deleteMax") {
              sqlite.prepare("delete from chunks where id = (select max(id) from chunks)").run()
            } else if (step.op === "delete") {
              sqlite.prepare("delete from chunks where id = ?").run(pick(step.at) ?? -1)
            } else if (step.op === "update") {
              word += 1
              sqlite
                .prepare("update chunks set text = ? where id = ?")
                .run(`zz${word}x`, pick(step.at) ?? -1)
            } else if (step.op === "defer") deferLexicalIndex(sqlite)
            else finishLexicalBacklog(sqlite)
            // Each chunk is found by its word exactly when it is at or below the mark.
            const mark = sqlite.prepare("select above from lexical_backlog").pluck().get() as
              number | undefined
            const rows = sqlite.prepare("select id, text from chunks").all() as Array<{
              id: number
              text: string
            }>
            for (const row of rows) {
              const found = sqlite
                .prepare("select rowid from chunks_fts where chunks_fts match ?")
                .pluck()
                .all(`"${row.text}"`)
              expect(found).toEqual(mark === undefined || row.id <= mark ? [row.id] : [])
            }
          }
          finishLexicalBacklog(sqlite)
          sqlite
            .prepare("insert into chunks_fts(chunks_fts, rank) values ('integrity-check', 1)")
            .run()
        })
      }),
      { numRuns: 60 },
    )
  })
})

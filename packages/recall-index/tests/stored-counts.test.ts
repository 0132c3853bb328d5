// Stored counts (schema 7): the per-session turn, chunk and record counts and the per-embedder
// vector counts that status sums must equal a recount of the rows after every kind of write —
// new files, appends, rewrites, a session spread over two files losing one, prune, forget,
// embedding, an embedder switch — and after the migration fills them on an older index.
import Database from "better-sqlite3"
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { Effect, Layer } from "effect"
import {
  embedBacklog,
  forgetSessions,
  IndexerProcess,
  indexStatus,
  pruneDeleted,
  RECALL_DATABASE_FILE,
  RecallDatabase,
  recallStatus,
} from "@baton/recall-index"
import type { Embedder } from "@baton/recall-index"
import {
  claudeExchange,
  generateFixtureCorpus,
  makeDeterministicEmbedder,
  seededRandom,
} from "@baton/recall-index/testing"
import {
  rewindStoredCounts,
  storedAndRecounted,
  storedCountMismatches,
  runIndex,
  tempDir,
  withIndex,
  withSqlite,
  writeTree,
} from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const setup = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const corpus = generateFixtureCorpus({ seed: 5, homeDir: home.path })
  writeTree(corpus.files)
  const environment = {
    env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
    homeDir: home.path,
  }
  return { dataDir: join(data.path, "baton"), corpus, environment }
}

const spaceOf = (fingerprint: string): Embedder => {
  const inner = makeDeterministicEmbedder({ dim: 16 })
  return { ...inner, info: { ...inner.info, fingerprint } }
}

/** Asserts every stored count equals its recount, and status reports the recounted totals. */
const expectCountsExact = async (dataDir: string) => {
  const { sessions, embedders, totals } = await storedAndRecounted(dataDir)
  expect(await storedCountMismatches(dataDir)).toEqual([])
  const status = await withIndex(dataDir, indexStatus(Date.now()))
  expect({
    sessions: status.sessions,
    turns: status.turns,
    chunks: status.chunks,
    raws: status.rawRecords,
  }).toEqual(totals)
  const full = await withIndex(dataDir, recallStatus())
  const { claude, codex } = full.bySource
  expect(claude.turns + codex.turns).toBe(totals.turns)
  expect(claude.chunks + codex.chunks).toBe(totals.chunks)
  expect(claude.sessions + codex.sessions).toBe(totals.sessions)
  expect(full.embedders.map((e) => [e.fingerprint, e.vectors])).toEqual(
    full.embedders.map((e) => [
      e.fingerprint,
      embedders.find((x) => x.fingerprint === e.fingerprint)?.vectors,
    ]),
  )
  expect(full.embedders).toHaveLength(embedders.length)
  return { sessions, totals }
}

/** A Claude transcript of the corpus (not a subagent's). */
const claudePath = (corpus: ReturnType<typeof generateFixtureCorpus>) =>
  corpus.expectations.find(
    (x) =>
      x.source === "claude" && x.discovered && x.role !== "subagent" && x.path.endsWith(".jsonl"),
  )!.path

describe("stored counts", () => {
  it("equal a recount after new files, appends, rewrites, a split session, prune and forget", async () => {
    const { dataDir, corpus, environment } = setup()
    await runIndex(dataDir, { environment })
    const first = await expectCountsExact(dataDir)
    expect(first.totals.chunks).toBeGreaterThan(10)
    expect(first.totals.raws).toBeGreaterThan(first.totals.turns)

    // Appends: one session grows by exchanges in two runs.
    const path = claudePath(corpus)
    const random = seededRandom(4)
    const split = { sessionId: "aaaaaaaa-2222-4333-8444-555555555555", cwd: "/work/split" }
    appendFileSync(path, claudeExchange(random, split, Date.UTC(2026, 1, 1), 5000))
    await runIndex(dataDir, { environment })
    appendFileSync(path, claudeExchange(random, split, Date.UTC(2026, 1, 2), 900))
    expect((await runIndex(dataDir, { environment })).appended).toBe(1)
    await expectCountsExact(dataDir)

    // The same session in a second file: its counts span both.
    const second = join(dirname(path), "bbbbbbbb-2222-4333-8444-555555555555.jsonl")
    writeFileSync(second, claudeExchange(random, split, Date.UTC(2026, 1, 3), 700))
    await runIndex(dataDir, { environment })
    const spread = await expectCountsExact(dataDir)
    const splitRow = () => spread.sessions.find((s) => s.session_id === split.sessionId)!
    expect(Number(splitRow().turn_count)).toBeGreaterThan(2)

    // A rewrite that drops the session from the first file: the second file's turns stay counted.
    const original = readFileSync(path, "utf8")
    writeFileSync(
      path,
      original.slice(0, original.indexOf(split.sessionId) - 200).replace(/[^\n]*$/, ""),
    )
    expect((await runIndex(dataDir, { environment })).rewritten).toBe(1)
    const rewritten = await expectCountsExact(dataDir)
    expect(rewritten.sessions.find((s) => s.session_id === split.sessionId)).toBeDefined()

    // A third file of the session; then the second vanishes and is pruned: the session stays,
    // counted by its turns in the third.
    const third = join(dirname(path), "cccccccc-2222-4333-8444-555555555555.jsonl")
    writeFileSync(third, claudeExchange(random, split, Date.UTC(2026, 1, 4), 600))
    await runIndex(dataDir, { environment })
    await expectCountsExact(dataDir)
    rmSync(second)
    await runIndex(dataDir, { environment })
    await expectCountsExact(dataDir)
    await withIndex(dataDir, pruneDeleted())
    const pruned = await expectCountsExact(dataDir)
    const survivor = pruned.sessions.find((s) => s.session_id === split.sessionId)
    expect(Number(survivor?.turn_count)).toBeGreaterThan(0)
    expect(Number(survivor?.turn_count)).toBeLessThan(Number(splitRow().turn_count))

    // Its last file vanishes and is pruned: the session goes with it.
    rmSync(third)
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, pruneDeleted())
    const gone = await expectCountsExact(dataDir)
    expect(gone.sessions.find((s) => s.session_id === split.sessionId)).toBeUndefined()

    // Forgetting a session.
    const victim = String(gone.sessions[0]!.session_id)
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: victim }))
    const forgotten = await expectCountsExact(dataDir)
    expect(forgotten.totals.sessions).toBeLessThan(gone.totals.sessions)
  })

  it("count each embedder's vectors through embedding, a switch and dropped texts", async () => {
    const { dataDir, corpus, environment } = setup()
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, embedBacklog(spaceOf("test/a/16")))
    const one = await storedAndRecounted(dataDir)
    expect(one.embedders).toHaveLength(1)
    expect(Number(one.embedders[0]!.vector_count)).toBeGreaterThan(10)
    await expectCountsExact(dataDir)

    await withIndex(dataDir, embedBacklog(spaceOf("test/b/16")))
    await expectCountsExact(dataDir)

    // A forgotten session's texts that no other chunk holds lose their vectors.
    const before = await storedAndRecounted(dataDir)
    rmSync(claudePath(corpus))
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, pruneDeleted())
    const after = await expectCountsExact(dataDir)
    expect(after.totals.chunks).toBeLessThan(before.totals.chunks)
    const vectors = (await storedAndRecounted(dataDir)).embedders
    expect(
      vectors.some((e, i) => Number(e.vector_count) < Number(before.embedders[i]!.vector_count)),
    ).toBe(true)
  })

  it("are filled by the migration on an index written before them (schema 6)", async () => {
    const { dataDir, environment } = setup()
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, embedBacklog(spaceOf("test/a/16")))
    const expected = await storedAndRecounted(dataDir)
    await withSqlite(dataDir, rewindStoredCounts)
    // Read without opening through the library, which would migrate the file at once.
    const raw = new Database(join(dataDir, RECALL_DATABASE_FILE), { readonly: true })
    const rewound = raw
      .prepare("select name from pragma_table_info('sessions')")
      .pluck()
      .all() as Array<string>
    raw.close()
    expect(rewound).not.toContain("chunk_count")
    // The next open migrates the file: every count is back, equal to a recount.
    const migrated = await expectCountsExact(dataDir)
    expect(migrated.sessions).toEqual(expected.sessions)
    expect((await storedAndRecounted(dataDir)).embedders).toEqual(expected.embedders)
    expect(
      await withSqlite(dataDir, (sqlite) =>
        sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
      ),
    ).toBe("14")
  })

  it("refuse file writes from a connection of the schema 6 version", async () => {
    // A process of the previous version still open on the upgraded file (a `--watch` indexer)
    // would write rows without their counts: its writes to `files` fail, and nothing changes.
    const { dataDir, corpus, environment } = setup()
    await runIndex(dataDir, { environment })
    const before = await storedAndRecounted(dataDir)
    const old = new Database(join(dataDir, RECALL_DATABASE_FILE))
    try {
      old.function("baton_fts_text_5", { deterministic: true }, (text: unknown) => text)
      const write = (sql: string) => () => old.prepare(sql).run()
      expect(write("update files set indexed_at = 1")).toThrow(/no such function: baton_writer_7/)
      expect(write("delete from files")).toThrow(/no such function: baton_writer_7/)
      expect(
        write(
          `insert into files (path, source, role, compression, size, mtime_ms, inode, head_hash,
             status) values ('/x.jsonl', 'claude', 'main', 'none', 0, 0, 0, '', 'indexed')`,
        ),
      ).toThrow(/no such function: baton_writer_7/)
    } finally {
      old.close()
    }
    expect(await storedAndRecounted(dataDir)).toEqual(before)
    // The library's own connections write as before.
    appendFileSync(
      claudePath(corpus),
      claudeExchange(
        seededRandom(2),
        { sessionId: "dddddddd-2222-4333-8444-555555555555", cwd: "/w" },
        Date.UTC(2026, 1, 5),
        300,
      ),
    )
    expect((await runIndex(dataDir, { environment })).appended).toBe(1)
    await expectCountsExact(dataDir)
  })
})

describe("recallStatus under a concurrent writer", () => {
  it("takes every count from one snapshot, and leaves no transaction open", async () => {
    const { dataDir, environment } = setup()
    await runIndex(dataDir, { environment })
    await withSqlite(dataDir, (sqlite) =>
      sqlite
        .prepare(
          "insert into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, 4242, 't', ?, ?)",
        )
        .run(Date.now(), Date.now() + 600_000),
    )
    const path = join(dataDir, RECALL_DATABASE_FILE)
    // Another process's writer commits while status reads: between the counts and the reads
    // after the lock's liveness check (which status asks at that point).
    const writer = new Database(path)
    cleanups.push(() => writer.close())
    const commitsMidway = Layer.succeed(IndexerProcess, {
      pid: 1,
      isAlive: () => {
        writer
          .prepare(
            "insert into meta (key, value) values ('embedding_failure', ?) on conflict(key) do update set value = excluded.value",
          )
          .run(JSON.stringify({ at: "2026-12-03T00:00:00Z", fingerprint: "f", reason: "r" }))
        return true
      },
    })
    const seen = await withIndex(
      dataDir,
      Effect.gen(function* () {
        const status = yield* recallStatus()
        const db = yield* RecallDatabase
        return { status, inTransaction: db.sqlite.inTransaction }
      }),
      undefined,
      commitsMidway,
    )
    expect(seen.status.indexing).toMatchObject({ pid: 4242 })
    expect(seen.status.embeddingFailure).toBeNull()
    expect(seen.inTransaction).toBe(false)
    // The next status sees the commit.
    const after = await withIndex(dataDir, recallStatus())
    expect(after.embeddingFailure).toMatchObject({ reason: "r" })
  })
})

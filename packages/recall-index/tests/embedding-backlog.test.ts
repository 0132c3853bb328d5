// The embedding backlog and vector search on a real temp-file database with the deterministic
// embedder: dedupe by content hash, resume after a crash, clean re-embed on an embedder switch,
// KNN neighbours, the indexer lock.
import Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  embedBacklog,
  EmbedderConfigError,
  EmbedderError,
  forgetSessions,
  IndexerProcess,
  RecallDatabase,
  recallStatus,
  recordEmbedderSetupFailure,
  searchVectors,
} from "@baton/recall-index"
import type { Embedder } from "@baton/recall-index"
import { generateFixtureCorpus, makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { runIndex, tempDir, withIndex, withSqlite, writeTree } from "./index-harness.js"

const home = tempDir("emb-home")
const data = tempDir("emb-data")
afterAll(() => {
  home.dispose()
  data.dispose()
})

let environment: Parameters<typeof runIndex>[1]["environment"]
beforeAll(() => {
  const corpus = generateFixtureCorpus({ seed: 11, homeDir: home.path })
  writeTree(corpus.files)
  environment = {
    env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
    homeDir: home.path,
  }
})

const embedChild = fileURLToPath(new URL("./fixtures/embed-child.mjs", import.meta.url))

const freshIndex = async (name: string): Promise<string> => {
  const dataDir = join(data.path, name)
  await runIndex(dataDir, { environment })
  return dataDir
}

const facts = (dataDir: string, fingerprint: string) =>
  withIndex(
    dataDir,
    RecallDatabase.use((db) =>
      Effect.sync(() => {
        const one = (sql: string, ...p: unknown[]) =>
          (db.sqlite.prepare(sql).get(...p) as { n: number }).n
        const table = db.sqlite
          .prepare("select vec_table from embedders where fingerprint = ?")
          .pluck()
          .get(fingerprint) as string | undefined
        return {
          table,
          chunks: one("select count(*) as n from chunks"),
          distinct: one("select count(distinct content_hash) as n from chunks"),
          backlog: one("select count(*) as n from chunks where needs_embedding = 1"),
          keys: one("select count(*) as n from vector_keys where fingerprint = ?", fingerprint),
          vectors: table === undefined ? 0 : one(`select count(*) as n from ${table}`),
          codes: table === undefined ? 0 : one(`select count(*) as n from ${table}_codes`),
          segmented:
            table === undefined
              ? 0
              : one(`select coalesce(sum(count), 0) as n from ${table}_segments`),
          // Consistency: a chunk is done exactly when its text has a vector.
          inconsistent: one(
            `select count(*) as n from chunks c where c.needs_embedding = (
               select count(*) from vector_keys k where k.fingerprint = ? and k.content_hash = c.content_hash)`,
            fingerprint,
          ),
          meta: db.sqlite
            .prepare("select value from meta where key = 'embedder_fingerprint'")
            .pluck()
            .get(),
        }
      }),
    ),
  )

/** Wraps an embedder so that its `failOn`-th call fails (a crash mid-run). */
const failing = (inner: Embedder, failOn: number): Embedder => {
  let calls = 0
  return {
    ...inner,
    embedDocuments: (texts) =>
      Effect.suspend(() =>
        ++calls === failOn
          ? Effect.fail(
              new EmbedderError({
                provider: "test",
                failure: "unavailable",
                retryable: false,
                reason: "crash",
              }),
            )
          : inner.embedDocuments(texts),
      ),
  }
}

describe("embedBacklog", () => {
  it("embeds each distinct text once, marks every chunk, and is a no-op the second time", async () => {
    const dataDir = await freshIndex("dedupe")
    const embedder = makeDeterministicEmbedder({ dim: 64 })
    const progress: Array<[number, number]> = []
    const report = await withIndex(
      dataDir,
      embedBacklog(embedder, { batchSize: 7, onProgress: (p) => progress.push([p.done, p.total]) }),
    )
    const after = await facts(dataDir, embedder.info.fingerprint)
    expect(after.distinct).toBeLessThan(after.chunks) // the fixture has repeated texts
    expect(report).toMatchObject({
      fingerprint: embedder.info.fingerprint,
      total: after.chunks,
      resolved: after.chunks,
      embedded: after.distinct,
      remaining: 0,
    })
    expect(embedder.embeddedTexts()).toBe(after.distinct)
    expect(after).toMatchObject({
      backlog: 0,
      keys: after.distinct,
      vectors: after.distinct,
      codes: after.distinct,
      segmented: after.distinct,
      inconsistent: 0,
    })
    expect(progress.at(-1)).toEqual([after.chunks, after.chunks])
    expect(progress.map((p) => p[0])).toEqual([...progress.map((p) => p[0])].sort((a, b) => a - b))
    const again = await withIndex(dataDir, embedBacklog(embedder))
    expect(again).toMatchObject({ total: 0, resolved: 0, embedded: 0 })
    expect(embedder.embeddedTexts()).toBe(after.distinct)
  })

  it("a run killed midway leaves whole batches and the next run resumes", async () => {
    const dataDir = await freshIndex("resume")
    const embedder = makeDeterministicEmbedder({ dim: 64 })
    const error = await withIndex(
      dataDir,
      Effect.flip(embedBacklog(failing(embedder, 3), { batchSize: 4 })),
    )
    expect(error).toMatchObject({ _tag: "EmbedderError", reason: "crash" })
    const mid = await facts(dataDir, embedder.info.fingerprint)
    expect(mid).toMatchObject({ keys: 8, vectors: 8, codes: 8, segmented: 8, inconsistent: 0 })
    expect(mid.backlog).toBeGreaterThan(0)
    const resumed = await withIndex(dataDir, embedBacklog(embedder, { batchSize: 4 }))
    const after = await facts(dataDir, embedder.info.fingerprint)
    expect(resumed.embedded).toBe(after.distinct - 8)
    expect(embedder.embeddedTexts()).toBe(after.distinct) // nothing embedded twice
    expect(after).toMatchObject({ backlog: 0, keys: after.distinct, inconsistent: 0 })
  })

  it("a batch whose write fails rolls back with its commit; earlier commits stay, and the next run resumes", async () => {
    const dataDir = await freshIndex("write-failure")
    const embedder = makeDeterministicEmbedder({ dim: 64 })
    const error = await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        // Commits of three batches of 4. The 23rd key fails (as a full disk would): batch 6
        // fails halfway, and batches 4 and 5, in its commit, go with it; 1–3 stay committed.
        db.sqlite.exec(`create temp trigger fail_key before insert on main.vector_keys
          when (select count(*) from main.vector_keys) >= 22
          begin select raise(abort, 'no space left'); end`)
        const failed = yield* Effect.flip(
          embedBacklog(embedder, { batchSize: 4, commitGroup: { maxFiles: 3 } }),
        )
        db.sqlite.exec("drop trigger temp.fail_key")
        return failed
      }),
    )
    expect(error).toMatchObject({
      _tag: "RecallStorageError",
      operation: "write",
      reason: expect.stringContaining("no space left"),
    })
    const mid = await facts(dataDir, embedder.info.fingerprint)
    expect(mid).toMatchObject({ keys: 12, vectors: 12, codes: 12, inconsistent: 0 })
    const resumed = await withIndex(dataDir, embedBacklog(embedder, { batchSize: 4 }))
    const after = await facts(dataDir, embedder.info.fingerprint)
    expect(resumed.embedded).toBe(after.distinct - 12)
    expect(after).toMatchObject({ backlog: 0, keys: after.distinct, inconsistent: 0 })
  })

  it("a run killed with SIGKILL mid-commit leaves whole commits, and the next run resumes", async () => {
    const dataDir = await freshIndex("killed")
    const embedder = makeDeterministicEmbedder({ dim: 64 })
    const batches = await new Promise<number>((resolve, reject) => {
      const proc = spawn(process.execPath, [embedChild, dataDir, "5"], {
        stdio: ["ignore", "pipe", "pipe"],
      })
      let seen = 0
      let stderr = ""
      proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      proc.stdout.on("data", (d: Buffer) => {
        seen += d
          .toString()
          .split("\n")
          .filter((l) => l.startsWith("batch")).length
        // Batches commit in pairs: after the fifth, the sixth is not yet committed.
        if (seen >= 5 && proc.exitCode === null) {
          proc.stdout.pause()
          proc.kill("SIGKILL")
        }
      })
      proc.on("exit", (code, signal) =>
        signal === "SIGKILL" ? resolve(seen) : reject(new Error(`child exited ${code}: ${stderr}`)),
      )
    })
    expect(batches).toBeGreaterThanOrEqual(5)
    const mid = await facts(dataDir, embedder.info.fingerprint)
    const check = await withSqlite(dataDir, (sqlite) =>
      sqlite.pragma("integrity_check", { simple: true }),
    )
    expect(check).toBe("ok")
    // Whole commits of two batches of 4: never part of one, never the open one.
    expect(mid.keys % 8).toBe(0)
    expect(mid.keys).toBeGreaterThanOrEqual(16)
    expect(mid.keys).toBeLessThan(batches * 4)
    expect(mid).toMatchObject({ vectors: mid.keys, codes: mid.keys, inconsistent: 0 })
    const resumed = await withIndex(dataDir, embedBacklog(embedder, { batchSize: 4 }))
    const after = await facts(dataDir, embedder.info.fingerprint)
    expect(resumed.embedded).toBe(after.distinct - mid.keys)
    expect(after).toMatchObject({ backlog: 0, keys: after.distinct, inconsistent: 0 })
  }, 60_000)

  it("defers WAL checkpoints while it writes and restores the threshold, also after a failure", async () => {
    const dataDir = await freshIndex("checkpoints")
    const threshold = (db: { sqlite: { pragma: (s: string, o: { simple: true }) => unknown } }) =>
      db.sqlite.pragma("wal_autocheckpoint", { simple: true })
    const seen = await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        const base = makeDeterministicEmbedder()
        const during: Array<unknown> = []
        const spy: Embedder = {
          ...base,
          embedDocuments: (input) =>
            Effect.suspend(() => {
              during.push(threshold(db))
              return base.embedDocuments(input)
            }),
        }
        const before = threshold(db)
        yield* Effect.flip(embedBacklog(failing(spy, 2), { batchSize: 4 }))
        const afterFailure = threshold(db)
        yield* embedBacklog(spy, { batchSize: 4 })
        return { before, during, afterFailure, after: threshold(db) }
      }),
    )
    expect(seen.before).toBe(1000)
    expect(seen.during.length).toBeGreaterThan(2)
    expect(new Set(seen.during)).toEqual(new Set([16_384]))
    expect(seen.afterFailure).toBe(1000)
    expect(seen.after).toBe(1000)
  })

  it("refuses vectors of the wrong length without storing anything", async () => {
    const dataDir = await freshIndex("bad-vectors")
    const inner = makeDeterministicEmbedder({ dim: 64 })
    const wrong: Embedder = {
      ...inner,
      embedDocuments: (t) => Effect.succeed(t.map(() => new Float32Array(3))),
    }
    const error = await withIndex(dataDir, Effect.flip(embedBacklog(wrong)))
    expect(error).toMatchObject({ _tag: "EmbedderError", failure: "bad_response" })
    expect(await facts(dataDir, inner.info.fingerprint)).toMatchObject({ keys: 0, vectors: 0 })
  })

  it("refuses a paid provider's backlog estimated past its budget before sending anything", async () => {
    const dataDir = await freshIndex("over-budget")
    const inner = makeDeterministicEmbedder({ dim: 64 })
    let sent = 0
    const paid = (tokenBudget: number): Embedder => ({
      ...inner,
      info: { ...inner.info, paid: true, tokenBudget },
      embedDocuments: (t) => {
        sent += t.length
        return inner.embedDocuments(t)
      },
    })
    const error = await withIndex(dataDir, Effect.flip(embedBacklog(paid(10))))
    expect(error).toMatchObject({ _tag: "EmbedderError", failure: "cost_guard" })
    expect(error.message).toMatch(
      /^the deterministic embedder failed \(cost_guard\): embedding the backlog would send about \d+ estimated tokens \(\d+ texts\) to deterministic, over a run's budget of 10: nothing was sent; raise BATON_EMBED_MAX_TOKENS to at least \d+ to allow it$/,
    )
    expect(sent).toBe(0)
    expect(await facts(dataDir, inner.info.fingerprint)).toMatchObject({ keys: 0, vectors: 0 })
    // The status keeps the failure until a run succeeds.
    const failedStatus = await withIndex(dataDir, recallStatus())
    expect(failedStatus.embeddingFailure).toMatchObject({
      fingerprint: inner.info.fingerprint,
      reason: error.message,
    })
    // Within the budget, the run embeds.
    const within = await withIndex(dataDir, embedBacklog(paid(10_000_000)))
    expect(within.remaining).toBe(0)
    expect(sent).toBeGreaterThan(0)
    expect((await withIndex(dataDir, recallStatus())).embeddingFailure).toBeNull()
  })

  it("a switch refused by the cost guard leaves the active space and its backlog as they were", async () => {
    const dataDir = await freshIndex("over-budget-switch")
    const a = makeDeterministicEmbedder({ dim: 64, model: "a" })
    const inner = makeDeterministicEmbedder({ dim: 32, model: "b" })
    expect(await withIndex(dataDir, embedBacklog(a))).toMatchObject({ remaining: 0 })
    const before = await facts(dataDir, a.info.fingerprint)
    const paid: Embedder = { ...inner, info: { ...inner.info, paid: true, tokenBudget: 10 } }
    const error = await withIndex(dataDir, Effect.flip(embedBacklog(paid)))
    // The estimate is the new space's whole history, though the active space has no backlog.
    expect(error).toMatchObject({ _tag: "EmbedderError", failure: "cost_guard" })
    expect(error.message).toContain(`(${before.distinct} texts)`)
    expect(inner.embeddedTexts()).toBe(0)
    expect(await facts(dataDir, a.info.fingerprint)).toMatchObject({
      backlog: 0,
      inconsistent: 0,
      meta: a.info.fingerprint,
    })
    const status = await withIndex(dataDir, recallStatus())
    expect(status.embeddingBacklog).toBe(0)
    expect(status.embedders.map((e) => [e.fingerprint, e.active])).toEqual([
      [a.info.fingerprint, true],
    ])
    expect(status.embeddingFailure).toMatchObject({
      fingerprint: inner.info.fingerprint,
      failure: "cost_guard",
    })
  })

  it("a switch whose first batch fails leaves the space active before as it was; a written batch keeps the switch", async () => {
    const dataDir = await freshIndex("first-batch-fails")
    const a = makeDeterministicEmbedder({ dim: 64, model: "a" })
    const b = makeDeterministicEmbedder({ dim: 32, model: "b" })
    await withIndex(dataDir, embedBacklog(a))
    const error = await withIndex(
      dataDir,
      Effect.flip(embedBacklog(failing(b, 1), { concurrency: 1 })),
    )
    expect(error).toMatchObject({ _tag: "EmbedderError", reason: "crash" })
    expect(await facts(dataDir, a.info.fingerprint)).toMatchObject({
      backlog: 0,
      inconsistent: 0,
      meta: a.info.fingerprint,
    })
    // The empty space it created is gone; the next run switches and embeds everything.
    expect(await facts(dataDir, b.info.fingerprint)).toMatchObject({ table: undefined, keys: 0 })
    const status = await withIndex(dataDir, recallStatus())
    expect(status).toMatchObject({ embeddingBacklog: 0 })
    expect(status.embedders.map((e) => e.fingerprint)).toEqual([a.info.fingerprint])
    // Once a batch is written, the switch stays (the new space holds vectors; flags match it).
    const c = makeDeterministicEmbedder({ dim: 16, model: "c" })
    await withIndex(
      dataDir,
      Effect.flip(embedBacklog(failing(c, 2), { batchSize: 8, concurrency: 1 })),
    )
    expect(await facts(dataDir, c.info.fingerprint)).toMatchObject({
      keys: 8,
      inconsistent: 0,
      meta: c.info.fingerprint,
    })
    const report = await withIndex(dataDir, embedBacklog(b))
    expect(report).toMatchObject({ switchedFrom: c.info.fingerprint, remaining: 0 })
    expect(await facts(dataDir, b.info.fingerprint)).toMatchObject({ inconsistent: 0, backlog: 0 })
  })

  it("a first run whose first batch fails leaves no active space behind", async () => {
    const dataDir = await freshIndex("first-run-fails")
    const a = makeDeterministicEmbedder({ dim: 64, model: "a" })
    await withIndex(dataDir, Effect.flip(embedBacklog(failing(a, 1), { concurrency: 1 })))
    expect(await facts(dataDir, a.info.fingerprint)).toMatchObject({
      table: undefined,
      meta: undefined,
    })
    const status = await withIndex(dataDir, recallStatus())
    expect(status.embedders).toEqual([])
    expect(status.embeddingBacklog).toBe(status.chunks)
  })

  it("records an embedder that could not be set up (settings, first request) until a run succeeds", async () => {
    const dataDir = await freshIndex("setup-failure")
    const probe = new EmbedderError({
      provider: "openai-compatible",
      failure: "unauthorized",
      retryable: false,
      reason: "HTTP 401",
    })
    await withIndex(dataDir, recordEmbedderSetupFailure(probe))
    expect((await withIndex(dataDir, recallStatus())).embeddingFailure).toMatchObject({
      fingerprint: "openai-compatible",
      failure: "unauthorized",
      reason: "the openai-compatible embedder failed (unauthorized): HTTP 401",
    })
    const config = new EmbedderConfigError({
      variable: "VOYAGE_API_KEY",
      message: "BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY",
    })
    await withIndex(dataDir, recordEmbedderSetupFailure(config))
    expect((await withIndex(dataDir, recallStatus())).embeddingFailure).toMatchObject({
      fingerprint: "VOYAGE_API_KEY",
      failure: "configuration",
      reason: "BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY",
    })
    await withIndex(dataDir, embedBacklog(makeDeterministicEmbedder({ dim: 64 })))
    expect((await withIndex(dataDir, recallStatus())).embeddingFailure).toBeNull()
  })

  it("refuses all-zero vectors from an embedding service, not from a model in this process", async () => {
    const dataDir = await freshIndex("zero-vectors")
    const inner = makeDeterministicEmbedder({ dim: 64 })
    const zeros = (inProcess: boolean): Embedder => ({
      ...inner,
      info: { ...inner.info, inProcess },
      embedDocuments: (t) => Effect.succeed(t.map(() => new Float32Array(64))),
    })
    const error = await withIndex(dataDir, Effect.flip(embedBacklog(zeros(false))))
    expect(error).toMatchObject({
      _tag: "EmbedderError",
      failure: "bad_response",
      reason: "a vector is all zeros",
    })
    expect(await facts(dataDir, inner.info.fingerprint)).toMatchObject({ keys: 0, vectors: 0 })
    // A local model's zero vector (a text of no word it knows) is stored as it is.
    const local = await withIndex(dataDir, embedBacklog(zeros(true)))
    expect(local.remaining).toBe(0)
  })

  it("holds no write transaction while a provider across the network answers", async () => {
    const dataDir = await freshIndex("remote-no-lock")
    const inner = makeDeterministicEmbedder({ dim: 64 })
    // While each request is out, another process must be able to write (a search's migration,
    // an index run of another version): its BEGIN IMMEDIATE with no wait succeeds or not.
    const writable: Array<boolean> = []
    const probe = () => {
      const other = new Database(join(dataDir, "recall-index.db"), { timeout: 0 })
      try {
        other.exec("BEGIN IMMEDIATE")
        other.exec("ROLLBACK")
        writable.push(true)
      } catch {
        writable.push(false)
      } finally {
        other.close()
      }
    }
    const remote: Embedder = {
      ...inner,
      info: { ...inner.info, inProcess: false },
      embedDocuments: (texts) =>
        Effect.sync(probe).pipe(Effect.flatMap(() => inner.embedDocuments(texts))),
    }
    const report = await withIndex(dataDir, embedBacklog(remote, { batchSize: 4, concurrency: 1 }))
    expect(report.remaining).toBe(0)
    expect(writable.length).toBeGreaterThan(3)
    expect(writable.every((ok) => ok)).toBe(true)
  })

  it("switching embedder re-embeds everything into a new space, keeps the old one, and switching back reuses it", async () => {
    const dataDir = await freshIndex("switch")
    const a = makeDeterministicEmbedder({ dim: 64, model: "a" })
    const b = makeDeterministicEmbedder({ dim: 32, model: "b" })
    expect(await withIndex(dataDir, embedBacklog(a))).toMatchObject({ switchedFrom: null })
    const first = await facts(dataDir, a.info.fingerprint)
    const report = await withIndex(dataDir, embedBacklog(b))
    const second = await facts(dataDir, b.info.fingerprint)
    expect(report).toMatchObject({
      vecTable: "vec_2",
      total: first.chunks,
      embedded: first.distinct,
      switchedFrom: a.info.fingerprint,
    })
    expect(second).toMatchObject({
      backlog: 0,
      keys: first.distinct,
      inconsistent: 0,
      meta: b.info.fingerprint,
    })
    expect(await facts(dataDir, a.info.fingerprint)).toMatchObject({
      keys: first.distinct,
      vectors: first.distinct,
    })
    const back = await withIndex(dataDir, embedBacklog(a))
    expect(back).toMatchObject({
      vecTable: "vec_1",
      total: 0,
      embedded: 0,
      switchedFrom: b.info.fingerprint,
    })
    expect(await withIndex(dataDir, embedBacklog(a))).toMatchObject({ switchedFrom: null })
    expect(a.embeddedTexts()).toBe(first.distinct)
  })

  it("waits for nobody: a live indexer holding the lock makes it fail with IndexBusyError", async () => {
    const dataDir = await freshIndex("busy")
    await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() =>
          db.sqlite
            .prepare(
              "insert into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, 4242, 't', ?, ?)",
            )
            .run(Date.now(), Date.now() + 600_000),
        ),
      ),
    )
    const others = Layer.succeed(IndexerProcess, { pid: 1, isAlive: (pid: number) => pid === 4242 })
    const error = await withIndex(
      dataDir,
      Effect.flip(embedBacklog(makeDeterministicEmbedder())),
      undefined,
      others,
    )
    expect(error).toMatchObject({ _tag: "IndexBusyError", pid: 4242 })
  })
})

describe("searchVectors", () => {
  let dataDir: string
  const embedder = makeDeterministicEmbedder({ dim: 64 })
  beforeAll(async () => {
    dataDir = await freshIndex("knn")
    await withIndex(dataDir, embedBacklog(embedder))
  })

  const sample = () =>
    withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() => {
          // A text stored in several chunks, and one stored once.
          const shared = db.sqlite
            .prepare(
              "select content_hash as hash, min(text) as text from chunks group by content_hash having count(*) > 1 limit 1",
            )
            .get() as { hash: string; text: string }
          const single = db.sqlite
            .prepare(
              "select content_hash as hash, min(text) as text from chunks group by content_hash having count(*) = 1 and length(min(text)) > 40 limit 1",
            )
            .get() as { hash: string; text: string }
          const ids = (hash: string) =>
            db.sqlite
              .prepare("select id from chunks where content_hash = ? order by id")
              .pluck()
              .all(hash) as number[]
          return { shared, sharedIds: ids(shared.hash), single, singleIds: ids(single.hash) }
        }),
      ),
    )

  it("finds the chunk whose text is the query first, with every chunk sharing its text", async () => {
    const s = await sample()
    const vector = await Effect.runPromise(embedder.embedQuery(s.shared.text))
    const hits = await withIndex(
      dataDir,
      searchVectors({ vector, k: 5, fingerprint: embedder.info.fingerprint }),
    )
    expect(hits.slice(0, s.sharedIds.length).map((h) => h.chunkId)).toEqual(s.sharedIds)
    expect(hits[0]!.similarity).toBeCloseTo(1, 5)
    expect(hits[0]!.distance).toBeCloseTo(0, 3)
    for (let i = 1; i < hits.length; i++)
      expect(hits[i]!.distance).toBeGreaterThanOrEqual(hits[i - 1]!.distance)
    expect(new Set(hits.map((h) => h.chunkId)).size).toBe(hits.length)
  })

  it("honours the pre-filter, the fingerprint and the dimension", async () => {
    const s = await sample()
    const vector = await Effect.runPromise(embedder.embedQuery(s.single.text))
    const all = await withIndex(
      dataDir,
      searchVectors({ vector, k: 10, fingerprint: embedder.info.fingerprint }),
    )
    expect(all[0]!.chunkId).toBe(s.singleIds[0])
    const within = all.slice(3, 6).map((h) => h.chunkId)
    const filtered = await withIndex(
      dataDir,
      searchVectors({
        vector,
        k: 10,
        fingerprint: embedder.info.fingerprint,
        withinChunkIds: within,
      }),
    )
    expect(filtered.map((h) => h.chunkId).sort()).toEqual([...within].sort())
    expect(
      await withIndex(dataDir, searchVectors({ vector, k: 10, fingerprint: "nobody/none/64" })),
    ).toEqual([])
    const error = await withIndex(
      dataDir,
      Effect.flip(
        searchVectors({
          vector: new Float32Array(8),
          k: 3,
          fingerprint: embedder.info.fingerprint,
        }),
      ),
    )
    expect(error).toMatchObject({ _tag: "RecallQueryError", field: "query" })
  })

  it("the sign-bit first pass + int8 rescoring agrees with exact search on the nearest", async () => {
    const s = await sample()
    for (const text of [s.single.text, s.shared.text]) {
      const vector = await Effect.runPromise(embedder.embedQuery(text))
      const exact = await withIndex(
        dataDir,
        searchVectors({ vector, k: 3, fingerprint: embedder.info.fingerprint, mode: "exact" }),
      )
      // A pool of 2 makes the first pass decide: the stored copy of the query must survive it.
      for (const pool of [2, 1000]) {
        const quantized = await withIndex(
          dataDir,
          searchVectors({ vector, k: 3, fingerprint: embedder.info.fingerprint, pool }),
        )
        expect(quantized[0]!.chunkId).toBe(exact[0]!.chunkId)
        expect(quantized[0]!.similarity).toBeCloseTo(exact[0]!.similarity, 2)
      }
    }
  })
})

/** Every key the segments of the embedder's table hold, ascending. */
const segmentKeys = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) => {
    const table = sqlite.prepare("select vec_table from embedders").pluck().get() as string
    const rows = sqlite.prepare(`select keys from ${table}_segments`).pluck().all() as Buffer[]
    return rows
      .flatMap((b) => Array.from(new Int32Array(new Uint8Array(b).buffer)))
      .sort((a, b) => a - b)
  })
const codeKeys = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) => {
    const table = sqlite.prepare("select vec_table from embedders").pluck().get() as string
    return sqlite.prepare(`select key from ${table}_codes order by key`).pluck().all() as number[]
  })
const segmentGeneration = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) => {
    const table = sqlite.prepare("select vec_table from embedders").pluck().get() as string
    return sqlite.prepare(`select generation from ${table}_center`).pluck().get() as number
  })

describe("search codes stay in step with the vectors", () => {
  const embedder = makeDeterministicEmbedder({ dim: 64 })
  const codeFacts = (dataDir: string) => facts(dataDir, embedder.info.fingerprint)
  const nearest = (dataDir: string, text: string, mode: "exact" | "auto" = "auto") =>
    Effect.runPromise(embedder.embedQuery(text)).then((vector) =>
      withIndex(
        dataDir,
        searchVectors({ vector, k: 5, fingerprint: embedder.info.fingerprint, mode }),
      ),
    )

  it("a forget takes the forgotten codes out of the segments, and search stays quantized", async () => {
    const dataDir = await freshIndex("codes-forget")
    await withIndex(dataDir, embedBacklog(embedder))
    const victim = await withSqlite(
      dataDir,
      (sqlite) =>
        sqlite
          .prepare(
            `select s.session_id as sessionId, c.text from chunks c
             join turns t on t.id = c.turn_row join sessions s on s.id = t.session_row
             where length(c.text) > 40 order by c.id limit 1`,
          )
          .get() as { sessionId: string; text: string },
    )
    const before = await nearest(dataDir, victim.text)
    const generation = await segmentGeneration(dataDir)
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: victim.sessionId }))
    const forgotten = await codeFacts(dataDir)
    expect(forgotten.codes).toBe(forgotten.keys) // orphan codes went with their vectors
    expect(forgotten.segmented).toBe(forgotten.keys) // and out of the segments, in place
    expect(await segmentKeys(dataDir)).toEqual(await codeKeys(dataDir))
    expect(await segmentGeneration(dataDir)).toBe(generation + 1) // held scanners reload
    const after = await nearest(dataDir, victim.text)
    expect(after.map((h) => h.chunkId)).not.toContain(before[0]!.chunkId)
    // The same hits the quantized pass gives over segments rebuilt from scratch.
    await withSqlite(dataDir, (sqlite) => sqlite.exec(`delete from ${forgotten.table}_segments`))
    await withIndex(dataDir, embedBacklog(embedder))
    const rebuilt = await codeFacts(dataDir)
    expect(rebuilt.segmented).toBe(rebuilt.keys)
    expect(await nearest(dataDir, victim.text)).toEqual(after)
  })

  it("a forget of most vectors empties the segments: exact search until the next run", async () => {
    const dataDir = await freshIndex("codes-forget-most")
    await withIndex(dataDir, embedBacklog(embedder))
    const sessions = await withSqlite(
      dataDir,
      (sqlite) => sqlite.prepare("select session_id from sessions").pluck().all() as Array<string>,
    )
    for (const sessionId of sessions.slice(1))
      await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId }))
    const forgotten = await codeFacts(dataDir)
    expect(forgotten.codes).toBe(forgotten.keys)
    // The last forgets each took more than a quarter of what was left: segments emptied.
    expect(sessions.length).toBeGreaterThan(3)
    expect(forgotten.segmented).toBe(0)
    await withIndex(dataDir, embedBacklog(embedder))
    const rebuilt = await codeFacts(dataDir)
    expect(rebuilt.segmented).toBe(rebuilt.keys)
  })

  it("a vector stored without codes (an older version) makes search exact until a run adds them", async () => {
    const dataDir = await freshIndex("codes-missing")
    await withIndex(dataDir, embedBacklog(embedder))
    const table = (await codeFacts(dataDir)).table!
    // Drop the newest vector's code, as if an older version had written that vector.
    await withSqlite(dataDir, (sqlite) =>
      sqlite
        .prepare(`delete from ${table}_codes where key = (select max(key) from ${table}_codes)`)
        .run(),
    )
    const text = await withSqlite(
      dataDir,
      (sqlite) =>
        sqlite
          .prepare(
            `select c.text from chunks c join vector_keys k on k.content_hash = c.content_hash
             where k.fingerprint = ? order by k.id desc limit 1`,
          )
          .pluck()
          .get(embedder.info.fingerprint) as string,
    )
    // The newest vector is still found (exact fallback), with its exact similarity.
    const found = await nearest(dataDir, text)
    expect(found).toEqual(await nearest(dataDir, text, "exact"))
    await withIndex(dataDir, embedBacklog(embedder))
    const repaired = await codeFacts(dataDir)
    expect(repaired.codes).toBe(repaired.keys)
    expect(repaired.segmented).toBe(repaired.keys)
  })
})

describe("segments cached across connections", () => {
  const embedder = makeDeterministicEmbedder({ dim: 64 })
  it("a batch embedded after a cached search is found by the next search", async () => {
    const dataDir = await freshIndex("codes-cache")
    await withIndex(dataDir, embedBacklog(embedder, { maxTexts: 10, batchSize: 10 }))
    const pending = await withSqlite(
      dataDir,
      (sqlite) =>
        sqlite
          .prepare(
            "select id, text from chunks where needs_embedding = 1 and length(text) > 40 order by id desc limit 1",
          )
          .get() as { id: number; text: string },
    )
    const vector = await Effect.runPromise(embedder.embedQuery(pending.text))
    const search = () =>
      withIndex(
        dataDir,
        searchVectors({ vector, k: 3, fingerprint: embedder.info.fingerprint, pool: 4 }),
      )
    expect((await search()).map((h) => h.chunkId)).not.toContain(pending.id) // segments now cached
    await withIndex(dataDir, embedBacklog(embedder))
    expect((await search())[0]!.chunkId).toBe(pending.id)
  })
})

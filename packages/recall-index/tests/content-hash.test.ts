// Content hashes (schema 6): a chunk's key for vectors and de-duplication is 16 hex characters of
// its text's SHA-256, and an index written with whole hashes (schema 5) is migrated in place —
// its stored vectors stay matched to their texts, so nothing is embedded again. Real temp files,
// real database, the deterministic embedder.
import Database from "better-sqlite3"
import { createHash } from "node:crypto"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { embedBacklog, RECALL_DATABASE_FILE, searchRecall } from "@baton/recall-index"
import { generateFixtureCorpus, makeDeterministicEmbedder } from "@baton/recall-index/testing"
import {
  rewindContentHashes,
  runIndex,
  tempDir,
  withIndex,
  withSqlite,
  writeTree,
} from "./index-harness.js"

const home = tempDir("hash-home")
const data = tempDir("hash-data")
const dataDir = join(data.path, "baton")
const embedder = makeDeterministicEmbedder({ dim: 64 })
afterAll(() => {
  home.dispose()
  data.dispose()
})

beforeAll(async () => {
  const corpus = generateFixtureCorpus({ seed: 5, homeDir: home.path })
  writeTree(corpus.files)
  await runIndex(dataDir, {
    environment: {
      env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
      homeDir: home.path,
    },
  })
  await withIndex(dataDir, embedBacklog(embedder))
})

const hashes = () =>
  withSqlite(dataDir, (sqlite) => ({
    version: sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
    chunks: sqlite
      .prepare("select text, content_hash as hash from chunks order by id")
      .all() as Array<{
      text: string
      hash: string
    }>,
    keys: sqlite.prepare("select content_hash from vector_keys order by id").pluck().all(),
    unmatchedChunks: sqlite
      .prepare(
        `select count(*) from chunks c where not exists (
           select 1 from vector_keys k where k.content_hash = c.content_hash)`,
      )
      .pluck()
      .get(),
    backlog: sqlite.prepare("select count(*) from chunks where needs_embedding = 1").pluck().get(),
  }))

const search = () =>
  withIndex(dataDir, searchRecall({ query: "retry policy backoff", k: 10 }, { embedder })).then(
    (r) => r.hits.map((h) => [h.sessionId, h.turnId, h.scores.vectorRank]),
  )

describe("content hashes", () => {
  it("are the first 16 hex characters of the text's SHA-256", async () => {
    const { version, chunks } = await hashes()
    expect(version).toBe("14")
    expect(chunks.length).toBeGreaterThan(10)
    for (const { text, hash } of chunks)
      expect(hash).toBe(createHash("sha256").update(text).digest("hex").slice(0, 16))
  })

  it("of a schema 5 index are shortened in place, vectors kept", async () => {
    const before = await hashes()
    const hits = await search()
    expect(hits.some(([, , vectorRank]) => vectorRank !== null)).toBe(true)
    await withSqlite(dataDir, rewindContentHashes)
    // Read without opening through the library, which would migrate the file at once.
    const raw = new Database(join(dataDir, RECALL_DATABASE_FILE), { readonly: true })
    const rewound = {
      version: raw.prepare("select value from meta where key = 'schema_version'").pluck().get(),
      lengths: raw.prepare("select distinct length(content_hash) from vector_keys").pluck().all(),
    }
    raw.close()
    expect(rewound).toEqual({ version: "5", lengths: [64] })

    // The next open (`hashes` opens the file) migrates it.
    const after = await hashes()
    expect(after).toEqual(before)
    expect(after.unmatchedChunks).toBe(0)
    expect(after.backlog).toBe(0)
    const again = await withIndex(dataDir, embedBacklog(embedder))
    expect(again.embedded).toBe(0)
    expect(await search()).toEqual(hits)
  })
})

// Forget and prune drop the vectors of the texts they removed — and only those: a text another
// session still holds keeps its vector, with the content-hash lookup index present or deferred.
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { embedBacklog, forgetSessions, pruneDeleted } from "@baton/recall-index"
import { generateFixtureCorpus, makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { runIndex, tempDir, withIndex, withSqlite, writeTree } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const embedder = makeDeterministicEmbedder({ dim: 16 })
const TWIN = "99999999-2222-4333-8444-555555555555"

/**
 * An indexed, embedded corpus in which session {@link TWIN} repeats every text of `original` in
 * records of its own (other uuids: a copy that keeps them, like a Claude Code fork's, is forgotten
 * with its original — forget-forks.test.ts).
 */
const setup = async () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const corpus = generateFixtureCorpus({ seed: 8, homeDir: home.path })
  writeTree(corpus.files)
  const sessionOf = (text: string) =>
    (
      JSON.parse(
        text.split("\n").find((l) => l.startsWith('{"') && l.includes('"sessionId"'))!,
      ) as {
        sessionId: string
      }
    ).sessionId
  // A session without subagents: those would be forgotten with it, and the twin holds none.
  const source = corpus.expectations.find((x) => {
    if (x.source !== "claude" || !x.discovered || x.role === "subagent") return false
    if (!x.path.endsWith(".jsonl")) return false
    const id = sessionOf(readFileSync(x.path, "utf8"))
    return !Object.entries(corpus.files).some(
      ([path, body]) => path !== x.path && typeof body === "string" && body.includes(id),
    )
  })!
  const text = readFileSync(source.path, "utf8")
  const original = sessionOf(text)
  const twinPath = join(dirname(source.path), `${TWIN}.jsonl`)
  writeFileSync(
    twinPath,
    text
      .split(original)
      .join(TWIN)
      .replace(/"uuid":"([^"]+)"/g, '"uuid":"twin-$1"'),
  )
  const environment = {
    env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
    homeDir: home.path,
  }
  const dataDir = join(data.path, "baton")
  await runIndex(dataDir, { environment })
  await withIndex(dataDir, embedBacklog(embedder))
  return { dataDir, environment, original, originalPath: source.path, twinPath }
}

/** Vector keys against the distinct texts the chunks hold, and the vectors and codes stored. */
const vectorFacts = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) => {
    const one = (sql: string) => sqlite.prepare(sql).pluck().get() as number
    const table = sqlite.prepare("select vec_table from embedders").pluck().get() as string
    return {
      keys: one("select count(*) from vector_keys"),
      texts: one("select count(distinct content_hash) from chunks"),
      unheldKeys: one(
        "select count(*) from vector_keys where content_hash not in (select content_hash from chunks)",
      ),
      unembeddedTexts: one(
        "select count(*) from chunks where content_hash not in (select content_hash from vector_keys)",
      ),
      vectors: one(`select count(*) from ${table}`),
      codes: one(`select count(*) from ${table}_codes`),
    }
  })

const twinTexts = (dataDir: string) =>
  withSqlite(
    dataDir,
    (sqlite) =>
      sqlite
        .prepare(
          `select count(*) from chunks c join turns t on t.id = c.turn_row
             join sessions s on s.id = t.session_row where s.session_id = ?`,
        )
        .pluck()
        .get(TWIN) as number,
  )

describe("forgetting text", () => {
  for (const lookupIndex of ["present", "deferred"] as const) {
    it(`drops exactly the vectors no chunk needs after forget and prune (hash index ${lookupIndex})`, async () => {
      const { dataDir, environment, original, twinPath } = await setup()
      const before = await vectorFacts(dataDir)
      expect(before).toMatchObject({ unheldKeys: 0, unembeddedTexts: 0 })
      expect(before.keys).toBe(before.texts)
      if (lookupIndex === "deferred")
        await withSqlite(dataDir, (sqlite) => sqlite.exec("drop index chunks_content_hash"))

      // Forgetting the original removes none of its texts' vectors: the twin holds them all.
      await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: original }))
      const forgotten = await vectorFacts(dataDir)
      expect(forgotten).toEqual(before)
      expect(await twinTexts(dataDir)).toBeGreaterThan(0)

      // Forgetting another session drops the vectors of its texts no one else holds.
      const other = await withSqlite(
        dataDir,
        (sqlite) =>
          sqlite
            .prepare("select session_id from sessions where session_id != ? order by id limit 1")
            .pluck()
            .get(TWIN) as string,
      )
      await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: other }))
      const after = await vectorFacts(dataDir)
      expect(after).toMatchObject({ unheldKeys: 0, unembeddedTexts: 0 })
      expect(after.keys).toBe(after.texts)
      expect(after.keys).toBeLessThan(before.keys)
      expect({ vectors: after.vectors, codes: after.codes }).toEqual({
        vectors: after.keys,
        codes: after.keys,
      })

      // The twin's transcript vanishes and is pruned: its texts' vectors go too.
      rmSync(twinPath)
      await runIndex(dataDir, { environment })
      await withIndex(dataDir, pruneDeleted())
      const pruned = await vectorFacts(dataDir)
      expect(await twinTexts(dataDir)).toBe(0)
      expect(pruned).toMatchObject({ unheldKeys: 0, unembeddedTexts: 0 })
      expect(pruned.keys).toBe(pruned.texts)
      expect(pruned.keys).toBeLessThan(after.keys)
      expect(pruned.vectors).toBe(pruned.keys)
    })
  }
})

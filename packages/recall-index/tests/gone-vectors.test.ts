// Vectors of text no chunk holds any more: a rewrite that removes text drops its vectors at the
// run's end (one that writes the same text back keeps them), forget drops those of the text it
// removes, and vacuum sweeps whatever is left (a killed run's notes are lost with its connection).
// Before, the vectors of text a rewrite removed stayed for good: a forgotten session left the
// embeddings of its earlier versions behind, and status counted more vectors than chunks.
import { writeFileSync } from "node:fs"
import { basename } from "node:path"
import { describe, expect, it } from "vitest"
import { embedBacklog, forgetSessions, vacuumIndex } from "@baton/recall-index"
import { generateBulkCorpus, makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { runIndex, tempDirsForFile, withIndex, withSqlite, writeTree } from "./index-harness.js"

const temp = tempDirsForFile()

const embedder = makeDeterministicEmbedder({ dim: 16 })

/** Vectors whose text no chunk holds, and all vectors. */
const vectorCounts = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) => ({
    orphans: sqlite
      .prepare(
        "select count(*) from vector_keys where content_hash not in (select content_hash from chunks)",
      )
      .pluck()
      .get() as number,
    vectors: sqlite.prepare("select count(*) from vector_keys").pluck().get() as number,
    stored: sqlite.prepare("select sum(vector_count) from embedders").pluck().get() as number,
  }))

describe("vectors of gone text", () => {
  it("a rewrite drops the vectors of the text it removed; forget and vacuum leave none behind", async () => {
    const home = temp("gone-home")
    const { files } = generateBulkCorpus({ homeDir: home, files: 3, seed: 11, exchangesPerFile: 8 })
    writeTree(files)
    const environment = {
      env: { CLAUDE_CONFIG_DIR: `${home}/.claude`, CODEX_HOME: `${home}/.codex` },
      homeDir: home,
    }
    const dataDir = temp("gone-data")
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, embedBacklog(embedder))
    const full = await vectorCounts(dataDir)
    expect(full).toMatchObject({ orphans: 0 })

    // The same text written back (a re-parse) keeps every vector: nothing to embed again.
    await runIndex(dataDir, { environment, parserVersion: 1_000 })
    expect(await vectorCounts(dataDir)).toEqual(full)
    expect(await withIndex(dataDir, embedBacklog(embedder))).toMatchObject({ embedded: 0 })

    // One transcript cut to its first half: the other half's text is gone, and so are its vectors.
    const [path, text] = Object.entries(files)[0]!
    const lines = text.split("\n")
    writeFileSync(path, lines.slice(0, Math.floor(lines.length / 2)).join("\n") + "\n")
    await runIndex(dataDir, { environment, parserVersion: 1_000 })
    const cut = await vectorCounts(dataDir)
    expect(cut.orphans).toBe(0)
    expect(cut.vectors).toBeLessThan(full.vectors)
    expect(cut.stored).toBe(cut.vectors)

    // Forgetting that session leaves no vector of any version of it.
    await withIndex(
      dataDir,
      forgetSessions({ _tag: "Session", sessionId: basename(path, ".jsonl") }),
    )
    expect(await vectorCounts(dataDir)).toMatchObject({ orphans: 0 })

    // Rows deleted behind the notes' back (as a run killed before its end leaves them): vacuum
    // sweeps the vectors no chunk holds.
    await withSqlite(dataDir, (sqlite) =>
      sqlite.prepare("delete from turns where id in (select id from turns limit 4)").run(),
    )
    expect((await vectorCounts(dataDir)).orphans).toBeGreaterThan(0)
    await withIndex(dataDir, vacuumIndex())
    const swept = await vectorCounts(dataDir)
    expect(swept.orphans).toBe(0)
    expect(swept.stored).toBe(swept.vectors)
  })
})

// `checkRecallIndexFile` (what `baton doctor` reports): read-only, on real index files.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { checkRecallIndexFile, RECALL_SCHEMA_VERSION } from "@baton/recall-index"
import { generateFixtureCorpus } from "@baton/recall-index/testing"
import { runIndex, tempDir, withSqlite, writeTree } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const dirs = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  return { home: home.path, dataDir: join(data.path, "baton") }
}

describe("checkRecallIndexFile", () => {
  it("reads a real index's sessions and schema without changing a byte", async () => {
    const { home, dataDir } = dirs()
    const corpus = generateFixtureCorpus({ seed: 5, homeDir: home })
    writeTree(corpus.files)
    await runIndex(dataDir, {
      environment: {
        env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
        homeDir: home,
      },
    })
    const sessions = await withSqlite(
      dataDir,
      (sqlite) => sqlite.prepare("select count(*) from sessions").pluck().get() as number,
    )
    expect(sessions).toBeGreaterThan(1)
    const path = join(dataDir, "recall-index.db")
    const files = readdirSync(dataDir).sort()
    const before = readFileSync(path)
    expect(checkRecallIndexFile(path)).toEqual({
      _tag: "Readable",
      path,
      bytes: before.length,
      schemaVersion: RECALL_SCHEMA_VERSION,
      sessions,
    })
    expect(readFileSync(path).equals(before)).toBe(true)
    // As any reader of a WAL database, it may leave SQLite's side files; nothing else.
    expect(
      readdirSync(dataDir)
        .filter((name) => !/^recall-index\.db-(wal|shm)$/.test(name))
        .sort(),
    ).toEqual(files.filter((name) => !/^recall-index\.db-(wal|shm)$/.test(name)))
    expect(checkRecallIndexFile(join(dataDir, "none.db"))).toEqual({
      _tag: "Missing",
      path: join(dataDir, "none.db"),
    })
  })

  it("names a damaged file, a directory and a newer schema with the index's own advice", async () => {
    const { dataDir } = dirs()
    mkdirSync(dataDir, { recursive: true })
    const damaged = join(dataDir, "damaged.db")
    writeFileSync(damaged, "not a database ".repeat(100))
    const messageOf = (path: string) => {
      const found = checkRecallIndexFile(path)
      return found._tag === "Unusable" ? found.error.message : found._tag
    }
    expect(messageOf(damaged)).toMatch(/ is damaged \(.*not a database\): move it aside/)
    const directory = join(dataDir, "directory.db")
    mkdirSync(directory)
    expect(messageOf(directory)).toMatch(
      / cannot be opened \(EISDIR.*\): it must be a database file/,
    )
    await withSqlite(dataDir, (sqlite) =>
      sqlite.exec(
        `update meta set value = '${RECALL_SCHEMA_VERSION + 1}' where key = 'schema_version'`,
      ),
    )
    expect(messageOf(join(dataDir, "recall-index.db"))).toContain("was written by a newer Baton")
  })
})

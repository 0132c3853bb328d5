// The WAL after a large run: SQLite reuses a WAL file instead of shrinking it, so without a trim a
// run that wrote tens of MB would leave that much beside the database for as long as another
// connection (an MCP server, a `--watch` indexer) kept the file open.
import BetterSqlite3 from "better-sqlite3"
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  RECALL_DATABASE_FILE,
  TRANSCRIPT_PARSER_VERSION,
  WAL_SIZE_LIMIT_BYTES,
} from "@baton/recall-index"
import { generateBulkCorpus } from "@baton/recall-index/testing"
import { runIndex, tempDirsForFile, writeTree } from "./index-harness.js"

const temp = tempDirsForFile()

describe("WAL size", () => {
  it("a large run leaves the WAL under the limit while another connection keeps the file open", async () => {
    const home = temp("wal-home")
    // ~19 MB of transcripts: the run's WAL grows past the limit between its checkpoints.
    writeTree(generateBulkCorpus({ homeDir: home, files: 300, seed: 3 }).files)
    const dataDir = temp("wal-data")
    const environment = {
      env: { CLAUDE_CONFIG_DIR: join(home, ".claude"), CODEX_HOME: join(home, ".codex") },
      homeDir: home,
    }
    // A run over no transcripts creates the index file for the other connection to open.
    await runIndex(dataDir, { environment: { ...environment, env: {} }, sources: ["codex"] })
    const path = join(dataDir, RECALL_DATABASE_FILE)
    // An MCP server that has answered a search: its connection holds the WAL open (SQLite
    // deletes the WAL when the last connection that read it closes).
    const other = new BetterSqlite3(path)
    other.prepare("select count(*) from chunks").get()
    const walBytes = () => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0)
    try {
      const sizes: Array<number> = []
      let peak = 0
      await runIndex(dataDir, {
        environment,
        onProgress: () => {
          peak = Math.max(peak, walBytes())
        },
      })
      sizes.push(walBytes())
      await runIndex(dataDir, {
        environment,
        parserVersion: TRANSCRIPT_PARSER_VERSION + 1,
        onProgress: () => {
          peak = Math.max(peak, walBytes())
        },
      })
      sizes.push(walBytes())
      // The runs did grow it past the limit, and each ended with it back under.
      expect(peak).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES)
      expect(Math.max(...sizes)).toBeLessThan(1024 * 1024)
      expect(other.prepare("select count(*) from chunks").pluck().get()).toBeGreaterThan(1000)
    } finally {
      other.close()
    }
  })
})

// The indexer over transcripts written by the REAL pinned binaries (Codex 0.169.0, Claude Code
// 2.1.328, recorded by the testkit's corpus builder against loopback mocks), into a real
// temp-file database; also with its lookup indexes deferred to the end of the run.
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildCorpus } from "@baton/testkit"
import type { Corpus } from "@baton/testkit"
import {
  expandAround,
  forgetSessions,
  grepRecords,
  indexStatus,
  matchChunks,
  RecallDatabase,
  vacuumIndex,
} from "@baton/recall-index"
import type { IndexProgressEvent, IndexRunReport } from "@baton/recall-index"
import { runIndex, snapshot, tempDir, withIndex } from "./index-harness.js"

let corpus: Corpus
let report: IndexRunReport
const data = tempDir("e2e-data")
const dataDir = join(data.path, "baton")

beforeAll(async () => {
  corpus = await buildCorpus()
  report = await runIndex(dataDir, {
    environment: {
      env: { CODEX_HOME: corpus.codexHome, CLAUDE_CONFIG_DIR: corpus.claudeConfigDir },
      homeDir: corpus.root,
    },
  })
}, 300_000)

afterAll(async () => {
  await corpus?.dispose()
  data.dispose()
})

const sessionOf = (agent: "codex" | "claude", headless: boolean) =>
  corpus.sessions.find((s) => s.spec.agent === agent && (s.spec.headless ?? false) === headless)!

describe("recall index on real agent transcripts", () => {
  it("indexes all four sessions with their headless flags", async () => {
    // Every recorded Claude session runs through `claude -p` (stream-json), so all are headless.
    expect(report.indexedNew).toBe(4)
    expect(report.failed).toEqual([])
    const status = await withIndex(dataDir, indexStatus(Date.now()))
    expect(status.sessions).toBe(4)
    expect(status.chunks).toBeGreaterThan(0)
    expect(status.embeddingBacklog).toBe(status.chunks)
    const sessions = await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(
          () =>
            db.sqlite
              .prepare("select source, session_id, headless, turn_count from sessions")
              .all() as Array<{ source: string; session_id: string; headless: number }>,
        ),
      ),
    )
    for (const s of corpus.sessions) {
      expect(sessions.find((r) => r.session_id === s.sessionId)).toMatchObject({
        source: s.spec.agent,
        headless: s.spec.headless === true || s.spec.agent === "claude" ? 1 : 0,
      })
    }
  })

  it("finds 'retry policy' in the Codex session and 'frost' in the Claude session", async () => {
    const retry = await withIndex(dataDir, matchChunks("retry policy"))
    expect(retry.map((m) => m.sessionId)).toContain(sessionOf("codex", false).sessionId)
    expect(retry.every((m) => m.source === "codex")).toBe(true)
    const frost = await withIndex(dataDir, matchChunks("frost"))
    expect(frost.map((m) => m.sessionId)).toContain(sessionOf("claude", false).sessionId)
  })

  it("keeps tool output in raw records, not in chunks", async () => {
    const found = await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() => ({
          raw: (
            db.sqlite
              .prepare("select count(*) as n from raw_records where text like '%handlers=7%'")
              .get() as { n: number }
          ).n,
          chunks: (
            db.sqlite
              .prepare("select count(*) as n from chunks where text like '%handlers=7%'")
              .get() as { n: number }
          ).n,
        })),
      ),
    )
    expect(found.raw).toBeGreaterThan(0)
    expect(found.chunks).toBe(0)
    expect(await withIndex(dataDir, matchChunks("handlers=7"))).toEqual([])
  })

  it("stores the same rows and walks the same turns when a run defers its lookup and full-text indexes", async () => {
    const deferred = join(data.path, "deferred")
    const events: Array<IndexProgressEvent> = []
    const again = await runIndex(deferred, {
      environment: {
        env: { CODEX_HOME: corpus.codexHome, CLAUDE_CONFIG_DIR: corpus.claudeConfigDir },
        homeDir: corpus.root,
      },
      deferLookupIndexes: true,
      deferLexicalIndex: true,
      onProgress: (e) => events.push(e),
    })
    expect(again.indexedNew).toBe(4)
    expect(events.some((e) => e._tag === "BuildingLookupIndexes")).toBe(true)
    expect(events).toContainEqual({ _tag: "BuildingLexicalIndex", chunks: again.chunksAdded })
    const words = ["retry", "frost", "policy"]
    expect(await snapshot(deferred, words)).toEqual(await snapshot(dataDir, words))
    // A turn found by its id (the `turns_turn_id` index this run built) opens the same window.
    const codex = sessionOf("codex", false)
    const hit = (await withIndex(dataDir, matchChunks("retry policy"))).find(
      (m) => m.sessionId === codex.sessionId,
    )!
    const window = (dir: string) =>
      withIndex(dir, expandAround({ sessionId: hit.sessionId, turnId: hit.turnId, before: 1 }))
    expect(await window(deferred)).toEqual(await window(dataDir))
  })

  it("forgets every session that mentions 'frost', and a vacuum takes the word off the disk", async () => {
    const forgetting = join(data.path, "forgetting")
    await runIndex(forgetting, {
      environment: {
        env: { CODEX_HOME: corpus.codexHome, CLAUDE_CONFIG_DIR: corpus.claudeConfigDir },
        homeDir: corpus.root,
      },
    })
    const onDisk = () =>
      ["recall-index.db", "recall-index.db-wal"].some((name) => {
        const path = join(forgetting, name)
        return existsSync(path) && readFileSync(path).includes(Buffer.from("frost"))
      })
    const grep = await withIndex(forgetting, grepRecords({ pattern: "frost", limit: 100 }))
    const sessions = [...new Set(grep.hits.map((h) => h.sessionId))]
    expect(sessions).toContain(sessionOf("claude", false).sessionId)
    for (const sessionId of sessions) {
      await withIndex(forgetting, forgetSessions({ _tag: "Session", sessionId }))
    }
    expect(await withIndex(forgetting, matchChunks("frost"))).toEqual([])
    expect(onDisk()).toBe(true)
    const report = await withIndex(forgetting, vacuumIndex())
    expect(report.bytesAfter).toBeLessThanOrEqual(report.bytesBefore)
    expect(onDisk()).toBe(false)
    // The other sessions are still found.
    expect((await withIndex(forgetting, indexStatus(Date.now()))).sessions).toBe(
      4 - sessions.length,
    )
    expect((await withIndex(forgetting, matchChunks("retry policy"))).length).toBeGreaterThan(0)
  })
})

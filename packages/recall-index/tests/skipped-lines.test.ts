// Skipped lines (schema 9): the lines a parse could not use are counted per file, summed for the
// run's report and kept for `indexStatus` — an append adds to a file's count, a rewrite replaces
// it, a forgotten file drops out, and an index written before the column migrates to it.
import { appendFileSync, writeFileSync } from "node:fs"
import { basename, join } from "node:path"
import { describe, expect, it } from "vitest"
import { forgetSessions, indexStatus, RECALL_SCHEMA_VERSION } from "@baton/recall-index"
import type { IndexOptions } from "@baton/recall-index"
import { generateBulkCorpus, rolloutName } from "@baton/recall-index/testing"
import {
  rewindSkippedLines,
  runIndex,
  tempDirsForFile,
  withIndex,
  withSqlite,
  writeTree,
} from "./index-harness.js"

const temp = tempDirsForFile()

const CODEX_ID = "019a7f00-1111-7222-8333-444455556666"
const at = Date.parse("2026-11-20T10:00:00.000Z")
const codexLine = (type: string, payload: object) =>
  `${JSON.stringify({ timestamp: "2026-11-20T10:00:01.000Z", type, payload })}\n`
const rollout =
  codexLine("session_meta", {
    id: CODEX_ID,
    timestamp: "2026-11-20T10:00:00.000Z",
    cwd: "/work/ledger",
    originator: "codex_cli_rs",
    cli_version: "0.169.0",
  }) +
  codexLine("response_item", {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: "Which retry policy did we pick for the ledger?" }],
  }) +
  codexLine("response_item", {
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: "Exponential backoff, five attempts, jitter on." }],
  })

/** Two Claude Code transcripts and one Codex rollout under a fresh home. */
const history = () => {
  const home = temp("home")
  const claude = Object.entries(
    generateBulkCorpus({ homeDir: home, files: 2, seed: 9, exchangesPerFile: 3 }).files,
  )
  const { dir, name } = rolloutName(at, CODEX_ID)
  const codex = join(home, ".codex", "sessions", dir, name)
  writeTree({ ...Object.fromEntries(claude), [codex]: rollout })
  const environment: IndexOptions["environment"] = {
    env: { CLAUDE_CONFIG_DIR: join(home, ".claude"), CODEX_HOME: join(home, ".codex") },
    homeDir: home,
  }
  return { claude: claude.map(([p]) => p).sort(), codex, environment, dataDir: temp("data") }
}

const status = (dataDir: string) => withIndex(dataDir, indexStatus(Date.now()))

describe("skipped lines", () => {
  it("are counted per file, summed for the run and kept until the file is indexed again", async () => {
    const h = history()
    const [first, second] = h.claude as [string, string]
    const clean = await runIndex(h.dataDir, { environment: h.environment })
    expect(clean.skippedLines).toBeNull()
    expect((await status(h.dataDir)).skippedLines).toBeNull()

    // Not JSON, JSON that is not an object, an object that is no record, and an unknown type.
    appendFileSync(
      first,
      '{"type":"user","message":\n42\n{"noType":true}\n' +
        '{"type":"future-record","sessionId":"x"}\n{"type":"future-record"}\n',
    )
    appendFileSync(h.codex, codexLine("brand_new", { n: 1 }))
    const appended = await runIndex(h.dataDir, { environment: h.environment })
    expect(appended.appended).toBe(2)
    expect(appended.skippedLines).toEqual({
      files: 2,
      lines: 6,
      malformed: 2,
      invalid: 1,
      unknownTypes: { "future-record": 2, brand_new: 1 },
    })
    const afterAppend = await status(h.dataDir)
    expect(afterAppend.skippedLines).toEqual({
      files: 2,
      lines: 6,
      malformed: 2,
      invalid: 1,
      unknownTypes: { "future-record": 2, brand_new: 1 },
      listed: [
        {
          path: first,
          skipped: { lines: 5, malformed: 2, invalid: 1, unknownTypes: { "future-record": 2 } },
        },
        {
          path: h.codex,
          skipped: { lines: 1, malformed: 0, invalid: 0, unknownTypes: { brand_new: 1 } },
        },
      ],
    })
    // The last run's report keeps them too.
    expect(afterAppend.lastRun?.skippedLines).toEqual(appended.skippedLines)

    // An append adds to the file's count; an unchanged run reports none of its own.
    appendFileSync(first, "not json either\n")
    appendFileSync(second, "{broken\n")
    const more = await runIndex(h.dataDir, { environment: h.environment })
    expect(more.skippedLines).toMatchObject({ files: 2, lines: 2, malformed: 2 })
    const unchanged = await runIndex(h.dataDir, { environment: h.environment })
    expect(unchanged.skippedLines).toBeNull()
    const summed = (await status(h.dataDir)).skippedLines
    expect(summed).toMatchObject({ files: 3, lines: 8, malformed: 4, invalid: 1 })
    expect(summed?.listed.map((f) => [f.path, f.skipped.lines])).toEqual([
      [first, 6],
      [second, 1],
      [h.codex, 1],
    ])

    // A rewrite counts the file afresh: the rollout without its unknown line has none.
    writeFileSync(h.codex, `${rollout}`.replace("five attempts", "seven attempts"))
    const rewritten = await runIndex(h.dataDir, { environment: h.environment })
    expect(rewritten.rewritten).toBe(1)
    expect(rewritten.skippedLines).toBeNull()
    expect((await status(h.dataDir)).skippedLines?.listed.map((f) => f.path)).toEqual([
      first,
      second,
    ])

    // A forgotten session's file is not counted.
    await withIndex(
      h.dataDir,
      forgetSessions({ _tag: "Session", sessionId: basename(first, ".jsonl") }),
    )
    expect((await status(h.dataDir)).skippedLines).toMatchObject({
      files: 1,
      lines: 1,
      listed: [{ path: second }],
    })
  })

  it("start at none for an index written before schema 9, and count from its next run", async () => {
    const h = history()
    const [first] = h.claude as [string, string]
    appendFileSync(first, "{oops\n")
    await runIndex(h.dataDir, { environment: h.environment })
    await withSqlite(h.dataDir, (sqlite) => rewindSkippedLines(sqlite))
    const migrated = await withSqlite(h.dataDir, (sqlite) => ({
      version: sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
      column: sqlite.prepare("select skipped_lines from files where path = ?").pluck().get(first),
    }))
    expect(migrated).toEqual({ version: String(RECALL_SCHEMA_VERSION), column: null })
    // The stored last run of schema 8 has no skipped lines: it decodes as none.
    await withSqlite(h.dataDir, (sqlite) => {
      const report = JSON.parse(
        sqlite.prepare("select value from meta where key = 'last_run'").pluck().get() as string,
      ) as Record<string, unknown>
      delete report.skippedLines
      sqlite.prepare("update meta set value = ? where key = 'last_run'").run(JSON.stringify(report))
    })
    const before = await status(h.dataDir)
    expect(before.skippedLines).toBeNull()
    expect(before.lastRun?.skippedLines).toBeNull()

    appendFileSync(first, "{again\n")
    // With the parser of that index (version 1): a later parser reads the files again whole.
    await runIndex(h.dataDir, { environment: h.environment, parserVersion: 1 })
    expect((await status(h.dataDir)).skippedLines).toMatchObject({
      files: 1,
      lines: 1,
      listed: [{ path: first, skipped: { lines: 1, malformed: 1 } }],
    })
  })

  it("keep a stored value that is not theirs from failing status", async () => {
    const h = history()
    await runIndex(h.dataDir, { environment: h.environment })
    await withSqlite(h.dataDir, (sqlite) =>
      sqlite.prepare("update files set skipped_lines = ?").run("{not json"),
    )
    expect((await status(h.dataDir)).skippedLines).toBeNull()
  })
})

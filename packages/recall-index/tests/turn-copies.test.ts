// One session's turns held by two files: an older Claude Code resume starts its new file with a
// copy of the previous session's records, under that session's id (transcripts.md §1.7), and one
// Codex rollout can sit in both `sessions/` and `archived_sessions/`. Each turn is shown once by
// step and expand and counted once by recent and status — whichever file was indexed first,
// through full writes, appends and prunes, and in an index written before schema 12 — while both
// files' rows stay (nothing is lost when one file goes) and forget removes them all.
import { appendFileSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import {
  expandAround,
  forgetSessions,
  grepRecords,
  indexStatus,
  pruneDeleted,
  recentSessions,
  step,
} from "@baton/recall-index"
import {
  rewindDistinctTurnCounts,
  runIndex,
  storedCountMismatches,
  tempDir,
  withIndex,
  withSqlite,
} from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const OLD = "c0c0c0c0-0000-4000-8000-000000000001"
const NEW = "c0c0c0c0-0000-4000-8000-000000000002"

const setup = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const claude = join(home.path, ".claude")
  const codex = join(home.path, ".codex")
  const project = join(claude, "projects", "-work-app")
  mkdirSync(project, { recursive: true })
  return {
    environment: { env: { CLAUDE_CONFIG_DIR: claude, CODEX_HOME: codex }, homeDir: home.path },
    dataDir: join(data.path, "baton"),
    project,
    codex,
  }
}

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 9, minute)).toISOString()

/** One Claude Code record (a JSONL line) of `sessionId`, its uuid numbered `n`. */
const claudeLine = (sessionId: string, n: number, text: string): string => {
  const user = n % 2 === 1
  const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
  return `${JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: "/work/app",
    sessionId,
    version: "2.0.10",
    type: user ? "user" : "assistant",
    uuid,
    timestamp: at(n),
    message: user
      ? { role: "user", content: text }
      : { id: `msg_${uuid}`, role: "assistant", model: "m", content: [{ type: "text", text }] },
  })}\n`
}

const OLD_LINES =
  claudeLine(OLD, 1, "How should we cache sessions?") +
  claudeLine(OLD, 2, "Use a slatefern cache in front.")
const NEW_LINE = claudeLine(NEW, 11, "Resumed: go on with the cache.")

/** The turns `step` lists from the start of `sessionId`, and `recent`'s turn count for it. */
const navigation = async (dataDir: string, sessionId: string) => {
  const stepped = await withIndex(dataDir, step({ sessionId, direction: "next", count: 20 }))
  const recent = await withIndex(dataDir, recentSessions({ limit: 50 }))
  return {
    step: stepped.turns.map((t) => t.turnId),
    turns: recent.find((s) => s.sessionId === sessionId)?.turns,
  }
}

describe("a session's turns held by two files", () => {
  it("an older Claude Code resume's copy: each turn once in step, expand, recent and status", async () => {
    const { environment, dataDir, project } = setup()
    writeFileSync(join(project, `${OLD}.jsonl`), OLD_LINES)
    writeFileSync(join(project, `${NEW}.jsonl`), OLD_LINES + NEW_LINE)
    await runIndex(dataDir, { environment })
    const { step: ids, turns } = await navigation(dataDir, OLD)
    expect(ids).toHaveLength(2)
    expect(new Set(ids).size).toBe(2)
    expect(turns).toBe(2)
    const expanded = await withIndex(
      dataDir,
      expandAround({ sessionId: OLD, turnId: ids[1]!, before: 5, after: 5 }),
    )
    expect(expanded.turns.map((t) => t.turnId)).toEqual(ids)
    expect(expanded.turns.filter((t) => t.isAnchor).map((t) => t.turnId)).toEqual([ids[1]])
    // Stepping on from the first turn reaches the second, then the end.
    const next = await withIndex(
      dataDir,
      step({ sessionId: OLD, turnId: ids[0]!, direction: "next", count: 5 }),
    )
    expect(next.turns.map((t) => t.turnId)).toEqual([ids[1]])
    expect(next.atEnd).toBe(true)
    const status = await withIndex(dataDir, indexStatus(Date.now()))
    expect(status.turns).toBe(3)
    expect(await storedCountMismatches(dataDir)).toEqual([])
  })

  it("one Codex rollout in sessions/ and archived_sessions/: each turn once", async () => {
    const { environment, dataDir, codex } = setup()
    const id = "c0c0c0c0-0000-7000-8000-00000000c0de"
    const line = (minute: number, type: string, payload: Record<string, unknown>) =>
      `${JSON.stringify({ timestamp: at(minute), type, payload })}\n`
    const message = (minute: number, role: "user" | "assistant", text: string) =>
      line(minute, "response_item", {
        type: "message",
        role,
        content: [{ type: role === "user" ? "input_text" : "output_text", text }],
      })
    const rollout =
      line(0, "session_meta", {
        id,
        timestamp: at(0),
        cwd: "/work/app",
        originator: "codex_cli_rs",
        cli_version: "0.50.0",
        source: "cli",
      }) +
      message(1, "user", "Which queue should we use?") +
      message(2, "assistant", "A slatefern queue.") +
      message(3, "user", "And retries?") +
      message(4, "assistant", "Three, with backoff.")
    const name = `rollout-2026-11-20T09-00-00-${id}.jsonl`
    const live = join(codex, "sessions", "2026", "11", "20")
    const archived = join(codex, "archived_sessions")
    mkdirSync(live, { recursive: true })
    mkdirSync(archived, { recursive: true })
    writeFileSync(join(live, name), rollout)
    copyFileSync(join(live, name), join(archived, name))
    await runIndex(dataDir, { environment })
    const { step: ids, turns } = await navigation(dataDir, id)
    expect(ids).toHaveLength(4)
    expect(new Set(ids).size).toBe(4)
    expect(turns).toBe(4)
    expect((await withIndex(dataDir, indexStatus(Date.now()))).turns).toBe(4)
    expect(await storedCountMismatches(dataDir)).toEqual([])
  })

  it("keeps the counts through appends and a prune, loses no turn, and forget removes both copies", async () => {
    const { environment, dataDir, project } = setup()
    const oldFile = join(project, `${OLD}.jsonl`)
    const newFile = join(project, `${NEW}.jsonl`)
    writeFileSync(oldFile, OLD_LINES)
    await runIndex(dataDir, { environment })
    // The resume's copy arrives after the original was indexed, then grows by appends.
    writeFileSync(newFile, OLD_LINES)
    await runIndex(dataDir, { environment })
    expect((await navigation(dataDir, OLD)).turns).toBe(2)
    const more = claudeLine(OLD, 3, "Also cache the slatefern tokens.")
    appendFileSync(oldFile, more)
    const appended = await runIndex(dataDir, { environment })
    expect(appended.appended).toBe(1)
    appendFileSync(newFile, more + NEW_LINE)
    await runIndex(dataDir, { environment })
    const both = await navigation(dataDir, OLD)
    expect(both.step).toHaveLength(3)
    expect(both.turns).toBe(3)
    expect(await storedCountMismatches(dataDir)).toEqual([])
    // The original transcript goes: the copy still holds every turn.
    rmSync(oldFile)
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, pruneDeleted())
    expect(await navigation(dataDir, OLD)).toEqual(both)
    expect(await storedCountMismatches(dataDir)).toEqual([])
    // Forget removes the session from every file that held it.
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: OLD }))
    const left = await withIndex(dataDir, grepRecords({ pattern: "slatefern" }))
    expect(left.hits).toEqual([])
    expect(
      await withSqlite(dataDir, (sqlite) =>
        sqlite
          .prepare(
            "select count(*) from turns t join sessions s on s.id = t.session_row where s.session_id = ?",
          )
          .pluck()
          .get(OLD),
      ),
    ).toBe(0)
  })

  it("recounts an index written before schema 12", async () => {
    const { environment, dataDir, project } = setup()
    writeFileSync(join(project, `${OLD}.jsonl`), OLD_LINES)
    writeFileSync(join(project, `${NEW}.jsonl`), OLD_LINES + NEW_LINE)
    await runIndex(dataDir, { environment })
    // Read in the same connection: the next open migrates the file again.
    const rewound = await withSqlite(dataDir, (sqlite) => {
      rewindDistinctTurnCounts(sqlite)
      return sqlite.prepare("select turn_count from sessions where session_id = ?").pluck().get(OLD)
    })
    expect(rewound).toBe(4)
    expect((await navigation(dataDir, OLD)).turns).toBe(2)
    expect(await storedCountMismatches(dataDir)).toEqual([])
  })
})

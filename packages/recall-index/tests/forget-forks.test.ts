// A forgotten session's turns stay out of the index in the other sessions that copy them. Claude
// Code's `claude --resume <id> --fork-session` (2.1.x) copies the session's records, uuids
// included, into the fork's file under the FORK's session id, with no field naming the parent:
// `forget` deletes those copies from a fork already indexed (its own turns stay), and no index run
// writes them again — a fork made after the forget, or a fork file read again whole. Forgetting a
// Claude session also forgets its subagents' transcripts. Real temp files and database.
import { appendFileSync, copyFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, describe, expect, it } from "vitest"
import {
  forgetSessions,
  grepRecords,
  lexicalQuery,
  RecallDatabase,
  recentSessions,
  searchRecall,
} from "@baton/recall-index"
import {
  checkFullText,
  claudeRecordWriter,
  rewindForgottenTurns,
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

const PARENT = "6b6b6b6b-0000-4000-8000-000000000001"
const FORK = "6b6b6b6b-0000-4000-8000-000000000002"
const LATER_FORK = "6b6b6b6b-0000-4000-8000-000000000003"
const BARE_FORK = "6b6b6b6b-0000-4000-8000-000000000004"
const OTHER = "6b6b6b6b-0000-4000-8000-000000000005"

const record = claudeRecordWriter("2026-11-21T10:00:00Z", "9000", "2.1.328")
/** One Claude Code record; sidechain records carry the subagent's `agentId`. */
const line = (
  sessionId: string,
  type: "user" | "assistant",
  text: string,
  agentId?: string,
  cwd = "/work/app",
): string => record({ sessionId, cwd, type, text, agentId })
const exchange = (sessionId: string, word: string, agentId?: string, cwd?: string) =>
  line(sessionId, "user", `what about ${word}?`, agentId, cwd) +
  line(sessionId, "assistant", `${word} is settled.`, agentId, cwd)

/**
 * What `claude --resume <parent> --fork-session` writes: the parent's records under the fork's
 * session id, uuids unchanged, then the fork's own.
 */
const forkOf = (parentLines: string, parent: string, fork: string, own: string): string =>
  parentLines.replaceAll(parent, fork) + own

const setup = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const projects = join(home.path, ".claude", "projects")
  const project = join(projects, "-work-app")
  mkdirSync(project, { recursive: true })
  const environment = {
    env: { CLAUDE_CONFIG_DIR: join(home.path, ".claude"), CODEX_HOME: join(home.path, ".codex") },
    homeDir: home.path,
  }
  const dataDir = join(data.path, "baton")
  const file = (sessionId: string) => join(project, `${sessionId}.jsonl`)
  const grep = async (word: string) =>
    (await withIndex(dataDir, grepRecords({ pattern: word, limit: 100 }))).hits.map(
      (h) => h.sessionId,
    )
  const search = async (word: string) =>
    (
      await withIndex(
        dataDir,
        searchRecall({ query: word, k: 10, arms: ["lexical"] }, { expandQuery: lexicalQuery }),
      )
    ).hits.map((h) => h.sessionId)
  const recent = async () =>
    (await withIndex(dataDir, recentSessions({ limit: 50, includeSubagents: true }))).map((s) => ({
      sessionId: s.sessionId,
      title: s.title,
      turns: s.turns,
    }))
  const forgottenTurns = () =>
    withSqlite(
      dataDir,
      (sqlite) =>
        sqlite
          .prepare("select turn_id from forgotten_turns order by turn_id")
          .pluck()
          .all() as Array<string>,
    )
  const sessionIds = () =>
    withSqlite(
      dataDir,
      (sqlite) =>
        sqlite
          .prepare("select session_id from sessions order by session_id")
          .pluck()
          .all() as Array<string>,
    )
  const index = () => runIndex(dataDir, { environment })
  const forget = (sessionId: string) =>
    withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId }))
  return {
    project,
    environment,
    dataDir,
    file,
    grep,
    search,
    recent,
    forgottenTurns,
    sessionIds,
    index,
    forget,
  }
}

/** Every trace of `word` the index can show: grep hits, search hits, and session titles. */
const traces = async (t: ReturnType<typeof setup>, word: string) => ({
  grep: await t.grep(word),
  search: await t.search(word),
  titles: (await t.recent()).filter((s) => (s.title ?? "").includes(word)).map((s) => s.sessionId),
})
const NONE = { grep: [], search: [], titles: [] }

describe("forgetting a session with a --fork-session fork", () => {
  it("deletes the fork's copies of its turns and keeps the fork's own turns", async () => {
    const t = setup()
    const parentLines = exchange(PARENT, "privatesecret")
    writeFileSync(t.file(PARENT), parentLines)
    writeFileSync(t.file(FORK), forkOf(parentLines, PARENT, FORK, exchange(FORK, "forkword")))
    await t.index()
    expect((await traces(t, "privatesecret")).titles).toEqual(
      expect.arrayContaining([PARENT, FORK]),
    )

    const removed = await t.forget(PARENT)
    expect(removed).toEqual({ sessions: 1, files: 1 })
    expect(await traces(t, "privatesecret")).toEqual(NONE)
    expect(await t.grep("forkword")).toEqual([FORK, FORK])
    // The fork keeps its own turns, counted, and its own first prompt.
    expect(await t.recent()).toEqual([{ sessionId: FORK, title: "what about forkword?", turns: 2 }])
    expect(await t.forgottenTurns()).toHaveLength(2)
    expect(await storedCountMismatches(t.dataDir)).toEqual([])
    expect(await checkFullText(t.dataDir)).toBe(0)

    // The fork goes on: an append, then its file read again whole (a new inode).
    appendFileSync(t.file(FORK), exchange(FORK, "laterword"))
    await t.index()
    expect(await t.grep("laterword")).toEqual([FORK, FORK])
    copyFileSync(t.file(FORK), `${t.file(FORK)}.tmp`)
    renameSync(`${t.file(FORK)}.tmp`, t.file(FORK))
    const reread = await t.index()
    expect(reread.rewritten + reread.indexedNew).toBe(1)
    expect(await traces(t, "privatesecret")).toEqual(NONE)
    expect(await t.grep("forkword")).toEqual([FORK, FORK])
    expect(await t.recent()).toEqual([{ sessionId: FORK, title: "what about forkword?", turns: 4 }])
    expect(await storedCountMismatches(t.dataDir)).toEqual([])
  })

  it("leaves its turns out of a fork made after the forget", async () => {
    const t = setup()
    const parentLines = exchange(PARENT, "privatesecret")
    writeFileSync(t.file(PARENT), parentLines)
    writeFileSync(t.file(OTHER), exchange(OTHER, "otherword"))
    await t.index()
    await t.forget(PARENT)
    writeFileSync(
      t.file(LATER_FORK),
      forkOf(parentLines, PARENT, LATER_FORK, exchange(LATER_FORK, "forkword")),
    )
    const run = await t.index()
    expect(run.indexedNew).toBe(1)
    expect(await traces(t, "privatesecret")).toEqual(NONE)
    expect(await t.grep("forkword")).toEqual([LATER_FORK, LATER_FORK])
    expect((await t.recent()).find((s) => s.sessionId === LATER_FORK)).toEqual({
      sessionId: LATER_FORK,
      title: "what about forkword?",
      turns: 2,
    })
    expect(await storedCountMismatches(t.dataDir)).toEqual([])
  })

  it("removes a fork left with no turn of its own, and indexes its own turns when they come", async () => {
    const t = setup()
    const parentLines = exchange(PARENT, "privatesecret")
    writeFileSync(t.file(PARENT), parentLines)
    writeFileSync(t.file(BARE_FORK), forkOf(parentLines, PARENT, BARE_FORK, ""))
    await t.index()
    expect((await t.recent()).map((s) => s.sessionId).sort()).toEqual([PARENT, BARE_FORK])
    await t.forget(PARENT)
    expect(await t.sessionIds()).toEqual([])
    expect(await traces(t, "privatesecret")).toEqual(NONE)

    appendFileSync(t.file(BARE_FORK), exchange(BARE_FORK, "ownword"))
    await t.index()
    expect(await traces(t, "privatesecret")).toEqual(NONE)
    expect(await t.recent()).toEqual([
      { sessionId: BARE_FORK, title: "what about ownword?", turns: 2 },
    ])
    expect(await storedCountMismatches(t.dataDir)).toEqual([])
  })

  it("also keeps out turns its transcript gained after the forget, once a run reads them", async () => {
    const t = setup()
    const parentLines = exchange(PARENT, "privatesecret")
    writeFileSync(t.file(PARENT), parentLines)
    await t.index()
    await t.forget(PARENT)
    // The transcript is moved and resumed: a run reads it (a new file to the index) and leaves
    // it out, remembering the new turns' ids too.
    const moved = join(t.project, "..", "-work-moved")
    mkdirSync(moved)
    const grown = parentLines + exchange(PARENT, "newsecret")
    writeFileSync(join(moved, `${PARENT}.jsonl`), grown)
    await t.index()
    expect(await t.forgottenTurns()).toHaveLength(4)
    writeFileSync(t.file(FORK), forkOf(grown, PARENT, FORK, exchange(FORK, "forkword")))
    await t.index()
    expect(await traces(t, "newsecret")).toEqual(NONE)
    expect(await traces(t, "privatesecret")).toEqual(NONE)
    expect(await t.grep("forkword")).toEqual([FORK, FORK])
  })

  it("forgetting the fork also forgets the history it shares with its parent", async () => {
    const t = setup()
    const shared = exchange(PARENT, "sharedword")
    writeFileSync(t.file(PARENT), shared + exchange(PARENT, "parentlater"))
    writeFileSync(t.file(FORK), forkOf(shared, PARENT, FORK, exchange(FORK, "forkword")))
    await t.index()
    expect(await t.forget(FORK)).toEqual({ sessions: 1, files: 1 })
    // The copies and the original carry the same ids: the parent keeps only its own turns.
    expect(await traces(t, "sharedword")).toEqual(NONE)
    expect(await traces(t, "forkword")).toEqual(NONE)
    expect(await t.recent()).toEqual([
      { sessionId: PARENT, title: "what about parentlater?", turns: 2 },
    ])
    expect(await storedCountMismatches(t.dataDir)).toEqual([])
  })

  it("forget --all drops the forgotten turn ids with the rest: the next run indexes the copies again", async () => {
    const t = setup()
    const parentLines = exchange(PARENT, "privatesecret")
    writeFileSync(t.file(PARENT), parentLines)
    writeFileSync(t.file(FORK), forkOf(parentLines, PARENT, FORK, exchange(FORK, "forkword")))
    await t.index()
    await t.forget(PARENT)
    await withIndex(t.dataDir, forgetSessions({ _tag: "All" }))
    expect(await t.forgottenTurns()).toEqual([])
    await t.index()
    expect((await t.grep("privatesecret")).length).toBeGreaterThan(0)
  })
})

describe("forgetting a Claude session", () => {
  it("also forgets its subagents' transcripts, those written later included", async () => {
    const t = setup()
    writeFileSync(t.file(PARENT), exchange(PARENT, "mainword"))
    const subagents = join(t.project, PARENT, "subagents")
    mkdirSync(subagents, { recursive: true })
    writeFileSync(join(subagents, "agent-a1.jsonl"), exchange(PARENT, "quetzal", "a1"))
    writeFileSync(t.file(OTHER), exchange(OTHER, "otherword"))
    await t.index()
    expect(await t.grep("quetzal")).toEqual([`${PARENT}/agent-a1`, `${PARENT}/agent-a1`])

    const removed = await t.forget(PARENT)
    expect(removed).toEqual({ sessions: 2, files: 2 })
    expect(await traces(t, "quetzal")).toEqual(NONE)
    expect(await t.recent()).toEqual([
      { sessionId: OTHER, title: "what about otherword?", turns: 2 },
    ])
    // A subagent the forgotten session starts later (it was resumed) is left out too.
    writeFileSync(join(subagents, "agent-a2.jsonl"), exchange(PARENT, "ocelot", "a2"))
    await t.index()
    expect(await traces(t, "ocelot")).toEqual(NONE)
    expect(await t.grep("otherword")).toEqual([OTHER, OTHER])
  })

  it("forgets with a project the subagents of its sessions, wherever they worked", async () => {
    const t = setup()
    writeFileSync(t.file(PARENT), exchange(PARENT, "mainword"))
    const subagents = join(t.project, PARENT, "subagents")
    mkdirSync(subagents, { recursive: true })
    // The subagent worked in another directory: only its parent places it in the project.
    writeFileSync(
      join(subagents, "agent-a1.jsonl"),
      exchange(PARENT, "quetzal", "a1", "/elsewhere/tool"),
    )
    await t.index()
    const removed = await withIndex(
      t.dataDir,
      forgetSessions({ _tag: "Project", repoRoot: "/work/app" }),
    )
    expect(removed).toEqual({ sessions: 2, files: 2 })
    expect(await traces(t, "quetzal")).toEqual(NONE)
    expect(await t.sessionIds()).toEqual([])
  })

  it("forgets the subagents left from a session forgotten before, when asked again", async () => {
    const t = setup()
    writeFileSync(t.file(PARENT), exchange(PARENT, "mainword"))
    const subagents = join(t.project, PARENT, "subagents")
    mkdirSync(subagents, { recursive: true })
    writeFileSync(join(subagents, "agent-a1.jsonl"), exchange(PARENT, "quetzal", "a1"))
    await t.index()
    // What an earlier Baton left: the session's own rows gone, its subagent's kept.
    await withSqlite(t.dataDir, (sqlite) =>
      sqlite.prepare("delete from sessions where session_id = ?").run(PARENT),
    )
    expect(await t.grep("quetzal")).toHaveLength(2)
    expect(await t.forget(PARENT)).toMatchObject({ sessions: 1 })
    expect(await traces(t, "quetzal")).toEqual(NONE)
  })
})

describe("schema 13", () => {
  it("adds forgotten_turns to an index of schema 12", async () => {
    const t = setup()
    writeFileSync(t.file(PARENT), exchange(PARENT, "word"))
    await t.index()
    await withIndex(
      t.dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        rewindForgottenTurns(db.sqlite)
      }),
    )
    const version = await withSqlite(t.dataDir, (sqlite) =>
      sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
    )
    expect(version).toBe("14")
    expect(await t.forgottenTurns()).toEqual([])
    await t.forget(PARENT)
    expect(await t.forgottenTurns()).toHaveLength(2)
  })
})

// Continuing a session with the REAL pinned agents against the loopback mocks, indexing after each
// step. Claude Code 2.1.328: `--resume` appends to the same transcript (the index appends, one
// session), while `--resume --fork-session` writes a new transcript that starts with a copy of
// the parent's records (same uuids, the fork's session id, no `forkedFrom`): search shows the
// copied prompt once (grep too), and the fork's own prompt under the fork. Codex 0.169.0: `codex exec
// resume <id>` appends to the thread's rollout.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createClaudeHome,
  createCodexHome,
  runClaudePrint,
  runCodexExec,
  startMockMessages,
  startMockResponses,
  textReply,
} from "@baton/testkit"
import type { ClaudeHome, MockMessagesServer } from "@baton/testkit"
import { grepRecords, recentSessions, searchRecall } from "@baton/recall-index"
import { runIndex, storedCountMismatches, withIndex } from "./index-harness.js"

let server: MockMessagesServer
let home: ClaudeHome
let data: string

beforeAll(async () => {
  server = await startMockMessages({ defaultText: "Noted." })
  home = await createClaudeHome()
  data = mkdtempSync(join(tmpdir(), "baton-claude-resume-"))
}, 60_000)

afterAll(async () => {
  await home?.dispose()
  await server?.close()
  if (data !== undefined) rmSync(data, { recursive: true, force: true })
})

const environment = () => ({
  env: { CLAUDE_CONFIG_DIR: dirname(home.projectsDir) },
  homeDir: home.root,
})
const dataDir = () => join(data, "baton")
// Each run also leaves every stored count (status sums them) equal to a recount of the rows.
const index = async () => {
  const report = await runIndex(dataDir(), { environment: environment(), sources: ["claude"] })
  expect(await storedCountMismatches(dataDir())).toEqual([])
  return report
}
const sessions = async () =>
  (await withIndex(dataDir(), recentSessions({ limit: 10 })))
    .map((s) => ({ sessionId: s.sessionId, turns: s.turns }))
    .sort((a, b) => a.sessionId.localeCompare(b.sessionId))
const hitsFor = async (query: string) =>
  (await withIndex(dataDir(), searchRecall({ query, k: 10, arms: ["lexical"] }, {}))).hits.map(
    (h) => ({ sessionId: h.sessionId, text: h.text }),
  )

describe("claude --resume and --fork-session, indexed", () => {
  let parent: string

  it("a first run is one session", async () => {
    const run = await runClaudePrint({ server, home, prompt: "KESTREL retry budget is twelve" })
    expect(run.exitCode, run.stderr).toBe(0)
    parent = run.sessionId
    expect(await index()).toMatchObject({ indexedNew: 1, failed: [] })
    expect(await sessions()).toEqual([{ sessionId: parent, turns: 2 }])
  }, 120_000)

  it("--resume appends to the same transcript: the index appends, still one session", async () => {
    const run = await runClaudePrint({
      server,
      home,
      resume: { sessionId: parent },
      prompt: "OSPREY backoff doubles each time",
    })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(readdirSync(dirname(run.transcriptPath)).filter((f) => f.endsWith(".jsonl"))).toEqual([
      `${parent}.jsonl`,
    ])
    expect(await index()).toMatchObject({ appended: 1, indexedNew: 0, rewritten: 0 })
    expect(await sessions()).toEqual([{ sessionId: parent, turns: 4 }])
    expect(await hitsFor("OSPREY")).toEqual([
      { sessionId: parent, text: "OSPREY backoff doubles each time" },
    ])
  }, 120_000)

  it("--fork-session copies the parent into a new transcript; search shows each prompt once", async () => {
    const run = await runClaudePrint({
      server,
      home,
      resume: { sessionId: parent, fork: true },
      prompt: "HARRIER forked plan",
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const fork = run.sessionId
    expect(fork).not.toBe(parent)
    // What 2.1.328 writes: the parent's records under the fork's session id, same uuids.
    const records = readFileSync(run.transcriptPath, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const copied = records.filter(
      (r) => r["type"] === "user" && JSON.stringify(r["message"]).includes("KESTREL"),
    )
    expect(copied).toHaveLength(1)
    expect(copied[0]).toMatchObject({ sessionId: fork })
    expect(records.some((r) => "forkedFrom" in r)).toBe(false)

    expect(await index()).toMatchObject({ indexedNew: 1, failed: [] })
    expect(await sessions()).toEqual(
      [
        { sessionId: parent, turns: 4 },
        { sessionId: fork, turns: 6 },
      ].sort((a, b) => a.sessionId.localeCompare(b.sessionId)),
    )
    const kestrel = await hitsFor("KESTREL")
    expect(kestrel).toHaveLength(1)
    expect(kestrel[0]?.text).toBe("KESTREL retry budget is twelve")
    expect(await hitsFor("HARRIER")).toEqual([{ sessionId: fork, text: "HARRIER forked plan" }])
    // The fork's hit names the session it was forked from, which its transcript does not.
    const harrier = await withIndex(
      dataDir(),
      searchRecall({ query: "HARRIER", k: 10, arms: ["lexical"] }, {}),
    )
    expect(harrier.hits.map((h) => [h.sessionId, h.forkedFrom])).toEqual([[fork, parent]])
    // grep shows the copied prompt once too; asked for every record, it shows both copies.
    const grep = await withIndex(dataDir(), grepRecords({ pattern: "KESTREL", kinds: ["message"] }))
    expect(grep.hits.map((h) => h.snippet)).toEqual(["KESTREL retry budget is twelve"])
    expect(grep.copiesSkipped).toBe(1)
    const every = await withIndex(
      dataDir(),
      grepRecords({ pattern: "KESTREL", kinds: ["message"], includeDuplicates: true }),
    )
    expect(every.hits.map((h) => h.sessionId).sort()).toEqual([parent, fork].sort())
    // A regex finds the same record; SQLite hands JavaScript only the records holding its
    // literal run ("kestrel retry budget is "), here the prompt and its copy in the fork.
    const regex = await withIndex(
      dataDir(),
      grepRecords({ pattern: "kestrel retry budget is \\w+$", regex: true, kinds: ["message"] }),
    )
    expect(regex.hits.map((h) => h.snippet)).toEqual(["KESTREL retry budget is twelve"])
    expect(regex.scanned).toBe(2)
    // recent names the parent of the fork, which its transcript does not.
    const recent = await withIndex(dataDir(), recentSessions({}))
    expect(recent.map((r) => [r.sessionId, r.forkedFrom]).sort()).toEqual(
      [
        [parent, null],
        [fork, parent],
      ].sort(),
    )
  }, 120_000)
})

describe("codex exec resume, indexed", () => {
  it("appends to the thread's rollout: the index appends, still one session", async () => {
    const mock = await startMockResponses({
      replies: [textReply("first answer"), textReply("second answer")],
    })
    const codex = await createCodexHome({ mock })
    try {
      const dir = join(codex.root, "baton")
      const env = { environment: { env: { CODEX_HOME: codex.codexHome }, homeDir: codex.root } }
      const first = await runCodexExec({ home: codex, prompt: "PELICAN first prompt" })
      expect(first.exitCode, first.stderr).toBe(0)
      expect(await runIndex(dir, { ...env, sources: ["codex"] })).toMatchObject({ indexedNew: 1 })
      const again = await runCodexExec({
        home: codex,
        prompt: "CORMORANT second prompt",
        args: ["resume", first.threadId!],
      })
      expect(again.exitCode, again.stderr).toBe(0)
      expect(again.threadId).toBe(first.threadId)
      expect(again.rolloutPaths).toEqual([])
      expect(await runIndex(dir, { ...env, sources: ["codex"] })).toMatchObject({
        appended: 1,
        indexedNew: 0,
        rewritten: 0,
      })
      expect(await storedCountMismatches(dir)).toEqual([])
      const listed = await withIndex(dir, recentSessions({ limit: 10 }))
      expect(listed.map((s) => [s.sessionId, s.turns])).toEqual([[first.threadId, 4]])
      const hits = await withIndex(
        dir,
        searchRecall({ query: "CORMORANT", k: 10, arms: ["lexical"] }, {}),
      )
      expect(hits.hits.map((h) => h.sessionId)).toEqual([first.threadId])
    } finally {
      await codex.dispose()
      await mock.close()
    }
  }, 180_000)
})

// Which session a Claude Code fork came from, when its transcript does not say: a
// `--fork-session` transcript starts with a copy of its parent's records (uuids included) and
// names no parent, so `recentSessions` (and each search hit) finds it from the turns the sessions
// share. A root, two
// forks of it (one after the root went on), and a fork of a fork; real temp files and database.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { recentSessions, searchRecall } from "@baton/recall-index"
import { runIndex, tempDir, withIndex, writeTree } from "./index-harness.js"

interface Turn {
  readonly id: string
  readonly minute: number
  readonly text: string
}

// Sorted after the forks, so the root is not simply the first session indexed.
const ROOT = "f9f9f9f9-0000-4000-8000-000000000000"
const FIRST = "f1f1f1f1-1111-4111-8111-111111111111"
const SECOND = "f2f2f2f2-2222-4222-8222-222222222222"
const GRANDCHILD = "f3f3f3f3-3333-4333-8333-333333333333"

const turn = (id: number, minute: number, text: string): Turn => ({
  id: `aaaaaaaa-0000-4000-8000-${String(id).padStart(12, "0")}`,
  minute,
  text,
})
// The root's first two turns; it goes on at minute 150, after the first fork (minute 100).
const r1 = turn(1, 0, "Plan the garden database.")
const r2 = turn(2, 10, "Pick SQLite for the garden database.")
const r3 = turn(3, 150, "Add a frost table.")
const c1 = turn(4, 100, "Try Postgres instead, on a branch.")
const c2 = turn(5, 200, "Try a JSON file instead.")
const g1 = turn(6, 300, "Benchmark Postgres on the branch.")

/** A Claude Code transcript of `turns` (each a prompt and a reply) under `sessionId`. */
const transcript = (sessionId: string, turns: ReadonlyArray<Turn>): string =>
  turns
    .flatMap((t) => {
      const at = new Date(Date.UTC(2026, 3, 1, 9, t.minute)).toISOString()
      const base = { isSidechain: false, cwd: "/work/garden", sessionId, version: "2.1.328" }
      return [
        {
          ...base,
          type: "user",
          uuid: t.id,
          timestamp: at,
          message: { role: "user", content: t.text },
        },
        {
          ...base,
          type: "assistant",
          uuid: `${t.id.slice(0, -4)}ffff`,
          timestamp: at,
          message: {
            id: `msg_${t.id}`,
            type: "message",
            role: "assistant",
            model: "m",
            content: [{ type: "text", text: `Done: ${t.text}` }],
          },
        },
      ]
    })
    .map((r) => `${JSON.stringify(r)}\n`)
    .join("")

let dir: ReturnType<typeof tempDir>
beforeAll(async () => {
  dir = tempDir("fork-lineage")
  const projects = `${dir.path}/home/.claude/projects/-work-garden`
  writeTree({
    [`${projects}/${ROOT}.jsonl`]: transcript(ROOT, [r1, r2, r3]),
    [`${projects}/${FIRST}.jsonl`]: transcript(FIRST, [r1, r2, c1]),
    [`${projects}/${SECOND}.jsonl`]: transcript(SECOND, [r1, r2, r3, c2]),
    [`${projects}/${GRANDCHILD}.jsonl`]: transcript(GRANDCHILD, [r1, r2, c1, g1]),
  })
  const report = await runIndex(`${dir.path}/data`, {
    environment: {
      env: { CLAUDE_CONFIG_DIR: `${dir.path}/home/.claude` },
      homeDir: `${dir.path}/home`,
    },
  })
  expect(report).toMatchObject({ indexedNew: 4, failed: [] })
})
afterAll(() => dir?.dispose())

describe("forks without a recorded parent", () => {
  it("name the session they copied: the root for its forks, the fork for a fork of it", async () => {
    const listed = await withIndex(`${dir.path}/data`, recentSessions({ limit: 10 }))
    expect(Object.fromEntries(listed.map((s) => [s.sessionId, s.forkedFrom]))).toEqual({
      [ROOT]: null,
      [FIRST]: ROOT,
      [SECOND]: ROOT,
      [GRANDCHILD]: FIRST,
    })
  })
})

describe("search hits", () => {
  const parents = {
    [ROOT]: null,
    [FIRST]: ROOT,
    [SECOND]: ROOT,
    [GRANDCHILD]: FIRST,
  }

  it("name the session their session was forked from", async () => {
    const { hits } = await withIndex(
      `${dir.path}/data`,
      searchRecall({ query: "benchmark postgres branch frost", k: 10, arms: ["lexical"] }, {}),
    )
    expect(hits.find((h) => h.text === g1.text)).toMatchObject({
      sessionId: GRANDCHILD,
      forkedFrom: FIRST,
    })
    expect(hits.length).toBeGreaterThan(2)
    for (const h of hits) expect(h.forkedFrom).toBe(parents[h.sessionId as keyof typeof parents])
  })
})

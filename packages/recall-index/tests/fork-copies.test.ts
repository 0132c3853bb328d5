// A fork's copy of its parent's history is found once by grep, and in the parent: a Claude Code
// fork (`forkedFrom` on every record, or a `--fork-session` copy that names no parent) and a Codex
// fork (own meta, the parent's meta, a replay of the parent's history under new turn ids) — with
// the fork indexed after its parent, so its copies are the newest rows and are scanned first.
// A grep within the fork itself still finds the fork's copy. Real temp files and database.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { grepRecords, lexicalQuery, searchRecall } from "@baton/recall-index"
import type { GrepInput } from "@baton/recall-index"
import { runIndex, tempDir, withIndex } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const PARENT = "5e5e5e5e-0000-4000-8000-000000000001"
const FORK = "5e5e5e5e-0000-4000-8000-000000000002"

const setup = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const claude = join(home.path, ".claude")
  const codex = join(home.path, ".codex")
  const environment = { env: { CLAUDE_CONFIG_DIR: claude, CODEX_HOME: codex }, homeDir: home.path }
  const dataDir = join(data.path, "baton")
  const project = join(claude, "projects", "-work-app")
  const rollouts = join(codex, "sessions", "2026", "11", "20")
  mkdirSync(project, { recursive: true })
  mkdirSync(rollouts, { recursive: true })
  const grep = async (input: GrepInput) => {
    const result = await withIndex(dataDir, grepRecords(input))
    return {
      sessions: result.hits.map((h) => (h.sessionId === PARENT ? "parent" : "fork")),
      copiesSkipped: result.copiesSkipped,
    }
  }
  const search = async (query: string) =>
    (
      await withIndex(
        dataDir,
        searchRecall({ query, k: 5, arms: ["lexical"] }, { expandQuery: lexicalQuery }),
      )
    ).hits.map((h) => (h.sessionId === PARENT ? "parent" : "fork"))
  return { environment, dataDir, project, rollouts, grep, search }
}

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 9, minute)).toISOString()

/** Claude Code records of `texts` (user, assistant, …) under `sessionId`, uuids from `first`. */
const claudeRecords = (
  sessionId: string,
  texts: ReadonlyArray<string>,
  first: number,
): Array<Record<string, unknown>> =>
  texts.map((text, i) => {
    const user = i % 2 === 0
    const uuid = `00000000-0000-4000-8000-${String(first + i).padStart(12, "0")}`
    return {
      parentUuid: null,
      isSidechain: false,
      userType: "external",
      cwd: "/work/app",
      sessionId,
      version: "2.1.90",
      type: user ? "user" : "assistant",
      uuid,
      timestamp: at(first + i),
      message: user
        ? { role: "user", content: text }
        : { id: `msg_${uuid}`, role: "assistant", model: "m", content: [{ type: "text", text }] },
    }
  })

const jsonl = (records: ReadonlyArray<unknown>): string =>
  records.map((r) => `${JSON.stringify(r)}\n`).join("")

const PARENT_TEXTS = ["How should the client retry?", "Use a gravelmoss backoff with jitter."]

describe("grep over a fork's copy of its parent's records", () => {
  it("shows a Claude Code fork's copy (forkedFrom) once, in the parent", async () => {
    const { environment, dataDir, project, grep } = setup()
    const parent = claudeRecords(PARENT, PARENT_TEXTS, 1)
    writeFileSync(join(project, `${PARENT}.jsonl`), jsonl(parent))
    await runIndex(dataDir, { environment })
    const fork = [
      ...parent.map((r) => ({ ...r, sessionId: FORK, forkedFrom: { sessionId: PARENT } })),
      ...claudeRecords(FORK, ["Go on in the fork.", "Done in the fork."], 10).map((r) => ({
        ...r,
        forkedFrom: { sessionId: PARENT },
      })),
    ]
    writeFileSync(join(project, `${FORK}.jsonl`), jsonl(fork))
    await runIndex(dataDir, { environment })
    expect(await grep({ pattern: "gravelmoss" })).toEqual({
      sessions: ["parent"],
      copiesSkipped: 1,
    })
    expect(await grep({ pattern: "in the fork" })).toEqual({
      sessions: ["fork", "fork"],
      copiesSkipped: 0,
    })
    // Asked within the fork, its copy is what there is to show.
    expect(await grep({ pattern: "gravelmoss", sessionId: FORK })).toEqual({
      sessions: ["fork"],
      copiesSkipped: 0,
    })
  })

  it("shows a --fork-session copy that names no parent once, in the parent", async () => {
    const { environment, dataDir, project, grep } = setup()
    const parent = claudeRecords(PARENT, PARENT_TEXTS, 1)
    writeFileSync(join(project, `${PARENT}.jsonl`), jsonl(parent))
    await runIndex(dataDir, { environment })
    const fork = [
      ...parent.map((r) => ({ ...r, sessionId: FORK })),
      ...claudeRecords(FORK, ["Go on in the fork.", "Done in the fork."], 10),
    ]
    writeFileSync(join(project, `${FORK}.jsonl`), jsonl(fork))
    await runIndex(dataDir, { environment })
    expect(await grep({ pattern: "gravelmoss" })).toEqual({
      sessions: ["parent"],
      copiesSkipped: 1,
    })
  })

  it("shows a Codex fork's replay of its parent's history once, in the parent", async () => {
    const { environment, dataDir, rollouts, grep } = setup()
    const meta = (id: string, minute: number, forkedFrom?: string) => ({
      timestamp: at(minute),
      type: "session_meta",
      payload: {
        id,
        timestamp: at(minute),
        cwd: "/work/app",
        originator: "codex_cli_rs",
        cli_version: "0.50.0",
        source: "cli",
        ...(forkedFrom !== undefined ? { forked_from_id: forkedFrom } : {}),
      },
    })
    const message = (role: "user" | "assistant", text: string, minute: number) => ({
      timestamp: at(minute),
      type: "response_item",
      payload: {
        type: "message",
        role,
        content: [{ type: role === "user" ? "input_text" : "output_text", text }],
      },
    })
    const history = [
      message("user", PARENT_TEXTS[0]!, 1),
      message("assistant", PARENT_TEXTS[1]!, 2),
    ]
    const name = (id: string) => join(rollouts, `rollout-2026-11-20T09-00-00-${id}.jsonl`)
    writeFileSync(name(PARENT), jsonl([meta(PARENT, 0), ...history]))
    await runIndex(dataDir, { environment })
    writeFileSync(
      name(FORK),
      jsonl([
        meta(FORK, 30, PARENT),
        meta(PARENT, 0),
        ...history,
        message("user", "Go on in the fork.", 31),
        message("assistant", "Done in the fork.", 32),
      ]),
    )
    await runIndex(dataDir, { environment })
    expect(await grep({ pattern: "gravelmoss" })).toEqual({
      sessions: ["parent"],
      copiesSkipped: 1,
    })
    expect(await grep({ pattern: "gravelmoss", sessionId: FORK })).toEqual({
      sessions: ["fork"],
      copiesSkipped: 0,
    })
  })
})

describe("search over a fork's copy of its parent's turns", () => {
  it("shows the parent's turn, also when the fork was indexed first", async () => {
    const { environment, dataDir, project, search } = setup()
    const parent = claudeRecords(PARENT, PARENT_TEXTS, 1)
    // The fork's file first: its copy has the lower row ids, so it wins every tie.
    writeFileSync(
      join(project, `${FORK}.jsonl`),
      jsonl([
        ...parent.map((r) => ({ ...r, sessionId: FORK, forkedFrom: { sessionId: PARENT } })),
        ...claudeRecords(FORK, ["Go on in the fork.", "Done in the fork."], 10).map((r) => ({
          ...r,
          forkedFrom: { sessionId: PARENT },
        })),
      ]),
    )
    await runIndex(dataDir, { environment })
    expect(await search("gravelmoss")).toEqual(["fork"])
    writeFileSync(join(project, `${PARENT}.jsonl`), jsonl(parent))
    await runIndex(dataDir, { environment })
    expect(await search("gravelmoss")).toEqual(["parent"])
    expect(await search("fork")).toEqual(["fork", "fork"])
  })
})

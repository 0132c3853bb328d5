// grep is blind to Unicode normalisation: a typed (NFC) `zürich` finds `Zu\u0308rich` as macOS
// file names, `ls` and `git status` output write it (NFD), and the other way round, in every mode.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { join } from "node:path"
import { grepRecords, grepRecordsIsolated } from "@baton/recall-index"
import type { GrepInput } from "@baton/recall-index"
import { runIndex, tempDir, withIndex, writeTree } from "./index-harness.js"

const dirs: Array<{ dispose: () => void }> = []
afterAll(() => {
  for (const d of dirs) d.dispose()
})

const SESSION = "5a0c1e7e-8f0b-4c55-9d1e-000000000001"
const prompts = [
  "deploy the Zu\u0308rich cluster (NFD)",
  "the Zürich office wants logs (NFC)",
  "order a cafe\u0301 for the team (NFD)",
  "plain zurich without an umlaut",
  "日本語のログを見る",
]

let dataDir = ""
beforeAll(async () => {
  const home = tempDir("home")
  const data = tempDir("data")
  dirs.push(home, data)
  const lines = prompts.map((content, i) =>
    JSON.stringify({
      type: "user",
      sessionId: SESSION,
      uuid: `aaaaaaaa-0000-4000-8000-00000000000${i}`,
      timestamp: `2026-11-20T10:00:0${i}.000Z`,
      cwd: "/w/a",
      message: { role: "user", content },
    }),
  )
  writeTree({
    [join(home.path, ".claude/projects/-w-a", `${SESSION}.jsonl`)]: `${lines.join("\n")}\n`,
  })
  dataDir = join(data.path, "baton")
  await runIndex(dataDir, {
    environment: {
      env: { CLAUDE_CONFIG_DIR: join(home.path, ".claude"), CODEX_HOME: join(home.path, ".codex") },
      homeDir: home.path,
    },
  })
})

const snippets = async (input: GrepInput, isolated = false) => {
  const r = await withIndex(dataDir, isolated ? grepRecordsIsolated(input) : grepRecords(input))
  return r.hits.map((h) => h.snippet).sort()
}

describe("grep across Unicode normalisation forms", () => {
  it("finds composed and decomposed spellings from a composed (typed) pattern", async () => {
    const hits = await snippets({ pattern: "zürich" })
    expect(hits).toHaveLength(2)
    expect(hits.join(" ")).toContain("Zürich cluster")
    expect(hits.join(" ")).toContain("Zürich office")
  })

  it("finds both from a decomposed pattern, and case-sensitively", async () => {
    expect(await snippets({ pattern: "zu\u0308rich" })).toHaveLength(2)
    expect(await snippets({ pattern: "Zürich", caseSensitive: true })).toHaveLength(2)
    expect(await snippets({ pattern: "zürich", caseSensitive: true })).toHaveLength(0)
    expect(await snippets({ pattern: "café" })).toHaveLength(1)
  })

  it("finds both with a regular expression, in-process and in the worker", async () => {
    expect(await snippets({ pattern: "z(ü|x)rich", regex: true })).toHaveLength(2)
    expect(await snippets({ pattern: "z(ü|x)rich", regex: true }, true)).toHaveLength(2)
    expect(await snippets({ pattern: "zürich (office|team)", regex: true }, true)).toHaveLength(1)
  })

  it("leaves ASCII and other scripts as they were", async () => {
    expect(await snippets({ pattern: "zurich" })).toEqual([expect.stringContaining("plain zurich")])
    expect(await snippets({ pattern: "日本語" })).toHaveLength(1)
    expect(await snippets({ pattern: "日本語", caseSensitive: true })).toHaveLength(1)
  })
})

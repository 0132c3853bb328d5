// Codex thread names from `$CODEX_HOME/session_index.jsonl` (where Codex 0.169 writes a rename,
// and nowhere else): parsed leniently, newest entry winning, and applied as session titles by
// each index run over a real temp-file database.
import { appendFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { indexTranscripts, parseThreadNames, recentSessions } from "@baton/recall-index"
import { defaultHistory, indexedHistory } from "./recall-fixtures.js"

const PAYMENTS = "019c0000-cccc-7ccc-8ccc-000000000003"
const entry = (id: string, name: string, at = "2026-03-12T09:00:00Z") =>
  `${JSON.stringify({ id, thread_name: name, updated_at: at })}\n`

describe("parseThreadNames", () => {
  it("keeps the newest name per thread and skips what is not an entry", () => {
    const names = parseThreadNames(
      [
        entry("a", "First name", "2026-03-12T09:00:00Z"),
        "not json",
        JSON.stringify({ id: "b" }),
        JSON.stringify({ thread_name: "no id" }),
        JSON.stringify([1, 2]),
        entry("c", "   "),
        entry("a", "Renamed", "2026-03-12T10:00:00Z"),
        // Stamped before the rename it follows: it does not undo it.
        entry("a", "Stale", "2026-03-12T08:00:00Z"),
        entry("d", "Deploy with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
      ].join("\n"),
    )
    expect([...names.keys()]).toEqual(["a", "d"])
    expect(names.get("a")).toBe("Renamed")
    expect(names.get("d")).not.toContain("abcdefghijklmnop")
  })
})

describe("index runs", () => {
  it("title a Codex session with its thread name, and follow a rename", async () => {
    const own = await indexedHistory(defaultHistory)
    try {
      const environment = {
        env: {
          CLAUDE_CONFIG_DIR: join(own.home, ".claude"),
          CODEX_HOME: join(own.home, ".codex"),
        },
        homeDir: own.home,
      }
      const title = async () =>
        (await own.run(recentSessions({}))).find((s) => s.sessionId === PAYMENTS)
      expect(await title()).toMatchObject({ titleSource: "first-prompt" })
      const index = join(own.home, ".codex", "session_index.jsonl")
      writeFileSync(index, entry(PAYMENTS, "Payment webhook retries"))
      await own.run(indexTranscripts({ environment }))
      expect(await title()).toMatchObject({
        title: "Payment webhook retries",
        titleSource: "title",
      })
      appendFileSync(index, entry(PAYMENTS, "Retries, settled", "2026-03-13T09:00:00Z"))
      await own.run(indexTranscripts({ environment }))
      expect((await title())?.title).toBe("Retries, settled")
      // A Claude Code session with the same id is not a Codex thread.
      await own.run(indexTranscripts({ environment, sources: ["claude"] }))
      expect((await title())?.title).toBe("Retries, settled")
    } finally {
      own.dispose()
    }
  })
})

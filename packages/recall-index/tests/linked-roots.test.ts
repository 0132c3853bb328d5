// Two Claude Code roots that are one directory (`~/.config/claude` linked to `~/.claude`, with no
// CLAUDE_CONFIG_DIR) are walked once, so each transcript is indexed once, on the real disk.
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { discoverTranscripts, nodeTranscriptFileSystemLayer } from "@baton/recall-index"

const home = mkdtempSync(join(tmpdir(), "baton-linked-roots-"))
afterAll(() => rmSync(home, { recursive: true, force: true }))

const discover = () =>
  Effect.runPromise(
    discoverTranscripts({ env: {}, homeDir: home }, { sources: ["claude"] }).pipe(
      Effect.provide(nodeTranscriptFileSystemLayer),
    ),
  )

describe("linked Claude Code roots", () => {
  it("finds a transcript once when ~/.config/claude is a link to ~/.claude", async () => {
    const project = join(home, ".claude", "projects", "-work-garden")
    mkdirSync(project, { recursive: true })
    const line = JSON.stringify({ type: "user", sessionId: "s", message: { content: "hi" } })
    writeFileSync(join(project, "aaaaaaaa-1111-4111-8111-000000000001.jsonl"), `${line}\n`)
    mkdirSync(join(home, ".config"))
    symlinkSync(join(home, ".claude"), join(home, ".config", "claude"))
    const { files, missingRoots } = await discover()
    expect(files.map((f) => f.path)).toEqual([
      join(project, "aaaaaaaa-1111-4111-8111-000000000001.jsonl"),
    ])
    expect(missingRoots).toEqual([])
  })
})

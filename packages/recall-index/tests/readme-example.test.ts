// The README example, run against the synthetic home instead of the real one.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { chunkTurns, discoverTranscripts, parseTranscriptFile } from "@baton/recall-index"
import { generateFixtureCorpus, makeMemoryTranscriptFiles } from "@baton/recall-index/testing"

describe("README example", () => {
  it("discovers, parses and chunks every main session", async () => {
    const corpus = generateFixtureCorpus({ seed: 11 })
    const env = { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome }
    const seen: Array<[string, boolean | undefined, number, number]> = []
    const program = Effect.gen(function* () {
      const { files } = yield* discoverTranscripts({ env, homeDir: corpus.homeDir })
      for (const file of files.filter((f) => f.role === "session")) {
        const parsed = yield* parseTranscriptFile(file)
        const chunks = chunkTurns(parsed.turns, { maxChars: 600, overlapChars: 100 }) // the defaults
        seen.push([file.path, parsed.sessions[0]?.headless, chunks.length, parsed.state.nextOffset])
      }
    })
    await Effect.runPromise(
      program.pipe(Effect.provide(makeMemoryTranscriptFiles(corpus.files).layer)),
    )
    const sessions = corpus.expectations.filter((e) => e.role === "session")
    expect(seen.map(([path]) => path)).toEqual(sessions.map((e) => e.path).sort())
    const typical = seen.find(
      ([path]) => path === sessions.find((e) => e.scenario === "claude/typical")!.path,
    )!
    // 10 surface texts; the ~7 000-character reply becomes several overlapping chunks.
    expect(typical[2]).toBe(28)
  })
})

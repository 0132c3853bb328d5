// A transcript directory discovery cannot read (permissions changed, a disk error) hides its files
// for a run; it does not delete them. Their history must not be marked missing, or a prune would
// drop sessions whose transcripts are still on disk.
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  nodeTranscriptFileSystem,
  pruneDeleted,
  TranscriptFileSystem,
  TranscriptReadError,
} from "@baton/recall-index"
import type { TranscriptFileSystemShape } from "@baton/recall-index"
import { counts, indexedFixture, runIndex, withIndex } from "./index-harness.js"

const fixtures: Array<{ dispose: () => void }> = []
afterAll(() => {
  for (const f of fixtures) f.dispose()
})

/** The disk, except that listing `dir` fails with EACCES. */
const unreadable = (dir: string): Layer.Layer<TranscriptFileSystem> => {
  const shape: TranscriptFileSystemShape = {
    ...nodeTranscriptFileSystem,
    readDirectory: (path) =>
      path === dir
        ? Effect.fail(new TranscriptReadError({ path, operation: "list", code: "EACCES" }))
        : nodeTranscriptFileSystem.readDirectory(path),
  }
  return Layer.succeed(TranscriptFileSystem, shape)
}

describe("an unreadable transcript directory", () => {
  it("keeps its files' history: not marked missing, not pruned, back when readable", async () => {
    const f = await indexedFixture(31)
    fixtures.push(f)
    const before = await counts(f.dataDir)
    const sessions = join(f.corpus.codexHome, "sessions")
    const hidden = await runIndex(f.dataDir, { environment: f.environment }, unreadable(sessions))
    expect(hidden.problems).toContainEqual({ path: sessions, code: "EACCES" })
    expect(hidden.markedMissing).toBe(0)
    expect(await withIndex(f.dataDir, pruneDeleted())).toMatchObject({ sessions: 0, files: 0 })
    expect(await counts(f.dataDir)).toEqual(before)
    const readable = await runIndex(f.dataDir, { environment: f.environment })
    expect(readable).toMatchObject({ markedMissing: 0, indexedNew: 0, turnsAdded: 0 })
  })
})

// Property: indexing a transcript in random append steps (cut anywhere, even mid-line) leaves
// exactly the rows and FTS results of indexing the final file at once; so does indexing it in
// slices of any size (`sliceBytes`), and a run that fails between slices loses nothing: the next
// run appends the rest.
import { Effect, Layer } from "effect"
import fc from "fast-check"
import BetterSqlite3 from "better-sqlite3"
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  nodeTranscriptFileSystem,
  TranscriptFileSystem,
  TranscriptReadError,
} from "@baton/recall-index"
import { generateFixtureCorpus } from "@baton/recall-index/testing"
import { runIndex, snapshot, tempDir } from "./index-harness.js"

const corpus = generateFixtureCorpus({ seed: 11, homeDir: "/corpus" })
const candidates = corpus.expectations
  .filter((e) => e.discovered && e.path.endsWith(".jsonl"))
  .map((e) => ({ path: e.path, bytes: Buffer.from(corpus.files[e.path] as string) }))
  .filter((c) => c.bytes.length > 200)

const words = ["frost", "retry", "ledger", "cache", "queue"]

describe("append-step indexing", () => {
  it("equals indexing the final file at once", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...candidates),
        fc.uniqueArray(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 5 }),
        async (candidate, fractions) => {
          const stepped = tempDir("prop-a")
          const whole = tempDir("prop-b")
          try {
            const cuts = [...new Set(fractions.map((f) => Math.floor(f * candidate.bytes.length)))]
              .filter((c) => c > 0 && c < candidate.bytes.length)
              .sort((a, b) => a - b)
            const rel = candidate.path.slice("/corpus".length)
            const envFor = (home: string) => ({
              env: { CLAUDE_CONFIG_DIR: `${home}/.claude`, CODEX_HOME: `${home}/.codex` },
              homeDir: home,
            })
            const target = join(stepped.path, "home", rel)
            mkdirSync(dirname(target), { recursive: true })
            writeFileSync(target, "")
            let at = 0
            for (const cut of [...cuts, candidate.bytes.length]) {
              appendFileSync(target, candidate.bytes.subarray(at, cut))
              at = cut
              const report = await runIndex(join(stepped.path, "data"), {
                environment: envFor(join(stepped.path, "home")),
              })
              expect(report.failed).toEqual([])
              // Every later step resumes: no full re-parse.
              expect(report.rewritten).toBe(0)
              expect(report.indexedNew + report.appended).toBe(1)
            }
            const once = join(whole.path, "home", rel)
            mkdirSync(dirname(once), { recursive: true })
            writeFileSync(once, candidate.bytes)
            await runIndex(join(whole.path, "data"), {
              environment: envFor(join(whole.path, "home")),
            })
            const normalise = (s: Awaited<ReturnType<typeof snapshot>>, root: string) =>
              JSON.parse(JSON.stringify(s).split(root).join("<root>")) as unknown
            expect(
              normalise(await snapshot(join(stepped.path, "data"), words), stepped.path),
            ).toEqual(normalise(await snapshot(join(whole.path, "data"), words), whole.path))
          } finally {
            stepped.dispose()
            whole.dispose()
          }
        },
      ),
      { numRuns: 25, seed: 20261130 },
    )
  }, 120_000)
})

const envFor = (home: string) => ({
  env: { CLAUDE_CONFIG_DIR: `${home}/.claude`, CODEX_HOME: `${home}/.codex` },
  homeDir: home,
})

/** The file of `candidate` under a fresh temp home, and that home's index, indexed whole. */
const wholeSnapshot = async (candidate: (typeof candidates)[number]) => {
  const whole = tempDir("slice-whole")
  try {
    const target = join(whole.path, "home", candidate.path.slice("/corpus".length))
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, candidate.bytes)
    await runIndex(join(whole.path, "data"), { environment: envFor(join(whole.path, "home")) })
    return JSON.parse(
      JSON.stringify(await snapshot(join(whole.path, "data"), words))
        .split(whole.path)
        .join("<root>"),
    ) as unknown
  } finally {
    whole.dispose()
  }
}

describe("sliced indexing", () => {
  it("equals indexing the file at once, whatever the slice size", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...candidates),
        fc.integer({ min: 16, max: 4096 }),
        async (candidate, sliceBytes) => {
          const sliced = tempDir("slice-sliced")
          try {
            const target = join(sliced.path, "home", candidate.path.slice("/corpus".length))
            mkdirSync(dirname(target), { recursive: true })
            writeFileSync(target, candidate.bytes)
            const report = await runIndex(join(sliced.path, "data"), {
              environment: envFor(join(sliced.path, "home")),
              sliceBytes,
            })
            expect(report).toMatchObject({ indexedNew: 1, appended: 0, rewritten: 0, failed: [] })
            // Each slice after the first re-reads the partial line the one before stopped in.
            expect(report.bytesRead).toBeGreaterThanOrEqual(candidate.bytes.length)
            expect(report.bytesRead).toBeLessThan(2 * candidate.bytes.length)
            expect(
              JSON.parse(
                JSON.stringify(await snapshot(join(sliced.path, "data"), words))
                  .split(sliced.path)
                  .join("<root>"),
              ),
            ).toEqual(await wholeSnapshot(candidate))
            // Nothing left to do: the file row covers the whole file.
            const again = await runIndex(join(sliced.path, "data"), {
              environment: envFor(join(sliced.path, "home")),
              sliceBytes,
            })
            expect(again).toMatchObject({ unchanged: 1, appended: 0, rewritten: 0 })
          } finally {
            sliced.dispose()
          }
        },
      ),
      { numRuns: 25, seed: 20261201 },
    )
  }, 120_000)

  it("keeps the slices written before a failure, and the next run appends the rest", async () => {
    const candidate = [...candidates].sort((a, b) => b.bytes.length - a.bytes.length)[0]!
    const sliced = tempDir("slice-fail")
    try {
      const target = join(sliced.path, "home", candidate.path.slice("/corpus".length))
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, candidate.bytes)
      const sliceBytes = Math.ceil(candidate.bytes.length / 4)
      // The disk fails the read of the file's third slice, once.
      let failed = false
      const flaky = Layer.succeed(TranscriptFileSystem, {
        ...nodeTranscriptFileSystem,
        read: (path, offset, length) =>
          path === target && offset >= 2 * sliceBytes && !failed
            ? Effect.sync(() => (failed = true)).pipe(
                Effect.andThen(
                  Effect.fail(new TranscriptReadError({ path, operation: "read", code: "EIO" })),
                ),
              )
            : nodeTranscriptFileSystem.read(path, offset, length),
      })
      const dataDir = join(sliced.path, "data")
      const environment = envFor(join(sliced.path, "home"))
      const first = await runIndex(dataDir, { environment, sliceBytes }, flaky)
      expect(first.failed.map((f) => f.path)).toEqual([target])
      expect(first.turnsAdded).toBeGreaterThan(0)
      const next = await runIndex(dataDir, { environment, sliceBytes }, flaky)
      expect(next).toMatchObject({ appended: 1, rewritten: 0, indexedNew: 0, failed: [] })
      expect(first.bytesRead + next.bytesRead).toBeLessThan(2 * candidate.bytes.length)
      expect(
        JSON.parse(
          JSON.stringify(await snapshot(dataDir, words))
            .split(sliced.path)
            .join("<root>"),
        ),
      ).toEqual(await wholeSnapshot(candidate))
    } finally {
      sliced.dispose()
    }
  }, 60_000)

  it("a run stopped between slices leaves a file the next run appends to", async () => {
    const candidate = [...candidates].sort((a, b) => b.bytes.length - a.bytes.length)[0]!
    const sliced = tempDir("slice-stop")
    try {
      const target = join(sliced.path, "home", candidate.path.slice("/corpus".length))
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, candidate.bytes)
      const sliceBytes = Math.ceil(candidate.bytes.length / 4)
      // The run is interrupted (Ctrl-C) while it reads the file's third slice, once.
      let stopped = false
      const stopping = Layer.succeed(TranscriptFileSystem, {
        ...nodeTranscriptFileSystem,
        read: (path, offset, length) =>
          path === target && offset >= 2 * sliceBytes && !stopped
            ? Effect.sync(() => (stopped = true)).pipe(Effect.andThen(Effect.interrupt))
            : nodeTranscriptFileSystem.read(path, offset, length),
      })
      const dataDir = join(sliced.path, "data")
      const environment = envFor(join(sliced.path, "home"))
      await expect(runIndex(dataDir, { environment, sliceBytes }, stopping)).rejects.toThrow()
      expect(stopped).toBe(true)
      const next = await runIndex(dataDir, { environment, sliceBytes }, stopping)
      expect(next).toMatchObject({ appended: 1, unchanged: 0, rewritten: 0, failed: [] })
      expect(next.bytesRead).toBeLessThan(candidate.bytes.length)
      expect(
        JSON.parse(
          JSON.stringify(await snapshot(dataDir, words))
            .split(sliced.path)
            .join("<root>"),
        ),
      ).toEqual(await wholeSnapshot(candidate))
    } finally {
      sliced.dispose()
    }
  }, 60_000)

  it("lets a waiting writer (forget, prune) in between the slices of a file", async () => {
    const candidate = [...candidates].sort((a, b) => b.bytes.length - a.bytes.length)[0]!
    const sliced = tempDir("slice-writer")
    try {
      const target = join(sliced.path, "home", candidate.path.slice("/corpus".length))
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, candidate.bytes)
      const sliceBytes = Math.ceil(candidate.bytes.length / 4)
      const dataDir = join(sliced.path, "data")
      const database = join(dataDir, "recall-index.db")
      // While the run reads the file's third slice, a writer announces itself, then (once the run
      // paused for it) takes the write lock with no busy wait, and leaves.
      let writer: Promise<{ took: boolean; turns: number }> | undefined
      const announcing = Layer.succeed(TranscriptFileSystem, {
        ...nodeTranscriptFileSystem,
        read: (path, offset, length) => {
          if (path === target && offset >= 2 * sliceBytes && writer === undefined) {
            const announcement = `${database}-writer-${Date.now()}-${process.pid}-1`
            writeFileSync(announcement, "")
            writer = new Promise((resolve) =>
              setTimeout(() => {
                const other = new BetterSqlite3(database)
                try {
                  other.pragma("busy_timeout = 0")
                  other.exec("begin immediate")
                  const turns = other.prepare("select count(*) from turns").pluck().get() as number
                  other.exec("rollback")
                  resolve({ took: true, turns })
                } catch {
                  resolve({ took: false, turns: 0 })
                } finally {
                  other.close()
                  rmSync(announcement, { force: true })
                }
              }, 100),
            )
          }
          return nodeTranscriptFileSystem.read(path, offset, length)
        },
      })
      const report = await runIndex(
        dataDir,
        { environment: envFor(join(sliced.path, "home")), sliceBytes },
        announcing,
      )
      expect(report).toMatchObject({ indexedNew: 1, failed: [] })
      // It got the lock mid-file, and saw the slices written before it.
      const seen = await writer!
      expect(seen.took).toBe(true)
      expect(seen.turns).toBeGreaterThan(0)
      expect(seen.turns).toBeLessThan(report.turnsAdded)
    } finally {
      sliced.dispose()
    }
  }, 60_000)

  it("slices a compressed rollout with one decoder, to the same rows as reading it whole", async () => {
    const codex = candidates
      .filter((c) => c.path.includes("/.codex/"))
      .sort((a, b) => b.bytes.length - a.bytes.length)[0]!
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 16, max: 4096 }), async (sliceBytes) => {
        const dir = tempDir("slice-zst")
        try {
          const home = join(dir.path, "home")
          const target = join(home, `${codex.path.slice("/corpus".length)}.zst`)
          mkdirSync(dirname(target), { recursive: true })
          writeFileSync(target, zstdStored(codex.bytes))
          const environment = envFor(home)
          const slices: Array<number> = []
          const sliced = await runIndex(join(dir.path, "sliced"), {
            environment,
            sliceBytes,
            onProgress: (e) => e._tag === "SliceIndexed" && slices.push(e.offset),
          })
          expect(sliced).toMatchObject({ indexedNew: 1, failed: [] })
          // It was sliced, each slice past the one before, all within the decompressed stream.
          expect(slices.length).toBeGreaterThan(0)
          expect(slices).toEqual([...slices].sort((a, b) => a - b))
          expect(slices.at(-1)!).toBeLessThanOrEqual(codex.bytes.length)
          await runIndex(join(dir.path, "whole"), { environment, sliceBytes: 1 << 30 })
          expect(await snapshot(join(dir.path, "sliced"), words)).toEqual(
            await snapshot(join(dir.path, "whole"), words),
          )
        } finally {
          dir.dispose()
        }
      }),
      { numRuns: 10, seed: 20261202 },
    )
  }, 60_000)

  it("writes a compressed rollout again whole after a run stopped between its slices", async () => {
    const codex = candidates
      .filter((c) => c.path.includes("/.codex/"))
      .sort((a, b) => b.bytes.length - a.bytes.length)[0]!
    const dir = tempDir("slice-zst-stop")
    try {
      const home = join(dir.path, "home")
      const target = join(home, `${codex.path.slice("/corpus".length)}.zst`)
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, zstdStored(codex.bytes))
      const environment = envFor(home)
      const sliceBytes = Math.ceil(codex.bytes.length / 4)
      // The run dies right after its first slice is written (a crash once that slice committed).
      let slices = 0
      const dataDir = join(dir.path, "data")
      await expect(
        runIndex(dataDir, {
          environment,
          sliceBytes,
          onProgress: (e) => {
            if (e._tag !== "SliceIndexed") return
            slices += 1
            throw new Error("killed")
          },
        }),
      ).rejects.toThrow()
      expect(slices).toBeGreaterThan(0)
      const next = await runIndex(dataDir, { environment, sliceBytes })
      expect(next).toMatchObject({ rewritten: 1, appended: 0, unchanged: 0, failed: [] })
      await runIndex(join(dir.path, "whole"), { environment })
      expect(await snapshot(dataDir, words)).toEqual(await snapshot(join(dir.path, "whole"), words))
    } finally {
      dir.dispose()
    }
  }, 60_000)
})

/** `bytes` as a zstd frame of raw (stored) blocks: valid zstd without a compressor. */
const zstdStored = (bytes: Uint8Array): Uint8Array => {
  const parts: Array<Uint8Array> = [
    // Magic number; frame header: no content size, not single-segment, window 2^17.
    Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3),
  ]
  const max = 1 << 17
  for (let at = 0; at < bytes.length || at === 0; at += max) {
    const block = bytes.subarray(at, at + max)
    const last = at + max >= bytes.length ? 1 : 0
    const header = last | (block.length << 3)
    parts.push(Uint8Array.of(header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff), block)
  }
  return Buffer.concat(parts)
}

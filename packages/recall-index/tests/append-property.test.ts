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

type Candidate = (typeof candidates)[number]
const largest = [...candidates].sort((a, b) => b.bytes.length - a.bytes.length)[0]!
const largestCodex = [...candidates]
  .filter((c) => c.path.includes("/.codex/"))
  .sort((a, b) => b.bytes.length - a.bytes.length)[0]!

/**
 * `candidate`'s file (as `bytes`, under its name plus `suffix`) in a fresh temp home: where it
 * is, a data dir beside it, the home's environment, and a snapshot of an index with the temp
 * root replaced (comparable across homes).
 */
const placed = (
  name: string,
  candidate: Candidate,
  { bytes = candidate.bytes, suffix = "" }: { bytes?: Uint8Array; suffix?: string } = {},
) => {
  const dir = tempDir(name)
  const home = join(dir.path, "home")
  const target = join(home, `${candidate.path.slice("/corpus".length)}${suffix}`)
  mkdirSync(dirname(target), { recursive: true })
  writeFileSync(target, bytes)
  return {
    target,
    dataDir: join(dir.path, "data"),
    environment: envFor(home),
    rooted: async (dataDir: string) =>
      JSON.parse(
        JSON.stringify(await snapshot(dataDir, words))
          .split(dir.path)
          .join("<root>"),
      ) as unknown,
    dispose: dir.dispose,
  }
}

/** The file of `candidate` under a fresh temp home, indexed whole: its rooted snapshot. */
const wholeSnapshot = async (candidate: Candidate) => {
  const whole = placed("slice-whole", candidate)
  try {
    await runIndex(whole.dataDir, { environment: whole.environment })
    return await whole.rooted(whole.dataDir)
  } finally {
    whole.dispose()
  }
}

/** The disk, except that the first read of `target` at or past `from` is `once(read)`. */
const onceAt = (
  target: string,
  from: number,
  once: (
    read: Effect.Effect<Uint8Array, TranscriptReadError>,
  ) => Effect.Effect<Uint8Array, TranscriptReadError>,
) => {
  let done = false
  return Layer.succeed(TranscriptFileSystem, {
    ...nodeTranscriptFileSystem,
    read: (path, offset, length) => {
      const read = nodeTranscriptFileSystem.read(path, offset, length)
      if (path !== target || offset < from || done) return read
      done = true
      return once(read)
    },
  })
}

describe("sliced indexing", () => {
  it("equals indexing the file at once, whatever the slice size", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...candidates),
        fc.integer({ min: 16, max: 4096 }),
        async (candidate, sliceBytes) => {
          const sliced = placed("slice-sliced", candidate)
          try {
            const options = { environment: sliced.environment, sliceBytes }
            const report = await runIndex(sliced.dataDir, options)
            expect(report).toMatchObject({ indexedNew: 1, appended: 0, rewritten: 0, failed: [] })
            // Each slice after the first re-reads the partial line the one before stopped in.
            expect(report.bytesRead).toBeGreaterThanOrEqual(candidate.bytes.length)
            expect(report.bytesRead).toBeLessThan(2 * candidate.bytes.length)
            expect(await sliced.rooted(sliced.dataDir)).toEqual(await wholeSnapshot(candidate))
            // Nothing left to do: the file row covers the whole file.
            const again = await runIndex(sliced.dataDir, options)
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
    const sliced = placed("slice-fail", largest)
    try {
      const sliceBytes = Math.ceil(largest.bytes.length / 4)
      // The disk fails the read of the file's third slice, once.
      const flaky = onceAt(sliced.target, 2 * sliceBytes, () =>
        Effect.fail(
          new TranscriptReadError({ path: sliced.target, operation: "read", code: "EIO" }),
        ),
      )
      const options = { environment: sliced.environment, sliceBytes }
      const first = await runIndex(sliced.dataDir, options, flaky)
      expect(first.failed.map((f) => f.path)).toEqual([sliced.target])
      expect(first.turnsAdded).toBeGreaterThan(0)
      const next = await runIndex(sliced.dataDir, options, flaky)
      expect(next).toMatchObject({ appended: 1, rewritten: 0, indexedNew: 0, failed: [] })
      expect(first.bytesRead + next.bytesRead).toBeLessThan(2 * largest.bytes.length)
      expect(await sliced.rooted(sliced.dataDir)).toEqual(await wholeSnapshot(largest))
    } finally {
      sliced.dispose()
    }
  }, 60_000)

  it("a run stopped between slices leaves a file the next run appends to", async () => {
    const sliced = placed("slice-stop", largest)
    try {
      const sliceBytes = Math.ceil(largest.bytes.length / 4)
      // The run is interrupted (Ctrl-C) while it reads the file's third slice, once.
      let stopped = false
      const stopping = onceAt(sliced.target, 2 * sliceBytes, () =>
        Effect.sync(() => (stopped = true)).pipe(Effect.andThen(Effect.interrupt)),
      )
      const options = { environment: sliced.environment, sliceBytes }
      await expect(runIndex(sliced.dataDir, options, stopping)).rejects.toThrow()
      expect(stopped).toBe(true)
      const next = await runIndex(sliced.dataDir, options, stopping)
      expect(next).toMatchObject({ appended: 1, unchanged: 0, rewritten: 0, failed: [] })
      expect(next.bytesRead).toBeLessThan(largest.bytes.length)
      expect(await sliced.rooted(sliced.dataDir)).toEqual(await wholeSnapshot(largest))
    } finally {
      sliced.dispose()
    }
  }, 60_000)

  it("lets a waiting writer (forget, prune) in between the slices of a file", async () => {
    const sliced = placed("slice-writer", largest)
    try {
      const sliceBytes = Math.ceil(largest.bytes.length / 4)
      const database = join(sliced.dataDir, "recall-index.db")
      // While the run reads the file's third slice, a writer announces itself, then (once the run
      // paused for it) takes the write lock with no busy wait, and leaves.
      let writer: Promise<{ took: boolean; turns: number }> | undefined
      const announce = () => {
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
      const announcing = onceAt(sliced.target, 2 * sliceBytes, (read) =>
        Effect.sync(announce).pipe(Effect.andThen(read)),
      )
      const report = await runIndex(
        sliced.dataDir,
        { environment: sliced.environment, sliceBytes },
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
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 16, max: 4096 }), async (sliceBytes) => {
        const zst = placed("slice-zst", largestCodex, {
          bytes: zstdStored(largestCodex.bytes),
          suffix: ".zst",
        })
        try {
          const slices: Array<number> = []
          const sliced = await runIndex(zst.dataDir, {
            environment: zst.environment,
            sliceBytes,
            onProgress: (e) => e._tag === "SliceIndexed" && slices.push(e.offset),
          })
          expect(sliced).toMatchObject({ indexedNew: 1, failed: [] })
          // It was sliced, each slice past the one before, all within the decompressed stream.
          expect(slices.length).toBeGreaterThan(0)
          expect(slices).toEqual([...slices].sort((a, b) => a - b))
          expect(slices.at(-1)!).toBeLessThanOrEqual(largestCodex.bytes.length)
          const whole = `${zst.dataDir}-whole`
          await runIndex(whole, { environment: zst.environment, sliceBytes: 1 << 30 })
          expect(await zst.rooted(zst.dataDir)).toEqual(await zst.rooted(whole))
        } finally {
          zst.dispose()
        }
      }),
      { numRuns: 10, seed: 20261202 },
    )
  }, 60_000)

  it("writes a compressed rollout again whole after a run stopped between its slices", async () => {
    const zst = placed("slice-zst-stop", largestCodex, {
      bytes: zstdStored(largestCodex.bytes),
      suffix: ".zst",
    })
    try {
      const sliceBytes = Math.ceil(largestCodex.bytes.length / 4)
      // The run dies right after its first slice is written (a crash once that slice committed).
      let slices = 0
      await expect(
        runIndex(zst.dataDir, {
          environment: zst.environment,
          sliceBytes,
          onProgress: (e) => {
            if (e._tag !== "SliceIndexed") return
            slices += 1
            throw new Error("killed")
          },
        }),
      ).rejects.toThrow()
      expect(slices).toBeGreaterThan(0)
      const next = await runIndex(zst.dataDir, { environment: zst.environment, sliceBytes })
      expect(next).toMatchObject({ rewritten: 1, appended: 0, unchanged: 0, failed: [] })
      const whole = `${zst.dataDir}-whole`
      await runIndex(whole, { environment: zst.environment })
      expect(await zst.rooted(zst.dataDir)).toEqual(await zst.rooted(whole))
    } finally {
      zst.dispose()
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

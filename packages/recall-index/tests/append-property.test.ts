// Property: indexing a transcript in random append steps (cut anywhere, even mid-line) leaves
// exactly the rows and FTS results of indexing the final file at once.
import fc from "fast-check"
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
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

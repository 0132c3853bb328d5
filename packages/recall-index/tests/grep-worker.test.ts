// A regular-expression grep in a worker thread under a hard deadline: a pattern that backtracks
// without end fails with an error that says what to change while the calling thread stays free;
// any other pattern gives what the in-process grep gives.
import { Effect } from "effect"
import { appendFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  GREP_WORKER_SLOTS,
  GREP_WORKER_STARTUP_MS,
  grepRecords,
  grepRecordsIsolated,
  liveGrepWorkers,
} from "@baton/recall-index"
import type { GrepInput } from "@baton/recall-index"
import { generateBulkCorpus } from "@baton/recall-index/testing"
import { runIndex, tempDir, withIndex, writeTree } from "./index-harness.js"

const dirs: Array<{ dispose: () => void }> = []
afterAll(() => {
  for (const d of dirs) d.dispose()
})

const indexed = async () => {
  const home = tempDir("home")
  const data = tempDir("data")
  dirs.push(home, data)
  const files = generateBulkCorpus({
    homeDir: home.path,
    files: 3,
    seed: 4,
    exchangesPerFile: 4,
  }).files
  writeTree(files)
  // One prompt of 5 000 "a": where (a|a)*b backtracks 2^n ways.
  const first = Object.keys(files).sort()[0] ?? ""
  const sessionId = first.split("/").at(-1)?.replace(".jsonl", "") ?? ""
  appendFileSync(
    first,
    `${JSON.stringify({
      type: "user",
      sessionId,
      uuid: "aaaaaaaa-0000-4000-8000-00000000000a",
      timestamp: "2026-11-20T10:00:00.000Z",
      cwd: "/work/a",
      message: { role: "user", content: "a".repeat(5000) },
    })}\n`,
  )
  const environment = {
    env: { CLAUDE_CONFIG_DIR: join(home.path, ".claude"), CODEX_HOME: join(home.path, ".codex") },
    homeDir: home.path,
  }
  const dataDir = join(data.path, "baton")
  await runIndex(dataDir, { environment })
  return dataDir
}

const grep = (dataDir: string, input: GrepInput, isolated: boolean) =>
  withIndex(dataDir, Effect.result(isolated ? grepRecordsIsolated(input) : grepRecords(input)))

describe("grepRecordsIsolated", () => {
  it("stops a pattern that backtracks without end, and the calling thread stays free", async () => {
    const dataDir = await indexed()
    let ticks = 0
    const ticker = setInterval(() => (ticks += 1), 50)
    const started = Date.now()
    const outcome = await grep(dataDir, { pattern: "(a|a)*b", regex: true, maxScanMs: 500 }, true)
    const took = Date.now() - started
    clearInterval(ticker)
    expect(outcome._tag).toBe("Failure")
    expect(outcome._tag === "Failure" ? outcome.failure : undefined).toMatchObject({
      _tag: "RecallQueryError",
      field: "pattern",
      message: expect.stringMatching(
        /^the regular expression ran for over 4 s without finishing: it backtracks without end .* or search for a plain part of it without regex$/,
      ),
    })
    expect(took).toBeGreaterThanOrEqual(500 + GREP_WORKER_STARTUP_MS - 100)
    // The timer ran all along: the pattern never ran on this thread.
    expect(ticks).toBeGreaterThan((took / 50) * 0.5)
  }, 30_000)

  it("runs at most GREP_WORKER_SLOTS workers at once; the rest wait, and all answer alike", async () => {
    const dataDir = await indexed()
    const input = { pattern: "sh(a|o)rd", regex: true } as const
    const expected = await grep(dataDir, input, false)
    let most = 0
    const sampler = setInterval(() => (most = Math.max(most, liveGrepWorkers())), 1)
    const outcomes = await Promise.all(
      Array.from({ length: GREP_WORKER_SLOTS + 4 }, () => grep(dataDir, input, true)),
    )
    clearInterval(sampler)
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(GREP_WORKER_SLOTS)
    for (const outcome of outcomes) expect(outcome).toEqual(expected)
    expect(liveGrepWorkers()).toBe(0)
  }, 60_000)

  it("gives what the in-process grep gives, and fails as it fails", async () => {
    const dataDir = await indexed()
    for (const input of [
      { pattern: "sh(a|o)rd", regex: true },
      { pattern: "RETRY", regex: true, caseSensitive: true },
      { pattern: "retry", limit: 3 },
      { pattern: "(a+)+$", regex: true },
      { pattern: "[", regex: true },
      { pattern: "x", regex: true, onDate: "not a day" },
      { pattern: "x", regex: true, sessionId: "no-such-session" },
      { pattern: "x", sessionId: "no-such-session" },
    ] satisfies ReadonlyArray<GrepInput>) {
      const strip = (r: Awaited<ReturnType<typeof grep>>) =>
        r._tag === "Success"
          ? { ...r.success, hits: r.success.hits.map((h) => ({ ...h, whenHuman: "" })) }
          : r.failure
      expect(strip(await grep(dataDir, input, true))).toEqual(
        strip(await grep(dataDir, input, false)),
      )
    }
    const unknown = await grep(dataDir, { pattern: "x", sessionId: "no-such-session" }, true)
    expect(unknown._tag === "Failure" ? unknown.failure : undefined).toMatchObject({
      _tag: "RecallNotFoundError",
      message: expect.stringMatching(/^no session no-such-session in the index/),
    })
    const some = await grep(dataDir, { pattern: "sh(a|o)rd", regex: true }, true)
    expect(some._tag === "Success" ? some.success.hits.length : 0).toBeGreaterThan(0)
  }, 30_000)
})

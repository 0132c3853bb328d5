// The index lock within one process: a long-lived host that starts a second index run, or a
// `forget --all`, while a run of its own is writing gets the documented IndexBusyError (the lock
// row names this process's pid, which is no reason to let it in) — while a row with this pid left
// by an earlier process (a container's pid 1 after a crash) is still taken over.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import {
  forgetSessions,
  indexStatus,
  indexTranscripts,
  IndexerProcess,
  nodeTranscriptFileSystem,
  TranscriptFileSystem,
} from "@baton/recall-index"
import type { IndexProgressEvent, IndexRunReport } from "@baton/recall-index"
import { generateFixtureCorpus } from "@baton/recall-index/testing"
import { runIndex, tempDir, withIndex, withSqlite, writeTree } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const setup = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const corpus = generateFixtureCorpus({ seed: 5, homeDir: home.path })
  writeTree(corpus.files)
  const environment = {
    env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
    homeDir: home.path,
  }
  return { dataDir: join(data.path, "baton"), environment }
}

/**
 * Runs an index pass and, at its first indexed file (the run holds the lock then), `during` —
 * started once, from a thunk — and returns both outcomes. The run reads no further file until
 * `during` has settled, so it is still running (and holding the lock) all that time.
 */
const whileIndexing = async <A>(
  dataDir: string,
  environment: ReturnType<typeof setup>["environment"],
  during: () => Promise<A>,
): Promise<{ run: IndexRunReport; during: A }> => {
  let started: Promise<A> | undefined
  let settled: Promise<unknown> | undefined
  const onProgress = (event: IndexProgressEvent) => {
    if (event._tag !== "FileIndexed" || started !== undefined) return
    started = during()
    settled = started.then(
      () => undefined,
      () => undefined,
    )
  }
  const gated = Layer.succeed(TranscriptFileSystem, {
    ...nodeTranscriptFileSystem,
    read: (path: string, offset: number, length: number) =>
      Effect.flatMap(
        Effect.promise(() => settled ?? Promise.resolve()),
        () => nodeTranscriptFileSystem.read(path, offset, length),
      ),
  })
  const run = await runIndex(dataDir, { environment, onProgress }, gated)
  expect(started).toBeDefined()
  return { run, during: await started! }
}

describe("index lock in one process", () => {
  it("refuses a second index run started while the first is writing", async () => {
    const { dataDir, environment } = setup()
    const { run, during } = await whileIndexing(dataDir, environment, () =>
      withIndex(dataDir, Effect.flip(indexTranscripts({ environment }))),
    )
    expect(run.failed).toEqual([])
    expect(run.indexedNew).toBeGreaterThan(1)
    expect(during).toMatchObject({ _tag: "IndexBusyError", pid: process.pid })
    expect(during.message).toContain("this process")
    // The first run released the lock: the next one goes ahead (and finds nothing new).
    const again = await runIndex(dataDir, { environment })
    expect(again.indexedNew).toBe(0)
    expect((await withIndex(dataDir, indexStatus(Date.now()))).files).toBe(run.indexedNew)
  })

  it("refuses forget --all while a run of this process is writing, with IndexBusyError", async () => {
    const { dataDir, environment } = setup()
    const { run, during } = await whileIndexing(dataDir, environment, () =>
      withIndex(dataDir, Effect.flip(forgetSessions({ _tag: "All" }))),
    )
    expect(during).toMatchObject({ _tag: "IndexBusyError", pid: process.pid })
    expect((await withIndex(dataDir, indexStatus(Date.now()))).files).toBe(run.indexedNew)
  })

  it("takes over a live-leased row with this pid that no run here holds (an earlier process)", async () => {
    const { dataDir, environment } = setup()
    await runIndex(dataDir, { environment })
    await withSqlite(dataDir, (sqlite) =>
      sqlite
        .prepare(
          "insert into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, ?, 'left-over', ?, ?)",
        )
        .run(process.pid, Date.now(), Date.now() + 60_000),
    )
    const alive = Layer.succeed(IndexerProcess, { pid: process.pid, isAlive: () => true })
    const report = await withIndex(dataDir, indexTranscripts({ environment }), undefined, alive)
    expect(report.failed).toEqual([])
    const lock = await withSqlite(dataDir, (sqlite) =>
      sqlite.prepare("select * from index_lock").all(),
    )
    expect(lock).toEqual([])
  })
})

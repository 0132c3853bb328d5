// A real child indexer killed with SIGKILL mid-run leaves a consistent database, and the next
// run finishes with exactly the rows of a clean run (also when the kill finds the lookup indexes
// deferred); a forget while the child runs gets in
// between its files.
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  nodeIndexerProcessLayer,
  forgetSessions,
  indexTranscripts,
  lexicalBacklogSize,
  LOOKUP_INDEXES,
  missingLookupIndexes,
  RecallDatabase,
  recallDatabaseLayer,
} from "@baton/recall-index"
import { generateBulkCorpus } from "@baton/recall-index/testing"
import { checkFullText, counts, runIndex, tempDir, withIndex, writeTree } from "./index-harness.js"

const home = tempDir("crash-home")
const data = tempDir("crash-data")
afterAll(() => {
  home.dispose()
  data.dispose()
})

const child = fileURLToPath(new URL("./fixtures/index-child.mjs", import.meta.url))

const environment = {
  env: { CLAUDE_CONFIG_DIR: join(home.path, ".claude"), CODEX_HOME: join(home.path, ".codex") },
  homeDir: home.path,
}
beforeAll(() => {
  const corpus = generateBulkCorpus({
    homeDir: home.path,
    files: 200,
    seed: 5,
    exchangesPerFile: 10,
  })
  writeTree(corpus.files)
})

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Starts the child; once it has indexed `after` files runs `whileRunning` (the child is still
 * holding the lock), then SIGKILLs it (`end: "kill"`, resolves with the files seen) or lets it
 * finish (`end: "finish"`, resolves once it exits 0).
 */
const childMidRun = (
  dataDir: string,
  after: number,
  whileRunning: (pid: number) => Promise<void> = () => Promise.resolve(),
  end: "kill" | "finish" = "kill",
  childEnv: Readonly<Record<string, string>> = {},
): Promise<number> =>
  new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, dataDir, home.path], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...childEnv },
    })
    let seen = 0
    let stderr = ""
    let triggered = false
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    proc.stdout.on("data", (d: Buffer) => {
      seen += d
        .toString()
        .split("\n")
        .filter((l) => l.startsWith("indexed")).length
      if (seen >= after && !triggered) {
        triggered = true
        if (end === "kill") proc.stdout.pause()
        whileRunning(proc.pid!).then(
          () => {
            if (end === "kill") proc.kill("SIGKILL")
          },
          (error: unknown) => {
            proc.kill("SIGKILL")
            reject(error instanceof Error ? error : new Error(String(error)))
          },
        )
      }
    })
    proc.on("exit", (code, signal) => {
      if (end === "kill" && signal === "SIGKILL") resolve(seen)
      else if (end === "finish" && code === 0) resolve(seen)
      else reject(new Error(`child exited ${code ?? signal} unexpectedly: ${stderr}`))
    })
  })

describe("crash consistency", () => {
  it("recovers from kill -9 mid-run to the same rows as a clean run", async () => {
    const crashed = join(data.path, "crashed")
    let busy: unknown
    const seen = await childMidRun(crashed, 30, async (pid) => {
      // A second indexer while the child holds the lock gets a clear answer, not a crash.
      busy = await withIndex(crashed, Effect.flip(indexTranscripts({ environment })))
      expect(busy).toMatchObject({ _tag: "IndexBusyError", pid })
      expect((busy as { message: string }).message).toBe(
        `the recall index is being updated by pid ${pid}`,
      )
    })
    expect(busy).toBeDefined()
    expect(seen).toBeGreaterThanOrEqual(30)

    const integrity = await withIndex(
      crashed,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        db.sqlite.prepare("insert into chunks_fts(chunks_fts) values ('integrity-check')").run()
        return {
          check: db.sqlite.pragma("integrity_check", { simple: true }),
          fk: db.sqlite.pragma("foreign_key_check"),
          files: (db.sqlite.prepare("select count(*) as n from files").get() as { n: number }).n,
          lock: db.sqlite.prepare("select pid from index_lock").all(),
        }
      }),
    )
    expect(integrity.check).toBe("ok")
    expect(integrity.fk).toEqual([])
    // Files commit in groups (≤ 250 ms each): the kill loses the open group, never part of a file.
    expect(integrity.files).toBeGreaterThan(0)
    expect(integrity.files).toBeLessThan(200)
    expect(integrity.lock).toHaveLength(1) // the dead child's row, taken over below

    const resumed = await runIndex(crashed, { environment })
    expect(resumed.unchanged).toBe(integrity.files)
    expect(resumed.indexedNew).toBe(200 - integrity.files)
    const clean = join(data.path, "clean")
    await runIndex(clean, { environment })
    expect(await counts(crashed)).toEqual(await counts(clean))
  }, 120_000)

  it("recovers from kill -9 while the lookup and full-text indexes are deferred: the next run builds them", async () => {
    const crashed = join(data.path, "crashed-deferred")
    await childMidRun(crashed, 30, undefined, "kill", { BATON_TEST_DEFER_INDEXES: "1" })
    const left = await withIndex(
      crashed,
      RecallDatabase.use((db) =>
        Effect.sync(() => ({
          check: db.sqlite.pragma("integrity_check", { simple: true }),
          missing: missingLookupIndexes(db.sqlite),
          lexicalBacklog: lexicalBacklogSize(db.sqlite),
          chunks: db.sqlite.prepare("select count(*) from chunks").pluck().get(),
          // FTS5's check of its own structure (not against the chunks: those are not all in it).
          fts: db.sqlite
            .prepare("insert into chunks_fts(chunks_fts) values ('integrity-check')")
            .run().changes,
        })),
      ),
    )
    expect(left.check).toBe("ok")
    expect(left.missing).toEqual(LOOKUP_INDEXES.map((i) => i.name))
    // The child wrote every chunk after the mark: none of them is in the full-text index yet.
    expect(left.lexicalBacklog).toBe(left.chunks)
    // Search and navigation still answer meanwhile (slower): the rows are all there.
    expect((await counts(crashed)).files).toBeGreaterThan(0)

    await runIndex(crashed, { environment })
    const missingAfter = await withIndex(
      crashed,
      RecallDatabase.use((db) => Effect.sync(() => missingLookupIndexes(db.sqlite))),
    )
    expect(missingAfter).toEqual([])
    expect(await checkFullText(crashed)).toBe(0)
    const clean = join(data.path, "clean-deferred")
    await runIndex(clean, { environment })
    expect(await counts(crashed)).toEqual(await counts(clean))
  }, 120_000)

  for (const deferred of [false, true])
    it(`lets a forget in mid-run: the indexer pauses between files and goes on after it${deferred ? ", also while the run defers its full-text and lookup indexes" : ""}`, async () => {
      const dataDir = join(data.path, `forget-mid-run-${deferred}`)
      const clean = join(data.path, `forget-clean-${deferred}`)
      await runIndex(clean, { environment })
      const total = (await counts(clean)).files
      let stillRunning = false
      let removed: unknown
      await childMidRun(
        dataDir,
        40,
        async (pid) => {
          // A short busy timeout: without the pause, the run would hold the lock for seconds more.
          removed = await Effect.runPromise(
            Effect.scoped(
              Effect.gen(function* () {
                const db = yield* RecallDatabase
                const first = db.sqlite
                  .prepare("select session_id from sessions order by id limit 1")
                  .pluck()
                  .get() as string
                return yield* forgetSessions({ _tag: "Session", sessionId: first })
              }),
            ).pipe(
              Effect.provide(recallDatabaseLayer({ dataDir, busyTimeoutMs: 2_000 })),
              Effect.provide(nodeIndexerProcessLayer),
            ),
          )
          stillRunning = isRunning(pid)
        },
        "finish",
        deferred ? { BATON_TEST_DEFER_INDEXES: "1" } : {},
      )
      expect(removed).toEqual({ sessions: 1, files: 1 })
      expect(stillRunning).toBe(true)
      // The run went on after the forget: every other file indexed, the forgotten one kept out.
      const after = await counts(dataDir)
      expect(after.files).toBe(total)
      const forgotten = await withIndex(
        dataDir,
        RecallDatabase.use((db) =>
          Effect.sync(() =>
            db.sqlite
              .prepare("select count(*) from files where status = 'forgotten'")
              .pluck()
              .get(),
          ),
        ),
      )
      expect(forgotten).toBe(1)
      // The full-text index holds exactly the chunks left (the forget never asked it to delete a
      // chunk it did not hold yet).
      expect(await checkFullText(dataDir)).toBe(0)
    }, 120_000)
})

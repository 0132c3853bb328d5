// A forgotten session stays out of the index whichever file carries its text: its transcript
// moved and grown (a small file's 4 KiB head hash changes), copied under another name, copied into
// a fork under the fork's session id, or mixed into a file with a session that was not forgotten
// (an old-style resume). Forks are covered in depth by forget-forks.test.ts. `forget --all`
// waits for no index run: it refuses while one holds the lock.
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterEach, describe, expect, it } from "vitest"
import {
  emptyIndexFacts,
  forgetSessions,
  grepRecords,
  IndexerProcess,
  RecallDatabase,
  recallStatus,
} from "@baton/recall-index"
import {
  claudeRecordWriter,
  rewindForgottenSessions,
  runIndex,
  tempDir,
  withIndex,
} from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const FORGOTTEN = "7a7a7a7a-0000-4000-8000-000000000001"
const KEPT = "7a7a7a7a-0000-4000-8000-000000000002"

const record = claudeRecordWriter("2026-11-20T10:00:00Z", "8000", "2.1.90")
const line = (sessionId: string, cwd: string, type: "user" | "assistant", text: string) =>
  record({ sessionId, cwd, type, text })
const exchange = (sessionId: string, cwd: string, word: string) =>
  line(sessionId, cwd, "user", `what about ${word}?`) +
  line(sessionId, cwd, "assistant", `${word} is settled.`)

const setup = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const projects = join(home.path, ".claude", "projects")
  const project = join(projects, "-work-app")
  mkdirSync(project, { recursive: true })
  const environment = {
    env: { CLAUDE_CONFIG_DIR: join(home.path, ".claude"), CODEX_HOME: join(home.path, ".codex") },
    homeDir: home.path,
  }
  return { projects, project, environment, dataDir: join(data.path, "baton") }
}

const hits = async (dataDir: string, word: string) =>
  (await withIndex(dataDir, grepRecords({ pattern: word, limit: 100 }))).hits.map(
    (h) => h.sessionId,
  )

describe("a forgotten session", () => {
  it("stays out when its small transcript is moved and grows, or is copied", async () => {
    const { projects, project, environment, dataDir } = setup()
    const file = join(project, `${FORGOTTEN}.jsonl`)
    writeFileSync(file, exchange(FORGOTTEN, "/work/app", "smallsecret"))
    expect(statSync(file).size).toBeLessThan(4096)
    await runIndex(dataDir, { environment })
    expect(await hits(dataDir, "smallsecret")).toEqual([FORGOTTEN, FORGOTTEN])
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: FORGOTTEN }))
    expect(await hits(dataDir, "smallsecret")).toEqual([])

    // Moved to another project folder, then one more exchange: a different 4 KiB head.
    const moved = join(projects, "-work-other", `${FORGOTTEN}.jsonl`)
    mkdirSync(join(projects, "-work-other"))
    renameSync(file, moved)
    appendFileSync(moved, exchange(FORGOTTEN, "/work/app", "smallsecret again"))
    const afterMove = await runIndex(dataDir, { environment })
    expect(await hits(dataDir, "smallsecret")).toEqual([])
    expect(afterMove.skippedForgotten + afterMove.indexedNew).toBeGreaterThanOrEqual(1)

    // Copied under another name.
    copyFileSync(moved, join(project, "7a7a7a7a-0000-4000-8000-0000000000ff.jsonl"))
    await runIndex(dataDir, { environment })
    expect(await hits(dataDir, "smallsecret")).toEqual([])
    // The copy holds nothing but the forgotten session: it is marked forgotten, never read again.
    const again = await runIndex(dataDir, { environment })
    expect(again).toMatchObject({ indexedNew: 0, appended: 0, rewritten: 0 })
  })

  it("is left out of a fork and of a resume that copy it, which keep their own turns", async () => {
    const { project, environment, dataDir } = setup()
    const forgotten = exchange(FORGOTTEN, "/work/app", "privateword")
    writeFileSync(join(project, `${FORGOTTEN}.jsonl`), forgotten)
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: FORGOTTEN }))
    // A `claude --resume <id> --fork-session` fork, as Claude Code 2.1 writes it: the forgotten
    // records copied, uuids included, under the fork's own session id, then the fork's turns.
    writeFileSync(
      join(project, `${KEPT}.jsonl`),
      forgotten.replaceAll(FORGOTTEN, KEPT) + exchange(KEPT, "/work/app", "publicword"),
    )
    // An older Claude Code resume: the copy keeps the forgotten session's id.
    const resumed = "7a7a7a7a-0000-4000-8000-000000000003"
    writeFileSync(
      join(project, `${resumed}.jsonl`),
      forgotten + exchange(resumed, "/work/app", "resumedword"),
    )
    await runIndex(dataDir, { environment })
    expect(await hits(dataDir, "privateword")).toEqual([])
    expect(await hits(dataDir, "publicword")).toEqual([KEPT, KEPT])
    expect(await hits(dataDir, "resumedword")).toEqual([resumed, resumed])
    // The kept session goes on growing in that file.
    appendFileSync(join(project, `${KEPT}.jsonl`), exchange(KEPT, "/work/app", "laterword"))
    await runIndex(dataDir, { environment })
    expect(await hits(dataDir, "laterword")).toEqual([KEPT, KEPT])
    expect(await hits(dataDir, "privateword")).toEqual([])
  })

  it("forgotten before schema 11 is found again from its file name when the index upgrades", async () => {
    const { project, environment, dataDir } = setup()
    const file = join(project, `${FORGOTTEN}.jsonl`)
    writeFileSync(file, exchange(FORGOTTEN, "/work/app", "oldsecret"))
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: FORGOTTEN }))
    // Back to what schema 10 stored: only the file marked forgotten.
    await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        rewindForgottenSessions(db.sqlite)
      }),
    )
    const recorded = await withIndex(
      dataDir,
      Effect.map(RecallDatabase, (db) =>
        db.sqlite.prepare("select source, session_id from forgotten_sessions").all(),
      ),
    )
    expect(recorded).toEqual([{ source: "claude", session_id: FORGOTTEN }])
    // A copy (a new file to the index) of the forgotten transcript.
    copyFileSync(file, join(project, "7a7a7a7a-0000-4000-8000-0000000000fe.jsonl"))
    await runIndex(dataDir, { environment })
    expect(await hits(dataDir, "oldsecret")).toEqual([])
  })
})

describe("an index whose every transcript was forgotten", () => {
  it("says so (status and the empty-index facts), instead of asking for an index run", async () => {
    const { project, environment, dataDir } = setup()
    writeFileSync(join(project, `${FORGOTTEN}.jsonl`), exchange(FORGOTTEN, "/work/app", "gone"))
    await runIndex(dataDir, { environment })
    await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId: FORGOTTEN }))
    await runIndex(dataDir, { environment })
    const status = await withIndex(dataDir, recallStatus())
    expect(status).toMatchObject({ empty: true, forgottenFiles: 1 })
    const facts = await withIndex(dataDir, emptyIndexFacts(environment, status))
    expect(facts).toMatchObject({ reason: "forgotten", forgotten: 1, transcripts: 1 })
    // A new transcript next to it: that one waits for an index run.
    writeFileSync(join(project, `${KEPT}.jsonl`), exchange(KEPT, "/work/app", "new"))
    const more = await withIndex(dataDir, emptyIndexFacts(environment, status))
    expect(more).toMatchObject({ reason: "waiting", forgotten: 1, transcripts: 2 })
  })
})

describe("forget --all", () => {
  it("refuses while an index run holds the lock, so the run cannot put files back", async () => {
    const { project, environment, dataDir } = setup()
    writeFileSync(join(project, `${KEPT}.jsonl`), exchange(KEPT, "/work/app", "word"))
    await runIndex(dataDir, { environment })
    await withIndex(
      dataDir,
      Effect.map(RecallDatabase, (db) =>
        db.sqlite
          .prepare(
            "insert into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, 424242, 't', ?, ?)",
          )
          .run(Date.now(), Date.now() + 60_000),
      ),
    )
    const running = Layer.succeed(IndexerProcess, { pid: process.pid, isAlive: () => true })
    const busy = await withIndex(
      dataDir,
      Effect.flip(forgetSessions({ _tag: "All" })),
      undefined,
      running,
    )
    expect(busy).toMatchObject({ _tag: "IndexBusyError", pid: 424242 })
    expect(await hits(dataDir, "word")).toEqual([KEPT, KEPT])
    // The holder is gone: forget --all goes ahead and releases the lock after.
    const gone = Layer.succeed(IndexerProcess, { pid: process.pid, isAlive: () => false })
    const all = await withIndex(dataDir, forgetSessions({ _tag: "All" }), undefined, gone)
    expect(all.sessions).toBe(1)
    const lock = await withIndex(
      dataDir,
      Effect.map(RecallDatabase, (db) => db.sqlite.prepare("select * from index_lock").all()),
    )
    expect(lock).toEqual([])
  })
})

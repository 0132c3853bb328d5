// The incremental indexer against real temp files and a real temp-file SQLite database:
// schema and migrations, signature decisions, resume cost, idempotence, quarantine, lock,
// prune / forget and FTS escaping.
import { Effect, Layer } from "effect"
import { decompress } from "fzstd"
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import {
  forgetSessions,
  ftsMatchExpression,
  grepRecords,
  indexStatus,
  indexTranscripts,
  IndexerProcess,
  matchChunks,
  nodeRepositoryFiles,
  nodeTranscriptFileSystem,
  pruneDeleted,
  RecallDatabase,
  RECALL_SCHEMA_VERSION,
  recallDatabaseLayer,
  RecallStorageError,
  recentSessions,
  repositoryRootOf,
  TranscriptFileSystem,
  TranscriptReadError,
} from "@baton/recall-index"
import type { IndexProgressEvent } from "@baton/recall-index"
import { claudeExchange, generateFixtureCorpus, seededRandom } from "@baton/recall-index/testing"
import {
  countingFileSystem,
  counts,
  rewindLexicalIndex,
  runIndex,
  snapshot,
  tempDir,
  withIndex,
  withSqlite,
  writeTree,
} from "./index-harness.js"

const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), "fixtures")
/** A tiny Codex rollout, committed compressed (`zstd -3`). */
const tinyZst = "rollout-2026-01-02T03-04-05-0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c.jsonl.zst"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const setup = (seed = 3) => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const corpus = generateFixtureCorpus({ seed, homeDir: home.path })
  writeTree(corpus.files)
  const environment = {
    env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
    homeDir: home.path,
  }
  return { home: home.path, dataDir: join(data.path, "baton"), corpus, environment }
}

/** An empty home with only a Codex directory, and a data directory for its index. */
const codexOnly = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const codexHome = join(home.path, ".codex")
  return {
    home: home.path,
    data: data.path,
    codexHome,
    environment: { env: { CODEX_HOME: codexHome }, homeDir: home.path },
    dataDir: join(data.path, "baton"),
  }
}

const claudeSession = (corpus: ReturnType<typeof generateFixtureCorpus>) => {
  const e = corpus.expectations.find(
    (x) =>
      x.source === "claude" && x.discovered && x.role !== "subagent" && x.path.endsWith(".jsonl"),
  )!
  return e.path
}

/**
 * A Claude session of the corpus grown past the 4 KiB head (so an append is unambiguous), and
 * the next exchange to append to it.
 */
const lengthenedSession = (corpus: ReturnType<typeof generateFixtureCorpus>) => {
  const path = claudeSession(corpus)
  const random = seededRandom(9)
  const session = { sessionId: "11111111-2222-4333-8444-555555555555", cwd: "/work/x" }
  appendFileSync(path, claudeExchange(random, session, Date.UTC(2026, 1, 1), 6000))
  return {
    path,
    nextExchange: () => claudeExchange(random, session, Date.UTC(2026, 1, 2), 800),
  }
}

describe("recall database", () => {
  it("creates the data directory 0700 and the database 0600, migrates, and re-opens", async () => {
    const { dataDir } = setup()
    const tables = await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        return db.sqlite
          .prepare("select name from sqlite_master where type in ('table') order by name")
          .all()
          .map((r) => (r as { name: string }).name)
      }),
    )
    expect(tables).toEqual(
      expect.arrayContaining([
        "chunks",
        "chunks_fts",
        "embedders",
        "file_states",
        "forgotten_sessions",
        "forgotten_turns",
        "files",
        "index_lock",
        "meta",
        "raw_records",
        "sessions",
        "turns",
        "vector_keys",
        "kysely_migration",
      ]),
    )
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dataDir, "recall-index.db")).mode & 0o777).toBe(0o600)
    const again = await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        return {
          journal: db.sqlite.pragma("journal_mode", { simple: true }),
          version: db.sqlite.prepare("select value from meta where key = 'schema_version'").get(),
          migrations: db.sqlite.prepare("select name from kysely_migration").all(),
          vec: db.sqlite.prepare("select vec_version() as v").get(),
        }
      }),
    )
    expect(again.journal).toBe("wal")
    expect(again.version).toEqual({ value: String(RECALL_SCHEMA_VERSION) })
    expect(again.migrations).toEqual([
      { name: "0001_initial" },
      { name: "0002_file_states" },
      { name: "0003_repository_identity" },
      { name: "0004_cjk_bigrams" },
      { name: "0005_identifier_words" },
      { name: "0006_short_content_hashes" },
      { name: "0007_stored_counts" },
      { name: "0008_lexical_backlog" },
      { name: "0009_skipped_lines" },
      { name: "0010_parser_versions" },
      { name: "0011_forgotten_sessions" },
      { name: "0012_distinct_turn_counts" },
      { name: "0013_forgotten_turns" },
      { name: "0014_space_endpoints" },
    ])
    expect(again.vec).toEqual({ v: expect.stringMatching(/^v0\.1\./) })
  })
})

describe("an index a newer Baton wrote", () => {
  const NEWER = RECALL_SCHEMA_VERSION + 1
  it("is refused with what to do, and left as it is", async () => {
    const { dataDir } = setup()
    await withSqlite(dataDir, (sqlite) => {
      sqlite.exec(`insert into kysely_migration (name, timestamp) values ('0099_future', '')`)
      sqlite.exec(`update meta set value = '${NEWER}' where key = 'schema_version'`)
    })
    const path = join(dataDir, "recall-index.db")
    const before = readFileSync(path)
    const opened = await Effect.runPromise(
      Effect.result(
        Effect.gen(function* () {
          return yield* RecallDatabase
        }).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
      ),
    )
    expect(opened._tag).toBe("Failure")
    const error = opened._tag === "Failure" ? opened.failure : undefined
    expect(error).toMatchObject({ _tag: "RecallStorageError", operation: "open" })
    expect(error?.message).toBe(
      `the recall index at ${path} was written by a newer Baton (schema version ${NEWER}; this one ` +
        `knows up to ${RECALL_SCHEMA_VERSION}). If you have just updated Baton, this process is the ` +
        "previous version still running: restart it (an agent's MCP server restarts with the agent " +
        "session; a 'baton recall index --watch' by running it again). Otherwise update Baton to " +
        "use this index, or set BATON_DATA_DIR to another directory for a separate index of this " +
        "version's own; the index is left as it is",
    )
    expect(readFileSync(path).equals(before)).toBe(true)
  })
})

describe("a data directory that cannot be one", () => {
  it("names the path and what to set, for a file in the way and a read-only place", async () => {
    const { dataDir } = setup()
    const open = (dir: string) =>
      Effect.runPromise(
        Effect.result(
          Effect.gen(function* () {
            return yield* RecallDatabase
          }).pipe(Effect.provide(recallDatabaseLayer({ dataDir: dir }))),
        ),
      ).then((r) => (r._tag === "Failure" ? r.failure : undefined))
    const file = join(dirname(dataDir), "a-file")
    writeFileSync(file, "not a directory")
    for (const dir of [file, join(file, "below")]) {
      const error = await open(dir)
      expect(error).toMatchObject({ _tag: "RecallStorageError", operation: "create-directory" })
      expect(error?.message).toBe(
        `the recall index directory ${dir} is not a directory (a file is in the way): set ` +
          "BATON_DATA_DIR to a directory you can write (default: $XDG_DATA_HOME/baton, else " +
          "~/.local/share/baton)",
      )
    }
    expect(readFileSync(file, "utf8")).toBe("not a directory")
    // A link to nothing is named as one, with its target (it is not "a file in the way").
    const link = join(dirname(dataDir), "a-link")
    symlinkSync(join(dirname(dataDir), "gone"), link)
    for (const dir of [link, join(link, "below")]) {
      expect((await open(dir))?.message).toBe(
        `the recall index directory ${dir} cannot be created: ${link} is a symbolic link to ` +
          `${join(dirname(dataDir), "gone")}, which does not exist (create ` +
          `${join(dirname(dataDir), "gone")}, or remove the link): set BATON_DATA_DIR to a ` +
          "directory you can write (default: $XDG_DATA_HOME/baton, else ~/.local/share/baton)",
      )
    }
    // Where mkdir answers ENOENT under an existing parent (Linux /proc), Node's recursive mkdir
    // loops forever; the index fails at once instead.
    if (existsSync("/proc/self")) {
      const error = await open("/proc/baton-data")
      expect(error?.message).toMatch(
        /^the recall index directory \/proc\/baton-data cannot be created \(ENOENT/,
      )
    }
    const denied = new RecallStorageError({
      operation: "create-directory",
      path: "/ro/baton",
      reason: "EROFS: read-only file system, mkdir '/ro/baton'",
    })
    expect(denied.message).toContain(
      "/ro/baton cannot be created here (no permission, or a read-only file system)",
    )
  })
})

describe("writer announcements", () => {
  it("are seen until their last writer releases, and a dead writer's leftover expires", async () => {
    const { dataDir } = setup()
    const seen = await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() => {
          const states = [db.writerWaiting()]
          const first = db.announceWriter()
          const second = db.announceWriter()
          states.push(db.writerWaiting())
          first()
          states.push(db.writerWaiting())
          second()
          states.push(db.writerWaiting())
          // Left by a writer killed a minute ago; and one that is still waiting.
          const dir = dirname(db.path)
          const name = (at: number) => join(dir, `recall-index.db-writer-${at}-1-1`)
          writeFileSync(name(Date.now() - 61_000), "")
          states.push(db.writerWaiting())
          writeFileSync(name(Date.now()), "")
          states.push(db.writerWaiting())
          return states
        }),
      ),
    )
    expect(seen).toEqual([false, true, true, false, false, true])
  })
})

describe("indexTranscripts", () => {
  it("indexes the synthetic corpus, reports progress, and is idempotent", async () => {
    const { dataDir, environment } = setup()
    const events: Array<IndexProgressEvent> = []
    const first = await runIndex(dataDir, { environment, onProgress: (e) => events.push(e) })
    expect(first.indexedNew).toBeGreaterThan(20)
    expect(first.failed).toEqual([])
    expect(first.turnsAdded).toBeGreaterThan(0)
    expect(events[0]?._tag).toBe("Planned")
    expect(events.at(-1)?._tag).toBe("Finished")
    expect(events.filter((e) => e._tag === "FileIndexed")).toHaveLength(first.indexedNew)
    const words = ["frost", "retry", "ledger"]
    const before = await snapshot(dataDir, words)
    // A file indexed with the same size, mtime and inode is not even opened: one stat each.
    const fs = countingFileSystem()
    const second = await runIndex(dataDir, { environment }, fs.layer)
    expect(second.unchanged).toBe(first.discovered)
    expect(second.indexedNew + second.appended + second.rewritten).toBe(0)
    expect(second.bytesRead).toBe(0)
    expect([...fs.bytesRead.values()].reduce((a, b) => a + b, 0)).toBe(0)
    expect(await snapshot(dataDir, words)).toEqual(before)
    expect(before.chunks.length).toBe(before.ftsRows[0] && (before.ftsRows[0] as { n: number }).n)
    expect(before.fts["frost"]!.length).toBeGreaterThan(0)
  })

  it("resumes an appended turn reading only the new bytes", async () => {
    const { dataDir, environment, corpus } = setup()
    const { path, nextExchange } = lengthenedSession(corpus)
    await runIndex(dataDir, { environment })
    const sizeBefore = statSync(path).size
    const extra = nextExchange()
    appendFileSync(path, extra)
    const fs = countingFileSystem()
    const report = await runIndex(dataDir, { environment }, fs.layer)
    expect(report.appended).toBe(1)
    expect(report.unchanged).toBe(report.discovered - 1)
    const headBytes = Math.min(4096, sizeBefore + extra.length)
    // Discovery hashes the head (4 KiB); the parser reads only the appended bytes.
    expect(fs.bytesRead.get(path)).toBe(headBytes + Buffer.byteLength(extra))
    expect(report.bytesRead).toBe(Buffer.byteLength(extra))
  })

  it("does not write a file forgotten after the run planned it (a forget let in mid-run)", async () => {
    const { dataDir, environment, corpus } = setup()
    const { path, nextExchange } = lengthenedSession(corpus)
    await runIndex(dataDir, { environment })
    const turnsOf = () =>
      withSqlite(
        dataDir,
        (s) =>
          s
            .prepare(
              "select f.status, count(t.id) as turns from files f left join turns t on t.file_id = f.id where f.path = ?",
            )
            .get(path) as { status: string; turns: number },
      )
    const before = await turnsOf()
    appendFileSync(path, nextExchange())
    // The forget lands while the run reads the appended bytes (its group not begun yet).
    const forgetting = Layer.succeed(TranscriptFileSystem, {
      ...nodeTranscriptFileSystem,
      read: (file, offset, length) =>
        (file === path && offset > 0
          ? Effect.promise(() =>
              withSqlite(dataDir, (s) =>
                s.prepare("update files set status = 'forgotten' where path = ?").run(path),
              ),
            )
          : Effect.void
        ).pipe(Effect.andThen(nodeTranscriptFileSystem.read(file, offset, length))),
    })
    const report = await runIndex(
      dataDir,
      { environment, commitGroup: { maxFiles: 1 } },
      forgetting,
    )
    expect(report).toMatchObject({ appended: 0, rewritten: 0, skippedForgotten: 1, failed: [] })
    expect(await turnsOf()).toEqual({ status: "forgotten", turns: before.turns })
  })

  it("upgrades a schema-1 index (parse states in files) and still resumes appends from it", async () => {
    const { dataDir, environment, corpus } = setup()
    const { path, nextExchange } = lengthenedSession(corpus)
    const first = await runIndex(dataDir, { environment })
    // Put the file back in schema 1's shape: the parse state in files.parse_state.
    const states = await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        const s = db.sqlite
        s.transaction(() => {
          s.exec("alter table files add column parse_state text")
          s.exec(
            "update files set parse_state = (select parse_state from file_states where file_id = files.id)",
          )
          s.exec("alter table files drop column resumable")
          s.exec("drop table file_states")
          s.exec("drop index sessions_repository_url")
          s.exec("alter table sessions drop column repo_root_from")
          s.exec("alter table sessions drop column repository_url")
        })()
        rewindLexicalIndex(s, 1)
        return s.prepare("select count(*) as n from files where parse_state is not null").get()
      }),
    )
    expect(states).toEqual({ n: first.indexedNew })
    const extra = nextExchange()
    appendFileSync(path, extra)
    // With the parser of that index (version 1): a later parser reads the files again whole.
    const report = await runIndex(dataDir, { environment, parserVersion: 1 })
    expect(report.appended).toBe(1)
    expect(report.rewritten + report.indexedNew).toBe(0)
    expect(report.bytesRead).toBe(Buffer.byteLength(extra))
    const upgraded = await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        const s = db.sqlite
        return {
          version: s.prepare("select value from meta where key = 'schema_version'").get(),
          columns: s.prepare("select name from pragma_table_info('files')").pluck().all(),
          states: s.prepare("select count(*) as n from file_states").get(),
          resumable: s.prepare("select count(*) as n from files where resumable = 1").get(),
          integrity: s.pragma("integrity_check", { simple: true }),
          brokenKeys: s.pragma("foreign_key_check"),
          keysOn: s.pragma("foreign_keys", { simple: true }),
          sessionsPointAt: s
            .prepare("select \"table\" from pragma_foreign_key_list('sessions')")
            .pluck()
            .all(),
        }
      }),
    )
    expect(upgraded.integrity).toBe("ok")
    expect(upgraded.brokenKeys).toEqual([])
    expect(upgraded.keysOn).toBe(1)
    expect(upgraded.sessionsPointAt).toEqual(["files"])
    expect(upgraded.version).toEqual({ value: String(RECALL_SCHEMA_VERSION) })
    expect(upgraded.columns).not.toContain("parse_state")
    expect(upgraded.states).toEqual({ n: first.indexedNew })
    expect(upgraded.resumable).toEqual({ n: first.indexedNew })

    // A migration that committed but died before Kysely recorded it runs again as a no-op.
    await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() =>
          db.sqlite.exec("delete from kysely_migration where name = '0002_file_states'"),
        ),
      ),
    )
    const again = await runIndex(dataDir, { environment, parserVersion: 1 })
    expect(again.unchanged).toBe(again.discovered)
  })

  it("decides per signature: unchanged, append, rewrite, truncate, archive move, deleted", async () => {
    const { dataDir, environment, corpus } = setup()
    await runIndex(dataDir, { environment })
    const claude = claudeSession(corpus)
    const codexActive = corpus.expectations.find(
      (x) => x.source === "codex" && x.discovered && x.path.includes("/sessions/2026/"),
    )!.path
    const others = corpus.expectations.filter(
      (x) => x.discovered && x.path !== claude && x.path !== codexActive,
    )
    const victim = others.find((x) => x.source === "claude" && x.role !== "subagent")!.path
    const truncated = others.find(
      (x) => x.source === "codex" && x.path !== codexActive && !x.path.endsWith(".zst"),
    )!.path

    // rewrite: same size class but new content and a new inode
    const content = readFileSync(claude, "utf8")
    rmSync(claude)
    writeFileSync(claude, content.replace(/frost/g, "FROST").replace(/retry/g, "RETRY"))
    // truncate
    truncateSync(truncated, Math.floor(statSync(truncated).size / 2))
    // archive move (same inode, same head)
    const archived = join(
      environment.env.CODEX_HOME,
      "archived_sessions",
      "moved",
      codexActive.split("/").pop()!,
    )
    mkdirSync(dirname(archived), { recursive: true })
    renameSync(codexActive, archived)
    // deleted
    rmSync(victim)

    const before = await counts(dataDir)
    const report = await runIndex(dataDir, { environment })
    expect(report.moved).toBe(1)
    expect(report.markedMissing).toBe(1)
    expect(report.rewritten).toBe(2)
    expect(report.indexedNew + report.appended).toBe(0)
    expect(report.failed).toEqual([])
    const snap = await snapshot(dataDir)
    const files = snap.files as Array<{ path: string; status: string }>
    expect(files.find((f) => f.path === archived)?.status).toBe("indexed")
    expect(files.find((f) => f.path === codexActive)).toBeUndefined()
    expect(files.find((f) => f.path === victim)?.status).toBe("missing")
    // The deleted file's sessions are kept until prune.
    const status = await withIndex(dataDir, indexStatus(Date.now()))
    expect(status.missingFiles).toBe(1)
    expect(status.retainedSessions).toBeGreaterThan(0)
    expect(status.lastRun?.moved).toBe(1)
    const after = await counts(dataDir)
    expect(after.sessions).toBe(before.sessions)

    // A clean index of the same disk state has the same rows, except the retained deleted file.
    const clean = tempDir("clean")
    cleanups.push(clean.dispose)
    await runIndex(clean.path, { environment })
    const pruned = await withIndex(dataDir, pruneDeleted())
    expect(pruned.files).toBe(1)
    const a = await snapshot(dataDir, ["frost", "retry", "FROST"])
    const b = await snapshot(clean.path, ["frost", "retry", "FROST"])
    expect({ ...a, files: a.files.length }).toEqual({ ...b, files: b.files.length })
  })

  it("re-points a rollout Codex compressed to .jsonl.zst: its rows are replaced in place, never duplicated", async () => {
    const { codexHome, environment, dataDir } = codexOnly()
    const fixture = join(fixturesDir, tinyZst)
    const plainText = Buffer.from(decompress(readFileSync(fixture))).toString("utf8")
    // A live rollout, indexed plain; then one more turn, which the next run must not lose.
    const live = join(codexHome, "sessions", "2026", "01", "02", tinyZst.slice(0, -4))
    mkdirSync(dirname(live), { recursive: true })
    const head = plainText.split("\n").slice(0, 3).join("\n") + "\n"
    writeFileSync(live, head)
    await runIndex(dataDir, { environment })
    writeFileSync(live, plainText)
    await runIndex(dataDir, { environment })
    const before = await counts(dataDir)
    expect(before).toMatchObject({ files: 1, sessions: 1, turns: 2 })

    // Codex archives it compressed: the plain file is gone, the .zst appears elsewhere.
    const archived = join(codexHome, "archived_sessions", tinyZst)
    mkdirSync(dirname(archived), { recursive: true })
    copyFileSync(fixture, archived)
    rmSync(live)
    const report = await runIndex(dataDir, { environment })
    expect(report).toMatchObject({ moved: 1, markedMissing: 0, indexedNew: 0, failed: [] })
    expect(await counts(dataDir)).toEqual(before)
    const snap = await snapshot(dataDir, ["TINY"])
    expect(snap.files).toEqual([expect.objectContaining({ path: archived, status: "indexed" })])
    const clean = tempDir("clean")
    cleanups.push(clean.dispose)
    await runIndex(clean.path, { environment })
    expect(snap).toEqual(await snapshot(clean.path, ["TINY"]))
    // Nothing changed since: the next run reads nothing.
    const again = await runIndex(dataDir, { environment })
    expect(again.unchanged).toBe(1)

    // A .zst whose decompressed head differs from the vanished plain file is a different
    // transcript: the plain file's rows are kept as missing, the .zst is indexed as new.
    const other = tempDir("other")
    cleanups.push(other.dispose)
    const otherHome = join(other.path, ".codex")
    const otherEnv = { env: { CODEX_HOME: otherHome }, homeDir: other.path }
    const otherLive = join(otherHome, "sessions", tinyZst.slice(0, -4))
    mkdirSync(dirname(otherLive), { recursive: true })
    writeFileSync(otherLive, plainText.replace("/work/tiny", "/work/elsewhere"))
    const otherData = join(other.path, "baton")
    await runIndex(otherData, { environment: otherEnv })
    copyFileSync(fixture, join(otherHome, "sessions", tinyZst))
    rmSync(otherLive)
    const unrelated = await runIndex(otherData, { environment: otherEnv })
    expect(unrelated).toMatchObject({ moved: 0, markedMissing: 1, indexedNew: 1 })
  })

  it("keeps a forgotten rollout forgotten when Codex compresses or archives it", async () => {
    const { codexHome, environment, dataDir } = codexOnly()
    const fixture = join(fixturesDir, tinyZst)
    const live = join(codexHome, "sessions", "2026", "01", "02", tinyZst.slice(0, -4))
    mkdirSync(dirname(live), { recursive: true })
    writeFileSync(live, decompress(readFileSync(fixture)))
    await runIndex(dataDir, { environment })
    const sessionId = "0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c"
    expect(
      (await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId }))).sessions,
    ).toBe(1)
    // Compressed into the archive...
    const archived = join(codexHome, "archived_sessions", tinyZst)
    mkdirSync(dirname(archived), { recursive: true })
    copyFileSync(fixture, archived)
    rmSync(live)
    const compressed = await runIndex(dataDir, { environment })
    expect(compressed).toMatchObject({ moved: 1, skippedForgotten: 1, indexedNew: 0 })
    // ...then moved again, same bytes.
    const elsewhere = join(codexHome, "archived_sessions", "2026", tinyZst)
    mkdirSync(dirname(elsewhere), { recursive: true })
    renameSync(archived, elsewhere)
    const movedAgain = await runIndex(dataDir, { environment })
    expect(movedAgain).toMatchObject({ moved: 1, skippedForgotten: 1, indexedNew: 0 })
    expect(await counts(dataDir)).toMatchObject({ files: 1, sessions: 0, turns: 0, chunks: 0 })
    expect((await snapshot(dataDir)).files).toEqual([
      expect.objectContaining({ path: elsewhere, status: "forgotten" }),
    ])
  })

  it("places each session in its main repository at index time: git worktrees, then the Codex remote, then string rules", async () => {
    const { home: h, data: dataRoot, codexHome, environment, dataDir } = codexOnly()
    // A main checkout, and a Codex app worktree of it that still exists.
    const main = join(h, "work", "pay")
    mkdirSync(join(main, ".git", "worktrees", "feat"), { recursive: true })
    mkdirSync(join(main, "src"))
    writeFileSync(join(main, ".git", "worktrees", "feat", "commondir"), "../..\n")
    writeFileSync(join(main, ".git", "HEAD"), "ref: refs/heads/main\n")
    const worktree = join(codexHome, "worktrees", "ab12", "pay")
    mkdirSync(join(worktree, "src"), { recursive: true })
    writeFileSync(join(worktree, ".git"), `gitdir: ${join(main, ".git", "worktrees", "feat")}\n`)
    const gone = join(codexHome, "worktrees", "cd34", "pay")
    const remote = "https://github.com/acme/pay.git"
    const rollout = (n: number, cwd: string, url: string | undefined, text: string) => {
      const id = `00000000-0000-4000-8000-00000000000${n}`
      const at = `2026-01-0${n}T10:00:00.000Z`
      const path = join(
        codexHome,
        "sessions",
        "2026",
        "01",
        `0${n}`,
        `rollout-2026-01-0${n}T10-00-00-${id}.jsonl`,
      )
      const lines = [
        {
          timestamp: at,
          type: "session_meta",
          payload: {
            id,
            cwd,
            originator: "codex_cli_rs",
            cli_version: "0.169.0",
            source: "cli",
            ...(url === undefined ? {} : { git: { branch: "main", repository_url: url } }),
          },
        },
        { timestamp: at, type: "event_msg", payload: { type: "task_started", turn_id: "t1" } },
        {
          timestamp: at,
          type: "response_item",
          payload: { type: "message", role: "user", content: [{ type: "input_text", text }] },
        },
      ]
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
      return { id, path }
    }
    // Written in this order, the deleted worktree's session is indexed before any session that
    // git places in the repository: the run's last step gives it the remote's root.
    const deleted = rollout(1, gone, "https://bot:ghp_secret@GitHub.com/acme/pay", "CHARLIE gone")
    const inMain = rollout(2, join(main, "src"), remote, "ALPHA main")
    const inWorktree = rollout(3, join(worktree, "src"), remote, "BRAVO worktree")
    const elsewhere = rollout(4, join(h, "gone", "other"), "git@host:o/other.git", "DELTA other")
    const rows = (dir: string) =>
      withSqlite(dir, (s) =>
        s
          .prepare(
            "select session_id, repo_root, repo_root_from, repository_url from sessions order by session_id",
          )
          .all(),
      )
    const scoped = async (dir: string, scopeCwd: string) =>
      (await withIndex(dir, recentSessions({ limit: 10, scopeCwd }))).map((r) => r.sessionId).sort()

    // Without git access (a library caller passing no repositoryFiles): string rules only.
    await runIndex(dataDir, { environment })
    expect(
      (await rows(dataDir)).map((r) => (r as { repo_root_from: unknown }).repo_root_from),
    ).toEqual([null, null, null, null])
    expect(await scoped(dataDir, main)).toEqual([inMain.id])

    // With it, the next run places the sessions it left unresolved, though no file changed.
    const report = await runIndex(dataDir, { environment, repositoryFiles: nodeRepositoryFiles })
    expect(report.unchanged).toBe(4)
    const expected = [
      {
        session_id: deleted.id,
        repo_root: main,
        repo_root_from: "remote",
        repository_url: "https://github.com/acme/pay",
      },
      {
        session_id: inMain.id,
        repo_root: main,
        repo_root_from: "git",
        repository_url: "https://github.com/acme/pay",
      },
      {
        session_id: inWorktree.id,
        repo_root: main,
        repo_root_from: "git",
        repository_url: "https://github.com/acme/pay",
      },
      {
        session_id: elsewhere.id,
        repo_root: join(h, "gone", "other"),
        repo_root_from: "path",
        repository_url: "git@host:o/other",
      },
    ]
    expect(await rows(dataDir)).toEqual(expected)
    expect(await scoped(dataDir, main)).toEqual([deleted.id, inMain.id, inWorktree.id])
    // The scope resolves the same way from inside the worktree.
    expect(await scoped(dataDir, repositoryRootOf(join(worktree, "src")))).toEqual([
      deleted.id,
      inMain.id,
      inWorktree.id,
    ])

    // A fresh index with git access decides the same at write time.
    const fresh = join(dataRoot, "fresh")
    await runIndex(fresh, { environment, repositoryFiles: nodeRepositoryFiles })
    expect(await rows(fresh)).toEqual(expected)

    // The worktree is deleted, then its session grows: the root git found is kept.
    rmSync(worktree, { recursive: true })
    appendFileSync(
      inWorktree.path,
      JSON.stringify({
        timestamp: "2026-01-03T11:00:00.000Z",
        type: "response_item",
        payload: {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "more" }],
        },
      }) + "\n",
    )
    const grown = await runIndex(dataDir, { environment, repositoryFiles: nodeRepositoryFiles })
    expect(grown.appended).toBe(1)
    expect(await rows(dataDir)).toEqual(expected)
  })

  it("places a session recorded through a symlinked directory in the real repository, and moves roots an older index stored through one", async () => {
    const { home: h, data: dataRoot, codexHome, environment, dataDir } = codexOnly()
    // `~/code -> /data/code`, as a user may keep it; the repository is `/data/code/repo`.
    const realRepo = join(h, "data", "code", "repo")
    mkdirSync(join(realRepo, ".git"), { recursive: true })
    mkdirSync(join(realRepo, "src"))
    writeFileSync(join(realRepo, ".git", "HEAD"), "ref: refs/heads/main\n")
    symlinkSync(join(h, "data", "code"), join(h, "code"))
    const linkedRepo = join(h, "code", "repo")
    const id = "00000000-0000-4000-8000-00000000000a"
    const at = "2026-01-05T10:00:00.000Z"
    writeTree({
      [join(codexHome, "sessions", "2026", "01", "05", `rollout-2026-01-05T10-00-00-${id}.jsonl`)]:
        [
          { timestamp: at, type: "session_meta", payload: { id, cwd: join(linkedRepo, "src") } },
          {
            timestamp: at,
            type: "response_item",
            payload: {
              type: "message",
              role: "user",
              content: [{ type: "input_text", text: "symlinked probe" }],
            },
          },
        ]
          .map((l) => JSON.stringify(l))
          .join("\n") + "\n",
    })
    const roots = (dir: string) =>
      withSqlite(dir, (s) => s.prepare("select repo_root from sessions").pluck().all())
    const scoped = async (dir: string, scopeCwd: string) =>
      (await withIndex(dir, recentSessions({ limit: 10, scopeCwd }))).map((r) => r.sessionId)

    // The scope through the symlink resolves to the real repository.
    expect(repositoryRootOf(join(linkedRepo, "src"))).toBe(realRepo)
    // A fresh index stores the real root, found from either spelling.
    await runIndex(dataDir, { environment, repositoryFiles: nodeRepositoryFiles })
    expect(await roots(dataDir)).toEqual([realRepo])
    expect(await scoped(dataDir, realRepo)).toEqual([id])
    expect(await scoped(dataDir, repositoryRootOf(linkedRepo))).toEqual([id])

    // An index written without resolving symlinks (an earlier version) kept the symlinked root;
    // the next run moves it to the real one, though no file changed.
    const older = join(dataRoot, "older")
    const { kind, readText } = nodeRepositoryFiles
    await runIndex(older, { environment, repositoryFiles: { kind, readText } })
    expect(await roots(older)).toEqual([linkedRepo])
    const report = await runIndex(older, { environment, repositoryFiles: nodeRepositoryFiles })
    expect(report.unchanged).toBe(1)
    expect(await roots(older)).toEqual([realRepo])
    expect(await scoped(older, realRepo)).toEqual([id])
  })

  it("grep shows a record copied into a forked Claude session once, unless asked for every copy", async () => {
    const home = tempDir("home")
    const data = tempDir("data")
    cleanups.push(home.dispose, data.dispose)
    const claudeDir = join(home.path, ".claude")
    const environment = { env: { CLAUDE_CONFIG_DIR: claudeDir }, homeDir: home.path }
    const dataDir = join(data.path, "baton")
    const parent = "11111111-aaaa-4aaa-8aaa-000000000001"
    const fork = "22222222-bbbb-4bbb-8bbb-000000000002"
    const line = (sessionId: string, uuid: string, at: string, role: string, text: string) =>
      JSON.stringify({
        type: role,
        uuid,
        parentUuid: null,
        sessionId,
        timestamp: at,
        cwd: "/work/birds",
        message:
          role === "user"
            ? { role, content: text }
            : {
                id: `m-${uuid}`,
                type: "message",
                role,
                model: "m",
                content: [{ type: "text", text }],
              },
      })
    const copied = (sessionId: string) => [
      line(sessionId, "u-0001", "2026-03-01T10:00:00.000Z", "user", "FALCON copied prompt"),
      line(sessionId, "u-0002", "2026-03-01T10:00:05.000Z", "assistant", "FALCON noted"),
    ]
    const project = join(claudeDir, "projects", "-work-birds")
    mkdirSync(project, { recursive: true })
    writeFileSync(join(project, `${parent}.jsonl`), copied(parent).join("\n") + "\n")
    // What `claude --resume <parent> --fork-session` writes: the parent's records, same uuids,
    // under the fork's session id, then the fork's own turns.
    writeFileSync(
      join(project, `${fork}.jsonl`),
      [
        ...copied(fork),
        line(fork, "u-0003", "2026-03-02T09:00:00.000Z", "user", "HERON fork prompt"),
      ].join("\n") + "\n",
    )
    await runIndex(dataDir, { environment })
    const once = await withIndex(dataDir, grepRecords({ pattern: "FALCON" }))
    expect(once.hits.map((h) => h.snippet).sort()).toEqual(["FALCON copied prompt", "FALCON noted"])
    expect(once.copiesSkipped).toBe(2)
    const every = await withIndex(
      dataDir,
      grepRecords({ pattern: "FALCON", includeDuplicates: true }),
    )
    expect(every.hits.map((h) => h.sessionId).sort()).toEqual([parent, parent, fork, fork])
    expect(every.copiesSkipped).toBe(0)
    const own = await withIndex(dataDir, grepRecords({ pattern: "HERON" }))
    expect(own.hits.map((h) => [h.sessionId, h.snippet])).toEqual([[fork, "HERON fork prompt"]])
    expect(own.copiesSkipped).toBe(0)
  })

  it("retries a failing file and quarantines it after three consecutive failures", async () => {
    const { dataDir, environment, corpus } = setup()
    const bad = claudeSession(corpus)
    const failing = Layer.succeed(TranscriptFileSystem, {
      ...nodeTranscriptFileSystem,
      read: (path: string, offset: number, length: number) =>
        path === bad && offset > 0
          ? Effect.fail(new TranscriptReadError({ path, operation: "read", code: "EIO" }))
          : nodeTranscriptFileSystem.read(path, offset, length),
    })
    // Make the file need more than one read so the parser hits the failing offset.
    appendFileSync(
      bad,
      claudeExchange(seededRandom(2), { sessionId: "s", cwd: "/x" }, 0, 2_000_000),
    )
    const runs = []
    for (let i = 0; i < 2; i++) runs.push(await runIndex(dataDir, { environment }, failing))
    expect(runs[0]!.failed).toEqual([
      { path: bad, error: "read failed: EIO", failures: 1, quarantined: false },
    ])
    const failingAfterTwo = await withIndex(dataDir, indexStatus(Date.now()))
    expect(failingAfterTwo).toMatchObject({
      failingFiles: 1,
      failing: [{ path: bad, failures: 2, lastError: "read failed: EIO" }],
      quarantined: [],
    })
    for (let i = 2; i < 4; i++) runs.push(await runIndex(dataDir, { environment }, failing))
    expect(runs[1]!.failed[0]?.failures).toBe(2)
    expect(runs[2]!.failed[0]).toMatchObject({ failures: 3, quarantined: true })
    expect(runs[3]!.failed).toEqual([])
    expect(runs[3]!.skippedQuarantined).toBe(1)
    const status = await withIndex(dataDir, indexStatus(Date.now()))
    expect(status.quarantined).toEqual([{ path: bad, failures: 3, lastError: "read failed: EIO" }])
    expect(status).toMatchObject({ failingFiles: 0, failing: [] })
    // Once the file changes it is tried again, and a success clears the quarantine.
    appendFileSync(bad, claudeExchange(seededRandom(3), { sessionId: "s", cwd: "/x" }, 0, 100))
    const healed = await runIndex(dataDir, { environment })
    expect(healed.failed).toEqual([])
    expect((await withIndex(dataDir, indexStatus(Date.now()))).quarantined).toEqual([])
  })

  it("refuses a second indexer with the holder's pid, and takes over a dead holder's lock", async () => {
    const { dataDir, environment } = setup()
    await runIndex(dataDir, { environment })
    const other = (alive: boolean) =>
      Layer.succeed(IndexerProcess, { pid: 424242, isAlive: () => alive })
    // Another (live) process takes the lock and keeps it.
    await withIndex(
      dataDir,
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        db.sqlite
          .prepare(
            "insert into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, 424242, 't', ?, ?)",
          )
          .run(Date.now(), Date.now() + 60_000)
      }),
      undefined,
      other(true),
    )
    const busy = await withIndex(
      dataDir,
      Effect.flip(indexTranscripts({ environment })),
      undefined,
      Layer.succeed(IndexerProcess, { pid: process.pid, isAlive: () => true }),
    )
    expect(busy._tag).toBe("IndexBusyError")
    expect(busy).toMatchObject({ pid: 424242 })
    expect(busy.message).toContain("pid 424242")
    // The holder died: the next indexer takes over.
    const report = await withIndex(
      dataDir,
      indexTranscripts({ environment }),
      undefined,
      Layer.succeed(IndexerProcess, { pid: process.pid, isAlive: (pid) => pid === process.pid }),
    )
    expect(report.failed).toEqual([])
  })

  it("forgets a session (and does not re-index its file), a project, or everything", async () => {
    const { dataDir, environment, corpus } = setup()
    await runIndex(dataDir, { environment })
    const path = claudeSession(corpus)
    const sessionId = path.split("/").pop()!.replace(".jsonl", "")
    // Its subagent sessions are forgotten with it.
    const subagents = (
      (await snapshot(dataDir)).sessions as Array<{ parent_session_id: string | null }>
    ).filter((s) => s.parent_session_id === sessionId).length
    const removed = await withIndex(dataDir, forgetSessions({ _tag: "Session", sessionId }))
    expect(removed.sessions).toBe(1 + subagents)
    const again = await runIndex(dataDir, { environment })
    expect(again.skippedForgotten).toBeGreaterThanOrEqual(1)
    const snap = await snapshot(dataDir)
    expect(
      (snap.sessions as Array<{ session_id: string }>).some((s) => s.session_id === sessionId),
    ).toBe(false)
    const roots = (await snapshot(dataDir)).sessions as Array<{ repo_root: string | null }>
    const root = roots.find((r) => r.repo_root !== null)!.repo_root!
    const inRoot = roots.filter(
      (r) => r.repo_root === root || r.repo_root?.startsWith(`${root}/`) === true,
    ).length
    // Paths are case-sensitive: a parent spelled in capitals holds none of these sessions.
    const posix = roots
      .map((r) => r.repo_root)
      .find((r) => r?.startsWith("/") === true && /[a-z]/.test(dirname(r)))!
    const shouted = dirname(posix).toUpperCase()
    const none = await withIndex(dataDir, forgetSessions({ _tag: "Project", repoRoot: shouted }))
    expect(none.sessions).toBe(0)
    const project = await withIndex(dataDir, forgetSessions({ _tag: "Project", repoRoot: root }))
    expect(project.sessions).toBe(inRoot)
    expect(
      ((await snapshot(dataDir)).sessions as Array<{ repo_root: string | null }>).some(
        (r) => r.repo_root === root,
      ),
    ).toBe(false)
    const all = await withIndex(dataDir, forgetSessions({ _tag: "All" }))
    expect(all.sessions).toBeGreaterThan(0)
    expect(await counts(dataDir)).toMatchObject({
      sessions: 0,
      turns: 0,
      raw: 0,
      chunks: 0,
      fts: 0,
    })
    expect(existsSync(dataDir)).toBe(true)
  })
})

describe("FTS5 escaping", () => {
  it("never passes raw user text to MATCH", async () => {
    expect(ftsMatchExpression('say "hi" AND NEAR(x y)')).toBe('"say" """hi""" "AND" "NEAR(x" "y)"')
    expect(ftsMatchExpression("   ")).toBeUndefined()
    expect(ftsMatchExpression("- * ^ :")).toBeUndefined()
    expect(ftsMatchExpression("a b", "any")).toBe('"a" OR "b"')
    const { dataDir, environment } = setup()
    await runIndex(dataDir, { environment })
    const queries = [
      'retry "policy',
      "frost AND",
      "NEAR(frost, retry)",
      "col:frost",
      "frost*",
      "(((",
      "naïve café 日本語 🚀",
      "\u0000frost\u0007",
      "-frost",
      "OR",
      "'; drop table chunks; --",
    ]
    for (const q of queries) {
      const result = await withIndex(dataDir, Effect.result(matchChunks(q)))
      expect(result._tag, q).toBe("Success")
    }
    const hits = await withIndex(dataDir, matchChunks("FROST!", { limit: 5 }))
    expect(hits.length).toBeGreaterThan(0)
  })
})

describe("a run limited to some sources", () => {
  it("leaves the other sources' files as they are: not missing, and not pruned", async () => {
    const { dataDir, environment } = setup()
    const all = await runIndex(dataDir, { environment })
    const before = await snapshot(dataDir)
    const codexFiles = await withSqlite(
      dataDir,
      (sqlite) =>
        sqlite.prepare("select count(*) from files where source = 'codex'").pluck().get() as number,
    )
    expect(codexFiles).toBeGreaterThan(0)
    const claudeOnly = await runIndex(dataDir, { environment, sources: ["claude"] })
    expect(claudeOnly).toMatchObject({ markedMissing: 0, indexedNew: 0 })
    expect(claudeOnly.discovered).toBeLessThan(all.discovered)
    const codexRun = await runIndex(dataDir, { environment, sources: ["codex"] })
    expect(codexRun).toMatchObject({ markedMissing: 0, indexedNew: 0, discovered: codexFiles })
    expect((await withIndex(dataDir, indexStatus(Date.now()))).missingFiles).toBe(0)
    expect(await withIndex(dataDir, pruneDeleted())).toMatchObject({ sessions: 0, files: 0 })
    expect(await snapshot(dataDir)).toEqual(before)
  })
})

describe("forgetting a project", () => {
  it("with a source forgets only that agent's sessions of it", async () => {
    const { dataDir, environment } = setup()
    await runIndex(dataDir, { environment })
    const sessions = () =>
      withSqlite(
        dataDir,
        (sqlite) =>
          sqlite
            .prepare(
              "select repo_root as root, source, count(*) as n from sessions group by repo_root, source order by repo_root, source",
            )
            .all() as Array<{ root: string | null; source: string; n: number }>,
      )
    const before = await sessions()
    const codex = before.find((r) => r.source === "codex" && r.root !== null)
    expect(codex).toBeDefined()
    const root = codex?.root ?? ""
    expect(before.filter((r) => r.root === root).map((r) => r.source)).toEqual(["codex"])
    const forget = (source: "claude" | "codex") =>
      withIndex(dataDir, forgetSessions({ _tag: "Project", repoRoot: root, source }))
    expect(await forget("claude")).toEqual({ sessions: 0, files: 0 })
    expect(await sessions()).toEqual(before)
    expect((await forget("codex")).sessions).toBe(codex?.n)
    expect(await sessions()).toEqual(before.filter((r) => r.root !== root))
  })
})

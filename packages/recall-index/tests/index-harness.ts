// Shared setup for the indexer tests: a temp home with transcripts on the real file system, a
// real temp-file database, and row snapshots that ignore row ids.
import { Effect, Layer } from "effect"
import { afterAll } from "vitest"
import type { Scope } from "effect"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import {
  embedBacklog,
  embedderFromEnvironment,
  embeddingForIndex,
  embeddingForSearch,
  indexTranscripts,
  lexicalBacklogSize,
  matchChunks,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystem,
  RecallDatabase,
  recallDatabaseLayer,
  recallMigrations,
  TranscriptFileSystem,
} from "@baton/recall-index"
import { generateFixtureCorpus } from "@baton/recall-index/testing"
import type {
  ConfiguredEmbedding,
  IndexerProcess,
  IndexOptions,
  RecallSearchProviders,
  IndexRunReport,
  RecallDatabaseShape,
  TranscriptFileSystemShape,
} from "@baton/recall-index"

/** A temp directory removed by `dispose`. */
export const tempDir = (prefix: string): { path: string; dispose: () => void } => {
  const path = mkdtempSync(join(tmpdir(), `baton-${prefix}-`))
  return { path, dispose: () => rmSync(path, { recursive: true, force: true }) }
}

/**
 * `temp(prefix)`: a new temp directory's path, removed after the calling test file's tests (call
 * at the file's top level: it registers the `afterAll`).
 */
export const tempDirsForFile = (): ((prefix: string) => string) => {
  const dirs: Array<{ dispose: () => void }> = []
  afterAll(() => {
    for (const d of dirs) d.dispose()
  })
  return (prefix) => {
    const dir = tempDir(prefix)
    dirs.push(dir)
    return dir.path
  }
}

/** Writes `files` (absolute paths) to disk. */
export const writeTree = (files: Readonly<Record<string, string | Uint8Array>>): void => {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
  }
}

/** A file system that counts the bytes read per path. */
export const countingFileSystem = (): {
  readonly layer: Layer.Layer<TranscriptFileSystem>
  readonly bytesRead: Map<string, number>
} => {
  const bytesRead = new Map<string, number>()
  const shape: TranscriptFileSystemShape = {
    ...nodeTranscriptFileSystem,
    read: (path, offset, length) =>
      nodeTranscriptFileSystem
        .read(path, offset, length)
        .pipe(
          Effect.tap((bytes) =>
            Effect.sync(() => bytesRead.set(path, (bytesRead.get(path) ?? 0) + bytes.length)),
          ),
        ),
  }
  return { layer: Layer.succeed(TranscriptFileSystem, shape), bytesRead }
}

type Env = RecallDatabase | TranscriptFileSystem | IndexerProcess

/** Runs `effect` against the database in `dataDir` (opened and closed around it). */
export const withIndex = <A, E>(
  dataDir: string,
  effect: Effect.Effect<A, E, Env | Scope.Scope>,
  fsLayer: Layer.Layer<TranscriptFileSystem> = Layer.succeed(
    TranscriptFileSystem,
    nodeTranscriptFileSystem,
  ),
  processLayer: Layer.Layer<IndexerProcess> = nodeIndexerProcessLayer,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(effect).pipe(
      Effect.provide(Layer.mergeAll(recallDatabaseLayer({ dataDir }), fsLayer, processLayer)),
    ),
  )

/** Runs a synchronous read or write on the raw connection of the database in `dataDir`. */
export const withSqlite = <A>(dataDir: string, f: (sqlite: RecallDatabaseShape["sqlite"]) => A) =>
  withIndex(
    dataDir,
    RecallDatabase.use((db) => Effect.sync(() => f(db.sqlite))),
  )

/**
 * Puts the lexical index of an open database back as an older schema left it — every chunk whose
 * indexed text the current schema changed is indexed again as schemas 1–3 held it (its plain text)
 * or as schema 4 did (CJK bigrams), under that schema's triggers — sets `meta.schema_version`
 * and forgets the later migrations, so the next open migrates the file again.
 */
export const rewindLexicalIndex = (
  sqlite: RecallDatabaseShape["sqlite"],
  version: 1 | 2 | 3 | 4,
): void => {
  const indexed = (column: string) => (version === 4 ? `baton_fts_text(${column})` : column)
  const changed = "from chunks where baton_fts_text_5(text) != text"
  const later = Object.keys(recallMigrations).sort().slice(version)
  sqlite.transaction(() => {
    rewindStoredCounts(sqlite)
    sqlite.exec(`
      insert into chunks_fts(chunks_fts, rowid, text) select 'delete', id, baton_fts_text_5(text) ${changed};
      insert into chunks_fts(rowid, text) select id, ${indexed("text")} ${changed};
      drop trigger chunks_fts_insert;
      drop trigger chunks_fts_delete;
      drop trigger chunks_fts_update;
      create trigger chunks_fts_insert after insert on chunks begin
        insert into chunks_fts(rowid, text) values (new.id, ${indexed("new.text")});
      end;
      create trigger chunks_fts_delete after delete on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.id, ${indexed("old.text")});
      end;
      create trigger chunks_fts_update after update of text on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.id, ${indexed("old.text")});
        insert into chunks_fts(rowid, text) values (new.id, ${indexed("new.text")});
      end;
    `)
    sqlite.prepare("update meta set value = ? where key = 'schema_version'").run(String(version))
    const forget = sqlite.prepare("delete from kysely_migration where name = ?")
    for (const name of later) forget.run(name)
  })()
}

/**
 * Puts an open database back as schema 13 left it — no `embedders.endpoint` — sets
 * `meta.schema_version` to 13 and forgets migration 0014, so the next open migrates the file again.
 */
export const rewindSpaceEndpoints = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    sqlite.exec("alter table embedders drop column endpoint")
    sqlite.prepare("update meta set value = '13' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0014_space_endpoints'").run()
  })()
}

/**
 * Puts an open database back as schema 12 left it — no `forgotten_turns` — sets
 * `meta.schema_version` to 12 and forgets migration 0013, so the next open migrates the file again.
 */
export const rewindForgottenTurns = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindSpaceEndpoints(sqlite)
    sqlite.exec("drop table forgotten_turns")
    sqlite.prepare("update meta set value = '12' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0013_forgotten_turns'").run()
  })()
}

/**
 * Puts an open database back as schema 11 left it — no `turns_session_turn`, every turn row
 * counted in `sessions.turn_count` (a turn two files hold counted twice) — sets
 * `meta.schema_version` to 11 and forgets migration 0012, so the next open migrates the file again.
 */
export const rewindDistinctTurnCounts = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindForgottenTurns(sqlite)
    sqlite.exec("drop index turns_session_turn")
    sqlite.exec(
      "update sessions set turn_count = (select count(*) from turns t where t.session_row = sessions.id)",
    )
    sqlite.prepare("update meta set value = '11' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0012_distinct_turn_counts'").run()
  })()
}

/**
 * Puts an open database back as schema 10 left it — no `forgotten_sessions` (forgotten sessions
 * known only by their files' `forgotten` status) — sets `meta.schema_version` to 10 and forgets
 * migration 0011, so the next open migrates the file again.
 */
export const rewindForgottenSessions = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindDistinctTurnCounts(sqlite)
    sqlite.exec("drop table forgotten_sessions")
    sqlite.prepare("update meta set value = '10' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0011_forgotten_sessions'").run()
  })()
}

/**
 * Puts an open database back as schema 9 left it — no `files.parser_version` — sets
 * `meta.schema_version` to 9 and forgets migration 0010, so the next open migrates the file again.
 */
export const rewindParserVersions = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindForgottenSessions(sqlite)
    sqlite.exec("alter table files drop column parser_version")
    sqlite.prepare("update meta set value = '9' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0010_parser_versions'").run()
  })()
}

/**
 * Puts an open database back as schema 8 left it — no `files.skipped_lines` — sets
 * `meta.schema_version` to 8 and forgets migration 0009, so the next open migrates the file again.
 */
export const rewindSkippedLines = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindParserVersions(sqlite)
    sqlite.exec("alter table files drop column skipped_lines")
    sqlite.prepare("update meta set value = '8' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0009_skipped_lines'").run()
  })()
}

/**
 * Puts an open database back as schema 7 left it — no `lexical_backlog`, full-text triggers without
 * conditions (the backlog must be empty) — sets `meta.schema_version` to 7 and forgets migration
 * 0008, so the next open migrates the file again.
 */
export const rewindLexicalBacklog = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindSkippedLines(sqlite)
    sqlite.exec(`
      drop table lexical_backlog;
      drop trigger chunks_fts_insert;
      drop trigger chunks_fts_delete;
      drop trigger chunks_fts_update;
      create trigger chunks_fts_insert after insert on chunks begin
        insert into chunks_fts(rowid, text) values (new.id, baton_fts_text_5(new.text));
      end;
      create trigger chunks_fts_delete after delete on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.id, baton_fts_text_5(old.text));
      end;
      create trigger chunks_fts_update after update of text on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.id, baton_fts_text_5(old.text));
        insert into chunks_fts(rowid, text) values (new.id, baton_fts_text_5(new.text));
      end;
    `)
    sqlite.prepare("update meta set value = '7' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0008_lexical_backlog'").run()
  })()
}

/**
 * Puts an open database back as schema 6 left it — no stored chunk, record and vector counts
 * (columns and triggers dropped) — sets `meta.schema_version` to 6 and forgets migration 0007, so
 * the next open migrates the file again.
 */
export const rewindStoredCounts = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindLexicalBacklog(sqlite)
    sqlite.exec(`
      drop trigger vector_keys_count_insert;
      drop trigger vector_keys_count_delete;
      drop trigger files_writer_guard_insert;
      drop trigger files_writer_guard_update;
      drop trigger files_writer_guard_delete;
      alter table sessions drop column chunk_count;
      alter table sessions drop column raw_count;
      alter table embedders drop column vector_count;
    `)
    sqlite.prepare("update meta set value = '6' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0007_stored_counts'").run()
  })()
}

/**
 * Puts the content hashes of an open database back as schema 5 wrote them — the whole SHA-256 hex
 * of each chunk's text, in `chunks` and in `vector_keys` — sets `meta.schema_version` to 5 and
 * forgets migration 0006, so the next open migrates the file again.
 */
export const rewindContentHashes = (sqlite: RecallDatabaseShape["sqlite"]): void => {
  sqlite.transaction(() => {
    rewindStoredCounts(sqlite)
    // Each stored (short) key → the whole hash of its text.
    const whole = new Map<string, string>()
    const chunks = sqlite.prepare("select id, text, content_hash from chunks").all() as Array<{
      id: number
      text: string
      content_hash: string
    }>
    const lengthenChunk = sqlite.prepare("update chunks set content_hash = ? where id = ?")
    for (const c of chunks) {
      const hash = createHash("sha256").update(c.text).digest("hex")
      whole.set(c.content_hash, hash)
      lengthenChunk.run(hash, c.id)
    }
    const keys = sqlite.prepare("select id, content_hash from vector_keys").all() as Array<{
      id: number
      content_hash: string
    }>
    const lengthenKey = sqlite.prepare("update vector_keys set content_hash = ? where id = ?")
    for (const k of keys) lengthenKey.run(whole.get(k.content_hash) ?? k.content_hash, k.id)
    sqlite.prepare("update meta set value = '5' where key = 'schema_version'").run()
    sqlite.prepare("delete from kysely_migration where name = '0006_short_content_hashes'").run()
  })()
}

/** Runs one indexing pass. */
export const runIndex = (
  dataDir: string,
  options: IndexOptions,
  fsLayer?: Layer.Layer<TranscriptFileSystem>,
): Promise<IndexRunReport> => withIndex(dataDir, indexTranscripts(options), fsLayer)

/**
 * The fixture corpus of `seed` written to a temp home and indexed into a temp data directory;
 * `dispose` removes both.
 */
export const indexedFixture = async (seed: number) => {
  const home = tempDir("home")
  const data = tempDir("data")
  const corpus = generateFixtureCorpus({ seed, homeDir: home.path })
  writeTree(corpus.files)
  const environment = {
    env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
    homeDir: home.path,
  }
  const dataDir = join(data.path, "baton")
  const report = await runIndex(dataDir, { environment })
  const dispose = () => {
    home.dispose()
    data.dispose()
  }
  return { corpus, environment, dataDir, report, dispose }
}

/**
 * FTS5's own check of `chunks_fts` against the chunk rows (throws when they differ; so it also
 * throws while chunks wait in the lexical backlog), then the backlog's size.
 */
export const checkFullText = (dataDir: string): Promise<number> =>
  withSqlite(dataDir, (sqlite) => {
    sqlite.prepare("insert into chunks_fts(chunks_fts, rank) values ('integrity-check', 1)").run()
    return lexicalBacklogSize(sqlite)
  })

/** Every stored row that matters, without row ids, in a stable order. */
export const snapshot = (dataDir: string, words: ReadonlyArray<string> = []) =>
  withIndex(
    dataDir,
    Effect.gen(function* () {
      const db = yield* RecallDatabase
      const all = (sql: string) => db.sqlite.prepare(sql).all()
      const fts: Record<string, ReadonlyArray<string>> = {}
      for (const word of words) {
        fts[word] = (yield* matchChunks(word, { limit: 1000 }))
          .map((m) => `${m.sessionId}/${m.turnId}/${m.text.length}`)
          .sort()
      }
      return {
        files: all(
          "select path, source, status, indexed_offset, failure_count from files order by path",
        ),
        sessions: all(`select s.source, s.session_id, s.cwd, s.repo_root, s.title, s.first_prompt,
            s.started_at, s.ended_at, s.headless, s.subagent, s.parent_session_id, s.turn_count,
            s.last_activity, f.path from sessions s left join files f on f.id = s.file_id
            order by s.source, s.session_id`),
        turns: all(`select f.path, s.session_id, t.turn_id, t.ordinal, t.role, t.timestamp,
            t.start_offset, t.end_offset, t.sidechain, t.surface_count
            from turns t join sessions s on s.id = t.session_row left join files f on f.id = t.file_id
            order by f.path, t.ordinal`),
        rawRecords: all(`select f.path, t.ordinal, r.offset, r.length, r.record_type, r.kind,
            r.timestamp, r.text, r.truncated, r.skip_for_grep
            from raw_records r left join turns t on t.id = r.turn_row
            left join files f on f.id = r.file_id order by f.path, r.offset`),
        chunks: all(`select f.path, t.ordinal, c.surface_index, c.chunk_index, c.role,
            c.char_start, c.char_end, c.text, c.content_hash, c.needs_embedding
            from chunks c join turns t on t.id = c.turn_row left join files f on f.id = t.file_id
            order by f.path, t.ordinal, c.surface_index, c.chunk_index`),
        ftsRows: all("select count(*) as n from chunks_fts"),
        fts,
      }
    }),
  )

/**
 * The stored counts (schema 7) next to a recount of the rows, per session and per embedder (a
 * session's turns by distinct turn id, schema 12).
 */
export const storedAndRecounted = (dataDir: string) =>
  withSqlite(dataDir, (sqlite) => ({
    sessions: sqlite
      .prepare(
        `select s.session_id, s.turn_count, s.chunk_count, s.raw_count,
           (select count(distinct t.turn_id) from turns t where t.session_row = s.id) as turns,
           (select count(*) from turns t join chunks c on c.turn_row = t.id
             where t.session_row = s.id) as chunks,
           (select count(*) from raw_records r where r.session_row = s.id) as raws
         from sessions s order by s.source, s.session_id`,
      )
      .all() as Array<Record<string, number | string>>,
    embedders: sqlite
      .prepare(
        `select e.fingerprint, e.vector_count,
           (select count(*) from vector_keys k where k.fingerprint = e.fingerprint) as vectors
         from embedders e order by e.fingerprint`,
      )
      .all() as Array<Record<string, number | string>>,
    totals: sqlite
      .prepare(
        `select (select count(*) from sessions) as sessions,
           (select count(*) from (select distinct session_row, turn_id from turns)) as turns,
           (select count(*) from chunks) as chunks, (select count(*) from raw_records) as raws`,
      )
      .get() as { sessions: number; turns: number; chunks: number; raws: number },
  }))

/** Every stored count (schema 7) that differs from a recount, described; empty when all agree. */
export const storedCountMismatches = async (dataDir: string): Promise<Array<string>> => {
  const { sessions, embedders } = await storedAndRecounted(dataDir)
  return [
    ...sessions.flatMap((s) =>
      s.turn_count === s.turns && s.chunk_count === s.chunks && s.raw_count === s.raws
        ? []
        : [
            `session ${s.session_id}: stored ${s.turn_count}/${s.chunk_count}/${s.raw_count}, ` +
              `rows ${s.turns}/${s.chunks}/${s.raws} (turns/chunks/records)`,
          ],
    ),
    ...embedders.flatMap((e) =>
      e.vector_count === e.vectors
        ? []
        : [`embedder ${e.fingerprint}: stored ${e.vector_count}, rows ${e.vectors}`],
    ),
  ]
}

/** Row counts per table. */
export const counts = (dataDir: string) =>
  withIndex(
    dataDir,
    Effect.gen(function* () {
      const db = yield* RecallDatabase
      return db.sqlite
        .prepare(
          `select (select count(*) from files) as files, (select count(*) from sessions) as sessions,
            (select count(*) from turns) as turns, (select count(*) from raw_records) as raw,
            (select count(*) from chunks) as chunks,
            (select count(*) from chunks_fts where chunks_fts match '"frost" OR "retry"') as fts`,
        )
        .get() as Record<string, number>
    }),
  )

/** One session of {@link insertChunkRows}: a chunk (in its own assistant turn) per text. */
export interface SyntheticSession {
  readonly sessionId: string
  readonly repoRoot?: string
  readonly texts: ReadonlyArray<string>
}

/** Inserts `texts` as chunks of session row `sessionRow`, a turn each, ids from `firstId`. */
const chunkWriter = (s: RecallDatabaseShape["sqlite"]) => {
  const turn = s.prepare(
    "insert into turns (id, session_row, file_id, turn_id, ordinal, role, start_offset, end_offset) values (?, ?, 1, ?, ?, 'assistant', 0, 0)",
  )
  const chunk = s.prepare(
    "insert into chunks (turn_row, surface_index, chunk_index, role, char_start, char_end, text, content_hash, needs_embedding) values (?, 0, 0, 'assistant', 0, ?, ?, ?, 1)",
  )
  return (sessionRow: number, texts: ReadonlyArray<string>, firstId: number): number => {
    let id = firstId - 1
    for (const text of texts) {
      id += 1
      turn.run(id, sessionRow, `t${id}`, id)
      chunk.run(id, text.length, text, `h${id}`)
    }
    return id
  }
}

/**
 * Writes sessions of chunk rows straight into the index (one file row, a turn per chunk, every
 * chunk waiting for embedding), in one transaction: for tests of search over many chunks without
 * transcripts. Chunk ids run from 1 in the order given; content hashes are `h<id>`.
 */
export const insertChunkRows = (
  dataDir: string,
  sessions: ReadonlyArray<SyntheticSession>,
): Promise<void> =>
  withIndex(
    dataDir,
    RecallDatabase.use((db) =>
      Effect.sync(() => {
        const s = db.sqlite
        const session = s.prepare(
          "insert into sessions (id, source, session_id, file_id, cwd, repo_root) values (?, 'claude', ?, 1, ?, ?)",
        )
        const write = chunkWriter(s)
        s.transaction(() => {
          s.prepare(
            "insert into files (id, path, source, role, compression, size, mtime_ms, inode, head_hash, status) values (1, '/t.jsonl', 'claude', 'session', 'none', 0, 0, 0, '', 'indexed')",
          ).run()
          let last = 0
          sessions.forEach((spec, i) => {
            session.run(i + 1, spec.sessionId, spec.repoRoot ?? null, spec.repoRoot ?? null)
            last = write(i + 1, spec.texts, last + 1)
          })
        })()
      }),
    ),
  )

/**
 * Adds chunks to session row `sessionRow` of an index written by {@link insertChunkRows}, ids
 * following the last chunk's, in one transaction (through its own connection, as an indexer).
 */
export const appendChunkRows = (
  dataDir: string,
  sessionRow: number,
  texts: ReadonlyArray<string>,
): Promise<void> =>
  withSqlite(dataDir, (s) => {
    const last = (s.prepare("select max(id) from chunks").pluck().get() as number | null) ?? 0
    s.transaction(() => chunkWriter(s)(sessionRow, texts, last + 1))()
  })

/**
 * Embeds an index's backlog the product's way — the default (`auto`, from an empty environment)
 * picks its embedder from the index (USE-lite for a small history) — through `run` (which
 * provides the database): the embedding the index run and the search each resolved, and the
 * providers a search gets.
 */
export const embedLikeTheProduct = async (
  run: <A, E>(effect: Effect.Effect<A, E, RecallDatabase | IndexerProcess>) => Promise<A>,
): Promise<{
  readonly forIndex: ConfiguredEmbedding
  readonly forSearch: ConfiguredEmbedding
  readonly providers: RecallSearchProviders
}> => {
  const fromEnv = await Effect.runPromise(embedderFromEnvironment({}))
  const forIndex = await run(embeddingForIndex(fromEnv))
  if (forIndex.embedder !== undefined) {
    const embedded = await run(embedBacklog(forIndex.embedder))
    if (embedded.remaining !== 0) throw new Error(`${embedded.remaining} chunks left unembedded`)
  }
  const forSearch = await run(embeddingForSearch(fromEnv))
  return {
    forIndex,
    forSearch,
    providers: {
      embedder: forSearch.embedder,
      reranker: forSearch.reranker,
      expandQuery: forSearch.expandQuery,
      fusion: forSearch.fusion,
    },
  }
}

/** One Claude Code record for {@link claudeRecordWriter}. */
export interface ClaudeRecordSpec {
  readonly sessionId: string
  readonly cwd: string
  readonly type: "user" | "assistant"
  readonly text: string
  /** Set on a sidechain (subagent) record. */
  readonly agentId?: string | undefined
}

/**
 * A writer of Claude Code JSONL records (a prompt, or an assistant text answer), each a second
 * after the last from `start`, their uuids `00000000-0000-4000-<uuidGroup>-<n>` numbered in
 * writing order.
 */
export const claudeRecordWriter = (
  start: string,
  uuidGroup: string,
  version: string,
): ((record: ClaudeRecordSpec) => string) => {
  let clock = Date.parse(start)
  let uuids = 0
  return ({ sessionId, cwd, type, text, agentId }) => {
    clock += 1000
    uuids += 1
    return `${JSON.stringify({
      parentUuid: null,
      isSidechain: agentId !== undefined,
      ...(agentId !== undefined ? { agentId } : {}),
      userType: "external",
      cwd,
      sessionId,
      version,
      type,
      uuid: `00000000-0000-4000-${uuidGroup}-${String(uuids).padStart(12, "0")}`,
      timestamp: new Date(clock).toISOString(),
      message:
        type === "user"
          ? { role: "user", content: text }
          : {
              id: `msg_${uuids}`,
              role: "assistant",
              model: "claude",
              content: [{ type: "text", text }],
            },
    })}\n`
  }
}

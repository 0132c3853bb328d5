/**
 * Explicit index maintenance: `pruneDeleted` (drop history of transcripts that vanished from
 * disk, only when asked), `forgetSessions` (drop everything, one session, or one project, and keep
 * forgotten files from being re-indexed) and `indexStatus`. Guarantees: each operation is one
 * transaction; child rows go by cascade (turns → raw records, chunks → FTS rows); status reads
 * decode every row with effect/Schema.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Database } from "better-sqlite3"
import { statSync } from "node:fs"
import * as Clock from "effect/Clock"
import type { IndexBusyError, RecallStorageError } from "./errors.js"
import { acquireIndexLock, IndexerProcess } from "./index-lock.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import type { RecallDatabaseShape } from "./recall-database.js"
import { scopeClause } from "./recall-filters.js"
import { TRANSCRIPT_PARSER_VERSION } from "./transcript-parser.js"
import { decodeRows } from "./stored-rows.js"
import type { IndexRunReport, RunSkippedLines } from "./indexer.js"
import { addSkippedLines, decodeSkippedLines } from "./skipped-lines.js"
import type { SkippedLines } from "./skipped-lines.js"
import { databasePages } from "./index-vacuum.js"
import { lexicalBacklogSize } from "./lexical-backlog.js"
import { missingLookupIndexes } from "./lookup-indexes.js"
import {
  COUNTS_BY_SOURCE_SQL,
  makeFileRowsRemoval,
  SESSIONLESS_RECORDS_SQL,
} from "./session-counts.js"
import { dropUnreferencedVectors, dropVectorsOfGoneText, noteGoneText } from "./gone-vectors.js"

/** What a prune or forget removed. */
export interface RemovalCounts {
  readonly sessions: number
  readonly files: number
}

/**
 * Runs a write transaction announced to a running indexer (see
 * `RecallDatabaseShape.announceWriter`), so the indexer pauses between files and lets it in.
 */
const announced = <A>(db: RecallDatabaseShape, write: () => A): A => {
  const release = db.announceWriter()
  try {
    return write()
  } finally {
    release()
  }
}

/** Removes sessions (turns, records, chunks) whose transcript file vanished, and those file rows. */
export const pruneDeleted = (): Effect.Effect<RemovalCounts, RecallStorageError, RecallDatabase> =>
  RecallDatabase.use((db) =>
    Effect.try({
      try: () =>
        announced(db, () =>
          db.sqlite
            .transaction((): RemovalCounts => {
              const missing = "select id from files where status = 'missing'"
              // A session that also has turns in a present file keeps those turns' counts.
              makeFileRowsRemoval(db.sqlite, missing)()
              noteGoneText(
                db.sqlite,
                `turn_row in (select id from turns where file_id in (${missing}))`,
              )
              db.sqlite.prepare(`delete from turns where file_id in (${missing})`).run()
              // Records of turns went with them; these are the files' turn-less ones.
              db.sqlite
                .prepare(
                  `delete from raw_records where file_id in (${missing}) and turn_row is null`,
                )
                .run()
              const sessions = db.sqlite
                .prepare(
                  `delete from sessions where file_id in (${missing})
                   and not exists (select 1 from turns t where t.session_row = sessions.id)`,
                )
                .run().changes
              // A session that also has turns in a present file stays, pointed at that file.
              db.sqlite
                .prepare(
                  `update sessions set file_id = (select t.file_id from turns t
                   where t.session_row = sessions.id and t.file_id is not null limit 1)
                 where file_id in (${missing})`,
                )
                .run()
              const files = db.sqlite
                .prepare("delete from files where status = 'missing'")
                .run().changes
              dropVectorsOfGoneText(db.sqlite)
              return { sessions, files }
            })
            .immediate(),
        ),
      catch: storageFailure("write", db.path),
    }),
  )

/** Temp table of the session rows a forget removes. */
const FORGET_TARGETS = "temp.baton_forget_sessions"
/** Temp table of the turn rows, held by other sessions, that copy a forgotten turn. */
const FORGET_COPIES = "temp.baton_forget_copies"

/**
 * Forgets the sessions `whereSql` selects and their subagent sessions (rows whose
 * `parent_session_id` names one, at any depth), in the caller's transaction: records them in
 * `forgotten_sessions` and their turn ids in `forgotten_turns`, marks their files `forgotten`,
 * deletes the copies of their turns other sessions of the same source hold (a Claude Code fork's
 * history: the parent's records, uuids included, under the fork's id), recounts those sessions
 * and deletes the ones left with no turn, then deletes the sessions themselves. Notes the texts
 * it deletes ({@link noteGoneText}); the caller drops their vectors.
 */
const forgetTargets = (
  sqlite: Database,
  whereSql: string,
  args: ReadonlyArray<unknown>,
  now: number,
): RemovalCounts => {
  sqlite.exec(`create temp table if not exists baton_forget_sessions (id integer primary key);
    create temp table if not exists baton_forget_copies (id integer primary key);
    delete from ${FORGET_TARGETS}; delete from ${FORGET_COPIES};`)
  sqlite
    .prepare(`insert into ${FORGET_TARGETS} select id from sessions where ${whereSql}`)
    .run(...args)
  // Subagents of subagents too (Codex threads can nest): one pass per level.
  const subagents = sqlite.prepare(
    `insert or ignore into ${FORGET_TARGETS}
     select s.id from sessions s
      where s.parent_session_id is not null and s.id not in (select id from ${FORGET_TARGETS})
        and exists (select 1 from sessions p where p.source = s.source
                      and p.session_id = s.parent_session_id
                      and p.id in (select id from ${FORGET_TARGETS}))`,
  )
  while (subagents.run().changes > 0) {
    // Until a level adds none.
  }
  const targets = `select id from ${FORGET_TARGETS}`
  sqlite
    .prepare(
      `insert or replace into forgotten_sessions (source, session_id, forgotten_at)
       select source, session_id, ? from sessions where id in (${targets})`,
    )
    .run(now)
  sqlite
    .prepare(
      `insert or ignore into forgotten_turns (source, turn_id, forgotten_at)
       select distinct s.source, t.turn_id, ? from turns t join sessions s on s.id = t.session_row
        where t.session_row in (${targets})`,
    )
    .run(now)
  const files = sqlite
    .prepare(
      `update files set status = 'forgotten', resumable = 0, indexed_offset = 0
       where id in (select file_id from turns where session_row in (${targets})
                    union select file_id from sessions where id in (${targets}))`,
    )
    .run().changes
  sqlite
    .prepare(
      "delete from file_states where file_id in (select id from files where status = 'forgotten')",
    )
    .run()
  // The copies: other sessions' turns with a forgotten turn's id, in the same source.
  sqlite
    .prepare(
      `insert or ignore into ${FORGET_COPIES}
       select c.id from turns t
         join sessions ts on ts.id = t.session_row
         join turns c on c.turn_id = t.turn_id
         join sessions cs on cs.id = c.session_row and cs.source = ts.source
        where t.session_row in (${targets}) and c.session_row not in (${targets})`,
    )
    .run()
  const copies = `select id from ${FORGET_COPIES}`
  const holders = `select distinct session_row from turns where id in (${copies})`
  const copyHolders = sqlite.prepare(holders).pluck().all() as Array<number>
  noteGoneText(sqlite, `turn_row in (${copies})`)
  noteGoneText(sqlite, `turn_row in (select id from turns where session_row in (${targets}))`)
  // Turns take their raw records, chunks and FTS rows with them (cascade and triggers).
  sqlite.prepare(`delete from turns where id in (${copies})`).run()
  if (copyHolders.length > 0) recountSessions(sqlite, copyHolders)
  const sessions = sqlite.prepare(`delete from sessions where id in (${targets})`).run().changes
  sqlite.exec(`delete from ${FORGET_TARGETS}; delete from ${FORGET_COPIES};`)
  return { sessions, files }
}

/**
 * Recounts the sessions `ids` after some of their turns were deleted (the copies of forgotten
 * turns): turn, chunk and record counts and last activity from their rows, and the first prompt
 * from their first turn left with user text (it may have been a forgotten copy's). A session left
 * with no turn is deleted with its records: it held nothing but the forgotten copies (a fork made
 * with no prompt of its own yet); its own later turns make it again.
 */
const recountSessions = (sqlite: Database, ids: ReadonlyArray<number>): void => {
  const list = JSON.stringify(ids)
  sqlite
    .prepare(
      `update sessions set
         turn_count = (select count(distinct t.turn_id) from turns t where t.session_row = sessions.id),
         chunk_count = (select count(*) from turns t join chunks c on c.turn_row = t.id
                         where t.session_row = sessions.id),
         raw_count = (select count(*) from raw_records r where r.session_row = sessions.id),
         last_activity = coalesce((select max(t.timestamp) from turns t
                                    where t.session_row = sessions.id), ended_at),
         first_prompt = (select substr(c.text, 1, 300) from turns t
                           join chunks c on c.turn_row = t.id and c.role = 'user'
                          where t.session_row = sessions.id
                          order by t.timestamp is null, t.timestamp, t.file_id, t.ordinal,
                                   c.surface_index, c.chunk_index
                          limit 1)
       where id in (select value from json_each(?))`,
    )
    .run(list)
  sqlite
    .prepare(
      `delete from sessions where id in (select value from json_each(?))
         and not exists (select 1 from turns t where t.session_row = sessions.id)`,
    )
    .run(list)
}

/** What to forget: everything, one session, or every session of a repository root. */
export type ForgetTarget =
  | { readonly _tag: "All" }
  | { readonly _tag: "Session"; readonly sessionId: string; readonly source?: "claude" | "codex" }
  | { readonly _tag: "Project"; readonly repoRoot: string; readonly source?: "claude" | "codex" }

/**
 * Lock lease of `forget --all`: one transaction, so the lease only has to outlast it. Held so an
 * index run cannot be midway through writing files it planned before the index was emptied (it
 * would put them back while `forget` reported an empty index).
 */
const FORGET_ALL_LEASE_MS = 10 * 60 * 1000

/**
 * Removes the target's rows. `All` empties the index (the next run re-indexes what is on disk,
 * previously forgotten sessions included) and refuses with {@link IndexBusyError} while an index
 * run holds the lock; `Session` / `Project` also record the sessions in `forgotten_sessions` and
 * mark their files `forgotten`, so no later run writes their text again — not from the same file,
 * nor from a moved, grown or copied one.
 */
export const forgetSessions = (
  target: ForgetTarget,
): Effect.Effect<
  RemovalCounts,
  RecallStorageError | IndexBusyError,
  RecallDatabase | IndexerProcess
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const now = yield* Clock.currentTimeMillis
    if (target._tag === "All") {
      const host = yield* IndexerProcess
      const lease = yield* acquireIndexLock(db.sqlite, db.path, host, now, FORGET_ALL_LEASE_MS)
      return yield* Effect.try({
        try: () =>
          announced(db, () =>
            db.sqlite
              .transaction((): RemovalCounts => {
                const sessions = db.sqlite.prepare("delete from sessions").run().changes
                const files = db.sqlite.prepare("delete from files").run().changes
                db.sqlite.prepare("delete from raw_records").run()
                db.sqlite.prepare("delete from forgotten_sessions").run()
                db.sqlite.prepare("delete from forgotten_turns").run()
                dropUnreferencedVectors(db.sqlite)
                return { sessions, files }
              })
              .immediate(),
          ),
        catch: storageFailure("write", db.path),
      }).pipe(Effect.ensuring(lease.release))
    }
    return yield* Effect.try({
      try: () =>
        announced(db, () =>
          db.sqlite
            .transaction((): RemovalCounts => {
              const where =
                target._tag === "Session"
                  ? target.source === undefined
                    ? {
                        sql: "(session_id = ? or parent_session_id = ?)",
                        args: [target.sessionId, target.sessionId],
                      }
                    : {
                        sql: "(session_id = ? or parent_session_id = ?) and source = ?",
                        args: [target.sessionId, target.sessionId, target.source],
                      }
                  : {
                      sql: `(${scopeClause("", target.repoRoot).sql})${target.source === undefined ? "" : " and source = ?"}`,
                      args: [
                        ...scopeClause("", target.repoRoot).args,
                        ...(target.source === undefined ? [] : [target.source]),
                      ],
                    }
              const removed = forgetTargets(db.sqlite, where.sql, where.args, now)
              dropVectorsOfGoneText(db.sqlite)
              return removed
            })
            .immediate(),
        ),
      catch: storageFailure("write", db.path),
    })
  })

/** A file the indexer gave up on. */
export interface QuarantinedFile {
  readonly path: string
  readonly failures: number
  readonly lastError: string | null
}

/** At most this many failing files are listed (`IndexStatus.failing`); all are counted. */
export const FAILING_FILES_LISTED = 20

/** At most this many files with skipped lines are listed (`IndexStatus.skippedLines.listed`). */
export const SKIPPED_FILES_LISTED = 10

/** A file with lines the parser skipped. */
export interface FileSkippedLines {
  readonly path: string
  readonly skipped: SkippedLines
}

/** The skipped lines of every file the index keeps rows of, summed, and the files with most. */
export interface IndexSkippedLines extends RunSkippedLines {
  /** The {@link SKIPPED_FILES_LISTED} files with most skipped lines, most first. */
  readonly listed: ReadonlyArray<FileSkippedLines>
}

/** The index at a glance. */
export interface IndexStatus {
  readonly files: number
  readonly sessions: number
  readonly turns: number
  readonly rawRecords: number
  readonly chunks: number
  readonly embeddingBacklog: number
  /** Files no longer on disk whose history is still kept (until `pruneDeleted`). */
  readonly missingFiles: number
  readonly retainedSessions: number
  readonly failingFiles: number
  /**
   * Transcript files left out on purpose: their sessions were forgotten (`forgetSessions`), so
   * index runs skip them.
   */
  readonly forgottenFiles: number
  /**
   * The failing files (retried next run; quarantined after repeated failures) with their last
   * error, by path: the first {@link FAILING_FILES_LISTED} of `failingFiles`.
   */
  readonly failing: ReadonlyArray<QuarantinedFile>
  readonly quarantined: ReadonlyArray<QuarantinedFile>
  readonly lastRun: IndexRunReport | null
  /** Database + WAL bytes on disk. */
  readonly dbBytes: number
  /**
   * Bytes of free pages inside the database file (what forget, prune or the int8 conversion
   * freed): later writes reuse them, `vacuumIndex` gives them back to the disk.
   */
  readonly freeBytes: number
  /** Newest turn timestamp in the index (ISO-8601), the freshness signal. */
  readonly newestActivity: string | null
  /** How long ago the last run finished, in ms, against `now`. */
  readonly lastRunAgeMs: number | null
  /**
   * Lookup indexes absent (`lookup-indexes.ts`): deferred by a running indexer, or left to the
   * next run by one that stopped early. Searches are right without them, only slower.
   */
  readonly missingLookupIndexes: ReadonlyArray<string>
  /**
   * Chunks not yet in the full-text index (`lexical-backlog.ts`): left out by a running bulk
   * indexer until its end, or by one that stopped early until the next run. Meanwhile the
   * lexical arm does not find their words; the vector arm, grep and navigation are unaffected.
   */
  readonly lexicalBacklog: number
  /**
   * Lines of the indexed transcripts the parsers could not use (`skipped-lines.ts`): not JSON,
   * not a record, or a record type this version does not know; null when none. Forgotten files
   * are not counted.
   */
  readonly skippedLines: IndexSkippedLines | null
  /**
   * Indexed transcripts an older version's parser read (`TRANSCRIPT_PARSER_VERSION`, after an
   * update): the next index run reads them again whole; until then their rows are as that
   * version made them (e.g. grep still finds what the new parser skips).
   */
  readonly olderParserFiles: number
}

const Counts = Schema.Struct({
  files: Schema.Number,
  sessions: Schema.Number,
  turns: Schema.Number,
  raw_records: Schema.Number,
  chunks: Schema.Number,
  backlog: Schema.Number,
  missing: Schema.Number,
  retained: Schema.Number,
  failing: Schema.Number,
  forgotten: Schema.Number,
  older_parser: Schema.Number,
  newest: Schema.NullOr(Schema.String),
})

const QuarantinedRows = Schema.Array(
  Schema.Struct({
    path: Schema.String,
    failure_count: Schema.Number,
    last_error: Schema.NullOr(Schema.String),
  }),
)

const LastRun = Schema.Struct({
  startedAt: Schema.Number,
  finishedAt: Schema.Number,
  discovered: Schema.Number,
  unchanged: Schema.Number,
  indexedNew: Schema.Number,
  appended: Schema.Number,
  rewritten: Schema.Number,
  // Reports stored before schema 10 have none.
  reparsed: Schema.Number.pipe(Schema.withDecodingDefaultKey(Effect.succeed(0))),
  moved: Schema.Number,
  markedMissing: Schema.Number,
  skippedQuarantined: Schema.Number,
  skippedForgotten: Schema.Number,
  failed: Schema.Array(
    Schema.Struct({
      path: Schema.String,
      error: Schema.String,
      failures: Schema.Number,
      quarantined: Schema.Boolean,
    }),
  ),
  turnsAdded: Schema.Number,
  chunksAdded: Schema.Number,
  rawRecordsAdded: Schema.Number,
  bytesRead: Schema.Number,
  embeddingBacklog: Schema.Number,
  missingRoots: Schema.Array(Schema.String),
  problems: Schema.Array(Schema.Struct({ path: Schema.String, code: Schema.String })),
  // Reports stored before schema 9 have none.
  skippedLines: Schema.NullOr(
    Schema.Struct({
      files: Schema.Number,
      lines: Schema.Number,
      malformed: Schema.Number,
      invalid: Schema.Number,
      unknownTypes: Schema.Record(Schema.String, Schema.Number),
    }),
  ).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null))),
})

const LastRunRow = Schema.NullOr(Schema.Struct({ value: Schema.fromJsonString(LastRun) }))

const fileBytes = (path: string): number => {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

const fileFailure = (row: (typeof QuarantinedRows.Type)[number]): QuarantinedFile => ({
  path: row.path,
  failures: row.failure_count,
  lastError: row.last_error,
})

/** Counts, quarantined files, last run, database size and freshness, as of `now` (epoch ms). */
export const indexStatus = (
  now: number,
): Effect.Effect<IndexStatus, RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const read = <A>(f: () => A) => Effect.try({ try: f, catch: storageFailure("read", db.path) })
    const counts = yield* decodeRows(
      Counts,
      db.path,
      yield* read(() =>
        db.sqlite
          .prepare(
            `with stored as (
               select coalesce(sum(sessions), 0) as sessions, coalesce(sum(turns), 0) as turns,
                      coalesce(sum(chunks), 0) as chunks, coalesce(sum(raw_records), 0) as raw_records
                 from (${COUNTS_BY_SOURCE_SQL}))
             select
              (select count(*) from files) as files,
              (select sessions from stored) as sessions,
              (select turns from stored) as turns,
              (select raw_records from stored) + (${SESSIONLESS_RECORDS_SQL}) as raw_records,
              (select chunks from stored) as chunks,
              (select count(*) from chunks where needs_embedding = 1) as backlog,
              (select count(*) from files where status = 'missing') as missing,
              (select count(*) from sessions s join files f on f.id = s.file_id
                 where f.status = 'missing') as retained,
              (select count(*) from files where status = 'failed') as failing,
              (select count(*) from files where status = 'forgotten') as forgotten,
              (select count(*) from files where status = 'indexed' and resumable = 1
                 and parser_version < ?) as older_parser,
              (select max(timestamp) from turns) as newest`,
          )
          .get(TRANSCRIPT_PARSER_VERSION),
      ),
    )
    // Files of one status with their failures, by path (`limit` -1: all of them).
    const filesWith = (status: "failed" | "quarantined", limit: number) =>
      Effect.flatMap(
        read(() =>
          db.sqlite
            .prepare(
              "select path, failure_count, last_error from files where status = ? order by path limit ?",
            )
            .all(status, limit),
        ),
        (rows) => decodeRows(QuarantinedRows, db.path, rows),
      ).pipe(Effect.map((rows) => rows.map(fileFailure)))
    const quarantined = yield* filesWith("quarantined", -1)
    const failing = yield* filesWith("failed", FAILING_FILES_LISTED)
    const lastRunRow = yield* decodeRows(
      LastRunRow,
      db.path,
      (yield* read(() =>
        db.sqlite.prepare("select value from meta where key = 'last_run'").get(),
      )) ?? null,
    )
    const lastRun: IndexRunReport | null = lastRunRow === null ? null : lastRunRow.value
    const missingIndexes = yield* read(() => missingLookupIndexes(db.sqlite))
    const lexicalBacklog = yield* read(() => lexicalBacklogSize(db.sqlite))
    const freeBytes = yield* read(() => databasePages(db.sqlite).free)
    const skippedLines = yield* read(() =>
      summedSkippedLines(
        db.sqlite
          .prepare(
            "select path, skipped_lines from files where skipped_lines is not null and status <> 'forgotten'",
          )
          .all() as ReadonlyArray<{ path: string; skipped_lines: string }>,
      ),
    )
    return {
      files: counts.files,
      sessions: counts.sessions,
      turns: counts.turns,
      rawRecords: counts.raw_records,
      chunks: counts.chunks,
      embeddingBacklog: counts.backlog,
      missingFiles: counts.missing,
      retainedSessions: counts.retained,
      failingFiles: counts.failing,
      forgottenFiles: counts.forgotten,
      olderParserFiles: counts.older_parser,
      failing,
      quarantined,
      lastRun,
      dbBytes: fileBytes(db.path) + fileBytes(`${db.path}-wal`),
      freeBytes,
      newestActivity: counts.newest,
      lastRunAgeMs: lastRun === null ? null : Math.max(0, now - lastRun.finishedAt),
      missingLookupIndexes: missingIndexes,
      lexicalBacklog,
      skippedLines,
    }
  })

/** Sums the files' stored skipped lines and lists those with most. */
const summedSkippedLines = (
  rows: ReadonlyArray<{ path: string; skipped_lines: string }>,
): IndexSkippedLines | null => {
  let total: SkippedLines | undefined
  const files: Array<FileSkippedLines> = []
  for (const row of rows) {
    const skipped = decodeSkippedLines(row.skipped_lines)
    if (skipped === undefined) continue
    total = addSkippedLines(total, skipped)
    files.push({ path: row.path, skipped })
  }
  if (total === undefined) return null
  files.sort((a, b) => b.skipped.lines - a.skipped.lines || (a.path < b.path ? -1 : 1))
  return { files: files.length, ...total, listed: files.slice(0, SKIPPED_FILES_LISTED) }
}

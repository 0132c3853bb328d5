/**
 * The recall index schema: Kysely table types and the in-code migrations the `Migrator` runs.
 * Guarantees: migrations only ever append (never edit a shipped one); every child row cascades
 * from its turn or session, so deleting a session or a file's turns leaves no orphan; the FTS
 * index is external-content over `chunks` and kept in step by triggers (rowid = chunk id), which
 * index CJK text as bigrams and identifiers with their words through a function every connection
 * registers ({@link registerRecallFunctions}).
 */
import type { Database } from "better-sqlite3"
import type { Generated, Kysely, Migration, MigrationProvider } from "kysely"
import {
  FTS_TEXT_FUNCTION,
  ftsText,
  SCHEMA_4_FTS_TEXT_FUNCTION,
  schema4FtsText,
} from "./fts-text.js"

/**
 * Kysely's `sql` tag, loaded when a migration runs: this module's constants and types are read on
 * every open, and Kysely's ~260 ES modules cost ~0.2 s to load in a short-lived CLI call.
 */
const sqlTag = async () => (await import("kysely")).sql

/**
 * Hex characters of a chunk text's SHA-256 kept as its `content_hash` (schema 6; the whole 64
 * before): 64 bits. Two distinct texts share a key with probability ~n²/2⁶⁵ — about 3·10⁻⁸ for a
 * million chunks — and the key and its index are written for every chunk, so the shorter key
 * writes ~12 % fewer bytes per indexed transcript byte.
 */
export const CONTENT_HASH_CHARS = 16

/** Schema version written to `meta.schema_version` by the latest migration. */
export const RECALL_SCHEMA_VERSION = 14

/** FTS5 tokenizer of `chunks_fts` (see README "Decisions" for the measurement). */
export const FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

/** Lifecycle of a transcript file row. */
export type FileStatus = "indexed" | "failed" | "quarantined" | "missing" | "forgotten"

/** `files`: one row per transcript path ever indexed. */
export interface FilesTable {
  readonly id: Generated<number>
  readonly path: string
  readonly source: string
  readonly role: string
  readonly compression: string
  readonly size: number
  readonly mtime_ms: number
  readonly inode: number
  readonly head_hash: string
  readonly indexed_offset: number
  /** 1 when `file_states` holds the parse state an append resumes from. */
  readonly resumable: Generated<number>
  readonly status: FileStatus
  readonly failure_count: number
  readonly failed_signature: string | null
  readonly last_error: string | null
  readonly indexed_at: number | null
  /**
   * Lines of the indexed bytes the parser skipped, as JSON {@link SkippedLinesJson} (schema 9);
   * null when none.
   */
  readonly skipped_lines: Generated<string | null>
  /**
   * The `TRANSCRIPT_PARSER_VERSION` that parsed the indexed bytes (schema 10; rows of
   * earlier schemas are 1). A file parsed by an older parser is read again whole.
   */
  readonly parser_version: Generated<number>
}

/**
 * `file_states`: the parse state of a file an append resumes from (JSON, ~0.5–1 KB). Kept out of
 * `files` so the full scan every index run makes of `files` reads small rows.
 */
export interface FileStatesTable {
  readonly file_id: number
  readonly parse_state: string
}

/** `sessions`: one row per (source, session id). */
export interface SessionsTable {
  readonly id: Generated<number>
  readonly source: string
  readonly session_id: string
  readonly file_id: number | null
  readonly cwd: string | null
  readonly repo_root: string | null
  /** How `repo_root` was found: `git` files, the session's `remote`, `path` rules; null: not yet. */
  readonly repo_root_from: string | null
  /** Codex `git.repository_url`, keyed by `repositoryUrlKey`. */
  readonly repository_url: string | null
  readonly git_branch: string | null
  readonly title: string | null
  readonly first_prompt: string | null
  readonly originator: string | null
  readonly started_at: string | null
  readonly ended_at: string | null
  readonly headless: number
  readonly subagent: number
  readonly parent_session_id: string | null
  readonly forked_from: string | null
  readonly turn_count: number
  /** Chunks of the session's turns (schema 7; see `session-counts.ts`). */
  readonly chunk_count: Generated<number>
  /** Raw records stored with the session (schema 7). */
  readonly raw_count: Generated<number>
  readonly last_activity: string | null
}

/** `turns`: conversational turns, ordered by `ordinal` within their file. */
export interface TurnsTable {
  readonly id: Generated<number>
  readonly session_row: number
  readonly file_id: number | null
  readonly turn_id: string
  readonly ordinal: number
  readonly role: string
  readonly timestamp: string | null
  readonly start_offset: number
  readonly end_offset: number
  readonly sidechain: number
  readonly surface_count: number
}

/** `raw_records`: every decoded line (rendered, masked); `turn_row` null for a file preamble. */
export interface RawRecordsTable {
  readonly id: Generated<number>
  readonly turn_row: number | null
  readonly session_row: number | null
  readonly file_id: number | null
  readonly offset: number
  readonly length: number
  readonly record_type: string
  readonly kind: string
  readonly timestamp: string | null
  readonly text: string
  readonly truncated: number
  readonly skip_for_grep: number
}

/** `chunks`: embeddable windows of surface text. */
export interface ChunksTable {
  readonly id: Generated<number>
  readonly turn_row: number
  readonly surface_index: number
  readonly chunk_index: number
  readonly role: string
  readonly char_start: number
  readonly char_end: number
  readonly text: string
  /**
   * The text's key for vectors and de-duplication: {@link CONTENT_HASH_CHARS} hex characters of
   * its SHA-256.
   */
  readonly content_hash: string
  readonly needs_embedding: number
}

/** `embedders`: one row per embedder fingerprint with its lazily created vec0 table. */
export interface EmbeddersTable {
  readonly fingerprint: string
  readonly dim: number
  readonly vec_table: string
  readonly created_at: number
  /** Rows of `vector_keys` under this fingerprint, kept by triggers (schema 7). */
  readonly vector_count: Generated<number>
  /**
   * The endpoint the space's vectors come from (origin and path, never a key, query or user
   * name), for an embedder that names one (an OpenAI-compatible server); null: none, or a
   * space made before schema 14 (the next run adopts the endpoint it embeds with).
   */
  readonly endpoint: string | null
}

/** `vector_keys`: (embedder, content hash) → rowid of the vector in that embedder's vec0 table. */
export interface VectorKeysTable {
  readonly id: Generated<number>
  readonly fingerprint: string
  readonly content_hash: string
}

/** `meta`: key/value facts about the index (schema version, embedder, last run). */
export interface MetaTable {
  readonly key: string
  readonly value: string
}

/** `index_lock`: at most one row, the indexer currently holding the lease. */
export interface IndexLockTable {
  readonly id: number
  readonly pid: number
  readonly run_token: string
  readonly acquired_at: number
  readonly lease_until: number
}

/**
 * `lexical_backlog`: at most one row, present while a bulk indexing run defers filling
 * `chunks_fts` (`lexical-backlog.ts`): chunks with an id above `above` are not in it yet.
 */
export interface LexicalBacklogTable {
  readonly id: number
  readonly above: number
}

/**
 * `forgotten_sessions`: every session `recall forget` removed (by session or by project), so an
 * index run never writes its text again, whichever file carries it.
 */
export interface ForgottenSessionsTable {
  readonly source: string
  readonly session_id: string
  /** Epoch ms; null for sessions forgotten before schema 11 (found from their file names). */
  readonly forgotten_at: number | null
}

/**
 * `forgotten_turns`: the turn ids of every session `recall forget` removed (schema 13). Claude Code
 * copies a session's records, ids included, into a `--fork-session` fork under the fork's session
 * id, so a forgotten session's text also lives on under other sessions: no index run writes a turn
 * with one of these ids again, whichever session or file carries it.
 */
export interface ForgottenTurnsTable {
  readonly source: string
  readonly turn_id: string
  /** Epoch ms. */
  readonly forgotten_at: number
}

/** Every table Kysely sees. */
export interface RecallTables {
  readonly files: FilesTable
  readonly file_states: FileStatesTable
  readonly sessions: SessionsTable
  readonly turns: TurnsTable
  readonly raw_records: RawRecordsTable
  readonly chunks: ChunksTable
  readonly embedders: EmbeddersTable
  readonly vector_keys: VectorKeysTable
  readonly meta: MetaTable
  readonly index_lock: IndexLockTable
  readonly lexical_backlog: LexicalBacklogTable
  readonly forgotten_sessions: ForgottenSessionsTable
  readonly forgotten_turns: ForgottenTurnsTable
}

const initial: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    const sql = await sqlTag()
    const statements = [
      `create table meta (key text primary key, value text not null) strict`,
      `create table files (
        id integer primary key,
        path text not null unique,
        source text not null,
        role text not null,
        compression text not null,
        size integer not null,
        mtime_ms real not null,
        inode integer not null,
        head_hash text not null,
        indexed_offset integer not null default 0,
        parse_state text,
        status text not null,
        failure_count integer not null default 0,
        failed_signature text,
        last_error text,
        indexed_at integer
      ) strict`,
      `create index files_head_hash on files(head_hash)`,
      `create table sessions (
        id integer primary key,
        source text not null,
        session_id text not null,
        file_id integer references files(id) on delete set null,
        cwd text,
        repo_root text,
        git_branch text,
        title text,
        first_prompt text,
        originator text,
        started_at text,
        ended_at text,
        headless integer not null default 0,
        subagent integer not null default 0,
        parent_session_id text,
        forked_from text,
        turn_count integer not null default 0,
        last_activity text,
        unique (source, session_id)
      ) strict`,
      `create index sessions_file on sessions(file_id)`,
      `create index sessions_repo_root on sessions(repo_root)`,
      `create index sessions_last_activity on sessions(last_activity)`,
      `create table turns (
        id integer primary key,
        session_row integer not null references sessions(id) on delete cascade,
        file_id integer references files(id) on delete set null,
        turn_id text not null,
        ordinal integer not null,
        role text not null,
        timestamp text,
        start_offset integer not null,
        end_offset integer not null,
        sidechain integer not null default 0,
        surface_count integer not null default 0
      ) strict`,
      `create index turns_file_ordinal on turns(file_id, ordinal)`,
      `create index turns_session_ordinal on turns(session_row, ordinal)`,
      `create index turns_turn_id on turns(turn_id)`,
      `create index turns_timestamp on turns(timestamp)`,
      `create table raw_records (
        id integer primary key,
        turn_row integer references turns(id) on delete cascade,
        session_row integer references sessions(id) on delete cascade,
        file_id integer references files(id) on delete set null,
        offset integer not null,
        length integer not null,
        record_type text not null,
        kind text not null,
        timestamp text,
        text text not null,
        truncated integer not null default 0,
        skip_for_grep integer not null default 0
      ) strict`,
      `create index raw_records_turn on raw_records(turn_row)`,
      `create index raw_records_session on raw_records(session_row)`,
      `create index raw_records_preamble on raw_records(file_id) where turn_row is null`,
      `create table chunks (
        id integer primary key,
        turn_row integer not null references turns(id) on delete cascade,
        surface_index integer not null,
        chunk_index integer not null,
        role text not null,
        char_start integer not null,
        char_end integer not null,
        text text not null,
        content_hash text not null,
        needs_embedding integer not null default 1
      ) strict`,
      `create index chunks_turn on chunks(turn_row)`,
      `create index chunks_content_hash on chunks(content_hash)`,
      `create index chunks_backlog on chunks(needs_embedding) where needs_embedding = 1`,
      `create virtual table chunks_fts using fts5(
        text, content='chunks', content_rowid='id', tokenize='${FTS_TOKENIZER}'
      )`,
      `create trigger chunks_fts_insert after insert on chunks begin
        insert into chunks_fts(rowid, text) values (new.id, new.text);
      end`,
      `create trigger chunks_fts_delete after delete on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.id, old.text);
      end`,
      `create trigger chunks_fts_update after update of text on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.id, old.text);
        insert into chunks_fts(rowid, text) values (new.id, new.text);
      end`,
      `create table embedders (
        fingerprint text primary key,
        dim integer not null,
        vec_table text not null unique,
        created_at integer not null
      ) strict`,
      `create table vector_keys (
        id integer primary key,
        fingerprint text not null references embedders(fingerprint) on delete cascade,
        content_hash text not null,
        unique (fingerprint, content_hash)
      ) strict`,
      `create table index_lock (
        id integer primary key check (id = 1),
        pid integer not null,
        run_token text not null,
        acquired_at integer not null,
        lease_until integer not null
      ) strict`,
      `insert into meta(key, value) values ('schema_version', '1')`,
    ]
    for (const statement of statements) await sql.raw(statement).execute(db)
  },
}

/** The `meta.schema_version` a migration finds (0 when unset). */
const schemaVersionIn = async (db: Kysely<unknown>): Promise<number> => {
  const sql = await sqlTag()
  const version = await sql<{
    value: string
  }>`select value from meta where key = 'schema_version'`.execute(db)
  return Number(version.rows[0]?.value ?? 0)
}

/**
 * Runs `statements` in one `BEGIN IMMEDIATE` transaction (Kysely runs SQLite migrations outside
 * one), then `check` before the commit; rolls back on any failure.
 */
const inOwnTransaction = async (
  db: Kysely<unknown>,
  statements: ReadonlyArray<string>,
  check: () => Promise<void> = () => Promise.resolve(),
): Promise<void> => {
  const sql = await sqlTag()
  const run = (statement: string) => sql.raw(statement).execute(db)
  await run("begin immediate")
  try {
    for (const statement of statements) await run(statement)
    await check()
    await run("commit")
  } catch (error) {
    await run("rollback")
    throw error
  }
}

/**
 * Moves `files.parse_state` into `file_states` and keeps a `resumable` flag in `files`: every
 * index run reads all of `files`, and the parse states made its rows ~1 KB — 10 MB of pages for
 * 10 000 files, most of a cold no-change rescan's database reads. `files` is rebuilt (SQLite's
 * documented new-table, copy, drop, rename procedure) because dropping the column in place leaves
 * every page as large as before. Kysely runs SQLite migrations outside a transaction, so this one
 * opens its own ({@link inOwnTransaction}), with foreign keys off around it (SQLite only allows switching them outside a
 * transaction, and the drop must not cascade) and checked before it commits.
 */
const fileStates: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    const sql = await sqlTag()
    const run = (statement: string) => sql.raw(statement).execute(db)
    // Committed by an earlier attempt that died before Kysely recorded the migration.
    if ((await schemaVersionIn(db)) >= 2) return
    const statements = [
      `create table file_states (
        file_id integer primary key references files(id) on delete cascade,
        parse_state text not null
      ) strict`,
      `insert into file_states (file_id, parse_state)
        select id, parse_state from files where parse_state is not null`,
      `create table files_v2 (
        id integer primary key,
        path text not null unique,
        source text not null,
        role text not null,
        compression text not null,
        size integer not null,
        mtime_ms real not null,
        inode integer not null,
        head_hash text not null,
        indexed_offset integer not null default 0,
        resumable integer not null default 0,
        status text not null,
        failure_count integer not null default 0,
        failed_signature text,
        last_error text,
        indexed_at integer
      ) strict`,
      `insert into files_v2 (id, path, source, role, compression, size, mtime_ms, inode,
          head_hash, indexed_offset, resumable, status, failure_count, failed_signature,
          last_error, indexed_at)
        select id, path, source, role, compression, size, mtime_ms, inode, head_hash,
          indexed_offset, parse_state is not null, status, failure_count, failed_signature,
          last_error, indexed_at
        from files`,
      `drop table files`,
      `alter table files_v2 rename to files`,
      `create index files_head_hash on files(head_hash)`,
      `update meta set value = '2' where key = 'schema_version'`,
    ]
    await run("pragma foreign_keys = off")
    try {
      await inOwnTransaction(db, statements, async () => {
        const broken = await sql.raw("pragma foreign_key_check").execute(db)
        if (broken.rows.length > 0)
          throw new Error(
            `foreign keys broken by the files rebuild: ${JSON.stringify(broken.rows)}`,
          )
      })
    } finally {
      await run("pragma foreign_keys = on")
    }
  },
}

/**
 * Repository identity (reference item 21): how each session's `repo_root` was found, and the
 * Codex remote that finds it again once a worktree is deleted. Existing rows keep their string-rule
 * root with `repo_root_from` null, which the next index run with git access resolves.
 */
const repositoryIdentity: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    const sql = await sqlTag()
    const run = (statement: string) => sql.raw(statement).execute(db)
    const columns = await sql<{
      name: string
    }>`select name from pragma_table_info('sessions')`.execute(db)
    const have = new Set(columns.rows.map((r) => r.name))
    if (!have.has("repo_root_from"))
      await run("alter table sessions add column repo_root_from text")
    if (!have.has("repository_url"))
      await run("alter table sessions add column repository_url text")
    await run("create index if not exists sessions_repository_url on sessions(repository_url)")
    await run("update meta set value = '3' where key = 'schema_version'")
  },
}

/**
 * The SQL function schema 7's triggers on `files` call (it does nothing): every index write,
 * prune and forget changes `files`, and a connection of an earlier version — which would not keep
 * the stored counts — lacks it, so its writes fail instead of leaving the counts wrong.
 */
export const WRITER_GUARD_FUNCTION = "baton_writer_7"

/**
 * Registers the SQL functions the schema's triggers and migrations call on `sqlite`
 * (`openRecallDatabase` does, before migrating): {@link FTS_TEXT_FUNCTION}, the text `chunks_fts`
 * indexes for a chunk, {@link SCHEMA_4_FTS_TEXT_FUNCTION}, what schema 4 indexed, and
 * {@link WRITER_GUARD_FUNCTION}. A connection without them cannot insert or delete chunks or
 * change `files`.
 */
export const registerRecallFunctions = (sqlite: Database): void => {
  const textOnly = (f: (text: string) => string) => (text: unknown) =>
    typeof text === "string" ? f(text) : text
  sqlite.function(FTS_TEXT_FUNCTION, { deterministic: true }, textOnly(ftsText))
  sqlite.function(SCHEMA_4_FTS_TEXT_FUNCTION, { deterministic: true }, textOnly(schema4FtsText))
  sqlite.function(WRITER_GUARD_FUNCTION, { deterministic: true }, () => null)
}

/**
 * What schema 4's `chunks_fts` indexed for the chunk text `column` (`new.text`, `old.text`,
 * `text`): ASCII text (as many characters as bytes: a C loop, no call into JavaScript) as it is,
 * other text through {@link SCHEMA_4_FTS_TEXT_FUNCTION}, which changes only text holding CJK runs.
 * A `glob` over the CJK ranges here cost 16 % of a surface-heavy index run; this costs about
 * nothing. Migration 0004 writes it; 0005 replaces it.
 */
const schema4IndexedText = (column: string) =>
  `case when length(${column}) = octet_length(${column}) then ${column} else ${SCHEMA_4_FTS_TEXT_FUNCTION}(${column}) end`

/**
 * CJK text as bigrams in the lexical index (see `cjk-text.ts`): the triggers index
 * {@link schema4IndexedText} instead of the text itself, and chunks already indexed that hold CJK text
 * are taken out of `chunks_fts` with the text they were indexed with and put back as bigrams.
 * Other chunks index exactly as before. One transaction, so an interrupted run changes nothing.
 */
const cjkBigrams: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 4) return
    await inOwnTransaction(db, [
      `drop trigger chunks_fts_insert`,
      `drop trigger chunks_fts_delete`,
      `drop trigger chunks_fts_update`,
      // The chunks whose indexed text changes: not ASCII (a check in C), and changed by the
      // function (CJK). On an index of 84 k chunks built by schema 3 the first call after the
      // upgrade took 0.5 s longer; a glob over the CJK ranges instead, 1.8 s.
      `create temp table cjk_chunks as select id from chunks
          where length(text) != octet_length(text) and ${SCHEMA_4_FTS_TEXT_FUNCTION}(text) != text`,
      `insert into chunks_fts(chunks_fts, rowid, text)
          select 'delete', c.id, c.text from chunks c join temp.cjk_chunks k on k.id = c.id`,
      `insert into chunks_fts(rowid, text)
          select c.id, ${SCHEMA_4_FTS_TEXT_FUNCTION}(c.text) from chunks c join temp.cjk_chunks k on k.id = c.id`,
      `drop table temp.cjk_chunks`,
      `create trigger chunks_fts_insert after insert on chunks begin
          insert into chunks_fts(rowid, text) values (new.id, ${schema4IndexedText("new.text")});
        end`,
      `create trigger chunks_fts_delete after delete on chunks begin
          insert into chunks_fts(chunks_fts, rowid, text)
            values ('delete', old.id, ${schema4IndexedText("old.text")});
        end`,
      `create trigger chunks_fts_update after update of text on chunks begin
          insert into chunks_fts(chunks_fts, rowid, text)
            values ('delete', old.id, ${schema4IndexedText("old.text")});
          insert into chunks_fts(rowid, text) values (new.id, ${schema4IndexedText("new.text")});
        end`,
      `update meta set value = '4' where key = 'schema_version'`,
    ])
  },
}

/**
 * Identifier words in the lexical index (see `fts-text.ts`): the triggers index
 * {@link FTS_TEXT_FUNCTION} of every chunk's text — one call into JavaScript per chunk, ~3 % of
 * the FTS5 insert on text without identifiers — and chunks already indexed whose indexed text
 * changes (they hold a camelCase identifier, or CJK text: those are put back unchanged) are taken
 * out of `chunks_fts` with what schema 4 indexed and put back with the new text. One transaction,
 * so an interrupted run changes nothing.
 */
const identifierWords: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 5) return
    const triggers = ["insert", "delete", "update"].map((on) => `drop trigger chunks_fts_${on}`)
    await inOwnTransaction(db, [
      ...triggers,
      `create temp table changed_chunks as select id from chunks
          where ${FTS_TEXT_FUNCTION}(text) != text`,
      `insert into chunks_fts(chunks_fts, rowid, text)
          select 'delete', c.id, ${schema4IndexedText("c.text")}
          from chunks c join temp.changed_chunks k on k.id = c.id`,
      `insert into chunks_fts(rowid, text)
          select c.id, ${FTS_TEXT_FUNCTION}(c.text) from chunks c join temp.changed_chunks k on k.id = c.id`,
      `drop table temp.changed_chunks`,
      `create trigger chunks_fts_insert after insert on chunks begin
          insert into chunks_fts(rowid, text) values (new.id, ${FTS_TEXT_FUNCTION}(new.text));
        end`,
      `create trigger chunks_fts_delete after delete on chunks begin
          insert into chunks_fts(chunks_fts, rowid, text)
            values ('delete', old.id, ${FTS_TEXT_FUNCTION}(old.text));
        end`,
      `create trigger chunks_fts_update after update of text on chunks begin
          insert into chunks_fts(chunks_fts, rowid, text)
            values ('delete', old.id, ${FTS_TEXT_FUNCTION}(old.text));
          insert into chunks_fts(rowid, text) values (new.id, ${FTS_TEXT_FUNCTION}(new.text));
        end`,
      `update meta set value = '5' where key = 'schema_version'`,
    ])
  },
}

/**
 * Shorter content hashes (schema 6): every stored `content_hash` — in `chunks` and in
 * `vector_keys` — keeps its first {@link CONTENT_HASH_CHARS} characters, so stored vectors stay
 * matched to their texts (nothing is re-embedded). One transaction. Keys that would collide under
 * one fingerprint (two texts whose hashes share 64 bits) keep one row, so both texts share its
 * vector, as two such texts indexed under schema 6 would. A process of the previous version
 * still open on the file writes full-length keys: those stay self-consistent (their vectors are
 * stored under the same key) and are shortened when their transcript is next rewritten; until
 * then a text it wrote and the same text written by this version are two keys (one extra vector,
 * and search may show both copies).
 */
const shortContentHashes: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 6) return
    const short = `substr(content_hash, 1, ${CONTENT_HASH_CHARS})`
    await inOwnTransaction(db, [
      `update chunks set content_hash = ${short}
          where length(content_hash) > ${CONTENT_HASH_CHARS}`,
      `update or replace vector_keys set content_hash = ${short}
          where length(content_hash) > ${CONTENT_HASH_CHARS}`,
      `update meta set value = '6' where key = 'schema_version'`,
    ])
  },
}

/**
 * Stored counts (schema 7): `sessions.chunk_count` and `raw_count` next to `turn_count`, kept by
 * the writer and by every deletion of a file's rows (`session-counts.ts`), and
 * `embedders.vector_count`, kept by triggers on `vector_keys` (a key is inserted once per distinct
 * text, so the trigger costs the embedding run about nothing). Status then sums session rows
 * instead of counting every chunk, record and key: at 10 000 files 2 s warm and 8.5 s cold
 * before. Filled from the rows in one transaction; turn counts are recounted on the way. A
 * process of the previous version still open on the file (a `--watch` indexer) would write rows
 * without their counts: triggers on `files` call {@link WRITER_GUARD_FUNCTION}, which it lacks,
 * so its index writes, prunes and forgets fail instead (its embedding runs still work: the
 * vector counts are kept by triggers).
 */
const storedCounts: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 7) return
    await inOwnTransaction(db, [
      `alter table sessions add column chunk_count integer not null default 0`,
      `alter table sessions add column raw_count integer not null default 0`,
      `alter table embedders add column vector_count integer not null default 0`,
      `update sessions set
          turn_count = (select count(*) from turns t where t.session_row = sessions.id),
          chunk_count = (select count(*) from turns t join chunks c on c.turn_row = t.id
                          where t.session_row = sessions.id),
          raw_count = (select count(*) from raw_records r where r.session_row = sessions.id)`,
      `update embedders set
          vector_count = (select count(*) from vector_keys k where k.fingerprint = embedders.fingerprint)`,
      `create trigger vector_keys_count_insert after insert on vector_keys begin
          update embedders set vector_count = vector_count + 1 where fingerprint = new.fingerprint;
        end`,
      `create trigger vector_keys_count_delete after delete on vector_keys begin
          update embedders set vector_count = vector_count - 1 where fingerprint = old.fingerprint;
        end`,
      ...(["insert", "update", "delete"] as const).map(
        (on) => `create trigger files_writer_guard_${on} before ${on} on files begin
            select ${WRITER_GUARD_FUNCTION}();
          end`,
      ),
      `update meta set value = '7' where key = 'schema_version'`,
    ])
  },
}

/**
 * The lexical backlog (schema 8): a bulk indexing run may leave its new chunks out of `chunks_fts`
 * and add them in one statement at its end (`lexical-backlog.ts`), which builds FTS5's segments
 * once instead of merging a small segment per commit. While `lexical_backlog` holds its row,
 * chunks with an id above `above` are not in `chunks_fts`, every other chunk is; the triggers keep
 * that true: a chunk above the mark is neither added nor, when deleted, taken out (an
 * external-content index told to delete a row it never held is corrupted). A chunk inserted at or
 * below the mark (SQLite reuses the highest rowid once its row is deleted) goes in at once.
 * Without the row the triggers behave as before. A process of the previous version still open on
 * the file writes through these triggers too, so its rows stay consistent.
 */
const lexicalBacklog: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 8) return
    const inIndex = (row: "new" | "old") =>
      `${row}.id <= coalesce((select above from lexical_backlog), ${row}.id)`
    await inOwnTransaction(db, [
      `create table lexical_backlog (
          id integer primary key check (id = 1),
          above integer not null
        ) strict`,
      ...["insert", "delete", "update"].map((on) => `drop trigger chunks_fts_${on}`),
      `create trigger chunks_fts_insert after insert on chunks when ${inIndex("new")} begin
          insert into chunks_fts(rowid, text) values (new.id, ${FTS_TEXT_FUNCTION}(new.text));
        end`,
      `create trigger chunks_fts_delete after delete on chunks when ${inIndex("old")} begin
          insert into chunks_fts(chunks_fts, rowid, text)
            values ('delete', old.id, ${FTS_TEXT_FUNCTION}(old.text));
        end`,
      `create trigger chunks_fts_update after update of text on chunks when ${inIndex("old")} begin
          insert into chunks_fts(chunks_fts, rowid, text)
            values ('delete', old.id, ${FTS_TEXT_FUNCTION}(old.text));
          insert into chunks_fts(rowid, text) values (new.id, ${FTS_TEXT_FUNCTION}(new.text));
        end`,
      `update meta set value = '8' where key = 'schema_version'`,
    ])
  },
}

/**
 * Skipped lines (schema 9): `files.skipped_lines` keeps, for the bytes indexed so far, the lines
 * the parser could not use — not JSON, not a record, or of a record type it does not know — so
 * `recall status` can say that a transcript holds lines Baton does not read (a new format of a
 * newer agent shows up there first). A full index of the file replaces it, an append adds to it.
 * A process of the previous version still open on the file leaves the column as it was.
 */
const skippedLines: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 9) return
    await inOwnTransaction(db, [
      `alter table files add column skipped_lines text`,
      `update meta set value = '9' where key = 'schema_version'`,
    ])
  },
}

/**
 * Parser versions (schema 10): `files.parser_version` names the parser that read a file's indexed
 * bytes, so a Baton whose parser learned something (a record type, a field) reads the transcripts
 * still on disk again in its next index run — they would otherwise keep what the old parser made
 * of them until they changed. Rows written before are version 1, the parser this schema shipped
 * with. A process of the previous version that writes a file row leaves the column as it was.
 */
const parserVersions: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 10) return
    await inOwnTransaction(db, [
      `alter table files add column parser_version integer not null default 1`,
      `update meta set value = '10' where key = 'schema_version'`,
    ])
  },
}

/** The session id a transcript's file name carries (Claude `<id>.jsonl`, Codex `rollout-…-<id>.jsonl`). */
const SESSION_ID_IN_FILE_NAME =
  /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(?:\.zst)?$/i

/**
 * Forgotten sessions (schema 11): `forget` used to mark only the forgotten sessions' files, found
 * by path and by a hash of their first 4 KiB; a small transcript that moved and grew, or a copy
 * of one (a fork, an old-style resume), was new to the index and its text came back.
 * `forgotten_sessions` records the sessions themselves; the writer leaves their turns out of any
 * file. Sessions forgotten before are recorded from their files' names, where those carry the id.
 */
const forgottenSessions: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 11) return
    const sql = await sqlTag()
    await inOwnTransaction(
      db,
      [
        `create table forgotten_sessions (
          source text not null,
          session_id text not null,
          forgotten_at integer,
          primary key (source, session_id)
        ) strict, without rowid`,
        `update meta set value = '11' where key = 'schema_version'`,
      ],
      async () => {
        const files = await sql<{
          path: string
          source: string
        }>`select path, source from files where status = 'forgotten'`.execute(db)
        for (const { path, source } of files.rows) {
          const id = SESSION_ID_IN_FILE_NAME.exec(path)?.[1]?.toLowerCase()
          if (id !== undefined)
            await sql`insert or ignore into forgotten_sessions (source, session_id)
              values (${source}, ${id})`.execute(db)
        }
      },
    )
  },
}

/**
 * Distinct turn counts (schema 12): one session's turns can come from two files that both hold
 * them — an older Claude Code resume starts its new file with a copy of the previous session's
 * records, under that session's id; one Codex rollout can sit in both `sessions/` and
 * `archived_sessions/` — and a turn held twice is still one turn. `sessions.turn_count` counts a
 * session's distinct turn ids (navigation shows each once); `turns_session_turn` is how the writer
 * and every removal of a file's turns tell, row by row, whether another row holds the same turn.
 * Sessions holding a turn twice are recounted. A process of the previous version still open on
 * the file counts every turn row it writes, as it did.
 */
const distinctTurnCounts: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 12) return
    await inOwnTransaction(db, [
      `create index if not exists turns_session_turn on turns(session_row, turn_id)`,
      `update sessions set
          turn_count = (select count(distinct turn_id) from turns t where t.session_row = sessions.id)
        where id in (select session_row from turns group by session_row, turn_id having count(*) > 1)`,
      `update meta set value = '12' where key = 'schema_version'`,
    ])
  },
}

/**
 * Forgotten turns (schema 13): Claude Code copies a session's records — their uuids, so its turn
 * ids, included — into a `claude --resume <id> --fork-session` fork under the fork's session id,
 * with no field naming the session it came from. Forgetting a session by its id left those copies
 * in the index, and a fork made later brought its text back. `forgotten_turns` records the turn
 * ids of every session forgotten from now on; `forget` deletes the other sessions' copies of them
 * and the writer leaves them out of any file. The turns of sessions forgotten before are no longer
 * in the index, so their ids are not known: an index run that reads one of those sessions' text
 * again (its transcript moved or copied) records them then.
 */
const forgottenTurns: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 13) return
    await inOwnTransaction(db, [
      `create table forgotten_turns (
          source text not null,
          turn_id text not null,
          forgotten_at integer not null,
          primary key (source, turn_id)
        ) strict, without rowid`,
      `update meta set value = '13' where key = 'schema_version'`,
    ])
  },
}

/**
 * Space endpoints (schema 14): `embedders.endpoint` records the server a space's vectors came
 * from. An OpenAI-compatible space is named by model and length only, and many such servers ignore
 * or alias the model name, so another server behind the same name would have written another
 * model's vectors into the space. Spaces made before are null: the next run adopts its endpoint.
 * A process of the previous version still open on the file leaves the column as it was.
 */
const spaceEndpoints: Migration = {
  up: async (db: Kysely<unknown>): Promise<void> => {
    if ((await schemaVersionIn(db)) >= 14) return
    await inOwnTransaction(db, [
      `alter table embedders add column endpoint text`,
      `update meta set value = '14' where key = 'schema_version'`,
    ])
  },
}

/** The migrations, in order; Kysely's `Migrator` applies the missing ones. */
export const recallMigrations: Readonly<Record<string, Migration>> = {
  "0001_initial": initial,
  "0002_file_states": fileStates,
  "0003_repository_identity": repositoryIdentity,
  "0004_cjk_bigrams": cjkBigrams,
  "0005_identifier_words": identifierWords,
  "0006_short_content_hashes": shortContentHashes,
  "0007_stored_counts": storedCounts,
  "0008_lexical_backlog": lexicalBacklog,
  "0009_skipped_lines": skippedLines,
  "0010_parser_versions": parserVersions,
  "0011_forgotten_sessions": forgottenSessions,
  "0012_distinct_turn_counts": distinctTurnCounts,
  "0013_forgotten_turns": forgottenTurns,
  "0014_space_endpoints": spaceEndpoints,
}

/** In-code provider for Kysely's `Migrator`. */
export const recallMigrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve({ ...recallMigrations }),
}

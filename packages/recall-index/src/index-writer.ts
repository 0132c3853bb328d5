/**
 * Writes one file's parse result into the recall database in ONE immediate transaction (a
 * savepoint when a {@link CommitGroup} holds the transaction), with
 * prepared statements on the raw better-sqlite3 handle (the hot path: tens of thousands of rows
 * per second; Kysely serves the schema and the queries). Guarantees: a file is either fully
 * written (rows, signature, offset, parse state, status) or not at all; a full re-index first
 * deletes the file's turns (raw records, chunks and FTS rows cascade) and preamble; an append
 * extends the open turn in place. The functions throw driver errors: callers wrap them.
 *
 * Raw records and then chunks are inserted last, in multi-row statements: FTS5 flushes its
 * pending terms to a new segment at every statement savepoint, so one row per statement
 * (interleaved with turn and raw-record inserts) wrote one tiny segment per chunk, and one
 * statement per raw record cost a bind-and-step round trip per row. Rows and ids come out the
 * same as row by row (rowids follow insertion order within each table).
 */
import type { Database, Statement } from "better-sqlite3"
import * as crypto from "node:crypto"
import { CONTENT_HASH_CHARS } from "./recall-schema.js"
import { chunkText } from "./chunker.js"
import { noteGoneText } from "./gone-vectors.js"
import { trimWal } from "./recall-database.js"
import { makeFileRowsRemoval } from "./session-counts.js"
import { TRANSCRIPT_PARSER_VERSION } from "./transcript-parser.js"
import {
  addSkippedLines,
  decodeSkippedLines,
  encodeSkippedLines,
  skippedLinesOf,
} from "./skipped-lines.js"
import type { ChunkOptions } from "./chunker.js"
import type { DiscoveredTranscript } from "./transcript-discovery.js"
import type { ParseResult, RawRecord, TranscriptSession } from "./transcript-model.js"
import type { SessionRepositoryResolver } from "./session-repository.js"

/** What one file write added. */
export interface FileWriteCounts {
  readonly turns: number
  readonly rawRecords: number
  readonly chunks: number
  /**
   * True when nothing was written because the file was forgotten after the run planned it (a
   * `forget` let in mid-run): a forgotten file is never indexed again while unchanged.
   */
  readonly forgotten?: boolean
}

/** Input of {@link IndexWriter.writeFile}. */
export interface FileWrite {
  readonly file: DiscoveredTranscript
  /** `full`: replace the file's rows; `append`: extend them. */
  readonly mode: "full" | "append"
  readonly result: ParseResult
  readonly now: number
}

/** Prepared writes over one database handle. */
export interface IndexWriter {
  readonly writeFile: (write: FileWrite) => FileWriteCounts
  /** Records a failed attempt; quarantines at `quarantineAfter` consecutive failures. */
  readonly recordFailure: (
    file: DiscoveredTranscript,
    signature: string,
    error: string,
    quarantineAfter: number,
  ) => { readonly failures: number; readonly quarantined: boolean }
  /** Re-points an existing file row (and so all its rows) at a new path; a forgotten row also takes `file`'s signature. */
  readonly movePath: (fromPath: string, file: DiscoveredTranscript) => void
  /** Marks rows whose path discovery no longer sees as `missing` (rows are kept). */
  readonly markMissing: (paths: ReadonlyArray<string>) => void
  /** Places sessions left unresolved (see `SessionRepositoryResolver.refresh`); rows changed. */
  readonly refreshRepositories: () => number
}

/**
 * WAL pages between automatic checkpoints while an indexing run writes (SQLite's default is
 * 1 000). A file's write dirties ~100 pages (mostly leaves of the random-key indexes
 * `chunks_content_hash` and `turns_turn_id`), so with the default a checkpoint — a copy of the hot
 * pages back into the database plus two fsyncs — ran every ~10 files when each file committed
 * alone and took over half of the write time; at 16 384 pages (64 MiB of WAL) the same pages are
 * copied back far less often.
 */
export const RUN_WAL_CHECKPOINT_PAGES = 16_384

/**
 * Raises SQLite's automatic checkpoint threshold for the duration of an indexing run (or an
 * embedding run: `embedBacklog` defers them the same way); the returned function restores the
 * prior threshold, so the next commit (the run releasing its lock) checkpoints if the WAL is past
 * it, as it would have without the run — a small run pays no extra fsync. A run that grew the WAL
 * past `WAL_SIZE_LIMIT_BYTES` also has it copied back and cut to nothing ({@link trimWal}).
 * Durability is unchanged: every commit is in the WAL either way. Raising throws driver errors
 * (callers wrap them); restoring never throws, so it can run in any finalizer.
 */
export const deferWalCheckpoints = (sqlite: Database): (() => void) => {
  const prior: unknown = sqlite.pragma("wal_autocheckpoint", { simple: true })
  sqlite.pragma(`wal_autocheckpoint = ${RUN_WAL_CHECKPOINT_PAGES}`)
  return () => {
    try {
      sqlite.pragma(`wal_autocheckpoint = ${typeof prior === "number" ? prior : 1000}`)
    } catch {
      // Setting a pragma cannot fail on an open handle; if it ever did, the raised threshold
      // would only delay checkpoints on this connection.
    }
    try {
      // Only outside a transaction (a failed run's group rolled back or committed by now).
      if (!sqlite.inTransaction) trimWal(sqlite)
    } catch {
      // A checkpoint that fails (a full disk) leaves the WAL as large as it was; the next writer
      // that starts it over cuts it to the limit.
    }
  }
}

/** When a {@link CommitGroup} commits: whichever limit a group reaches first. */
export interface CommitGroupLimits {
  /** Milliseconds since the group's first file (default 250: other writers wait at most that). */
  readonly maxMs?: number
  /** Transcript bytes parsed into the group (default 32 MiB). */
  readonly maxBytes?: number
  /** Units (files, or the embedding backlog's batches) in the group (default 1 000). */
  readonly maxFiles?: number
}

/**
 * Consecutive file writes sharing one commit. Each file is still its own unit — its write is a
 * savepoint inside the group's transaction (better-sqlite3 nests a transaction function as a
 * savepoint), so a failing file rolls back alone — but the pages several files touch (leaves of
 * the random-key indexes, FTS5 segments, the files table) reach the WAL once per group instead of
 * once per file: at one commit per file the commits were ~40 % of an indexing run. A kill loses
 * at most the open group, which the next run indexes again (its file rows were never committed).
 * The functions throw driver errors: callers wrap them.
 */
export interface CommitGroup {
  /** Opens the group's transaction (at `now`) unless one is open. */
  readonly begin: (now: number) => void
  /**
   * Counts one unit (a file written or failed, parsed from `bytes`; a batch of vectors of
   * `bytes`); commits past a limit.
   */
  readonly counted: (bytes: number, now: number) => void
  /**
   * Files whose writes SQLite rolled back with the whole group (it does after some errors, e.g.
   * a full disk): the group was open and no transaction is. Zero while all is well.
   */
  readonly lost: () => number
  /** Commits the open group, if any. */
  readonly commit: () => void
  /** Commits the open group if it can, else rolls it back; never throws (a finalizer). */
  readonly close: () => void
  /**
   * Rolls the open group back, if any; never throws. For writers whose units are not savepoints
   * (the embedding backlog): a unit that failed halfway must not be committed with the rest.
   */
  readonly abort: () => void
}

/** Groups file writes on `sqlite` into commits bounded by `limits`. */
export const makeCommitGroup = (sqlite: Database, limits: CommitGroupLimits = {}): CommitGroup => {
  const maxMs = limits.maxMs ?? 250
  const maxBytes = limits.maxBytes ?? 32 * 1024 * 1024
  const maxFiles = limits.maxFiles ?? 1_000
  let open = false
  let since = 0
  let bytes = 0
  let files = 0
  const commit = () => {
    if (!open) return
    open = false
    if (sqlite.inTransaction) sqlite.exec("COMMIT")
  }
  const abort = () => {
    open = false
    try {
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK")
    } catch {
      // Nothing left to undo: SQLite ended the transaction itself.
    }
  }
  return {
    begin: (now) => {
      if (open && sqlite.inTransaction) return
      sqlite.exec("BEGIN IMMEDIATE")
      open = true
      since = now
      bytes = 0
      files = 0
    },
    counted: (read, now) => {
      if (!open) return
      bytes += read
      files += 1
      if (now - since >= maxMs || bytes >= maxBytes || files >= maxFiles) commit()
    },
    lost: () => (open && !sqlite.inTransaction ? files : 0),
    commit,
    close: () => {
      try {
        commit()
      } catch {
        abort()
      }
    },
    abort,
  }
}

/** Node's one-shot `crypto.hash`, about 1.7x `createHash` on chunk-sized text; absent before 20.12. */
const oneShotHash: typeof crypto.hash | undefined = crypto.hash

/**
 * A chunk's `content_hash`: the first {@link CONTENT_HASH_CHARS} hex characters of its text's
 * SHA-256.
 */
const hashText = (text: string): string =>
  (oneShotHash !== undefined
    ? oneShotHash("sha256", text, "hex")
    : crypto.createHash("sha256").update(text).digest("hex")
  ).slice(0, CONTENT_HASH_CHARS)
const flag = (b: boolean): number => (b ? 1 : 0)

/** Rows per multi-row insert statement (≤ 64 × 11 bound values, far below SQLite's limit). */
const batchRows = 64

/**
 * A multi-row insert: `write(values)` inserts flat rows (`columns` values each, in `row`'s
 * placeholder order) in order, `batchRows` rows per statement, with one prepared statement per
 * batch size. Row ids come out as with one statement per row (rowid order is insertion order).
 */
const multiRowInsert = (
  sqlite: Database,
  head: string,
  row: string,
  columns: number,
): ((values: ReadonlyArray<unknown>) => void) => {
  const byRows = new Map<number, Statement<Array<unknown>>>()
  const statement = (rows: number): Statement<Array<unknown>> => {
    const known = byRows.get(rows)
    if (known !== undefined) return known
    const prepared = sqlite.prepare<Array<unknown>>(
      `${head} values ${Array.from({ length: rows }, () => row).join(", ")}`,
    )
    byRows.set(rows, prepared)
    return prepared
  }
  return (values) => {
    const step = batchRows * columns
    for (let at = 0; at < values.length; at += step) {
      const batch = values.slice(at, at + step)
      statement(batch.length / columns).run(batch)
    }
  }
}

/** Prepares the writer's statements on `sqlite`. */
export const makeIndexWriter = (
  sqlite: Database,
  chunkOptions: ChunkOptions,
  repositories: SessionRepositoryResolver,
  parserVersion: number = TRANSCRIPT_PARSER_VERSION,
): IndexWriter => {
  const fileByPath: Statement<
    [string],
    { id: number; status: string; skipped_lines: string | null }
  > = sqlite.prepare("select id, status, skipped_lines from files where path = ?")
  const upsertFile = sqlite.prepare(`
    insert into files (path, source, role, compression, size, mtime_ms, inode, head_hash,
      indexed_offset, resumable, status, failure_count, failed_signature, last_error, indexed_at,
      skipped_lines, parser_version)
    values (@path, @source, @role, @compression, @size, @mtime, @inode, @head,
      @offset, 1, 'indexed', 0, null, null, @now, @skipped, @parserVersion)
    on conflict(path) do update set source = excluded.source, role = excluded.role,
      compression = excluded.compression, size = excluded.size, mtime_ms = excluded.mtime_ms,
      inode = excluded.inode, head_hash = excluded.head_hash,
      indexed_offset = excluded.indexed_offset, resumable = 1,
      status = 'indexed', failure_count = 0, failed_signature = null, last_error = null,
      indexed_at = excluded.indexed_at, skipped_lines = excluded.skipped_lines,
      parser_version = excluded.parser_version
    returning id`)
  const upsertState = sqlite.prepare(`
    insert into file_states (file_id, parse_state) values (?, ?)
    on conflict(file_id) do update set parse_state = excluded.parse_state`)
  const removeFileRows = makeFileRowsRemoval(sqlite, "?")
  const deleteTurns = sqlite.prepare("delete from turns where file_id = ?")
  const deletePreamble = sqlite.prepare(
    "delete from raw_records where file_id = ? and turn_row is null",
  )
  const deleteEmptySessions = sqlite.prepare(
    "delete from sessions where file_id = ? and not exists (select 1 from turns t where t.session_row = sessions.id)",
  )
  // A root found by git or by the remote stays when the same directory now only gets the string
  // rules (its worktree was deleted since); a new directory decides afresh.
  const keepRepository = `repo_root_from in ('git', 'remote')
    and coalesce(excluded.repo_root_from, '') not in ('git', 'remote')
    and (excluded.cwd is null or excluded.cwd = cwd)`
  const upsertSession: Statement<Record<string, unknown>, { id: number }> = sqlite.prepare(`
    insert into sessions (source, session_id, file_id, cwd, repo_root, repo_root_from,
      repository_url, git_branch, title, first_prompt, originator, started_at, ended_at, headless,
      subagent, parent_session_id, forked_from)
    values (@source, @sessionId, @fileId, @cwd, @repoRoot, @repoRootFrom, @repositoryUrl,
      @gitBranch, @title, @firstPrompt, @originator, @startedAt, @endedAt, @headless, @subagent,
      @parent, @forkedFrom)
    on conflict(source, session_id) do update set file_id = excluded.file_id,
      cwd = coalesce(excluded.cwd, cwd),
      repo_root = case when ${keepRepository} then repo_root
        else coalesce(excluded.repo_root, repo_root) end,
      repo_root_from = case when ${keepRepository} then repo_root_from
        when excluded.repo_root is null then repo_root_from else excluded.repo_root_from end,
      repository_url = coalesce(excluded.repository_url, repository_url),
      git_branch = coalesce(excluded.git_branch, git_branch),
      title = coalesce(excluded.title, title),
      first_prompt = coalesce(first_prompt, excluded.first_prompt),
      originator = coalesce(excluded.originator, originator),
      started_at = min(coalesce(started_at, excluded.started_at), coalesce(excluded.started_at, started_at)),
      ended_at = max(coalesce(ended_at, excluded.ended_at), coalesce(excluded.ended_at, ended_at)),
      headless = excluded.headless, subagent = excluded.subagent,
      parent_session_id = coalesce(excluded.parent_session_id, parent_session_id),
      forked_from = coalesce(excluded.forked_from, forked_from)
    returning id`)
  const turnByOrdinal: Statement<
    [number, number],
    { id: number; surface_count: number; timestamp: string | null }
  > = sqlite.prepare(
    "select id, surface_count, timestamp from turns where file_id = ? and ordinal = ?",
  )
  // Positional parameters and `lastInsertRowid` instead of named ones and `returning id`: one
  // turn per statement (its id is needed next), so the per-row binding cost is worth trimming.
  const insertTurn = sqlite.prepare<
    [number, number, string, number, string, string | null, number, number, number, number]
  >(`
    insert into turns (session_row, file_id, turn_id, ordinal, role, timestamp, start_offset,
      end_offset, sidechain, surface_count)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const extendTurn = sqlite.prepare(
    "update turns set end_offset = ?, surface_count = ?, timestamp = coalesce(timestamp, ?) where id = ?",
  )
  /** Raw record rows, 11 values each (see `recordValues`). */
  const insertRecords = multiRowInsert(
    sqlite,
    `insert into raw_records (turn_row, session_row, file_id, offset, length, record_type, kind,
      timestamp, text, truncated, skip_for_grep)`,
    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    11,
  )
  /** Chunk rows, 8 values each (the FTS trigger indexes them). */
  const insertChunks = multiRowInsert(
    sqlite,
    `insert into chunks (turn_row, surface_index, chunk_index, role, char_start, char_end, text,
      content_hash, needs_embedding)`,
    "(?, ?, ?, ?, ?, ?, ?, ?, 1)",
    8,
  )
  // Chunk and record counts move by what a write inserted (its deletions were taken off first,
  // `removeFileRows`); a whole write recounts its sessions' turns — their distinct turn ids: a
  // turn another file holds too (an older Claude Code resume's copy) is one turn.
  const refreshSession = sqlite.prepare(`
    update sessions set
      turn_count = (select count(distinct t.turn_id) from turns t where t.session_row = sessions.id),
      chunk_count = chunk_count + @chunks, raw_count = raw_count + @raws,
      last_activity = coalesce((select max(t.timestamp) from turns t where t.session_row = sessions.id), ended_at)
    where id = @id`)
  // An append only adds turns (or extends the open one), so the counts move by what it wrote:
  // recounting read every turn row of the session, a cost that grew with the session (an
  // append to a 50 MB transcript spent most of its time there, and a file indexed in slices
  // paid it once per slice).
  // `last_activity` is the latest turn timestamp, or `ended_at` while no turn has one.
  const extendSession = sqlite.prepare(`
    update sessions set
      turn_count = turn_count + @added,
      chunk_count = chunk_count + @chunks, raw_count = raw_count + @raws,
      last_activity = case
        when @hadStamp = 0 then coalesce(@latest, ended_at)
        when @latest is not null and (last_activity is null or @latest > last_activity) then @latest
        else last_activity end
    where id = @id`)
  // Whether a session holds a turn id already (`turns_session_turn`): an appended turn another
  // file holds too adds no turn to the count.
  const sessionHasTurn = sqlite
    .prepare("select exists (select 1 from turns where session_row = ? and turn_id = ?)")
    .pluck()
  const sessionHasStamp = sqlite
    .prepare("select exists (select 1 from turns where session_row = ? and timestamp is not null)")
    .pluck()
  const recordFailureStmt: Statement<
    Record<string, unknown>,
    { failure_count: number }
  > = sqlite.prepare(`
    insert into files (path, source, role, compression, size, mtime_ms, inode, head_hash,
      indexed_offset, resumable, status, failure_count, failed_signature, last_error)
    values (@path, @source, @role, @compression, 0, 0, 0, '', 0, 0,
      case when @limit <= 1 then 'quarantined' else 'failed' end, 1, @signature, @error)
    on conflict(path) do update set failure_count = failure_count + 1,
      status = case when failure_count + 1 >= @limit then 'quarantined' else 'failed' end,
      failed_signature = @signature, last_error = @error
    returning failure_count`)
  const movePathStmt = sqlite.prepare(
    "update files set path = ?, status = case when status = 'missing' then 'indexed' else status end where path = ?",
  )
  // A forgotten file is never read again, so its row takes the signature of the file it moved
  // to: the next move of the same bytes is then recognised by its head hash too.
  const moveForgottenStmt = sqlite.prepare(
    `update files set path = ?, compression = ?, size = ?, mtime_ms = ?, inode = ?, head_hash = ?
    where path = ? and status = 'forgotten'`,
  )
  const markMissingStmt = sqlite.prepare(
    "update files set status = 'missing' where path = ? and status <> 'forgotten'",
  )

  const sessionParams = (s: TranscriptSession, fileId: number) => ({
    source: s.source,
    sessionId: s.sessionId,
    fileId,
    cwd: s.cwd ?? null,
    ...repositories.of(s),
    repositoryUrl: s.repositoryUrl ?? null,
    gitBranch: s.gitBranch ?? null,
    title: s.title ?? null,
    firstPrompt: s.firstPrompt ?? null,
    originator: s.originator ?? null,
    startedAt: s.startedAt ?? null,
    endedAt: s.endedAt ?? null,
    headless: flag(s.headless),
    subagent: flag(s.subagent),
    parent: s.parentSessionId ?? null,
    forkedFrom: s.forkedFrom ?? null,
  })

  /** Appends the flat row values of `records` to `out` (inserted later, in this order). */
  const recordValues = (
    out: Array<unknown>,
    records: ReadonlyArray<RawRecord>,
    turnRow: number | null,
    sessionRow: number | null,
    fileId: number,
  ): void => {
    for (const r of records) {
      out.push(
        turnRow,
        sessionRow,
        fileId,
        r.offset,
        r.length,
        r.recordType,
        r.kind,
        r.timestamp ?? null,
        r.text,
        flag(r.truncated),
        flag(r.skipForGrep),
      )
    }
  }

  const isForgottenSession: Statement<[string, string], { one: number }> = sqlite.prepare(
    "select 1 as one from forgotten_sessions where source = ? and session_id = ?",
  )
  const markForgotten = sqlite.prepare(
    "update files set status = 'forgotten', resumable = 0, indexed_offset = 0 where id = ?",
  )
  const deleteFileState = sqlite.prepare("delete from file_states where file_id = ?")
  // One lookup per file, and none per turn while nothing was ever forgotten (`forgotten_turns`
  // is empty): the turn ids are only matched, in one statement, once it holds some.
  const anyForgottenTurn = sqlite.prepare("select exists (select 1 from forgotten_turns)").pluck()
  const forgottenTurnsIn = sqlite
    .prepare(
      `select j.value from json_each(?) j
       where exists (select 1 from forgotten_turns f where f.source = ? and f.turn_id = j.value)`,
    )
    .pluck()
  const rememberTurns = sqlite.prepare(
    `insert or ignore into forgotten_turns (source, turn_id, forgotten_at)
     select ?, value, ? from json_each(?)`,
  )

  /**
   * The session ids in `result` that were forgotten (`forgotten_sessions`), and the subagent
   * sessions of those: their text is never written again, whichever file carries it — a
   * forgotten transcript moved and grown, copied, or forked with its history, or a subagent the
   * forgotten session started later.
   */
  const forgottenSessionIds = (source: string, result: FileWrite["result"]): Set<string> => {
    const ids = new Set<string>()
    for (const s of result.sessions) {
      ids.add(s.sessionId)
      if (s.parentSessionId !== undefined) ids.add(s.parentSessionId)
    }
    for (const t of result.turns) ids.add(t.sessionId)
    const forgotten = new Set<string>()
    for (const id of ids) if (isForgottenSession.get(source, id) !== undefined) forgotten.add(id)
    for (const s of result.sessions)
      if (s.parentSessionId !== undefined && forgotten.has(s.parentSessionId))
        forgotten.add(s.sessionId)
    return forgotten
  }

  /**
   * Leaves out of `parsed` the turns of forgotten sessions and the turns whose ids were forgotten
   * (`forgotten_turns`: a fork's copy of a forgotten session's turns), and records the ids of the
   * former, so a later copy of them under another session id is left out too. While any turn id
   * is forgotten, a session's first prompt is its first user text among the turns kept: the
   * parser took it from the file's first user text, which may be a forgotten copy.
   */
  const withoutForgotten = (
    source: string,
    parsed: FileWrite["result"],
    forgottenIds: ReadonlySet<string>,
    now: number,
  ): FileWrite["result"] => {
    const turnsForgotten = forgottenIds.size > 0 || anyForgottenTurn.get() === 1
    if (!turnsForgotten) return parsed
    const forgottenTurns = new Set(
      forgottenTurnsIn.all(JSON.stringify(parsed.turns.map((t) => t.id)), source) as Array<string>,
    )
    const dropped = parsed.turns.filter((t) => forgottenIds.has(t.sessionId)).map((t) => t.id)
    if (dropped.length > 0) rememberTurns.run(source, now, JSON.stringify(dropped))
    const turns = parsed.turns.filter(
      (t) => !forgottenIds.has(t.sessionId) && !forgottenTurns.has(t.id),
    )
    const firstPrompts = new Map<string, string>()
    for (const t of turns) {
      const user = t.surface.find((surface) => surface.role === "user")
      if (user !== undefined && !firstPrompts.has(t.sessionId))
        firstPrompts.set(t.sessionId, user.text.slice(0, 300))
    }
    const sessions = parsed.sessions
      .filter((s) => !forgottenIds.has(s.sessionId))
      .map((s): TranscriptSession => {
        const { firstPrompt: _parsed, ...rest } = s
        const firstPrompt = firstPrompts.get(s.sessionId)
        return firstPrompt === undefined ? rest : { ...rest, firstPrompt }
      })
    return {
      ...parsed,
      sessions,
      turns,
      preamble:
        parsed.sessions[0] !== undefined && forgottenIds.has(parsed.sessions[0].sessionId)
          ? []
          : parsed.preamble,
    }
  }

  const writeFileTx = sqlite.transaction((write: FileWrite): FileWriteCounts => {
    const { file, result: parsed, mode } = write
    const existing = fileByPath.get(file.path)
    if (existing?.status === "forgotten")
      return { turns: 0, rawRecords: 0, chunks: 0, forgotten: true }
    const forgottenIds = forgottenSessionIds(file.source, parsed)
    const result = withoutForgotten(file.source, parsed, forgottenIds, write.now)
    if (existing !== undefined && mode === "full") {
      removeFileRows(existing.id)
      // The run drops the vectors of texts no chunk holds again at its end (`gone-vectors.ts`).
      noteGoneText(sqlite, "turn_row in (select id from turns where file_id = ?)", existing.id)
      deleteTurns.run(existing.id)
      deletePreamble.run(existing.id)
    }
    const fileRow = upsertFile.get({
      path: file.path,
      source: file.source,
      role: file.role,
      compression: file.compression,
      size: file.size,
      mtime: file.mtimeMs,
      inode: file.ino,
      head: file.headHash,
      offset: result.state.nextOffset,
      now: write.now,
      parserVersion,
      // A full index counts the file's lines afresh; an append adds its lines to the count.
      skipped: encodeSkippedLines(
        addSkippedLines(
          mode === "append" ? decodeSkippedLines(existing?.skipped_lines) : undefined,
          skippedLinesOf(result.stats),
        ),
      ),
    }) as { id: number }
    const fileId = fileRow.id
    upsertState.run(fileId, JSON.stringify(result.state))
    if (existing !== undefined && mode === "full") deleteEmptySessions.run(fileId)

    const sessionRows = new Map<string, number>()
    for (const session of result.sessions) {
      const row = upsertSession.get(sessionParams(session, fileId))
      if (row !== undefined) sessionRows.set(session.sessionId, row.id)
    }
    const sessionRowOf = (sessionId: string): number => {
      const known = sessionRows.get(sessionId)
      if (known !== undefined) return known
      const row = upsertSession.get(
        sessionParams({ source: file.source, sessionId, headless: false, subagent: false }, fileId),
      )
      if (row === undefined) throw new Error(`session ${sessionId} could not be stored`)
      sessionRows.set(sessionId, row.id)
      return row.id
    }

    let turns = 0
    let rawRecords = 0
    let chunks = 0
    const firstSession = result.sessions[0]
    const rawValues: Array<unknown> = []
    // Per session: turns, chunks and records inserted, the latest timestamp this write gave a
    // turn, and (appends) whether a turn had one before it.
    const touched = new Map<
      number,
      { added: number; chunks: number; raws: number; latest: string | null; hadStamp: number }
    >()
    const touch = (row: number) => {
      let t = touched.get(row)
      if (t === undefined) {
        const hadStamp = mode === "append" ? (sessionHasStamp.get(row) as number) : 0
        touched.set(row, (t = { added: 0, chunks: 0, raws: 0, latest: null, hadStamp }))
      }
      return t
    }
    for (const row of sessionRows.values()) touch(row)
    if (result.preamble.length > 0) {
      const sessionRow = firstSession === undefined ? null : sessionRowOf(firstSession.sessionId)
      recordValues(rawValues, result.preamble, null, sessionRow, fileId)
      rawRecords += result.preamble.length
      if (sessionRow !== null) touch(sessionRow).raws += result.preamble.length
    }
    const chunkValues: Array<unknown> = []
    for (const turn of result.turns) {
      const sessionRow = sessionRowOf(turn.sessionId)
      const session = touch(sessionRow)
      const stamp = turn.timestamp ?? null
      const prior = turn.continued ? turnByOrdinal.get(fileId, turn.ordinal) : undefined
      let turnRow: number
      let surfaceBase: number
      if (prior !== undefined) {
        turnRow = prior.id
        surfaceBase = prior.surface_count
        // A turn keeps its first timestamp: this one counts only where the turn had none.
        if (prior.timestamp === null && stamp !== null && (session.latest ?? "") < stamp)
          session.latest = stamp
        extendTurn.run(
          turn.endOffset,
          surfaceBase + turn.surface.length,
          turn.timestamp ?? null,
          turnRow,
        )
      } else {
        surfaceBase = 0
        const held = mode === "append" && sessionHasTurn.get(sessionRow, turn.id) === 1
        const inserted = insertTurn.run(
          sessionRow,
          fileId,
          turn.id,
          turn.ordinal,
          turn.role,
          turn.timestamp ?? null,
          turn.startOffset,
          turn.endOffset,
          flag(turn.sidechain),
          turn.surface.length,
        )
        turnRow = Number(inserted.lastInsertRowid)
        turns += 1
        if (!held) session.added += 1
        if (stamp !== null && (session.latest ?? "") < stamp) session.latest = stamp
      }
      recordValues(rawValues, turn.records, turnRow, sessionRow, fileId)
      rawRecords += turn.records.length
      session.raws += turn.records.length
      const chunksBefore = chunks
      turn.surface.forEach((surface, i) => {
        for (const chunk of chunkText(surface.text, chunkOptions)) {
          chunkValues.push(
            turnRow,
            surfaceBase + i,
            chunk.index,
            surface.role,
            chunk.start,
            chunk.end,
            chunk.text,
            hashText(chunk.text),
          )
          chunks += 1
        }
      })
      session.chunks += chunks - chunksBefore
    }
    insertRecords(rawValues)
    insertChunks(chunkValues)
    for (const [id, { added, chunks, raws, latest, hadStamp }] of touched) {
      if (mode === "append") extendSession.run({ id, added, chunks, raws, latest, hadStamp })
      else refreshSession.run({ id, chunks, raws })
    }
    // Nothing but forgotten sessions: the file is forgotten too, so no later run reads it.
    if (mode === "full" && forgottenIds.size > 0 && sessionRows.size === 0 && rawRecords === 0) {
      markForgotten.run(fileId)
      deleteFileState.run(fileId)
      return { turns, rawRecords, chunks, forgotten: true }
    }
    return { turns, rawRecords, chunks }
  })

  return {
    writeFile: (write) => writeFileTx.immediate(write),
    recordFailure: (file, signature, error, quarantineAfter) => {
      const row = recordFailureStmt.get({
        path: file.path,
        source: file.source,
        role: file.role,
        compression: file.compression,
        limit: quarantineAfter,
        signature,
        error,
      })
      const failures = row?.failure_count ?? 1
      return { failures, quarantined: failures >= quarantineAfter }
    },
    movePath: (fromPath, file) => {
      const forgotten = moveForgottenStmt.run(
        file.path,
        file.compression,
        file.size,
        file.mtimeMs,
        file.ino,
        file.headHash,
        fromPath,
      )
      if (forgotten.changes === 0) movePathStmt.run(file.path, fromPath)
    },
    markMissing: sqlite.transaction((paths: ReadonlyArray<string>) => {
      for (const path of paths) markMissingStmt.run(path)
    }),
    refreshRepositories: repositories.refresh,
  }
}

/**
 * Stored row counts per session (`sessions.turn_count`, `chunk_count`, `raw_count`, schema 7):
 * status and the per-source counts sum 10 000 session rows instead of counting 2 M chunks and
 * raw records (2 s warm, 8.5 s from a cold page cache at the bench's 10 000 files).
 *
 * Guarantees: a writer adds what it inserted, in the same transaction; every statement that
 * deletes turns or records of a file first takes their counts off their sessions
 * ({@link makeFileRowsRemoval}); deleting a session takes its counts with it. `turn_count` counts
 * a session's distinct turn ids (schema 12): a turn two files hold (an older Claude Code resume's
 * copy, one Codex rollout in two folders) is one turn, so a row counts only while no other row of
 * its session holds its turn id. Chunks and raw records are counted as stored. Raw records with no
 * session (a preamble before any session id) are counted in no session. The functions throw
 * driver errors: callers wrap them.
 */
import type { Database } from "better-sqlite3"

/**
 * Takes the counts of the turns, chunks and raw records stored for the files selected by
 * `filesSql` (a `select id from files …` taking `parameters`) off their sessions. Call it right
 * before those rows are deleted, in the same transaction.
 */
export const makeFileRowsRemoval = (
  sqlite: Database,
  filesSql: string,
): ((...parameters: ReadonlyArray<unknown>) => void) => {
  // The file's turns with their chunks and records, per session, then its turn-less records. A
  // turn id counts once per session, and not at all while a row outside these files holds it
  // (`turns_session_turn` finds it).
  const perSession = sqlite.prepare<Array<unknown>, Removed>(`
    select session_row as id, count(distinct turn_id) as turns, sum(chunks) as chunks,
           sum(raws) as raws from (
      select t.session_row,
             case when exists (select 1 from turns x where x.session_row = t.session_row
                                 and x.turn_id = t.turn_id and x.id <> t.id
                                 and (x.file_id is null or x.file_id not in (${filesSql})))
                  then null else t.turn_id end as turn_id,
             (select count(*) from chunks c where c.turn_row = t.id) as chunks,
             (select count(*) from raw_records r where r.turn_row = t.id) as raws
        from turns t where t.file_id in (${filesSql})
      union all
      select r.session_row, null, 0, 1
        from raw_records r
       where r.file_id in (${filesSql}) and r.turn_row is null and r.session_row is not null
    ) group by session_row`)
  const subtract = sqlite.prepare<Removed>(`
    update sessions set turn_count = turn_count - @turns, chunk_count = chunk_count - @chunks,
      raw_count = raw_count - @raws
    where id = @id`)
  return (...parameters) => {
    const rows = perSession.all([...parameters, ...parameters, ...parameters])
    for (const row of rows) subtract.run(row)
  }
}

interface Removed {
  readonly id: number
  readonly turns: number
  readonly chunks: number
  readonly raws: number
}

/**
 * The counts as SQL: per source (`sessions`, `turns`, `chunks`, `raw_records` from the stored
 * counts), for `indexStatus` and `recallStatus`.
 */
export const COUNTS_BY_SOURCE_SQL = `select source, count(*) as sessions,
    coalesce(sum(turn_count), 0) as turns, coalesce(sum(chunk_count), 0) as chunks,
    coalesce(sum(raw_count), 0) as raw_records
  from sessions group by source`

/** Raw records stored with no session (the partial preamble index finds them). */
export const SESSIONLESS_RECORDS_SQL = `select count(*) as n from raw_records
  where turn_row is null and session_row is null`

/**
 * The lexical backlog: chunks a bulk indexing run wrote without adding them to `chunks_fts` row by
 * row, added in one statement at the run's end. Each commit of a run that fills FTS5 through the
 * insert trigger flushes a small segment, and FTS5 merges those again and again as the index
 * grows; one `insert … select` at the end builds large segments once (the bench corpus, whole
 * runs: 2 000 files 15.4 → 14.5 s, 10 000 files 82.6 → 72.5–77.7 s).
 *
 * Guarantees (schema 8, `lexical_backlog`): while the mark is set, exactly the chunks with an id
 * above it are missing from `chunks_fts` — the triggers keep that through inserts, rewrites, prunes
 * and forgets, in the same transactions as the chunk rows, so a run killed at any point leaves a
 * consistent index whose newest chunks are not yet found by the lexical arm (the vector arm and
 * navigation are unaffected). The next indexing run adds them, also when it has nothing else to do.
 * The functions throw driver errors: callers wrap them.
 */
import type { Database } from "better-sqlite3"
import { FTS_TEXT_FUNCTION } from "./fts-text.js"
import { shouldDeferLookupIndexes } from "./lookup-indexes.js"

/**
 * Whether a run should defer the full-text index: when it would defer the lookup indexes
 * ({@link shouldDeferLookupIndexes}) and it replaces none of the chunks a word search finds now. A
 * rewritten or re-parsed file's chunks are deleted and written again under new ids, so deferring
 * would take its sessions out of word search until the run's end — minutes at 10 000 files, as
 * when a new version re-parses the whole history. Such a run fills the index row by row instead
 * (~6 % slower); a first index or a catch-up of new sessions and appends still defers.
 */
export const shouldDeferLexicalIndex = (run: {
  readonly plannedBytes: number
  readonly indexedBytes: number
  /** Whether some planned file has indexed content the run deletes and writes again. */
  readonly replacesIndexedContent: boolean
}): boolean =>
  !run.replacesIndexedContent && shouldDeferLookupIndexes(run.plannedBytes, run.indexedBytes)

/**
 * Leaves chunks written from now on out of `chunks_fts` until {@link finishLexicalBacklog}. A mark
 * already set stays while chunks above it wait; one no chunk is above (they were all deleted, as
 * by a forget) moves down to the highest chunk, where it would otherwise let new chunks in row by
 * row.
 */
export const deferLexicalIndex = (sqlite: Database): void => {
  sqlite
    .prepare(
      `insert into lexical_backlog (id, above) select 1, coalesce(max(id), 0) from chunks where true
         on conflict (id) do update set above = excluded.above
         where excluded.above <= lexical_backlog.above`,
    )
    .run()
}

/** Chunks not yet in `chunks_fts` (0 when nothing is deferred). */
export const lexicalBacklogSize = (sqlite: Database): number => {
  const mark = sqlite.prepare("select above from lexical_backlog").pluck().get() as
    number | undefined
  if (mark === undefined) return 0
  return sqlite.prepare("select count(*) from chunks where id > ?").pluck().get(mark) as number
}

/** Whether some chunk is not yet in `chunks_fts` (two index probes; what a search checks). */
export const hasLexicalBacklog = (sqlite: Database): boolean =>
  sqlite
    .prepare(
      "select 1 from lexical_backlog b where exists (select 1 from chunks c where c.id > b.above)",
    )
    .get() !== undefined

/**
 * Adds the deferred chunks to `chunks_fts` and clears the mark, in one transaction (an
 * interrupted call changes nothing); the number of chunks added.
 */
export const finishLexicalBacklog = (sqlite: Database): number =>
  sqlite
    .transaction((): number => {
      const mark = sqlite.prepare("select above from lexical_backlog").pluck().get() as
        number | undefined
      if (mark === undefined) return 0
      const added = sqlite
        .prepare(
          `insert into chunks_fts (rowid, text)
             select id, ${FTS_TEXT_FUNCTION}(text) from chunks where id > ? order by id`,
        )
        .run(mark).changes
      sqlite.prepare("delete from lexical_backlog").run()
      return added
    })
    .immediate()

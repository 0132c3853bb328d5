/**
 * Gives back the disk space that forget, prune and the int8 vector conversion freed. SQLite keeps
 * freed pages inside the file for later writes, and FTS5 keeps a deleted chunk's postings in its
 * older segments until they merge; so the forgotten text's words stay in the file, and the file
 * never shrinks. {@link vacuumIndex} drops the vectors no chunk holds, merges the full-text
 * segments (FTS5 `optimize`, which drops
 * the deleted postings), rewrites the file (`VACUUM`) and truncates the write-ahead log.
 * Guarantees: it holds the indexer lock (an indexing or embedding run in progress is an
 * `IndexBusyError`, and neither starts while it runs); a failure or a kill leaves the file as it
 * was (SQLite's transaction); the rewrite spills to temporary files, not memory. It needs free
 * disk space up to about twice the compacted file while it runs (the temporary copy, then the
 * log). Readers (a search, the MCP server) keep working meanwhile.
 */
import type { Database } from "better-sqlite3"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { IndexBusyError, RecallStorageError } from "./errors.js"
import { dropUnreferencedVectors } from "./gone-vectors.js"
import { acquireIndexLock, IndexerProcess } from "./index-lock.js"
import { withSortSettings } from "./lookup-indexes.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"

/** What a vacuum did. */
export interface VacuumReport {
  /** Bytes of the database (its pages) before and after, without the write-ahead log. */
  readonly bytesBefore: number
  readonly bytesAfter: number
  /** Bytes of free pages the file held before (what later writes would have reused). */
  readonly freeBytesBefore: number
  /** Wall time of the run, in milliseconds. */
  readonly ms: number
}

/** Bytes of the database's pages, and of its free ones (without the write-ahead log). */
export const databasePages = (sqlite: Database): { bytes: number; free: number } => {
  const size = sqlite.pragma("page_size", { simple: true }) as number
  return {
    bytes: (sqlite.pragma("page_count", { simple: true }) as number) * size,
    free: (sqlite.pragma("freelist_count", { simple: true }) as number) * size,
  }
}

/**
 * Lock lease of a vacuum. A `VACUUM` is one synchronous statement, so the lease cannot be renewed
 * while it runs: long enough for a multi-gigabyte index on a slow disk.
 */
const VACUUM_LEASE_MS = 60 * 60 * 1000

/** Merges the full-text index, rewrites the database file and truncates its log; see the header. */
export const vacuumIndex = (): Effect.Effect<
  VacuumReport,
  RecallStorageError | IndexBusyError,
  RecallDatabase | IndexerProcess
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const host = yield* IndexerProcess
    const startedAt = yield* Clock.currentTimeMillis
    const lease = yield* acquireIndexLock(db.sqlite, db.path, host, startedAt, VACUUM_LEASE_MS)
    const sqlite = db.sqlite
    const pages = () => databasePages(sqlite)
    const run = Effect.try({
      try: () => {
        const before = pages()
        // Vectors no chunk holds (text forgotten or rewritten away, or noted by a killed run).
        sqlite.transaction(() => dropUnreferencedVectors(sqlite)).immediate()
        sqlite.prepare("insert into chunks_fts (chunks_fts) values ('optimize')").run()
        withSortSettings(sqlite, () => sqlite.exec("vacuum"))
        sqlite.pragma("wal_checkpoint(TRUNCATE)")
        return { before, after: pages() }
      },
      catch: storageFailure("vacuum", db.path),
    })
    const { before, after } = yield* run.pipe(Effect.ensuring(lease.release))
    const finishedAt = yield* Clock.currentTimeMillis
    return {
      bytesBefore: before.bytes,
      bytesAfter: after.bytes,
      freeBytesBefore: before.free,
      ms: finishedAt - startedAt,
    }
  })

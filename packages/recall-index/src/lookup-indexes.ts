/**
 * Lookup indexes an indexing run may build once at its end instead of row by row: the secondary
 * indexes whose keys arrive in no order — a chunk's content hash, a turn's id (a uuid), a turn's
 * timestamp (files are read in discovery order, not time order). Each file written adds keys all
 * over such an index, so every commit rewrites a leaf page per key and the WAL traffic grows with
 * the index: at 2 000 bench files (419 k chunks) the three cost about a third of the run. A run
 * with much to write drops them first and builds them at its end, a sort (1.4 s for those 419 k
 * chunks).
 *
 * Guarantees: the definitions are the migrations' (a test compares them with a freshly migrated
 * database); no query depends on these indexes for its result, only for its speed, and the
 * search queries that would probe them once per row read the table once instead while they are
 * missing ({@link hasLookupIndex}); a run that stops before building them (killed, interrupted,
 * failed) leaves correct rows, and the next indexing run, or embedding run, finds them missing
 * and builds them. The functions throw driver errors: callers wrap them.
 */
import type { Database } from "better-sqlite3"

/** The deferrable indexes, by name, with the statement that builds each. */
export const LOOKUP_INDEXES: ReadonlyArray<{ readonly name: string; readonly sql: string }> = [
  { name: "turns_turn_id", sql: "create index if not exists turns_turn_id on turns(turn_id)" },
  {
    name: "turns_timestamp",
    sql: "create index if not exists turns_timestamp on turns(timestamp)",
  },
  {
    name: "chunks_content_hash",
    sql: "create index if not exists chunks_content_hash on chunks(content_hash)",
  },
]

/**
 * Transcript bytes a run must parse before deferring pays: below this the three indexes are
 * cheap to keep up row by row and a small run (the common, incremental one) never rewrites them.
 */
export const DEFER_LOOKUP_INDEXES_MIN_BYTES = 16 * 1024 * 1024

/**
 * Whether a run about to parse `plannedBytes` into an index already covering `indexedBytes`
 * should defer the lookup indexes. Building them reads every row (~4.5 ms per indexed MB here);
 * keeping them up costs ~35 ms per written MB at 2 000 files, more as they grow — so deferring
 * wins while the index is under ~7 times what the run writes. The rule asks for 4 times, and at
 * least {@link DEFER_LOOKUP_INDEXES_MIN_BYTES}: a first index of a history, or a large catch-up.
 */
export const shouldDeferLookupIndexes = (plannedBytes: number, indexedBytes: number): boolean =>
  plannedBytes >= DEFER_LOOKUP_INDEXES_MIN_BYTES && plannedBytes * 4 >= indexedBytes

/**
 * Whether `sqlite` has the lookup index `name` now. A query that would look rows up through it
 * row by row checks first and, without it, reads the table once instead (a per-row scan of 2 M
 * chunks took a search 248 s).
 */
export const hasLookupIndex = (sqlite: Database, name: string): boolean =>
  sqlite.prepare("select 1 from sqlite_master where type = 'index' and name = ?").get(name) !==
  undefined

/** Names of the lookup indexes `sqlite` lacks (empty when all exist). */
export const missingLookupIndexes = (sqlite: Database): Array<string> =>
  LOOKUP_INDEXES.filter((i) => !hasLookupIndex(sqlite, i.name)).map((i) => i.name)

/** Drops the lookup indexes, in one transaction. */
export const dropLookupIndexes = (sqlite: Database): void => {
  sqlite
    .transaction(() => {
      for (const { name } of LOOKUP_INDEXES) sqlite.exec(`drop index if exists ${name}`)
    })
    .immediate()
}

/**
 * Sort memory while the lookup indexes are built: a few MB of working set per sort run (SQLite
 * takes it from the page cache size), spilled to temporary files (not memory, as this
 * connection's other work is), with one helper thread. Building the three at 2.09 M chunks:
 * 4.7 s and +33 MB of peak against 10.4 s and +163 MB with the connection's settings (64 MiB
 * cache, temporary storage in memory), where they were the peak of a whole `baton recall index`
 * (352 MB).
 */
export const SORT_SETTINGS = { temp_store: "FILE", threads: "1", cache_size: "-16384" } as const

/**
 * Runs `build` under {@link SORT_SETTINGS}, restoring the connection's own after (also when it
 * throws). Best effort: temporary storage stays as it is while the connection holds temporary
 * objects (changing it would drop them, e.g. the lexical arm's term tables), and a setting SQLite
 * refuses stays as it was.
 */
export const withSortSettings = <A>(sqlite: Database, build: () => A): A => {
  const hasTempObjects =
    sqlite.prepare("select 1 from temp.sqlite_master limit 1").get() !== undefined
  const prior: Array<[string, unknown]> = []
  for (const [name, value] of Object.entries(SORT_SETTINGS)) {
    if (name === "temp_store" && hasTempObjects) continue
    try {
      const was: unknown = sqlite.pragma(name, { simple: true })
      sqlite.pragma(`${name} = ${value}`)
      prior.push([name, was])
    } catch {
      // Refused (temporary storage inside a transaction that uses it): left as it was.
    }
  }
  try {
    return build()
  } finally {
    for (const [name, was] of prior.reverse()) {
      try {
        sqlite.pragma(`${name} = ${String(was)}`)
      } catch {
        // Restoring a value the connection had cannot fail on an open handle.
      }
    }
  }
}

/** Builds the lookup indexes that are missing, in one transaction; the names it built. */
export const buildLookupIndexes = (sqlite: Database): Array<string> => {
  const missing = missingLookupIndexes(sqlite)
  if (missing.length === 0) return []
  withSortSettings(sqlite, () =>
    sqlite
      .transaction(() => {
        for (const { name, sql } of LOOKUP_INDEXES) if (missing.includes(name)) sqlite.exec(sql)
      })
      .immediate(),
  )
  return missing
}

/**
 * Probes the vector store recall builds on: better-sqlite3 opens an in-memory database, the
 * sqlite-vec extension loads and answers a one-row KNN query, and FTS5 is checked by creating
 * a table. Guarantees: touches no file on disk, always closes the database, and loads the
 * native modules only when the probe runs (importing this package stays cheap).
 */
import type BetterSqlite3 from "better-sqlite3"
import type { Database } from "better-sqlite3"
import * as Effect from "effect/Effect"
import { VectorStoreUnavailableError } from "./errors.js"
import type { VectorStoreProbeStage } from "./errors.js"

/** What the probe found: library versions and whether full-text search is compiled in. */
export interface VectorStoreProbe {
  readonly sqliteVersion: string
  readonly vecVersion: string
  readonly fts5: boolean
}

const unavailable =
  (stage: VectorStoreProbeStage) =>
  (cause: unknown): VectorStoreUnavailableError =>
    new VectorStoreUnavailableError({
      stage,
      reason: cause instanceof Error ? cause.message : String(cause),
    })

// better-sqlite3 is CommonJS: under Node's ESM loader its `module.exports` arrives as `default`,
// which the `export =` typings do not describe for a dynamic import.
interface DriverModule {
  readonly default: typeof BetterSqlite3
}

const openMemoryDatabase: Effect.Effect<Database, VectorStoreUnavailableError> = Effect.tryPromise({
  try: () => import("better-sqlite3") as Promise<unknown> as Promise<DriverModule>,
  catch: unavailable("load-driver"),
}).pipe(
  Effect.flatMap(({ default: Driver }) =>
    Effect.try({
      try: (): Database => new Driver(":memory:"),
      catch: unavailable("open-database"),
    }),
  ),
)

const loadVecExtension = (db: Database): Effect.Effect<void, VectorStoreUnavailableError> =>
  Effect.tryPromise({ try: () => import("sqlite-vec"), catch: unavailable("load-extension") }).pipe(
    Effect.flatMap((vec) =>
      Effect.try({ try: () => vec.load(db), catch: unavailable("load-extension") }),
    ),
  )

const hasFts5 = (db: Database): boolean => {
  try {
    db.exec("create virtual table temp.baton_probe_fts using fts5(body)")
    return true
  } catch {
    return false
  }
}

const queryVersions = (
  db: Database,
): Effect.Effect<VectorStoreProbe, VectorStoreUnavailableError> =>
  Effect.try({
    try: (): VectorStoreProbe => {
      const versions = db
        .prepare("select sqlite_version() as sqlite, vec_version() as vec")
        .get() as {
        sqlite: string
        vec: string
      }
      // What the index stores: int8 vectors searched by cosine distance.
      db.exec(
        "create virtual table temp.baton_probe_vec using vec0(embedding int8[2] distance_metric=cosine)",
      )
      db.exec(
        "insert into temp.baton_probe_vec(rowid, embedding) values (1, vec_int8('[127, 0]')), (2, vec_int8('[0, 127]'))",
      )
      const nearest = db
        .prepare(
          "select rowid from temp.baton_probe_vec where embedding match vec_int8(?) and k = 1",
        )
        .get("[114, 13]") as { rowid: number } | undefined
      if (nearest?.rowid !== 1) {
        throw new Error(
          nearest === undefined
            ? "vec0 KNN query returned no row"
            : "vec0 int8 cosine KNN returned the farther row",
        )
      }
      return { sqliteVersion: versions.sqlite, vecVersion: versions.vec, fts5: hasFts5(db) }
    },
    catch: unavailable("query"),
  })

/** Opens an in-memory SQLite database, loads sqlite-vec, runs a one-row KNN query and reports versions. */
export const probeVectorStore = (): Effect.Effect<VectorStoreProbe, VectorStoreUnavailableError> =>
  Effect.acquireUseRelease(
    openMemoryDatabase,
    (db) => loadVecExtension(db).pipe(Effect.flatMap(() => queryVersions(db))),
    (db) => Effect.sync(() => db.close()),
  )

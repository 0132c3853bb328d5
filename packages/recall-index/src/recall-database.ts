/**
 * The recall index database: one SQLite file opened with better-sqlite3, sqlite-vec loaded, WAL
 * and a busy timeout set, foreign keys on, migrated to the latest schema through Kysely's
 * `Migrator` (skipped when `meta.schema_version` already names the latest). Guarantees: the data directory is created 0700 and the database file 0600 (SQLite
 * gives the WAL and shm files the same mode); the handle is closed when the scope closes; driver
 * failures become {@link RecallStorageError}. It holds no indexing rules.
 */
import type BetterSqlite3 from "better-sqlite3"
import type { Database } from "better-sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Scope } from "effect"
import type { Kysely } from "kysely"
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { RECALL_DATABASE_FILE } from "./data-directory.js"
import { RecallStorageError } from "./errors.js"
import type { RecallStorageOperation } from "./errors.js"
import {
  RECALL_SCHEMA_VERSION,
  recallMigrationProvider,
  registerRecallFunctions,
} from "./recall-schema.js"
import type { RecallTables } from "./recall-schema.js"

/** An open recall database: Kysely for queries, the raw handle for prepared bulk writes. */
export interface RecallDatabaseShape {
  readonly path: string
  /**
   * Kysely over the same handle, built on first call and then reused. Loading Kysely (~260 ES
   * modules, ~0.2 s) is left to the callers that use it (the indexer, migrations), so a search,
   * grep or status call does not pay it.
   */
  readonly kysely: () => Promise<Kysely<RecallTables>>
  readonly sqlite: Database
  /**
   * Announces a writer that is about to wait for the write lock (`forget`, `prune`): an index
   * run holds that lock almost continuously (its commit groups) and pauses between files while
   * a writer is announced. Returns the release, to call once the writer's transaction ended.
   */
  readonly announceWriter: () => () => void
  /** True while a writer is announced (the indexer asks between files). */
  readonly writerWaiting: () => boolean
}

/**
 * An announcement older than this is a dead writer's leftover and ignored (a live writer's
 * transaction is over long before: the busy timeout is 5 s).
 */
export const WRITER_ANNOUNCEMENT_STALE_MS = 60_000

/**
 * Writer announcements: one file per waiting writer beside the database,
 * `<db>-writer-<epoch ms>-<pid>-<n>`, so concurrent writers never remove each other's.
 */
const writerAnnouncements = (path: string) => {
  const dir = dirname(path)
  const prefix = `${basename(path)}-writer-`
  let sequence = 0
  return {
    announceWriter: (): (() => void) => {
      sequence += 1
      const file = join(dir, `${prefix}${Date.now()}-${process.pid}-${sequence}`)
      try {
        writeFileSync(file, "", { mode: 0o600, flag: "wx" })
      } catch {
        // Without the announcement the writer still gets the lock when the run ends (or times out).
        return () => undefined
      }
      return () => rmSync(file, { force: true })
    },
    writerWaiting: (): boolean => {
      let names: Array<string>
      try {
        names = readdirSync(dir)
      } catch {
        return false
      }
      const now = Date.now()
      return names.some(
        (name) =>
          name.startsWith(prefix) &&
          now - Number(name.slice(prefix.length).split("-")[0]) < WRITER_ANNOUNCEMENT_STALE_MS,
      )
    },
  }
}

/** Service key for the open recall database. */
export class RecallDatabase extends Context.Service<RecallDatabase, RecallDatabaseShape>()(
  "@baton/recall-index/RecallDatabase",
) {}

/** Where to open the database. */
export interface RecallDatabaseOptions {
  /** The Baton data directory (see `batonDataDir`); created 0700 when missing. */
  readonly dataDir: string
  /** Database file name; default `recall-index.db`. */
  readonly fileName?: string
  /** SQLite `busy_timeout` in milliseconds; default 5 000. */
  readonly busyTimeoutMs?: number
}

/** Wraps a driver failure as a {@link RecallStorageError}. */
export const storageFailure =
  (operation: RecallStorageOperation, path: string) =>
  (cause: unknown): RecallStorageError =>
    new RecallStorageError({
      operation,
      path,
      reason: cause instanceof Error ? cause.message : String(cause),
    })

// better-sqlite3 is CommonJS: under Node's ESM loader its `module.exports` arrives as `default`.
interface DriverModule {
  readonly default: typeof BetterSqlite3
}

const openFile = (
  path: string,
  busyTimeoutMs: number,
): Effect.Effect<Database, RecallStorageError> =>
  Effect.tryPromise({
    try: async (): Promise<Database> => {
      const { default: Driver } = (await import("better-sqlite3")) as unknown as DriverModule
      const vec = await import("sqlite-vec")
      if (!existsSync(path)) closeSync(openSync(path, "a", 0o600))
      const db = new Driver(path)
      try {
        vec.load(db)
        registerRecallFunctions(db)
        db.pragma("journal_mode = WAL")
        db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`)
        db.pragma("foreign_keys = ON")
        db.pragma("synchronous = NORMAL")
        db.pragma("cache_size = -65536")
        db.pragma("temp_store = MEMORY")
      } catch (error) {
        db.close()
        throw error
      }
      return db
    },
    catch: storageFailure("open", path),
  })

/**
 * The file's `meta.schema_version` (written by the latest migration it ran); undefined when
 * there is none (a new file, or one from before the version was written). The latest version
 * lets opening skip kysely's Migrator (~10 ms per open, which every CLI call and MCP tool call
 * pays, and loading Kysely itself); any other runs it.
 */
const storedSchemaVersion = (sqlite: Database): number | undefined => {
  try {
    const row = sqlite.prepare("select value from meta where key = 'schema_version'").get() as
      { value: string } | undefined
    const version = Number(row?.value)
    return Number.isInteger(version) ? version : undefined
  } catch {
    return undefined
  }
}

/**
 * An index a newer Baton wrote (a schema this version does not know) is left untouched: its
 * migration log names migrations this version lacks, so the Migrator would only call it corrupt.
 */
const newerSchema = (path: string, version: number): RecallStorageError =>
  new RecallStorageError({
    operation: "open",
    path,
    reason: `written by a newer Baton (schema version ${version}; this one knows up to ${RECALL_SCHEMA_VERSION})`,
  })

const migrate = (
  kysely: () => Promise<Kysely<RecallTables>>,
  path: string,
): Effect.Effect<void, RecallStorageError> =>
  Effect.tryPromise({
    try: async (): Promise<void> => {
      const { Migrator } = await import("kysely")
      const migrator = new Migrator({ db: await kysely(), provider: recallMigrationProvider })
      const { error } = await migrator.migrateToLatest()
      if (error !== undefined) throw error
    },
    catch: storageFailure("migrate", path),
  })

/**
 * `mkdir -p` with `mode` for the directories it creates. Not Node's recursive `mkdirSync`: that
 * loops forever where `mkdir` answers ENOENT under an existing parent (Node 20 on `/proc/x`);
 * here each missing directory is made once, and a refusal throws (ENOENT, ENOTDIR, EACCES, …).
 * A path that exists and is not a directory throws EEXIST.
 */
export const makeDirectory = (dir: string, mode: number): void => {
  const missing: Array<string> = []
  for (let at = resolve(dir); !existsSync(at); at = dirname(at)) {
    missing.push(at)
    if (dirname(at) === at) break
  }
  if (missing.length === 0) {
    mkdirSync(dir, { recursive: true, mode }) // a directory: no-op; a file: EEXIST
    return
  }
  for (const at of missing.reverse()) {
    try {
      mkdirSync(at, { mode })
    } catch (error) {
      // Made by another process in between: fine when it is a directory.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !isDirectory(at)) throw error
    }
  }
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** Opens (creating and migrating when needed) the recall database; closed with the scope. */
export const openRecallDatabase = (
  options: RecallDatabaseOptions,
): Effect.Effect<RecallDatabaseShape, RecallStorageError, Scope.Scope> => {
  const path = join(options.dataDir, options.fileName ?? RECALL_DATABASE_FILE)
  return Effect.acquireRelease(
    Effect.gen(function* () {
      yield* Effect.try({
        try: () => makeDirectory(options.dataDir, 0o700),
        catch: storageFailure("create-directory", options.dataDir),
      })
      const sqlite = yield* openFile(path, options.busyTimeoutMs ?? 5000)
      const builder = lazyKysely(sqlite)
      const shape: RecallDatabaseShape = {
        path,
        kysely: builder.get,
        sqlite,
        ...writerAnnouncements(path),
      }
      const version = storedSchemaVersion(sqlite)
      if (version !== undefined && version > RECALL_SCHEMA_VERSION) {
        yield* closeHandle(builder, sqlite)
        return yield* newerSchema(path, version)
      }
      if (version !== RECALL_SCHEMA_VERSION) {
        yield* migrate(builder.get, path).pipe(Effect.tapError(() => closeHandle(builder, sqlite)))
      }
      return { shape, builder }
    }),
    ({ builder, shape }) => closeHandle(builder, shape.sqlite),
  ).pipe(Effect.map(({ shape }) => shape))
}

/** Kysely over `sqlite`, built on the first `get`; `destroy` only destroys what was built. */
const lazyKysely = (sqlite: Database) => {
  let built: Promise<Kysely<RecallTables>> | undefined
  return {
    get: (): Promise<Kysely<RecallTables>> =>
      (built ??= import("kysely").then(
        ({ Kysely, SqliteDialect }) =>
          new Kysely<RecallTables>({ dialect: new SqliteDialect({ database: sqlite }) }),
      )),
    destroy: async (): Promise<void> => {
      // A failed build or destroy must not keep the finalizer from closing the handle.
      const kysely = await built?.catch(() => undefined)
      await kysely?.destroy().catch(() => undefined)
    },
  }
}

/** Destroys the Kysely instance if one was built (it closes the handle), then the handle. */
const closeHandle = (
  builder: ReturnType<typeof lazyKysely>,
  sqlite: Database,
): Effect.Effect<void> =>
  Effect.promise(builder.destroy).pipe(
    Effect.andThen(
      Effect.sync(() => {
        if (sqlite.open) sqlite.close()
      }),
    ),
  )

/** Layer opening the recall database for the layer's lifetime. */
export const recallDatabaseLayer = (
  options: RecallDatabaseOptions,
): Layer.Layer<RecallDatabase, RecallStorageError> =>
  Layer.effect(RecallDatabase, openRecallDatabase(options))

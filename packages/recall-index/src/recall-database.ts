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
  accessSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { RECALL_DATABASE_FILE } from "./data-directory.js"
import { processAlive } from "./process-alive.js"
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

/**
 * What to add to the reason (`<code>: <message>`) of a failed open whose SQLite `code` hides the
 * cause: a full disk (SQLite cannot size the `-shm` file it maps, and says only "disk I/O error")
 * or a read-only file system (SQLite says only "unable to open database file": a WAL database
 * needs its `-wal` and `-shm` files, which it cannot create there). Empty when the code says
 * enough. Shared with the read-only check `baton doctor` makes, so both give the same message.
 * The `-shm` (3 bytes) and empty `-wal` a full-disk open leaves are left alone: another process
 * may hold the database and map that `-shm`, and SQLite re-initializes both on the next open.
 */
export const openFailureDetail = (code: unknown, path: string): string => {
  if (code === "SQLITE_IOERR_SHMSIZE")
    return "; no room on the disk for the index's shared-memory (-shm) file"
  if (code !== "SQLITE_CANTOPEN") return ""
  try {
    accessSync(dirname(path), constants.W_OK)
    return ""
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EROFS"
      ? `; EROFS: ${dirname(path)} is on a read-only file system`
      : ""
  }
}

/** {@link storageFailure} for an open, naming what {@link openFailureDetail} finds. */
const openFailure =
  (path: string) =>
  (cause: unknown): RecallStorageError => {
    const code = (cause as { code?: unknown } | undefined)?.code
    const detail = openFailureDetail(code, path)
    const failure = storageFailure("open", path)(cause)
    return detail === ""
      ? failure
      : new RecallStorageError({
          operation: "open",
          path,
          reason: `${String(code)}: ${failure.reason}${detail}`,
        })
  }

// better-sqlite3 is CommonJS: under Node's ESM loader its `module.exports` arrives as `default`.
interface DriverModule {
  readonly default: typeof BetterSqlite3
}

/**
 * The size a WAL file is cut back to when a writer starts it over (`journal_size_limit`): 16 MiB,
 * a quarter of what an indexing run lets it reach between checkpoints
 * (`RUN_WAL_CHECKPOINT_PAGES`), so an ordinary run never pays to grow it again from nothing.
 */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024

/**
 * After a run that may have grown the WAL (an indexing or embedding run): when the WAL file is
 * past {@link WAL_SIZE_LIMIT_BYTES}, copies it back into the database and cuts it to nothing
 * (`wal_checkpoint(TRUNCATE)`) now, instead of leaving it until the next writer starts it over —
 * which, with an MCP server keeping the file open, may be the next session. The checkpoint waits
 * at most the busy timeout for readers of older snapshots, then does what it could. A small run
 * (the WAL under the limit) pays nothing. Throws driver errors; callers swallow them (the WAL is
 * only left larger).
 */
export const trimWal = (sqlite: Database): void => {
  let size: number
  try {
    size = statSync(`${sqlite.name}-wal`).size
  } catch {
    return // no WAL file (or an in-memory database): nothing to trim
  }
  if (size > WAL_SIZE_LIMIT_BYTES) sqlite.pragma("wal_checkpoint(TRUNCATE)")
}

/**
 * `journal_mode = WAL`, retried while SQLite answers SQLITE_BUSY, until `timeoutMs` has passed.
 * The busy timeout alone does not cover it: the switch reads the file, then upgrades to a write,
 * and when another connection holds the write lock meanwhile (another process switching the same
 * new file, or migrating it), SQLite answers at once, without waiting, to avoid a deadlock
 * (processes opening a new index together failed "database is locked" about 1 open in 600).
 */
const switchToWal = async (db: Database, timeoutMs: number): Promise<void> => {
  const started = Date.now()
  for (;;) {
    try {
      db.pragma("journal_mode = WAL")
      return
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (code !== "SQLITE_BUSY" || Date.now() - started >= timeoutMs) throw error
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 20)))
    }
  }
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
        // The busy timeout first: switching a new file to WAL takes a lock another process
        // opening it at the same moment may hold.
        const timeout = Math.max(0, Math.floor(busyTimeoutMs))
        db.pragma(`busy_timeout = ${timeout}`)
        await switchToWal(db, timeout)
        db.pragma("foreign_keys = ON")
        db.pragma("synchronous = NORMAL")
        db.pragma("cache_size = -65536")
        db.pragma("temp_store = MEMORY")
        // SQLite reuses a WAL file after a checkpoint instead of shrinking it, so one large run
        // (a re-parse, a first index: tens to hundreds of MB) would leave that much on disk for as
        // long as any connection stays open (an MCP server, a `--watch` indexer). With a limit,
        // the writer that starts the WAL over cuts the file back to it.
        db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`)
      } catch (error) {
        db.close()
        throw error
      }
      return db
    },
    catch: openFailure(path),
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

/** How long a process waits for another one's migration before it gives up. */
const MIGRATION_WAIT_MS = 10 * 60_000

/** The lock's content (a pid) and whether it is stale (its process gone, or older than the wait). */
const lockHolder = (lock: string): { content: string; stale: boolean } | undefined => {
  try {
    const content = readFileSync(lock, "utf8")
    const pid = Number(content)
    const age = Date.now() - statSync(lock).mtimeMs
    const dead = Number.isInteger(pid) && pid > 0 && !processAlive(pid)
    // A lock without a pid: its process died between creating and writing it.
    const unwritten = content === "" && age > 5000
    return { content, stale: dead || unwritten || age > MIGRATION_WAIT_MS }
  } catch {
    return undefined
  }
}

/**
 * Removes the stale lock holding `content`, under `<lock>.takeover` (created exclusively): two
 * waiters that both saw it stale must not both remove it — the second would remove the lock the
 * first has taken since. A takeover file left by a process that died in those microseconds is
 * removed after a few seconds.
 */
const takeOver = (lock: string, content: string): boolean => {
  const mutex = `${lock}.takeover`
  try {
    closeSync(openSync(mutex, "wx", 0o600))
  } catch {
    try {
      if (Date.now() - statSync(mutex).mtimeMs > 5000) unlinkSync(mutex)
    } catch {
      // Gone meanwhile.
    }
    return false
  }
  try {
    if (readFileSync(lock, "utf8") === content) unlinkSync(lock)
  } catch {
    // Released or taken over meanwhile.
  } finally {
    try {
      unlinkSync(mutex)
    } catch {
      // Nothing to remove.
    }
  }
  return true
}

/**
 * Takes `<database>.migrate-lock` (created exclusively, holding this pid): SQLite has no lock that
 * spans Kysely's migrations, and two processes opening a new or older index at once (several
 * agent sessions starting together run the SessionStart hook each) would otherwise both migrate —
 * one failing ("table meta already exists"), or worse, one re-running an earlier migration's
 * statements after the other finished (schema version and triggers put back). A lock whose
 * process is gone, or older than the wait, is taken over. Returns the release, or undefined when
 * the lock cannot be created here (the migration then runs unguarded, and fails clearly if the
 * directory is not writable).
 */
const takeMigrationLock = (
  path: string,
): Effect.Effect<(() => void) | undefined, RecallStorageError> =>
  Effect.gen(function* () {
    const lock = `${path}.migrate-lock`
    const started = Date.now()
    for (;;) {
      try {
        const fd = openSync(lock, "wx", 0o600)
        try {
          writeSync(fd, String(process.pid))
        } finally {
          closeSync(fd)
        }
        return () => {
          try {
            if (readFileSync(lock, "utf8") === String(process.pid)) unlinkSync(lock)
          } catch {
            // Gone already: nothing to release.
          }
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined
      }
      const holder = lockHolder(lock)
      if (holder === undefined) continue // released meanwhile
      if (holder.stale) {
        if (!takeOver(lock, holder.content)) yield* Effect.sleep("5 millis")
        continue
      }
      if (Date.now() - started > MIGRATION_WAIT_MS) {
        return yield* new RecallStorageError({
          operation: "migrate",
          path,
          reason: `another Baton process (pid ${holder.content}) has been upgrading this index for ${Math.round(MIGRATION_WAIT_MS / 60_000)} minutes; try again when it finishes`,
        })
      }
      yield* Effect.sleep("50 millis")
    }
  })

/**
 * Brings the file to the latest schema, one process at a time: under the migration lock, the
 * stored version is read again, and a file another process migrated meanwhile is left as it is.
 */
const migrateOnce = (
  kysely: () => Promise<Kysely<RecallTables>>,
  sqlite: Database,
  path: string,
): Effect.Effect<void, RecallStorageError> =>
  Effect.acquireUseRelease(
    takeMigrationLock(path),
    () => {
      const version = storedSchemaVersion(sqlite)
      if (version === RECALL_SCHEMA_VERSION) return Effect.void
      if (version !== undefined && version > RECALL_SCHEMA_VERSION) {
        return Effect.fail(newerSchema(path, version))
      }
      return migrate(kysely, path)
    },
    (release) => Effect.sync(() => release?.()),
  )

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
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !isDirectory(at)) {
        const target = danglingLinkTarget(at)
        if (target === undefined) throw error
        throw new Error(
          `dangling symbolic link: ${at} is a symbolic link to ${target}, which does not exist ` +
            `(create ${target}, or remove the link)`,
          { cause: error },
        )
      }
    }
  }
}

/** Where `path` points when it is a symbolic link to nothing; otherwise undefined. */
const danglingLinkTarget = (path: string): string | undefined => {
  try {
    if (!lstatSync(path).isSymbolicLink() || existsSync(path)) return undefined
    return readlinkSync(path)
  } catch {
    return undefined
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
        yield* migrateOnce(builder.get, sqlite, path).pipe(
          Effect.tapError(() => closeHandle(builder, sqlite)),
        )
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

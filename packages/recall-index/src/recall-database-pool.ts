/**
 * Recall database connections kept open across calls, for long-lived hosts (the MCP server):
 * each call's `layer(...)` lends the connection of that database file instead of opening one,
 * so a call skips the open (driver, sqlite-vec, pragmas), its prepared statements and temp tables
 * survive, and SQLite's page cache stays warm. Guarantees: a connection is lent only while the
 * path still names the file it was opened on (device and inode, checked per call), so a deleted,
 * replaced or recreated database is never read stale — its connection is closed once no call
 * uses it; WAL readers see every commit of other processes (the indexer) as a fresh connection
 * would; two calls opening the same path at once each get a working connection (one is kept);
 * `close()` closes every idle connection and the rest as their calls end. Opening goes through
 * {@link openRecallDatabase} (creating and migrating like `recallDatabaseLayer`).
 */
import { statSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { RECALL_DATABASE_FILE } from "./data-directory.js"
import type { RecallStorageError } from "./errors.js"
import { openRecallDatabase, RecallDatabase } from "./recall-database.js"
import type { RecallDatabaseOptions, RecallDatabaseShape } from "./recall-database.js"

/** Connections shared by the calls of one process. */
export interface RecallDatabasePool {
  /** The database of `options` for one call: a kept connection, or a new one that is kept. */
  readonly layer: (
    options: RecallDatabaseOptions,
  ) => Layer.Layer<RecallDatabase, RecallStorageError>
  /** Closes idle connections now and the others when their calls end; later calls reopen. */
  readonly close: () => Effect.Effect<void>
  /** Connections open now (for tests and diagnostics). */
  readonly size: () => number
}

interface Entry {
  readonly shape: RecallDatabaseShape
  readonly scope: Scope.Closeable
  readonly dev: number
  readonly ino: number
  users: number
  retired: boolean
}

const identity = (path: string): { readonly dev: number; readonly ino: number } | undefined => {
  try {
    const st = statSync(path)
    return { dev: st.dev, ino: st.ino }
  } catch {
    return undefined
  }
}

/** A pool of recall database connections, keyed by database file path. */
export const makeRecallDatabasePool = (): RecallDatabasePool => {
  const entries = new Map<string, Entry>()
  const open = new Set<Entry>()

  const shut = (entry: Entry) =>
    Effect.suspend(() => {
      open.delete(entry)
      return Scope.close(entry.scope, Exit.void)
    })
  const retire = (path: string, entry: Entry) =>
    Effect.suspend(() => {
      if (entries.get(path) === entry) entries.delete(path)
      entry.retired = true
      return entry.users === 0 ? shut(entry) : Effect.void
    })

  const acquire = (options: RecallDatabaseOptions) =>
    Effect.gen(function* () {
      const path = join(options.dataDir, options.fileName ?? RECALL_DATABASE_FILE)
      const known = entries.get(path)
      if (known !== undefined) {
        const now = identity(path)
        if (
          now !== undefined &&
          now.dev === known.dev &&
          now.ino === known.ino &&
          known.shape.sqlite.open
        ) {
          known.users += 1
          return known
        }
        yield* retire(path, known)
      }
      const scope = yield* Scope.make()
      const shape = yield* openRecallDatabase(options).pipe(
        Scope.provide(scope),
        Effect.tapError(() => Scope.close(scope, Exit.void)),
      )
      const at = identity(path) ?? { dev: -1, ino: -1 }
      const entry: Entry = { shape, scope, dev: at.dev, ino: at.ino, users: 1, retired: false }
      open.add(entry)
      // Another call may have opened the same file meanwhile: keep the first, lend this one once.
      if (entries.has(path)) entry.retired = true
      else entries.set(path, entry)
      return entry
    })

  const release = (entry: Entry) =>
    Effect.suspend(() => {
      entry.users -= 1
      return entry.retired && entry.users === 0 ? shut(entry) : Effect.void
    })

  return {
    layer: (options) =>
      Layer.effect(
        RecallDatabase,
        Effect.acquireRelease(acquire(options), release).pipe(Effect.map((e) => e.shape)),
      ),
    close: () =>
      Effect.forEach([...entries], ([path, entry]) => retire(path, entry), { discard: true }),
    size: () => open.size,
  }
}

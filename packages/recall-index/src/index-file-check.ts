/**
 * A read-only look at the recall index file, for `baton doctor`: whether it is there, opens, and
 * which schema it has. Guarantees: never creates, migrates or writes the index (the driver opens
 * the file read-only and must find it; as any reader of a WAL database, SQLite may add its
 * `-wal`/`-shm` side files); an index that cannot be used is a `RecallStorageError` — the same
 * error, with the same message and advice, that an index run or a search would meet.
 */
import type BetterSqlite3 from "better-sqlite3"
import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { RecallStorageError } from "./errors.js"
import { openFailureDetail } from "./recall-database.js"
import { RECALL_SCHEMA_VERSION } from "./recall-schema.js"

/** What {@link checkRecallIndexFile} found. */
export type RecallIndexFileCheck =
  | { readonly _tag: "Missing"; readonly path: string }
  | {
      readonly _tag: "Readable"
      readonly path: string
      readonly bytes: number
      /** `meta.schema_version`; undefined for a file no migration finished. */
      readonly schemaVersion: number | undefined
      readonly sessions: number
    }
  | { readonly _tag: "Unusable"; readonly path: string; readonly error: RecallStorageError }

const reasonOf = (error: unknown): string =>
  error instanceof Error
    ? `${(error as { code?: unknown }).code === undefined ? "" : `${String((error as { code?: unknown }).code)}: `}${error.message}`
    : String(error)

/** Checks the index file at `path` without changing it. */
export const checkRecallIndexFile = (path: string): RecallIndexFileCheck => {
  let bytes: number
  try {
    const info = statSync(path, { throwIfNoEntry: false })
    if (info === undefined) return { _tag: "Missing", path }
    if (info.isDirectory()) {
      return {
        _tag: "Unusable",
        path,
        error: new RecallStorageError({
          operation: "open",
          path,
          reason: "EISDIR: it is a directory",
        }),
      }
    }
    bytes = info.size
  } catch (error) {
    return {
      _tag: "Unusable",
      path,
      error: new RecallStorageError({ operation: "open", path, reason: reasonOf(error) }),
    }
  }
  let db: BetterSqlite3.Database | undefined
  try {
    const Driver = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3
    db = new Driver(path, { readonly: true, fileMustExist: true })
    const tables = new Set(
      (
        db.prepare("select name from sqlite_master where type = 'table'").all() as Array<{
          name: string
        }>
      ).map((row) => row.name),
    )
    const version = tables.has("meta")
      ? Number(
          db.prepare("select value from meta where key = 'schema_version'").pluck().get() ??
            Number.NaN,
        )
      : Number.NaN
    const schemaVersion = Number.isInteger(version) ? version : undefined
    if (schemaVersion !== undefined && schemaVersion > RECALL_SCHEMA_VERSION) {
      return {
        _tag: "Unusable",
        path,
        error: new RecallStorageError({
          operation: "open",
          path,
          reason: `written by a newer Baton (schema version ${schemaVersion}; this one knows up to ${RECALL_SCHEMA_VERSION})`,
        }),
      }
    }
    const sessions = tables.has("sessions")
      ? Number(db.prepare("select count(*) from sessions").pluck().get())
      : 0
    return { _tag: "Readable", path, bytes, schemaVersion, sessions }
  } catch (error) {
    const reason = `${reasonOf(error)}${openFailureDetail((error as { code?: unknown }).code, path)}`
    return {
      _tag: "Unusable",
      path,
      error: new RecallStorageError({ operation: "open", path, reason }),
    }
  } finally {
    db?.close()
  }
}

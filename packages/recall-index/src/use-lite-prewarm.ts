/**
 * Starts loading USE-lite before a search needs it: a short-lived `baton recall search` spends
 * ~0.4 s loading its modules before it embeds the query, and USE-lite's model takes ~1 s to
 * load in its worker, so starting the worker first overlaps the two. Imports no `effect` and no
 * index module (this is `@baton/recall-index/prewarm`, loaded ahead of them). Guarantees: best
 * effort — never throws, reads only `meta.embedder_fingerprint` from an existing database
 * (read-only), and starts a worker only when the search will embed with USE-lite: BATON_EMBEDDER
 * is `use-lite`, or it is `auto` (the default) and the index was last embedded with USE-lite.
 */
import type BetterSqlite3 from "better-sqlite3"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { prewarmUseLiteWorker, USE_LITE_FINGERPRINT_PREFIX } from "./embedders/use-lite-pool.js"

export { RECALL_DATABASE_FILE } from "./data-directory.js"
export { hasPrewarmedUseLiteWorker } from "./embedders/use-lite-pool.js"

/** BATON_EMBEDDER values that mean `auto` (as `embedderConfigFromEnvironment` reads them). */
const autoChoices = new Set(["auto", "embedded", "default"])

/** The space the index at `databasePath` was last embedded in, if it can be read (read-only). */
export const activeFingerprint = (databasePath: string): string | undefined => {
  if (!existsSync(databasePath)) return undefined
  // Required here, not imported: the native driver loads only when there is an index to read.
  const Driver = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3
  const db = new Driver(databasePath, { readonly: true, fileMustExist: true })
  try {
    const value = db
      .prepare("select value from meta where key = 'embedder_fingerprint'")
      .pluck()
      .get()
    return typeof value === "string" ? value : undefined
  } finally {
    db.close()
  }
}

/** Whether a search with `env` over the index at `databasePath` embeds its query with USE-lite. */
export const searchUsesUseLite = (
  env: Readonly<Record<string, string | undefined>>,
  databasePath: string,
): boolean => {
  try {
    const choice = (env["BATON_EMBEDDER"]?.trim() || "auto").toLowerCase()
    if (choice === "use-lite") return true
    if (!autoChoices.has(choice)) return false
    return activeFingerprint(databasePath)?.startsWith(USE_LITE_FINGERPRINT_PREFIX) === true
  } catch {
    return false
  }
}

/**
 * Starts a USE-lite worker (the next USE-lite embedder adopts it) when a search with `env` over
 * the index at `databasePath` will use one; says whether it did.
 */
export const prewarmUseLiteForSearch = (
  env: Readonly<Record<string, string | undefined>>,
  databasePath: string,
): boolean => {
  if (!searchUsesUseLite(env, databasePath)) return false
  try {
    prewarmUseLiteWorker()
    return true
  } catch {
    return false
  }
}

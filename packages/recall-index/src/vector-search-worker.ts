/**
 * The vector arm in a worker thread, for long-lived hosts (the MCP server, benchmarks): while the
 * worker scans the vector codes, the calling thread runs the lexical arm, so a hybrid search
 * costs about the slower arm instead of the sum of both (`searchRecall` starts the vector arm
 * first when given a worker). Guarantees: the same hits as {@link searchVectors} on the same
 * database (the worker runs this package's built `searchVectorsIn` on its own read-only
 * connection, kept per path while the path names the same file, so a replaced database is
 * never read stale and WAL readers see every commit); the
 * worker starts on the first request, does not keep the process alive while idle, and stops
 * on `close()`; a worker that cannot start, crashes or exits fails only its pending requests
 * with {@link VectorWorkerUnavailable}, and the next request starts a new one; callers fall
 * back to the in-process search (`searchRecall` does). A per-process cost: the worker holds
 * its own copy of the segment cache (see `vector-code-store.ts`).
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { RecallStorageError } from "./errors.js"
import { stopWorkerGracefully } from "./worker-stop.js"
import type { CodeHolding, VectorHit, VectorSearchOptions } from "./vector-knn.js"

/** The worker could not answer (not started, crashed, exited, or closed). */
export class VectorWorkerUnavailable extends Data.TaggedError("VectorWorkerUnavailable")<{
  readonly reason: string
}> {}

/** A vector-search worker: {@link searchVectors} against a database file, off the calling thread. */
export interface VectorSearchWorker {
  /**
   * Sends the request when run (the worker starts searching while the caller goes on) and gives
   * the effect that awaits its answer.
   */
  readonly start: (databasePath: string, options: VectorSearchOptions) => Effect.Effect<Awaiting>
  /**
   * Starts the worker (if needed) and has it open the database and read the vector codes it
   * may hold (`warmVectorsIn`, up to `holding.holdBytes`) without waiting: a short-lived caller
   * (a CLI search) warms first, then loads its embedder and embeds the query while the worker
   * starts. Best effort: never fails, and does not keep the process alive.
   */
  readonly warm: (databasePath: string) => Effect.Effect<void>
  /** Stops the worker; pending requests fail with {@link VectorWorkerUnavailable}. */
  readonly close: () => Effect.Effect<void>
  /** How the worker keeps the codes; a caller falling back to its own thread does the same. */
  readonly holding: CodeHolding
}

/** Options of {@link makeVectorSearchWorker}. */
export interface VectorSearchWorkerOptions {
  /**
   * The built module exporting `searchVectorsIn`; default this package's
   * `dist/vector-knn.js` (also when running from `src`, e.g. under vitest: build first).
   */
  readonly moduleUrl?: string
  /**
   * How the worker keeps the vector codes between searches (`CodeHolding`): a one-shot caller
   * gives a small `holdBytes`, so a large collection is streamed instead of held.
   */
  readonly holding?: CodeHolding
}

/** This package's built `vector-knn.js` (no `effect`: the worker starts faster), from `src` or `dist`. */
export const builtVectorSearchModule = (): string =>
  new URL(
    import.meta.url.endsWith(".ts") ? "../dist/vector-knn.js" : "./vector-knn.js",
    import.meta.url,
  ).href

// A script string, so it runs the same whether this module was loaded from `src` or `dist`.
// Connections are kept per path (a few) and reopened when the path names another file (inode),
// so the page cache stays warm across requests and a replaced database is never read stale.
const WORKER_SOURCE = `
const { statSync } = require("node:fs")
const { parentPort, workerData } = require("node:worker_threads")
const Driver = require(workerData.driver)
const vec = require(workerData.vec)
const loaded = import(workerData.module).then(
  (module) => ({ module }),
  (error) => ({ error: String((error && error.message) || error) }),
)
const connections = new Map()
const drop = (path) => {
  const known = connections.get(path)
  connections.delete(path)
  if (known !== undefined && known.db.open) known.db.close()
}
const connection = (path) => {
  const stat = statSync(path)
  const known = connections.get(path)
  if (known !== undefined && known.ino === stat.ino && known.dev === stat.dev && known.db.open) {
    return known.db
  }
  drop(path)
  const db = new Driver(path, { readonly: true, fileMustExist: true })
  try {
    vec.load(db)
    db.pragma("busy_timeout = 5000")
    // As the main connection (recall-database.ts): the rescoring reads stay in SQLite's cache.
    db.pragma("cache_size = -65536")
  } catch (error) {
    db.close()
    throw error
  }
  while (connections.size >= 4) drop(connections.keys().next().value)
  connections.set(path, { db, ino: stat.ino, dev: stat.dev })
  return db
}
parentPort.on("message", async (message) => {
  if (message.stop === true) {
    // Ends the thread without terminate(): see stopWorkerGracefully.
    for (const path of [...connections.keys()]) drop(path)
    parentPort.close()
    return
  }
  try {
    const { module, error } = await loaded
    if (error !== undefined) {
      parentPort.postMessage({ id: message.id, unavailable: "cannot load " + workerData.module + ": " + error })
      return
    }
    if (message.warm === true) {
      // Best effort: a failure here shows again, and is reported, on the search itself.
      if (typeof module.warmVectorsIn === "function") module.warmVectorsIn(connection(message.path), workerData.holding)
      parentPort.postMessage({ id: message.id, warmed: true })
      return
    }
    const outcome = module.searchVectorsIn(connection(message.path), message.options, workerData.holding)
    if (typeof outcome === "string") parentPort.postMessage({ id: message.id, invalid: outcome })
    else parentPort.postMessage({ id: message.id, hits: outcome })
  } catch (error) {
    drop(message.path)
    parentPort.postMessage({ id: message.id, failed: String((error && error.message) || error) })
  }
})
`

interface Answer {
  readonly id: number
  readonly hits?: ReadonlyArray<VectorHit>
  readonly invalid?: string
  readonly failed?: string
  readonly unavailable?: string
  readonly warmed?: boolean
}

type Awaiting = Effect.Effect<
  ReadonlyArray<VectorHit>,
  RecallStorageError | VectorWorkerUnavailable
>

/** The outcome of one request. */
const settled = (path: string, a: Answer | VectorWorkerUnavailable): Awaiting => {
  if (a instanceof VectorWorkerUnavailable) return Effect.fail(a)
  if (a.unavailable !== undefined) {
    return Effect.fail(new VectorWorkerUnavailable({ reason: a.unavailable }))
  }
  if (a.hits !== undefined) return Effect.succeed(a.hits)
  return Effect.fail(
    new RecallStorageError({
      operation: "read",
      path,
      reason: a.invalid ?? a.failed ?? "the vector worker gave no answer",
    }),
  )
}

interface Pending {
  readonly settle: (answer: Answer | VectorWorkerUnavailable) => void
}

/** A worker for {@link VectorSearchWorker} requests (started lazily). */
export const makeVectorSearchWorker = (
  options: VectorSearchWorkerOptions = {},
): VectorSearchWorker => {
  const resolveFrom = createRequire(import.meta.url)
  let current: { worker: Worker; pending: Map<number, Pending> } | undefined
  let nextId = 1
  let closed = false

  const spawn = () => {
    const moduleUrl = options.moduleUrl ?? builtVectorSearchModule()
    if (moduleUrl.startsWith("file:") && !existsSync(fileURLToPath(moduleUrl))) {
      throw new Error(`${fileURLToPath(moduleUrl)} does not exist (build the package)`)
    }
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: resolveFrom.resolve("better-sqlite3"),
        vec: resolveFrom.resolve("sqlite-vec"),
        module: moduleUrl,
        holding: options.holding ?? {},
      },
    })
    const entry = { worker, pending: new Map<number, Pending>() }
    const failAll = (reason: string) => {
      for (const p of entry.pending.values()) p.settle(new VectorWorkerUnavailable({ reason }))
      entry.pending.clear()
      if (current === entry) current = undefined
    }
    worker.on("message", (answer: Answer) => {
      const p = entry.pending.get(answer.id)
      entry.pending.delete(answer.id)
      if (entry.pending.size === 0) worker.unref()
      p?.settle(answer)
    })
    worker.on("error", (e) => failAll(`the vector worker crashed: ${e.message}`))
    worker.on("exit", (code) => failAll(`the vector worker exited with code ${code}`))
    worker.unref()
    current = entry
    return entry
  }

  const start: VectorSearchWorker["start"] = (databasePath, request) =>
    Effect.suspend(() => {
      // Sent now; the returned effect only awaits the answer.
      let entry: { worker: Worker; pending: Map<number, Pending> }
      try {
        if (closed) throw new Error("the vector worker is closed")
        entry = current ?? spawn()
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        return Effect.succeed(settled(databasePath, new VectorWorkerUnavailable({ reason })))
      }
      const id = nextId++
      const answer = new Promise<Answer | VectorWorkerUnavailable>((resolve) => {
        entry.pending.set(id, { settle: resolve })
      })
      entry.worker.ref()
      entry.worker.postMessage({
        id,
        path: databasePath,
        options: { ...request, vector: Float32Array.from(request.vector) },
      })
      return Effect.succeed(
        Effect.promise(() => answer).pipe(Effect.flatMap((a) => settled(databasePath, a))),
      )
    })

  const warm: VectorSearchWorker["warm"] = (databasePath) =>
    Effect.sync(() => {
      if (closed) return
      try {
        ;(current ?? spawn()).worker.postMessage({ id: nextId++, path: databasePath, warm: true })
      } catch {
        // The search that follows starts it again, or falls back to the calling thread.
      }
    })

  return {
    holding: options.holding ?? {},
    start,
    warm,
    close: () =>
      Effect.promise(async () => {
        closed = true
        const entry = current
        current = undefined
        if (entry !== undefined) {
          await stopWorkerGracefully(entry.worker, { stop: true })
          for (const p of entry.pending.values()) {
            p.settle(new VectorWorkerUnavailable({ reason: "the vector worker was closed" }))
          }
        }
      }),
  }
}

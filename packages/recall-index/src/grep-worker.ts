/**
 * A regular-expression grep off the calling thread, under a hard deadline. JavaScript regular
 * expressions backtrack, and no static check catches every pattern that backtracks without end on
 * some text (`(.|\s)*x`, `(a|aa)*b`, `a*a*a*a*b`, `(a?){30}a{30}` all pass a star-height check);
 * one such test blocks its thread, and `grepRecords`' own time budget, checked between records,
 * never runs. So a host that must stay responsive (the MCP server, a CLI call that should end)
 * runs a regex grep in a worker thread on its own read-only connection and stops the worker at
 * the deadline. Guarantees: the same result as {@link grepRecords} on the same database when the
 * worker answers in time (it runs this package's built `grepRecords`); past `maxScanMs` plus a
 * start-up allowance the worker is terminated and the call fails with a {@link RecallQueryError}
 * on `pattern` that says what to change; the caller's thread never runs the pattern. A literal
 * grep needs none of this (an escaped string cannot backtrack) and runs in-process, as does any
 * grep when the database is not a file or the built module is missing. At most
 * {@link GREP_WORKER_SLOTS} workers run at once per process; the others wait for a slot, and a
 * worker's deadline starts when it does (concurrent greps are not called runaway for sharing CPU).
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import type { Database } from "better-sqlite3"
import { RecallNotFoundError, RecallQueryError, RecallStorageError } from "./errors.js"
import type { RecallQueryField, RecallStorageOperation } from "./errors.js"
import { RecallDatabase } from "./recall-database.js"
import { GREP_WORKER_STARTUP_MS } from "./grep-limits.js"
import { checkGrepInput, grepRecords } from "./record-grep.js"
import type { GrepFailure, GrepInput, GrepResult } from "./record-grep.js"
import { stopWorker } from "./worker-stop.js"

/**
 * Regex grep workers that run at once in this process: half the cores, at least one. More would
 * share the cores, and each one's deadline (wall-clock) would then pass while it waits for CPU —
 * calling a sound pattern runaway. The others wait for a slot; the deadline starts with the worker.
 */
export const GREP_WORKER_SLOTS = Math.max(1, Math.floor(availableParallelism() / 2))

const workerSlots = Semaphore.makeUnsafe(GREP_WORKER_SLOTS)

let liveWorkers = 0

/** Regex grep workers this process runs now (at most {@link GREP_WORKER_SLOTS}). */
export const liveGrepWorkers = (): number => liveWorkers

/** What a worker posts back. */
type Answer =
  | { readonly ok: GrepResult }
  | {
      readonly failed: {
        readonly _tag: string
        readonly field?: RecallQueryField
        readonly operation?: RecallStorageOperation
        readonly reason?: string
        readonly sessionId?: string
        readonly message: string
      }
    }

/** This module, built (the worker imports it), from `src` or `dist`. */
const builtModule = (): string =>
  new URL(
    import.meta.url.endsWith(".ts") ? "../dist/grep-worker.js" : "./grep-worker.js",
    import.meta.url,
  ).href

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const Driver = require(workerData.driver)
const post = (answer) => parentPort.postMessage(answer)
import(workerData.module).then(
  async (m) => {
    let sqlite
    try {
      sqlite = new Driver(workerData.path, { readonly: true, fileMustExist: true })
      sqlite.pragma("busy_timeout = 5000")
      post(await m.grepInConnection(sqlite, workerData.path, workerData.input))
    } catch (error) {
      post({ failed: { _tag: "Error", message: String((error && error.message) || error) } })
    } finally {
      if (sqlite !== undefined && sqlite.open) sqlite.close()
    }
  },
  (error) => post({ failed: { _tag: "Error", message: "cannot load " + workerData.module + ": " + String((error && error.message) || error) } }),
)
`

/**
 * Runs {@link grepRecords} on an open connection (what the worker calls). Not for general use: the
 * connection stands in for the whole `RecallDatabase` service, so nothing here may write.
 */
export const grepInConnection = async (
  sqlite: Database,
  path: string,
  input: GrepInput,
): Promise<Answer> => {
  const service = RecallDatabase.of({
    path,
    sqlite,
    kysely: () => Promise.reject(new Error("a grep worker has no Kysely")),
    announceWriter: () => () => undefined,
    writerWaiting: () => false,
  })
  const result = await Effect.runPromise(
    Effect.result(grepRecords(input).pipe(Effect.provide(Layer.succeed(RecallDatabase, service)))),
  )
  if (result._tag === "Success") return { ok: result.success }
  const e = result.failure
  return {
    failed:
      e._tag === "RecallQueryError"
        ? { _tag: e._tag, field: e.field, message: e.message }
        : e._tag === "RecallNotFoundError"
          ? { _tag: e._tag, sessionId: e.sessionId, message: e.message }
          : { _tag: e._tag, operation: e.operation, reason: e.reason, message: e.message },
  }
}

const slowPattern = (seconds: number) =>
  new RecallQueryError({
    field: "pattern",
    message:
      `the regular expression ran for over ${seconds} s without finishing: it backtracks without end on ` +
      "some record (repeats of overlapping parts, like (.|\\s)*, (a|aa)* or a*a*a*). Simplify it — " +
      "[\\s\\S]* for any text, one repeat per part — or search for a plain part of it without regex",
  })

/**
 * {@link grepRecords}, with a regular expression run in a worker thread (on its own read-only
 * connection) stopped at `maxScanMs` + {@link GREP_WORKER_STARTUP_MS}: a pattern that backtracks
 * without end fails with a `RecallQueryError` on `pattern` that says what to change, and the
 * calling thread never runs it. Same result as `grepRecords` when the worker answers in time. A
 * literal grep, or one over a database that is not a file, runs in-process (it cannot backtrack).
 */
export const grepRecordsIsolated = (
  input: GrepInput,
): Effect.Effect<GrepResult, GrepFailure, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const module = builtModule()
    if (input.regex !== true || !existsSync(db.path) || !existsSync(fileURLToPath(module)))
      return yield* grepRecords(input)
    // Refused patterns and bad filters fail here, without a worker.
    const { maxScanMs } = yield* checkGrepInput(input, yield* Clock.currentTimeMillis)
    const budget = maxScanMs + GREP_WORKER_STARTUP_MS
    const answer = yield* Semaphore.withPermit(
      workerSlots,
      Effect.callback<Answer | "timeout">((resume) => {
        const require = createRequire(import.meta.url)
        const worker = new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { driver: require.resolve("better-sqlite3"), module, path: db.path, input },
        })
        liveWorkers += 1
        let settled = false
        const settle = (value: Answer | "timeout") => {
          if (settled) return
          settled = true
          liveWorkers -= 1
          clearTimeout(timer)
          void stopWorker(worker)
          resume(Effect.succeed(value))
        }
        const timer = setTimeout(() => settle("timeout"), budget)
        worker.once("message", (message: Answer) => settle(message))
        worker.once("error", (error) =>
          settle({ failed: { _tag: "Error", message: String(error.message) } }),
        )
        worker.once("exit", (code) =>
          settle({ failed: { _tag: "Error", message: `the grep worker exited (code ${code})` } }),
        )
        return Effect.sync(() => settle("timeout"))
      }),
    )
    if (answer === "timeout") return yield* Effect.fail(slowPattern(Math.round(budget / 1000)))
    if ("ok" in answer) return answer.ok
    const f = answer.failed
    if (f._tag === "RecallNotFoundError")
      return yield* Effect.fail(
        new RecallNotFoundError({ sessionId: f.sessionId ?? "", turnId: null, message: f.message }),
      )
    if (f._tag === "RecallQueryError")
      return yield* Effect.fail(
        new RecallQueryError({ field: f.field ?? "pattern", message: f.message }),
      )
    return yield* Effect.fail(
      new RecallStorageError({
        operation: f.operation ?? "read",
        path: db.path,
        reason: f.reason ?? f.message,
      }),
    )
  })

/**
 * The indexer lock: a single `index_lock` row taken inside a `BEGIN IMMEDIATE` transaction, so
 * the check-and-take is atomic across processes. The holder renews its lease between files. A
 * row is stale (and taken over) when its process is gone or its lease ran out (pid reuse);
 * otherwise the caller gets {@link IndexBusyError} naming the pid. A row with this process's own
 * pid is a holder in this process (a second run, or a `forget --all`, from a long-lived host:
 * busy) while the lease it names is still held here, and otherwise a leftover of an earlier
 * process that had the same pid (a container's pid 1: stale). Liveness is asked of the
 * {@link IndexerProcess} service, never of `process` directly.
 */
import type { Database } from "better-sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { IndexBusyError } from "./errors.js"
import { processAlive } from "./process-alive.js"
import type { RecallStorageError } from "./errors.js"
import { storageFailure } from "./recall-database.js"

/** This process and a way to ask whether another one is alive. */
export interface IndexerProcessShape {
  readonly pid: number
  readonly isAlive: (pid: number) => boolean
}

/** Service key for the indexer's process facts. */
export class IndexerProcess extends Context.Service<IndexerProcess, IndexerProcessShape>()(
  "@baton/recall-index/IndexerProcess",
) {}

/** The Node process: `process.pid`, liveness by signal 0 (EPERM still means alive). */
export const nodeIndexerProcessLayer: Layer.Layer<IndexerProcess> = Layer.succeed(IndexerProcess, {
  pid: process.pid,
  isAlive: processAlive,
})

/** A held lock. */
export interface IndexLease {
  readonly runToken: string
  readonly renew: (now: number) => Effect.Effect<boolean, RecallStorageError>
  readonly release: Effect.Effect<void>
}

/**
 * The run tokens of the leases this process holds now, on any database: what tells a second
 * holder in this process from a dead process that had the same pid.
 */
const heldHere = new Set<string>()

/** Leases taken by this process so far: keeps two tokens taken in one millisecond apart. */
let leasesTaken = 0

interface LockRow {
  readonly pid: number
  readonly run_token: string
  readonly acquired_at: number
  readonly lease_until: number
}

/** Takes the index lock or fails with {@link IndexBusyError}. */
export const acquireIndexLock = (
  sqlite: Database,
  dbPath: string,
  host: IndexerProcessShape,
  now: number,
  leaseMs: number,
): Effect.Effect<IndexLease, IndexBusyError | RecallStorageError> => {
  leasesTaken += 1
  const runToken = `${host.pid}:${now}:${leasesTaken}`
  const holder = (): LockRow | undefined => {
    const row = sqlite
      .prepare("select pid, run_token, acquired_at, lease_until from index_lock where id = 1")
      .get() as LockRow | undefined
    return row !== undefined &&
      row.lease_until > now &&
      (row.pid === host.pid ? heldHere.has(row.run_token) : host.isAlive(row.pid))
      ? row
      : undefined
  }
  const take = sqlite.transaction((): LockRow | undefined => {
    const row = holder()
    if (row !== undefined) return row
    sqlite
      .prepare(
        "insert or replace into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, ?, ?, ?, ?)",
      )
      .run(host.pid, runToken, now, now + leaseMs)
    // Known as held before the commit: a second taker in this process, in a fiber that runs
    // before this one goes on, must not see the row as left over from an earlier process.
    heldHere.add(runToken)
    return undefined
  })
  // A plain read first: a running indexer holds the write lock most of the time (its commit
  // groups), so `BEGIN IMMEDIATE` would wait for it only to find its row.
  return Effect.try({
    try: () => {
      try {
        return holder() ?? take.immediate()
      } catch (error) {
        heldHere.delete(runToken)
        throw error
      }
    },
    catch: storageFailure("write", dbPath),
  }).pipe(
    Effect.flatMap((holder) =>
      holder === undefined
        ? Effect.succeed<IndexLease>({
            runToken,
            renew: (at) =>
              Effect.try({
                try: () =>
                  sqlite
                    .prepare("update index_lock set lease_until = ? where id = 1 and run_token = ?")
                    .run(at + leaseMs, runToken).changes === 1,
                catch: storageFailure("write", dbPath),
              }),
            release: Effect.sync(() => {
              heldHere.delete(runToken)
              try {
                sqlite.prepare("delete from index_lock where run_token = ?").run(runToken)
              } catch {
                // The lease expires on its own; a failed release never masks the run's result.
              }
            }),
          })
        : Effect.fail(
            new IndexBusyError({
              pid: holder.pid,
              since: holder.acquired_at,
              message:
                holder.pid === host.pid
                  ? `the recall index is being updated by this process (pid ${holder.pid}), in another run`
                  : `the recall index is being updated by pid ${holder.pid}`,
            }),
          ),
    ),
  )
}

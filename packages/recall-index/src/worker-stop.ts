/**
 * Stopping a worker thread so that the caller's await always settles. `worker.terminate()`
 * settles on the worker's `exit` event; a worker still starting up (loading its modules) can
 * take a while to stop, and nothing else may keep the event loop alive meanwhile — neither an
 * unref'd worker nor, it turned out, one ref'd just before `terminate()` — so a CLI call whose
 * last step awaited it ended with that await unsettled (Node's exit code 13, seen on about one
 * `baton recall search` in four on an empty index). A ref'd timer holds the loop open until the
 * exit event comes, for at most `capMs`.
 */
import type { Worker } from "node:worker_threads"

/** Terminates `worker`; resolves once it exited, or after `capMs` (default 5 s) in any case. */
export const stopWorker = (worker: Worker, capMs = 5_000): Promise<void> =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(hold)
      resolve()
    }
    const hold = setTimeout(done, capMs)
    worker.terminate().then(done, done)
  })

/**
 * Asks `worker` to end itself — `stop` is posted, and the worker is expected to close what it
 * holds and let its thread end — and resolves once it exited; after `graceMs` it is terminated
 * ({@link stopWorker}). Terminating a worker that is inside a native call which then throws (a
 * better-sqlite3 error on a damaged database) aborted the whole process with a V8 fatal error
 * ("ToLocalChecked Empty MaybeLocal"); a stop message waits until that call has returned.
 */
export const stopWorkerGracefully = (
  worker: Worker,
  stop: unknown,
  graceMs = 2_000,
): Promise<void> =>
  new Promise<void>((resolve) => {
    if (worker.threadId === -1) return resolve() // exited already
    let settled = false
    const done = () => {
      if (settled) return
      settled = true
      clearTimeout(grace)
      worker.off("exit", done)
      resolve()
    }
    // Ref'd: holds the event loop open while an unref'd worker winds down.
    const grace = setTimeout(() => void stopWorker(worker).then(done), graceMs)
    worker.once("exit", done)
    try {
      worker.postMessage(stop)
    } catch {
      clearTimeout(grace)
      void stopWorker(worker).then(done)
    }
  })

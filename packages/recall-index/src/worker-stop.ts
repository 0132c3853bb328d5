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

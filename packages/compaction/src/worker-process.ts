/**
 * What the worker process does for one job: choose how to reach the thread, record the choice in
 * the job, then run the job machine (`runWorker`) to a terminal state.
 *
 * Guarantees:
 * - only a `scheduled` job is started; a job a previous worker already moved on is never
 *   restarted (recovery ends it instead), so no request can be sent twice by two workers;
 * - the transport and the reason for it (every option considered) are written to the job record
 *   and the event log before anything is sent;
 * - when nothing can reach the thread, the job ends through the table's `WorkerLost` (nothing was
 *   sent: failed, with the selector's reasons as the detail).
 */
import type { SelectTransportOptions, ThreadController } from "@baton/ipc-codex"
import { selectTransport } from "@baton/ipc-codex"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Scope } from "effect"
import { JobNotRunnableError } from "./errors.js"
import type { JobLockHeldError, JobLockLostError, JournalError } from "./errors.js"
import { transition } from "./job-machine.js"
import type { ProcessProbe } from "./job-lock.js"
import type { JournalFileSystem } from "./journal-file-system.js"
import { Journal } from "./journal.js"
import type { StoredJob } from "./journal.js"
import { runWorker } from "./worker.js"
import type { RunWorkerOptions } from "./worker.js"

/** A controller for the thread, and which transport it runs on and why. */
export interface OpenedThread {
  readonly controller: ThreadController
  readonly transport: { readonly kind: string; readonly detail: string }
}

/** Opens the thread for the worker (scoped); fails with a sentence saying why nothing can reach it. */
export type ThreadSource = (
  threadId: string,
) => Effect.Effect<OpenedThread, { readonly detail: string }, Scope.Scope>

/** The default source: ipc-codex's selector (extension owner → daemon → stdio), then open it. */
export const selectedThreadSource =
  (options: Omit<SelectTransportOptions, "threadId">): ThreadSource =>
  (threadId) =>
    Effect.gen(function* () {
      const selection = yield* selectTransport({ ...options, threadId })
      const why = selection.reasons.map((r) => `${r.transport}: ${r.verdict} (${r.detail})`)
      if (selection.openController === null || selection.kind === null)
        return yield* Effect.fail({
          detail: `no transport can reach the thread: ${why.join("; ")}`,
        })
      const controller = yield* selection.openController.pipe(
        Effect.mapError((error) => ({
          detail: `opening the thread over ${selection.kind} failed: ${error.message}`,
        })),
      )
      return { controller, transport: { kind: selection.kind, detail: why.join("; ") } }
    })

/** Inputs of `runCompactionWorker`. */
export interface RunCompactionWorkerOptions {
  readonly threadId: string
  readonly jobId: string
  readonly source: ThreadSource
  readonly leaseMs?: number
  readonly cancelPollMs?: number
  readonly afterFlush?: RunWorkerOptions["afterFlush"]
}

/** Runs one scheduled job in this process; returns the job as it ended. */
export const runCompactionWorker = (
  options: RunCompactionWorkerOptions,
): Effect.Effect<
  StoredJob,
  JournalError | JobLockHeldError | JobLockLostError | JobNotRunnableError,
  Journal | JournalFileSystem | ProcessProbe
> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { threadId, jobId } = options
      const journal = yield* Journal
      const stored = yield* journal.readJob(threadId, jobId)
      if (stored.job.status !== "scheduled")
        return yield* new JobNotRunnableError({ jobId, status: stored.job.status })
      const opened = yield* Effect.result(options.source(threadId))
      if (Result.isFailure(opened)) {
        const at = yield* Clock.currentTimeMillis
        const step = transition(stored.job, {
          _tag: "WorkerLost",
          at,
          detail: opened.failure.detail,
        })
        for (const effect of step.effects)
          if (effect._tag === "AppendLog")
            yield* journal.appendEvent(threadId, jobId, { kind: "transition", ...effect.entry })
        return yield* journal.saveJob(step.job, stored.revision)
      }
      const { controller, transport } = opened.success
      yield* journal.saveJob({ ...stored.job, transport }, stored.revision)
      yield* journal.appendEvent(threadId, jobId, {
        at: yield* Clock.currentTimeMillis,
        kind: "note",
        detail: `transport ${transport.kind}: ${transport.detail}`,
      })
      return yield* runWorker({
        threadId,
        jobId,
        controller,
        ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
        ...(options.cancelPollMs === undefined ? {} : { cancelPollMs: options.cancelPollMs }),
        ...(options.afterFlush === undefined ? {} : { afterFlush: options.afterFlush }),
      })
    }),
  )

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
import { OWNED_ELSEWHERE_NEXT_STEP, transition } from "./job-machine.js"
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
) => Effect.Effect<OpenedThread, ThreadSourceFailure, Scope.Scope>

/** Why the thread could not be opened, and what the user should do (default: schedule again). */
export interface ThreadSourceFailure {
  readonly detail: string
  readonly nextStep?: string
  /** Set when another Codex process owns the thread (the job ends `thread_owned_elsewhere`). */
  readonly cause?: "thread_owned_elsewhere"
}

const CHECK_SETUP =
  "check that Codex runs here (codex on PATH or BATON_CODEX_BINARY, the right CODEX_HOME), then schedule again"

/** An opening failure as a sentence: nothing of the job was sent while opening, so never "outcome unknown"; says whether retrying can help. */
export const openFailure = (
  kind: string,
  error: { readonly _tag: string; readonly message: string },
): ThreadSourceFailure => {
  if (error._tag === "ThreadNotFoundError")
    return {
      detail: `thread not found over ${kind}: ${error.message}`,
      nextStep:
        "check the thread id (exactly $CODEX_THREAD_ID) and CODEX_HOME; scheduling again as is will not help",
    }
  if (error._tag === "ActiveWriterError")
    return {
      detail: `opening the thread over ${kind} failed: ${error.message}`,
      nextStep: OWNED_ELSEWHERE_NEXT_STEP,
      cause: "thread_owned_elsewhere",
    }
  if (error._tag === "DisconnectedError" && "reason" in error && typeof error.reason === "string")
    return {
      detail: `opening the thread over ${kind} failed: the ${kind} connection was lost (${error.reason})`,
      nextStep: CHECK_SETUP,
    }
  return {
    detail: `opening the thread over ${kind} failed: ${error.message}`,
    nextStep: CHECK_SETUP,
  }
}

/** The default source: ipc-codex's selector (extension owner → daemon → stdio), then open it. */
export const selectedThreadSource =
  (options: Omit<SelectTransportOptions, "threadId">): ThreadSource =>
  (threadId) =>
    Effect.gen(function* () {
      const selection = yield* selectTransport({ ...options, threadId })
      const why = selection.reasons.map((r) => `${r.transport}: ${r.verdict} (${r.detail})`)
      if (selection.openController === null || selection.kind === null)
        return yield* Effect.fail<ThreadSourceFailure>({
          detail: `no transport can reach the thread: ${why.join("; ")}`,
          nextStep: CHECK_SETUP,
        })
      const kind = selection.kind
      const controller = yield* selection.openController.pipe(
        Effect.mapError((error) => openFailure(kind, error)),
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
          ...(opened.failure.nextStep === undefined ? {} : { nextStep: opened.failure.nextStep }),
          ...(opened.failure.cause === undefined ? {} : { cause: opened.failure.cause }),
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

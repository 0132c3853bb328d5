/**
 * The compaction worker process: `node worker-main.js <threadId> <jobId>`, launched detached by
 * `scheduleCompaction` with `BATON_JOBS_DIR` set. Runs the job to its end and exits 0; exits 1
 * with one line on stderr (the job's `worker.log`) when the journal or the lock fails, and 3 when
 * the job is not scheduled (already started or ended: never restarted).
 *
 * Fault injection for the crash tests only: `BATON_COMPACTION_CRASH_AFTER=<status>` makes the
 * process SIGKILL itself right after the write that made that status durable (the worst moment:
 * the write landed, the send that follows did not happen). A status a batch of events only passed
 * through is durable in the log; the job record then holds the batch's last status.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { jobsDirectory, Journal, journalLayer } from "./journal.js"
import { nodeJournalFileSystemLayerFor } from "./node-services.js"
import { nodeProcessProbeLayer } from "./job-lock.js"
import { runCompactionWorker, selectedThreadSource } from "./worker-process.js"

const [threadId, jobId] = process.argv.slice(2)
if (threadId === undefined || jobId === undefined) {
  process.stderr.write("usage: worker-main.js <threadId> <jobId>\n")
  process.exit(2)
}

const crashAfter = process.env["BATON_COMPACTION_CRASH_AFTER"]

const journal = journalLayer(jobsDirectory(process.env)).pipe(
  Layer.provideMerge(nodeJournalFileSystemLayerFor(process.env)),
)
const crashingJournal =
  crashAfter === undefined || crashAfter === ""
    ? journal
    : Layer.effect(
        Journal,
        Journal.useSync((inner) => ({
          ...inner,
          saveJob: (job: Parameters<typeof inner.saveJob>[0], expected: number) =>
            Effect.tap(inner.saveJob(job, expected), () =>
              Effect.sync(() => {
                if (job.status === crashAfter) process.kill(process.pid, "SIGKILL")
              }),
            ),
        })),
      ).pipe(Layer.provideMerge(journal))

const crash = Effect.sync(() => process.kill(process.pid, "SIGKILL"))

const program = runCompactionWorker({
  threadId,
  jobId,
  ...(crashAfter === undefined || crashAfter === ""
    ? {}
    : {
        // A state a batch only passed through is never saved on its own: kill once the flush
        // that made its transition durable is done.
        afterFlush: (transitions) =>
          transitions.some((t) => t.to === crashAfter) ? crash : Effect.void,
      }),
  source: selectedThreadSource({ stdio: { env: process.env, cwd: process.cwd() } }),
}).pipe(Effect.provide(Layer.mergeAll(crashingJournal, nodeProcessProbeLayer)))

Effect.runPromiseExit(program).then(
  (exit) => {
    if (exit._tag === "Success") {
      process.stderr.write(`job ${jobId} ended ${exit.value.job.status}\n`)
      process.exit(0)
    }
    const failure = exit.cause.reasons[0]
    const error = failure !== undefined && "error" in failure ? failure.error : undefined
    const tag =
      typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Defect"
    const message = error instanceof Error ? error.message : String(exit.cause)
    process.stderr.write(`job ${jobId}: worker stopped (${tag}): ${message}\n`)
    process.exit(tag === "JobNotRunnable" ? 3 : 1)
  },
  (error: unknown) => {
    process.stderr.write(`job ${jobId}: worker crashed: ${String(error)}\n`)
    process.exit(1)
  },
)

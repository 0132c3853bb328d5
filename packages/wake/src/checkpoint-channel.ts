/**
 * The channel to the live agent for "update your checkpoint now", raised when quota pressure
 * first reaches `prepare`. A channel exists only when the job's original thread sits idle in the
 * app-server daemon: then one short turn asks the agent to checkpoint and refresh. Otherwise the
 * request is recorded, and `status` shows it; when the failure may pass (a busy thread, no daemon
 * yet) the outcome says `retryable` and the watcher offers the request again later in the same
 * rise (`checkpointRetryDue`). The daemon adapter never interrupts or steers a busy thread, and
 * says why it did not deliver. Adapters hold no job rules.
 */
import type { CodexConnection, CodexConnectError } from "@baton/ipc-codex"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Scope } from "effect"
import type { JobRecord } from "./job-record.js"
import type { PressureBand } from "./pressure.js"

/** What became of a checkpoint request. */
export interface CheckpointRequestOutcome {
  readonly delivered: boolean
  readonly detail: string
  /** Not delivered, but a later attempt may be (the thread was busy, the daemon unreachable). */
  readonly retryable: boolean
}

/** The channel. */
export interface CheckpointChannelShape {
  readonly request: (
    job: JobRecord,
    band: PressureBand,
    batonCommand: string,
  ) => Effect.Effect<CheckpointRequestOutcome>
}

/** The checkpoint channel service. */
export class CheckpointChannel extends Context.Service<CheckpointChannel, CheckpointChannelShape>()(
  "@baton/wake/CheckpointChannel",
) {}

/** The text of the checkpoint turn. */
export const checkpointRequestText = (job: JobRecord, band: PressureBand, batonCommand: string) =>
  [
    `Baton wake: quota pressure for job ${job.jobId} is ${band}.`,
    `Update the job's checkpoint now (Current position, Verified facts, Next actions), then run: ${batonCommand} wake refresh ${job.jobId}`,
    "Then continue your work.",
  ].join("\n")

/** No live channel: every request is recorded for `status` only. */
export const statusOnlyCheckpointChannel: CheckpointChannelShape = {
  request: () =>
    Effect.succeed({
      delivered: false,
      detail: "no live channel to the agent; status shows the request",
      retryable: false,
    }),
}

/** Layer: status only. */
export const statusOnlyCheckpointChannelLayer: Layer.Layer<CheckpointChannel> = Layer.succeed(
  CheckpointChannel,
  statusOnlyCheckpointChannel,
)

/** Asks through the daemon: only an idle original thread gets the one-turn request. */
export const makeDaemonCheckpointChannel = (
  connect: Effect.Effect<CodexConnection, CodexConnectError, Scope.Scope>,
): CheckpointChannelShape => ({
  request: (job, band, batonCommand) =>
    Effect.scoped(
      Effect.gen(function* () {
        const thread = job.originalThreadId
        if (thread === null)
          return {
            delivered: false,
            detail: "the job names no original thread",
            retryable: false,
          }
        const connection = yield* connect
        const summary = yield* connection.readThread(thread)
        const status = summary.status?.type ?? "unknown"
        if (status !== "idle")
          return {
            delivered: false,
            detail: `the original thread is ${status} in the daemon; status shows the request`,
            retryable: true,
          }
        yield* connection.resumeThread(thread)
        const started = yield* connection.startTurn(
          thread,
          checkpointRequestText(job, band, batonCommand),
        )
        yield* Effect.ignore(connection.unsubscribeThread(thread))
        return {
          delivered: true,
          detail: `turn ${started.turnId} on the idle original thread`,
          retryable: false,
        }
      }),
    ).pipe(
      Effect.catch((error) =>
        Effect.succeed({
          delivered: false,
          detail: `no daemon channel (${error._tag}); status shows the request`,
          retryable: true,
        }),
      ),
    ),
})

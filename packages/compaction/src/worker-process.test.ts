// How a failure to open the thread is worded: the cause, no "outcome unknown" (nothing of the job
// was sent), and "schedule again" only where retrying can help.
import { ActiveWriterError, DisconnectedError, ThreadNotFoundError } from "@baton/ipc-codex"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { describe, expect, test } from "vitest"
import { ProcessProbe } from "./job-lock.js"
import { memoryJournalFileSystemLayer } from "./journal-file-system.js"
import { Journal, journalLayer } from "./journal.js"
import { openFailure, runCompactionWorker } from "./worker-process.js"

describe("openFailure", () => {
  test("a codex that exits at once: the cause, never 'outcome is unknown'", () => {
    const failure = openFailure(
      "stdio",
      new DisconnectedError({
        transport: "stdio",
        reason: "codex app-server exited (code 1)",
        method: "initialize",
        outcomeMayBeUnknown: true,
      }),
    )
    expect(failure.detail).toContain("codex app-server exited (code 1)")
    expect(failure.detail).not.toContain("outcome is unknown")
    expect(failure.nextStep).toContain("BATON_CODEX_BINARY")
  })

  test("an unknown thread: says so, and that scheduling again as is will not help", () => {
    const failure = openFailure(
      "stdio",
      new ThreadNotFoundError({
        threadId: "019a0000-0000-7000-8000-000000000001",
        method: "thread/resume",
        detail: "no rollout found",
      }),
    )
    expect(failure.detail).toContain("thread not found")
    expect(failure.nextStep).toContain("will not help")
  })

  test("a thread another Codex process owns: its own reason and advice, nothing sent", async () => {
    const threadId = "019a0000-0000-7000-8000-000000000001"
    const failure = openFailure(
      "stdio",
      new ActiveWriterError({
        threadId,
        method: "thread/resume",
        detail: `thread ${threadId} already has an active writer`,
      }),
    )
    const stored = await Effect.runPromise(
      Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.schedule({
          job: {
            jobId: "job-1",
            threadId,
            userFingerprint: "",
            resume: false,
            handoffDigest: null,
          },
          handoff: null,
        })
        return yield* runCompactionWorker({
          threadId,
          jobId: "job-1",
          source: () => Effect.fail(failure),
        })
      }).pipe(
        Effect.provide(
          journalLayer("/jobs").pipe(Layer.provideMerge(memoryJournalFileSystemLayer())),
        ),
        Effect.provide(
          Layer.succeed(ProcessProbe, {
            selfPid: 4242,
            isAlive: () => Effect.succeed(true),
            startTimeMs: () => Effect.succeed(null),
          }),
        ),
        Effect.provide(TestClock.layer()),
      ),
    )
    expect(stored.job).toMatchObject({
      status: "failed",
      reason: "thread_owned_elsewhere",
      outcomeMayBeUnknown: false,
    })
    const detail = stored.job.detail ?? ""
    expect(detail).toContain("already has an active writer")
    expect(detail).toContain("nothing was sent")
    expect(detail).toContain("through the process that owns it")
    expect(detail).toContain("wait until that other Codex process")
    expect(detail).not.toContain("Worker lost")
    expect(detail).not.toContain("check that Codex runs here")
  })
})

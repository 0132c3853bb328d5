// How a failure to open the thread is worded: the cause, no "outcome unknown" (nothing of the job
// was sent), and "schedule again" only where retrying can help.
import { DisconnectedError, ThreadNotFoundError } from "@baton/ipc-codex"
import { describe, expect, test } from "vitest"
import { openFailure } from "./worker-process.js"

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
})

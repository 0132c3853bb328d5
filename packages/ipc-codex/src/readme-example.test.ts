// The README's example program, run against the in-memory twin (README examples must run).
import { Effect } from "effect"
import { expect, test } from "vitest"
import { CodexTransport } from "./codex-transport.js"
import { fakeTransportLayer, makeFakeAppServer, waitForThreadState } from "./testing/index.js"

const compactAndContinue = (threadId: string, text: string) =>
  Effect.gen(function* () {
    const transport = yield* CodexTransport
    const codex = yield* transport.connect
    yield* codex.resumeThread(threadId)
    yield* codex.compactThread(threadId)
    yield* waitForThreadState(codex, threadId, (s) => {
      const turnId = s.compactionRequests.at(-1)?.turnId
      const done = s.compactions.some((c) => c.turnId === turnId && c.phase === "completed")
      return done && s.turns.some((t) => t.id === turnId && t.status !== "inProgress")
    })
    return yield* codex.startTurn(threadId, text)
  })

test("README example: compact, wait for our compaction, continue", async () => {
  const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
  const started = await Effect.runPromise(
    Effect.scoped(compactAndContinue("t1", "Continue from the handoff…")).pipe(
      Effect.provide(fakeTransportLayer(server)),
    ),
  )
  expect(started.threadId).toBe("t1")
  expect(server.turnInputs.map((t) => t.text)).toEqual(["Continue from the handoff…"])
})

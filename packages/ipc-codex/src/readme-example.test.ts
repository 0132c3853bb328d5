// The README's example program, run against the in-memory twin (README examples must run).
import * as Effect from "effect/Effect"
import { expect, test } from "vitest"
import { CodexTransport } from "./codex-transport.js"
import { conversationStateFixture } from "./extension/testing/conversation-fixtures.js"
import { fakeRouterEnvironment } from "./extension/testing/fake-router-environment.js"
import { FakeExtensionRouter } from "./extension/testing/fake-router.js"
import { fakeTransportLayer, makeFakeAppServer, waitForThreadState } from "./testing/index.js"
import { isThreadIdle } from "./thread-state.js"
import type { SelectTransportOptions } from "./transport-selector.js"
import { selectTransport } from "./transport-selector.js"

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

const compactIfIdle = (options: SelectTransportOptions) =>
  Effect.gen(function* () {
    const selection = yield* selectTransport(options) // extension owner → daemon → stdio
    if (selection.openController === null) return selection.reasons // why nothing can reach it
    const thread = yield* selection.openController // scoped: closing the scope ends the session
    const state = yield* thread.state // the same ThreadState on every transport
    if (isThreadIdle(state)) yield* thread.compact // progress arrives as state (thread.observe)
    return state
  })

test("README example: one interface — the extension owner is chosen and compacted", async () => {
  const threadId = "019a1b2c-3d4e-7f00-8000-000000000001"
  const router = await FakeExtensionRouter.start({
    conversationId: threadId,
    state: conversationStateFixture({ id: threadId }),
  })
  try {
    await Effect.runPromise(
      Effect.scoped(
        compactIfIdle({
          threadId,
          extension: { environment: fakeRouterEnvironment(router), discoveryDelaysMs: [0] },
          daemonProbe: () => Effect.succeed({ running: false, detail: "not running" }),
          stdioProbe: () => Effect.succeed({ binary: null, detail: "none" }),
        }),
      ),
    )
    expect(router.requests("thread-follower-compact-thread")).toHaveLength(1)
  } finally {
    await router.close()
  }
})

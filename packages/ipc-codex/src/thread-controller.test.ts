// The daemon/stdio ThreadController over the in-memory twin: interrupt sends exactly
// `turn/interrupt {threadId, turnId}`, acknowledges `{}`, and the turn ends `interrupted` in the
// state; a refusal keeps its typed error. Waits are on state, never on sleeps.
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import type { Scope } from "effect"
import { describe, expect, test } from "vitest"
import { makeFakeAppServer } from "./testing/fake-app-server.js"
import { fakeTransport } from "./testing/fake-transport.js"
import type { ThreadController } from "./thread-controller.js"
import { connectionThreadController } from "./thread-controller.js"
import type { ThreadState } from "./thread-state.js"

const withController = <A, E>(
  server: ReturnType<typeof makeFakeAppServer>,
  body: (controller: ThreadController) => Effect.Effect<A, E, Scope.Scope>,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(fakeTransport(server).connect, (connection) =>
        Effect.flatMap(connectionThreadController(connection, "t1"), body),
      ),
    ),
  )
const waitState = (controller: ThreadController, predicate: (s: ThreadState) => boolean) =>
  controller.observe.pipe(Stream.filter(predicate), Stream.runHead)

describe("connectionThreadController.interrupt", () => {
  test("sends turn/interrupt for the running turn; the turn completes interrupted", async () => {
    // A compaction that never finishes keeps a turn running until it is interrupted.
    const server = makeFakeAppServer({ threads: [{ id: "t1" }], compaction: { outcome: "never" } })
    const result = await withController(server, (controller) =>
      Effect.gen(function* () {
        yield* controller.compact
        const active = yield* waitState(controller, (s) => s.activeTurnId !== null)
        const turnId = active._tag === "Some" ? active.value.activeTurnId! : "missing"
        const ack = yield* controller.interrupt(turnId)
        const after = yield* waitState(controller, (s) =>
          s.turns.some((t) => t.id === turnId && t.status === "interrupted"),
        )
        return { turnId, ack, after }
      }),
    )
    expect(result.ack).toEqual({
      threadId: "t1",
      turnId: result.turnId,
      interruptedTurnId: result.turnId,
    })
    expect(
      server.received.filter((r) => r.method === "turn/interrupt").map((r) => r.params),
    ).toEqual([{ threadId: "t1", turnId: result.turnId }])
    expect(result.after._tag === "Some" && result.after.value.activeTurnId).toBeNull()
  })

  test("interrupting when no turn runs fails with the app-server's typed refusal", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const error = await withController(server, (controller) =>
      Effect.flip(controller.interrupt("turn-x")),
    )
    expect(error._tag).toBe("RpcError")
    expect(server.received.filter((r) => r.method === "turn/interrupt")).toHaveLength(1)
  })
})

describe("connectionThreadController.close", () => {
  test("is final: writes and reads fail with DisconnectedError, nothing is sent, unsubscribe once", async () => {
    const server = makeFakeAppServer({ threads: [{ id: "t1" }] })
    const result = await withController(server, (controller) =>
      Effect.gen(function* () {
        const observing = yield* Effect.forkChild(Stream.runCollect(controller.observe))
        yield* Effect.yieldNow
        yield* controller.close
        yield* controller.close
        const before = server.received.length
        const errors = yield* Effect.all([
          Effect.flip(controller.compact),
          Effect.flip(controller.startTurn({ text: "after close" })),
          Effect.flip(controller.interrupt("turn-x")),
          Effect.flip(controller.readRateLimits),
          Effect.flip(controller.readAccount),
          Effect.flip(controller.listThreads()),
          Effect.flip(Stream.runCollect(controller.observe)),
          Effect.flip(Fiber.join(observing)),
        ])
        return { errors, sentAfterClose: server.received.length - before }
      }),
    )
    for (const error of result.errors) {
      expect(error).toMatchObject({
        _tag: "DisconnectedError",
        transport: "in-memory",
        reason: "the thread controller is closed",
        outcomeMayBeUnknown: false,
      })
    }
    expect(result.sentAfterClose).toBe(0)
    expect(server.turnInputs).toEqual([])
    expect(server.received.filter((r) => r.method === "thread/unsubscribe")).toHaveLength(1)
  })
})

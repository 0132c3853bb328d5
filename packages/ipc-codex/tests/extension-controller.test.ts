// The extension transport behind the common ThreadController, against the fake router over a
// real unix socket: observe → compact → the compaction item completes in the stream → start a
// turn with exactly the params the extension expects; error mapping; unsupported operations.
// Every wait is on an event (a state, a received envelope), never on wall-clock sleeps.
import { Effect, Fiber, Stream } from "effect"
import type { Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { isThreadIdle, openExtensionController } from "@baton/ipc-codex"
import type {
  ExtensionControllerOptions,
  IpcFileSystem,
  IpcSocketConnector,
  ThreadController,
  ThreadState,
} from "@baton/ipc-codex"
import {
  FakeExtensionRouter,
  conversationStateFixture,
  dropConnection,
  fakeRouterEnvironment,
  nodeIpcLayer,
  withholdReply,
} from "@baton/ipc-codex/testing"

type Env = Scope.Scope | IpcFileSystem | IpcSocketConnector
const run = <A, E>(effect: Effect.Effect<A, E, Env>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.scoped, Effect.provide(nodeIpcLayer)))
const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

let router: FakeExtensionRouter | undefined
afterEach(async () => {
  await router?.close()
  router = undefined
})
const startRouter = async () => {
  router = await FakeExtensionRouter.start({ state: conversationStateFixture() })
  return router
}
const open = (
  r: FakeExtensionRouter,
  session: ExtensionControllerOptions["session"] = {},
): Effect.Effect<ThreadController, unknown, Env> =>
  openExtensionController({
    threadId: "thread-1",
    environment: fakeRouterEnvironment(r),
    session: { discoveryDelaysMs: [0], ...session },
    newClientUserMessageId: () => "generated-id",
  })
const waitState = (controller: ThreadController, predicate: (s: ThreadState) => boolean) =>
  controller.observe.pipe(Stream.filter(predicate), Stream.runHead)

describe("openExtensionController (the extension transport behind ThreadController)", () => {
  it("observes, compacts, sees the compaction complete, then starts the follow-up turn", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const controller = yield* open(r)
        expect(controller.transport).toBe("extension")
        const first = yield* controller.state
        expect(first.status).toEqual({ type: "idle", activeFlags: [], unknownType: null })
        expect(isThreadIdle(first)).toBe(true)
        expect(first.tokenUsage).toMatchObject({
          turnId: null,
          last: { totalTokens: 90_000 },
          modelContextWindow: 100_000,
        })
        expect(first.compactions).toEqual([
          expect.objectContaining({ itemId: "old", turnId: "compaction-turn", phase: "completed" }),
        ])

        const compactionDone = (s: ThreadState) => {
          const turnId = s.compactionRequests.at(-1)?.turnId
          return (
            turnId !== null &&
            turnId !== undefined &&
            s.compactions.some((c) => c.turnId === turnId && c.phase === "completed") &&
            s.turns.some((t) => t.id === turnId && t.status !== "inProgress")
          )
        }
        const done = yield* Effect.forkChild(waitState(controller, compactionDone))
        const request = yield* controller.compact
        expect(request.threadId).toBe("thread-1")
        expect(r.requests("thread-follower-compact-thread")).toEqual([
          expect.objectContaining({
            version: 2,
            targetClientId: "owner-1",
            params: { conversationId: "thread-1" },
          }),
        ])

        yield* promise(() =>
          r.sendPatches([
            { op: "replace", path: ["threadRuntimeStatus"], value: { type: "active" } },
            {
              op: "add",
              path: ["turns", "-"],
              value: {
                turnId: "compact-turn",
                status: "inProgress",
                items: [{ id: "cc-1", type: "contextCompaction", completed: false }],
              },
            },
          ]),
        )
        const running = yield* waitState(controller, (s) =>
          s.compactions.some((c) => c.itemId === "cc-1"),
        )
        expect(running._tag === "Some" && running.value.compactions.at(-1)?.phase).toBe("started")
        expect(running._tag === "Some" && running.value.compactionRequests.at(-1)).toMatchObject({
          turnId: "compact-turn",
          outcome: "accepted",
        })

        yield* promise(() =>
          r.sendPatches([
            { op: "replace", path: ["turns", 2, "items", 0, "completed"], value: true },
            { op: "replace", path: ["turns", 2, "status"], value: "completed" },
            { op: "replace", path: ["threadRuntimeStatus"], value: { type: "idle" } },
            { op: "replace", path: ["latestTokenUsageInfo", "last", "totalTokens"], value: 12_000 },
          ]),
        )
        const compacted = yield* Fiber.join(done)
        expect(compacted._tag).toBe("Some")
        if (compacted._tag === "Some") {
          expect(isThreadIdle(compacted.value)).toBe(true)
          expect(compacted.value.tokenUsage?.last.totalTokens).toBe(12_000)
        }

        const turn = yield* controller.startTurn({
          text: "Continue from the handoff",
          clientUserMessageId: "job-7",
        })
        expect(turn).toEqual({ threadId: "thread-1", turnId: "turn-1" })
        const [sent] = r.requests("thread-follower-start-turn")
        expect(sent).toMatchObject({
          version: 3,
          targetClientId: "owner-1",
          hostId: "local",
        })
        expect(sent?.["params"]).toEqual({
          conversationId: "thread-1",
          turnStart: {
            request: {
              threadId: "thread-1",
              clientUserMessageId: "job-7",
              input: [{ type: "text", text: "Continue from the handoff", text_elements: [] }],
            },
            context: { inheritThreadSettings: true },
          },
        })
        // Without an id from the caller the adapter supplies one (the extension requires it).
        yield* controller.startTurn({ text: "again" })
        const second = r.requests("thread-follower-start-turn")[1]?.["params"] as {
          turnStart: { request: { clientUserMessageId: string } }
        }
        expect(second.turnStart.request.clientUserMessageId).toBe("generated-id")
      }),
    )
  })

  it("pending requests and unconfirmed submissions are not idle, with the flags named", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const controller = yield* open(r)
        yield* promise(() =>
          r.sendSnapshot(
            conversationStateFixture({
              requests: [{ id: 7, method: "item/commandExecution/requestApproval" }],
              unconfirmedTurnSubmissions: [{ terminal: false }],
            }),
          ),
        )
        const busy = yield* waitState(controller, (s) => s.pendingServerRequests.length > 0)
        expect(busy._tag === "Some" && busy.value.status.activeFlags).toEqual([
          "waitingOnApproval",
          "pendingTurnSubmission",
        ])
        expect(busy._tag === "Some" && isThreadIdle(busy.value)).toBe(false)
      }),
    )
  })

  it("operations the extension IPC cannot do fail with TransportUnsupportedError", async () => {
    const r = await startRouter()
    const errors = await run(
      Effect.gen(function* () {
        const controller = yield* open(r)
        return [
          yield* Effect.flip(controller.readRateLimits),
          yield* Effect.flip(controller.readAccount),
          yield* Effect.flip(controller.listThreads()),
        ]
      }),
    )
    expect(errors.map((e) => [e._tag, e.message])).toEqual([
      [
        "TransportUnsupportedError",
        "account/rateLimits/read is not supported on the extension transport; use the daemon or a private app-server for it",
      ],
      ["TransportUnsupportedError", expect.stringContaining("account/read is not supported")],
      ["TransportUnsupportedError", expect.stringContaining("thread/list is not supported")],
    ])
  })

  it("maps the extension's failures to the common typed errors", async () => {
    const r = await startRouter()
    const errors = await run(
      Effect.gen(function* () {
        const controller = yield* open(r, { timeouts: { requestMs: 150 } })
        r.onRequest("thread-follower-compact-thread", () => withholdReply)
        const timeout = yield* Effect.flip(controller.compact)
        const pending = (yield* controller.state).compactionRequests.at(-1)?.outcome
        r.onRequest("thread-follower-start-turn", () => dropConnection)
        const disconnect = yield* Effect.flip(controller.startTurn({ text: "x" }))
        return { timeout, pending, disconnect }
      }),
    )
    expect(errors.timeout).toMatchObject({
      _tag: "RequestTimeoutError",
      method: "thread-follower-compact-thread",
      timeoutMs: 150,
      outcomeMayBeUnknown: true,
    })
    expect(errors.pending).toBe("pending") // an unknown outcome never settles the request
    expect(errors.disconnect).toMatchObject({
      _tag: "DisconnectedError",
      transport: "extension",
      method: "thread-follower-start-turn",
      outcomeMayBeUnknown: true,
    })
  })

  it("a version the owner refuses is a ProtocolMismatchError naming method and version", async () => {
    const r = await startRouter()
    r.ownerVersions = { ...r.ownerVersions, "thread-follower-compact-thread": 3 }
    const error = await run(Effect.flatMap(open(r), (c) => Effect.flip(c.compact)))
    expect(error).toMatchObject({
      _tag: "ProtocolMismatchError",
      method: "thread-follower-compact-thread",
      expected: "version 2",
    })
    expect(error.message).toContain("protocol mismatch on thread-follower-compact-thread")
  })

  it("an owner that is gone is ThreadOwnerGoneError", async () => {
    const r = await startRouter()
    const error = await run(
      Effect.gen(function* () {
        const controller = yield* open(r)
        yield* promise(() => r.changeOwner(undefined, { announce: false }))
        return yield* Effect.flip(controller.compact)
      }),
    )
    expect(error).toMatchObject({
      _tag: "ThreadOwnerGoneError",
      threadId: "thread-1",
      transport: "extension",
    })
  })
})

describe("interrupt through ThreadController (extension)", () => {
  const startRunning = async () => {
    router = await FakeExtensionRouter.start({
      state: conversationStateFixture({ status: "active", userTurnStatus: "inProgress" }),
    })
    return router
  }

  it("sends thread-follower-interrupt-turn v4 with expectedTurnId; the turn ends interrupted", async () => {
    const r = await startRunning()
    const result = await run(
      Effect.gen(function* () {
        const controller = yield* open(r)
        const before = yield* controller.state
        expect(before.activeTurnId).toBe("user-turn")
        expect(isThreadIdle(before)).toBe(false)
        const ack = yield* controller.interrupt("user-turn")
        const after = yield* waitState(controller, (s) =>
          s.turns.some((t) => t.id === "user-turn" && t.status === "interrupted"),
        )
        return { ack, after }
      }),
    )
    expect(result.ack).toEqual({
      threadId: "thread-1",
      turnId: "user-turn",
      interruptedTurnId: "user-turn",
    })
    expect(r.requests("thread-follower-interrupt-turn")).toEqual([
      expect.objectContaining({
        version: 4,
        targetClientId: "owner-1",
        hostId: "local",
        params: { conversationId: "thread-1", mode: "user-stop", expectedTurnId: "user-turn" },
      }),
    ])
    expect(result.after._tag).toBe("Some")
    if (result.after._tag === "Some") {
      expect(result.after.value.activeTurnId).toBeNull()
      expect(isThreadIdle(result.after.value)).toBe(true)
    }
  })

  it("a bumped interrupt version is a ProtocolMismatchError naming the method", async () => {
    const r = await startRunning()
    r.ownerVersions = { ...r.ownerVersions, "thread-follower-interrupt-turn": 5 }
    const error = await run(Effect.flatMap(open(r), (c) => Effect.flip(c.interrupt("user-turn"))))
    expect(error).toMatchObject({
      _tag: "ProtocolMismatchError",
      method: "thread-follower-interrupt-turn",
      expected: "version 4",
    })
    expect(error.message).toContain("protocol mismatch on thread-follower-interrupt-turn")
    expect(r.requests("thread-follower-interrupt-turn").map((q) => q["version"])).toEqual([4, 4])
  })

  it("an interrupt whose reply never comes is RequestTimeoutError with an unknown outcome, sent once", async () => {
    const r = await startRunning()
    r.onRequest("thread-follower-interrupt-turn", () => withholdReply)
    const error = await run(
      Effect.flatMap(open(r, { timeouts: { requestMs: 150 } }), (c) =>
        Effect.flip(c.interrupt("user-turn")),
      ),
    )
    expect(error).toMatchObject({
      _tag: "RequestTimeoutError",
      method: "thread-follower-interrupt-turn",
      timeoutMs: 150,
      outcomeMayBeUnknown: true,
    })
    expect(r.requests("thread-follower-interrupt-turn")).toHaveLength(1)
  })
})

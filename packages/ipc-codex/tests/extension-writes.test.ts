/**
 * Owner writes against the fake router over a real unix socket: exact compact and start-turn
 * envelopes, acknowledgement checks, timeouts and disconnects with an unknown outcome (never
 * resent), `no-client-found` retries after rediscovery, and the version-mismatch diagnostic.
 */
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import type { ExtensionSessionEvent, ExtensionSessionStatus } from "@baton/ipc-codex"
import {
  conversationStateFixture,
  dropConnection,
  replyWith,
  replyWithError,
} from "@baton/ipc-codex/testing"
import type { ReplyAction } from "@baton/ipc-codex/testing"
import { open, promise, run, startRouter, until } from "./extension-harness.js"

const retryEvent = (n: number) => {
  let seen = 0
  return (e: ExtensionSessionEvent) =>
    e.kind === "write-retry" && e.detail.includes("rediscovering") && ++seen === n
}

/** A handler whose reply the test releases later (a slow owner). */
const held = () => {
  let release: (action: ReplyAction) => void = () => undefined
  const pending = new Promise<ReplyAction>((resolve) => {
    release = resolve
  })
  return { handler: () => pending, release: (action: ReplyAction) => release(action) }
}

describe("compact", () => {
  it("sends the exact targeted request and returns the acknowledgement", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        const live = yield* thread.awaitLive
        return { live, ack: yield* thread.compact }
      }),
    )
    const [request] = r.requests("thread-follower-compact-thread")
    expect(request).toEqual({
      type: "request",
      requestId: result.ack.requestId,
      sourceClientId: result.live.clientId,
      method: "thread-follower-compact-thread",
      params: { conversationId: "thread-1" },
      version: 2,
      timeoutMs: 10_000,
      targetClientId: "owner-1",
      hostId: "local",
    })
    expect(result.ack.ownerId).toBe("owner-1")
    const [discovery] = r.requests("thread-owner-discovery")
    expect(discovery).toMatchObject({
      version: 1,
      params: { hostId: "local", conversationId: "thread-1" },
    })
    expect(discovery).not.toHaveProperty("targetClientId")
    expect(r.requests("initialize")[0]).toMatchObject({
      version: 0,
      sourceClientId: "initializing-client",
      params: { clientType: "baton" },
    })
  })

  it.each<[string, ReplyAction, string, boolean]>([
    ["an ack without ok: true", replyWith({ ok: false }), "WriteRejectedError", true],
    ["an error response", replyWithError("thread-is-busy"), "WriteRejectedError", false],
  ])("refuses %s", async (_name, action, tag, unknown) => {
    const r = await startRouter()
    r.onRequest("thread-follower-compact-thread", () => action)
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        return yield* Effect.flip(thread.compact)
      }),
    )
    expect(error._tag).toBe(tag)
    expect("outcomeMayBeUnknown" in error && error.outcomeMayBeUnknown).toBe(unknown)
    expect(r.requests("thread-follower-compact-thread")).toHaveLength(1)
  })

  it("times out after 15 s with outcomeMayBeUnknown, never resends, and ignores the late reply", async () => {
    const r = await startRouter()
    const slow = held()
    r.onRequest("thread-follower-compact-thread", slow.handler)
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const fiber = yield* Effect.forkChild(Effect.flip(thread.compact))
        const request = yield* promise(() => r.waitForRequest("thread-follower-compact-thread"))
        yield* TestClock.adjust("14999 millis")
        expect(fiber.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 millis")
        const error = yield* Fiber.join(fiber)
        slow.release(replyWith({ ok: true }))
        const late = yield* thread.awaitEvent(
          (e) => e.kind === "diagnostic" && e.detail.includes("unknown-response"),
        )
        return { error, request, late, status: yield* thread.status }
      }),
    )
    expect(result.error).toMatchObject({
      _tag: "WriteOutcomeUnknownError",
      method: "thread-follower-compact-thread",
      reason: "timeout",
      outcomeMayBeUnknown: true,
      requestId: result.request["requestId"],
    })
    expect(result.error.message).toContain("never resend it blindly")
    expect(r.requests("thread-follower-compact-thread")).toHaveLength(1)
    expect(result.late.detail).toContain(String(result.request["requestId"]))
    expect(result.status._tag).toBe("Live")
  })

  it("reports a disconnect after sending as an unknown outcome", async () => {
    const r = await startRouter()
    r.onRequest("thread-follower-compact-thread", () => dropConnection)
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        return yield* Effect.flip(thread.compact)
      }),
    )
    expect(error).toMatchObject({
      _tag: "WriteOutcomeUnknownError",
      reason: "disconnected",
      outcomeMayBeUnknown: true,
    })
    expect(r.requests("thread-follower-compact-thread")).toHaveLength(1)
  })

  it("diagnoses a bumped method version: the owner answers discovery but declines the request", async () => {
    const r = await startRouter({ ownerVersions: { "thread-follower-compact-thread": 3 } })
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const fiber = yield* Effect.forkChild(Effect.flip(thread.compact))
        yield* thread.awaitEvent(retryEvent(1))
        yield* Effect.yieldNow
        yield* TestClock.adjust("125 millis")
        yield* thread.awaitEvent(retryEvent(2))
        yield* Effect.yieldNow
        yield* TestClock.adjust("350 millis")
        return yield* Fiber.join(fiber)
      }),
    )
    expect(error._tag).toBe("MethodVersionMismatchError")
    expect(error.message).toContain("Protocol version mismatch on thread-follower-compact-thread")
    expect(error.message).toContain("Baton speaks version 2")
    expect(error.message).toContain(
      "Owner owner-1 answers thread-owner-discovery but refused thread-follower-compact-thread version 2 2 times with no-client-found",
    )
    expect(r.requests("thread-follower-compact-thread")).toHaveLength(2)
  })

  it("works against a bumped owner once the version is overridden explicitly", async () => {
    const r = await startRouter({ ownerVersions: { "thread-follower-compact-thread": 3 } })
    await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { versionOverrides: { "thread-follower-compact-thread": 3 } })
        yield* thread.awaitLive
        yield* thread.compact
      }),
    )
    expect(r.requests("thread-follower-compact-thread").map((q) => q["version"])).toEqual([3])
  })

  it("names the version when the router rejects one explicitly", async () => {
    const r = await startRouter()
    r.onRequest("thread-follower-compact-thread", () =>
      replyWithError("unsupported version: expected 3"),
    )
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        return yield* Effect.flip(thread.compact)
      }),
    )
    expect(error).toMatchObject({
      _tag: "MethodVersionMismatchError",
      method: "thread-follower-compact-thread",
      expected: 2,
      seen: 3,
    })
    expect(error.message).toContain("(saw 3)")
  })

  it("retries no-client-found after rediscovery and follows the new owner", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => r.changeOwner("owner-2", { announce: false }))
        const fiber = yield* Effect.forkChild(thread.compact)
        yield* thread.awaitEvent(retryEvent(1))
        yield* Effect.yieldNow
        yield* TestClock.adjust("125 millis")
        const ack = yield* Fiber.join(fiber)
        const live = yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Live" }> =>
            s._tag === "Live" && s.ownerId === "owner-2",
        )
        return { ack, live }
      }),
    )
    expect(r.requests("thread-follower-compact-thread").map((q) => q["targetClientId"])).toEqual([
      "owner-1",
      "owner-2",
    ])
    expect(result.ack.ownerId).toBe("owner-2")
    expect(result.live.ownerId).toBe("owner-2")
  })

  it("fails with OwnerNotFoundError, unsent, when no window owns the thread any more", async () => {
    const r = await startRouter()
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { discoveryDelaysMs: [0] })
        yield* thread.awaitLive
        yield* promise(() => r.changeOwner(undefined, { announce: false }))
        const fiber = yield* Effect.forkChild(Effect.flip(thread.compact))
        yield* thread.awaitEvent(retryEvent(1))
        yield* Effect.yieldNow
        yield* TestClock.adjust("125 millis")
        return yield* Fiber.join(fiber)
      }),
    )
    expect(error._tag).toBe("OwnerNotFoundError")
    expect(error.message).toContain("Open the thread in VS Code")
  })

  it("gives up unsent when no owner connection appears within the write budget", async () => {
    const r = await startRouter({ ownerId: undefined })
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { discoveryDelaysMs: [0, 60_000] })
        const fiber = yield* Effect.forkChild(Effect.flip(thread.compact))
        yield* until(
          thread,
          (s): s is ExtensionSessionStatus => s._tag === "Discovering" && s.attempt === 2,
        )
        yield* Effect.yieldNow
        yield* TestClock.adjust("15 seconds")
        return yield* Fiber.join(fiber)
      }),
    )
    expect(error).toMatchObject({ _tag: "WriteNotReadyError", outcomeMayBeUnknown: false })
    expect(r.requests("thread-follower-compact-thread")).toHaveLength(0)
  })

  it("ignores and records a duplicate response", async () => {
    const r = await startRouter()
    const event = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const ack = yield* thread.compact
        yield* promise(() =>
          r.broadcastAll({
            type: "response",
            requestId: ack.requestId,
            resultType: "success",
            result: { ok: true },
          }),
        )
        return yield* thread.awaitEvent(
          (e) => e.kind === "diagnostic" && e.detail.startsWith("duplicate-response"),
        )
      }),
    )
    expect(event.detail).toContain("duplicate-response")
  })
})

describe("start-turn", () => {
  it("sends the exact params with inherited settings and returns the turn", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        return yield* thread.startTurn({
          text: "Continue with step 3.",
          clientUserMessageId: "job-42",
        })
      }),
    )
    const [request] = r.requests("thread-follower-start-turn")
    expect(request).toMatchObject({
      version: 3,
      targetClientId: "owner-1",
      hostId: "local",
      timeoutMs: 10_000,
    })
    expect(request!["params"]).toStrictEqual({
      conversationId: "thread-1",
      turnStart: {
        request: {
          threadId: "thread-1",
          clientUserMessageId: "job-42",
          input: [{ type: "text", text: "Continue with step 3.", text_elements: [] }],
        },
        context: { inheritThreadSettings: true },
      },
    })
    expect(result).toMatchObject({ turnId: "turn-1", status: "inProgress", ownerId: "owner-1" })
  })

  it("treats a reply without a turn as rejected with an unknown outcome", async () => {
    const r = await startRouter()
    r.onRequest("thread-follower-start-turn", () => replyWith({ ok: true }))
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        return yield* Effect.flip(thread.startTurn({ text: "x", clientUserMessageId: "job-1" }))
      }),
    )
    expect(error).toMatchObject({ _tag: "WriteRejectedError", outcomeMayBeUnknown: true })
  })

  it("reports a disconnect caused by start-turn as an unknown outcome, then recovers", async () => {
    const r = await startRouter()
    r.onRequest("thread-follower-start-turn", () => dropConnection)
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const error = yield* Effect.flip(
          thread.startTurn({ text: "x", clientUserMessageId: "job-1" }),
        )
        const recovering = yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Recovering" }> =>
            s._tag === "Recovering",
        )
        return { error, recovering }
      }),
    )
    expect(result.error).toMatchObject({
      _tag: "WriteOutcomeUnknownError",
      reason: "disconnected",
      outcomeMayBeUnknown: true,
    })
    expect(r.requests("thread-follower-start-turn")).toHaveLength(1)
    expect(result.recovering.delayMs).toBe(250)
  })
})

describe("interrupt-turn", () => {
  const running = () => conversationStateFixture({ status: "active", userTurnStatus: "inProgress" })

  it("sends the exact targeted request at version 4, returns the ack, and the turn shows interrupted", async () => {
    const r = await startRouter({ state: running() })
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        const live = yield* thread.awaitLive
        expect(live.view.turns.find((t) => t.id === "user-turn")?.status).toBe("inProgress")
        const ack = yield* thread.interruptTurn("user-turn")
        const stopped = yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Live" }> =>
            s._tag === "Live" &&
            s.view.turns.some((t) => t.id === "user-turn" && t.status === "interrupted"),
        )
        return { live, ack, stopped }
      }),
    )
    expect(r.requests("thread-follower-interrupt-turn")).toEqual([
      {
        type: "request",
        requestId: result.ack.requestId,
        sourceClientId: result.live.clientId,
        method: "thread-follower-interrupt-turn",
        params: { conversationId: "thread-1", mode: "user-stop", expectedTurnId: "user-turn" },
        version: 4,
        timeoutMs: 10_000,
        targetClientId: "owner-1",
        hostId: "local",
      },
    ])
    expect(result.ack).toMatchObject({ interruptedTurnId: "user-turn", ownerId: "owner-1" })
    expect(result.stopped.view.runtimeStatus).toBe("idle")
  })

  it("acknowledges with interruptedTurnId null when that turn is not running", async () => {
    const r = await startRouter()
    const ack = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        return yield* thread.interruptTurn("user-turn")
      }),
    )
    expect(ack.interruptedTurnId).toBeNull()
  })

  it("refuses an acknowledgement without interruptedTurnId as an unknown outcome", async () => {
    const r = await startRouter({ state: running() })
    r.onRequest("thread-follower-interrupt-turn", () => replyWith({ ok: true }))
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        return yield* Effect.flip(thread.interruptTurn("user-turn"))
      }),
    )
    expect(error).toMatchObject({ _tag: "WriteRejectedError", outcomeMayBeUnknown: true })
  })

  it("times out after 15 s with outcomeMayBeUnknown and never resends", async () => {
    const r = await startRouter({ state: running() })
    const slow = held()
    r.onRequest("thread-follower-interrupt-turn", slow.handler)
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const fiber = yield* Effect.forkChild(Effect.flip(thread.interruptTurn("user-turn")))
        yield* promise(() => r.waitForRequest("thread-follower-interrupt-turn"))
        yield* TestClock.adjust("14999 millis")
        expect(fiber.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 millis")
        return yield* Fiber.join(fiber)
      }),
    )
    slow.release(replyWith({ interruptedTurnId: "user-turn" }))
    expect(error).toMatchObject({
      _tag: "WriteOutcomeUnknownError",
      method: "thread-follower-interrupt-turn",
      reason: "timeout",
      outcomeMayBeUnknown: true,
    })
    expect(r.requests("thread-follower-interrupt-turn")).toHaveLength(1)
  })

  it("retries no-client-found (nothing delivered) after rediscovery to the new owner", async () => {
    const r = await startRouter({ state: running() })
    const ack = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => r.changeOwner("owner-2", { announce: false }))
        const fiber = yield* Effect.forkChild(thread.interruptTurn("user-turn"))
        yield* thread.awaitEvent(retryEvent(1))
        yield* Effect.yieldNow
        yield* TestClock.adjust("125 millis")
        return yield* Fiber.join(fiber)
      }),
    )
    expect(r.requests("thread-follower-interrupt-turn").map((q) => q["targetClientId"])).toEqual([
      "owner-1",
      "owner-2",
    ])
    expect(ack).toMatchObject({ ownerId: "owner-2", interruptedTurnId: "user-turn" })
  })
})

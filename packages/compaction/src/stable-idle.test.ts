import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { describe, expect, test } from "vitest"
import type { IdleSample } from "./stable-idle.js"
import {
  awaitStableIdle,
  idleBlockers,
  idleEdge,
  initialStableIdle,
  isStablyIdle,
  observeIdle,
} from "./stable-idle.js"

const idle: IdleSample = {
  status: "idle",
  activeFlags: [],
  pendingRequests: 0,
  unconfirmedSubmissions: 0,
}
const busy: IdleSample = { ...idle, status: "active" }

describe("idle", () => {
  test("truth table: status, flags, pending requests, unconfirmed submissions", () => {
    expect(idleBlockers(idle)).toEqual([])
    expect(idleBlockers(busy)).toEqual(["status_not_idle"])
    expect(idleBlockers({ ...idle, activeFlags: ["waitingOnApproval"] })).toEqual(["active_flags"])
    expect(idleBlockers({ ...idle, pendingRequests: 1 })).toEqual(["pending_request"])
    expect(idleBlockers({ ...idle, unconfirmedSubmissions: 2 })).toEqual(["unconfirmed_submission"])
    // A thread whose last turn failed (a usage limit) runs nothing: Codex compacts it.
    expect(idleBlockers({ ...idle, status: "systemError" })).toEqual([])
    expect(idleBlockers({ ...idle, status: "notLoaded" })).toEqual(["status_not_idle"])
    expect(
      idleBlockers({
        status: "active",
        activeFlags: ["x"],
        pendingRequests: 1,
        unconfirmedSubmissions: 1,
      }),
    ).toHaveLength(4)
  })

  test("tracker: idle samples do not re-arm; a busy sample resets and counts a flap", () => {
    let t = observeIdle(initialStableIdle, true, 0)
    t = observeIdle(t, true, 200)
    expect(isStablyIdle(t, 249, 250)).toBe(false)
    expect(isStablyIdle(t, 250, 250)).toBe(true)
    t = observeIdle(t, false, 260)
    expect(t).toEqual({ idleSince: null, flaps: 1 })
    t = observeIdle(t, true, 300)
    expect(isStablyIdle(t, 549, 250)).toBe(false)
    expect(isStablyIdle(t, 550, 250)).toBe(true)
  })

  test("edges", () => {
    expect(idleEdge(null, true)).toBe("IdleObserved")
    expect(idleEdge(true, true)).toBeNull()
    expect(idleEdge(true, false)).toBe("IdleLost")
    expect(idleEdge(null, false)).toBe("IdleLost")
  })
})

const flush = Effect.promise(() => new Promise((r) => setTimeout(r, 1)))

describe("awaitStableIdle on the TestClock", () => {
  test("stable after the debounce; repeated idle does not re-arm; flapping resets", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const q = yield* Queue.unbounded<IdleSample>()
        const fiber = yield* Effect.forkChild(
          awaitStableIdle(Stream.fromQueue(q), { debounceMs: 250 }),
        )
        yield* Queue.offer(q, idle)
        yield* flush
        yield* TestClock.adjust("200 millis")
        yield* Queue.offer(q, busy) // flap: reset
        yield* flush
        yield* TestClock.adjust("100 millis")
        yield* Queue.offer(q, idle) // t = 300
        yield* flush
        yield* TestClock.adjust("200 millis")
        yield* Queue.offer(q, idle) // no re-arm
        yield* flush
        const early = fiber.pollUnsafe()
        yield* TestClock.adjust("49 millis") // t = 549
        yield* flush
        const stillEarly = fiber.pollUnsafe()
        yield* TestClock.adjust("1 millis") // t = 550
        const at = yield* Fiber.join(fiber)
        return { early, stillEarly, at }
      }).pipe(Effect.provide(TestClock.layer())),
    )
    expect(result.early).toBeUndefined()
    expect(result.stillEarly).toBeUndefined()
    expect(result.at).toBe(550)
  })

  test("a source that ends while idle still waits out the full debounce (no flush on end)", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(
          awaitStableIdle(Stream.fromIterable([busy, idle]), { debounceMs: 250 }),
        )
        yield* flush
        yield* TestClock.adjust("249 millis")
        yield* flush
        const early = fiber.pollUnsafe()
        yield* TestClock.adjust("1 millis")
        return { early, at: yield* Fiber.join(fiber) }
      }).pipe(Effect.provide(TestClock.layer())),
    )
    expect(result).toEqual({ early: undefined, at: 250 })
  })
})

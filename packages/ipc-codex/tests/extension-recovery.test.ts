/**
 * Reconnect and rediscovery against the fake router over a real unix socket: router
 * disconnects and restarts, owner changes and departures, `no-client-found` then found,
 * bounded backoff on the TestClock, exhaustion with recorded reasons, and refusals that must
 * never be retried (replaced/insecure socket, missing socket at start).
 */
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { DEFAULT_EXTENSION_RECOVERY, recoveryDelayMs } from "@baton/ipc-codex"
import type { ExtensionSessionStatus, ExtensionThread } from "@baton/ipc-codex"
import { open, promise, run, startRouter, until } from "./extension-harness.js"

const recovering = (
  s: ExtensionSessionStatus,
): s is Extract<ExtensionSessionStatus, { _tag: "Recovering" }> => s._tag === "Recovering"
const closed = (
  s: ExtensionSessionStatus,
): s is Extract<ExtensionSessionStatus, { _tag: "Closed" }> => s._tag === "Closed"
/** Waits until discovery is about to wait `delayMs` before attempt `attempt`, then lets its timer register. */
const discoveryWaiting = (thread: ExtensionThread, attempt: number, delayMs: number) =>
  until(
    thread,
    (s): s is ExtensionSessionStatus =>
      s._tag === "Discovering" && s.attempt === attempt && s.delayMs === delayMs,
  ).pipe(Effect.andThen(Effect.yieldNow))

describe("recovery", () => {
  it("computes bounded exponential delays", () => {
    expect(
      [1, 2, 3, 4, 5, 6, 7].map((n) => recoveryDelayMs(n, DEFAULT_EXTENSION_RECOVERY)),
    ).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000])
  })

  it("reconnects after the router drops the connection: re-initialize, re-discover, re-follow", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        const first = yield* thread.awaitLive
        yield* promise(() => r.disconnectClients())
        const waiting = yield* until(thread, recovering)
        expect(waiting.delayMs).toBe(250)
        expect(r.requests("initialize")).toHaveLength(1)
        yield* TestClock.adjust("249 millis")
        expect(r.requests("initialize")).toHaveLength(1)
        yield* TestClock.adjust("1 millis")
        yield* promise(() => r.waitForRequest("initialize", 2))
        const second = yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Live" }> =>
            s._tag === "Live" && s.clientId !== first.clientId,
        )
        return { first, second, events: yield* thread.events }
      }),
    )
    expect(result.second.ownerId).toBe("owner-1")
    expect(r.requests("thread-owner-discovery")).toHaveLength(2)
    expect(r.envelopes("broadcast", "thread-stream-following-changed")).toHaveLength(2)
    expect(result.events.find((e) => e.kind === "recovering")?.detail).toMatch(
      /IpcDisconnectedError: .*socket-closed/,
    )
  })

  it("reconnects to a restarted router listening on a new socket inode", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => r.restart())
        yield* until(thread, recovering)
        yield* TestClock.adjust("250 millis")
        yield* promise(() => r.waitForRequest("initialize", 2))
        yield* until(
          thread,
          (s): s is ExtensionSessionStatus => s._tag === "Live" && r.connectionCount === 1,
        )
      }),
    )
    expect(r.requests("initialize")).toHaveLength(2)
  })

  it("rediscovers and follows the new owner after the owner window leaves", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => r.changeOwner("owner-2"))
        const live = yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Live" }> =>
            s._tag === "Live" && s.ownerId === "owner-2",
        )
        return { live, events: yield* thread.events }
      }),
    )
    expect(result.live.ownerId).toBe("owner-2")
    const follows = r.envelopes("broadcast", "thread-stream-following-changed")
    expect(follows.map((f) => f["targetClientIds"])).toEqual([["owner-1"], ["owner-2"]])
    expect(r.requests("initialize")).toHaveLength(1)
    expect(result.events.map((e) => e.kind)).toContain("owner-changed")
    expect(result.events.find((e) => e.kind === "owner-gone")?.detail).toBe(
      "owner owner-1 disconnected",
    )
  })

  it("retries owner discovery on no-client-found with 0/125/350 ms backoff, then follows", async () => {
    const r = await startRouter()
    r.discoveryFailures = 2
    const live = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* discoveryWaiting(thread, 2, 125)
        yield* TestClock.adjust("124 millis")
        expect(r.requests("thread-owner-discovery")).toHaveLength(1)
        yield* TestClock.adjust("1 millis")
        yield* discoveryWaiting(thread, 3, 350)
        expect(r.requests("thread-owner-discovery")).toHaveLength(2)
        yield* TestClock.adjust("350 millis")
        return yield* thread.awaitLive
      }),
    )
    expect(live.ownerId).toBe("owner-1")
  })

  it("fails clearly when no window owns the thread at start, after bounded discovery", async () => {
    const r = await startRouter({ ownerId: undefined })
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { discoveryDelaysMs: [0, 125, 350] })
        yield* discoveryWaiting(thread, 2, 125)
        yield* TestClock.adjust("125 millis")
        yield* discoveryWaiting(thread, 3, 350)
        yield* TestClock.adjust("350 millis")
        return yield* Effect.flip(thread.awaitLive)
      }),
    )
    expect(error._tag).toBe("OwnerNotFoundError")
    expect(error.message).toContain("No VS Code window owns thread thread-1 (3 discovery attempts)")
    expect(r.requests("thread-owner-discovery")).toHaveLength(3)
  })

  it("gives up after the bounded number of recoveries and records every reason", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { recovery: { maxConsecutiveAttempts: 3 } })
        yield* thread.awaitLive
        yield* promise(() => r.stopListening())
        yield* promise(() => r.disconnectClients())
        for (const delay of [250, 500, 1000]) {
          yield* until(
            thread,
            (s): s is ExtensionSessionStatus => s._tag === "Recovering" && s.delayMs === delay,
          )
          yield* TestClock.adjust(`${delay} millis`)
        }
        const end = yield* until(thread, closed)
        return { end, events: yield* thread.events }
      }),
    )
    expect(result.end.error._tag).toBe("RecoveryExhaustedError")
    expect(result.end.error.message).toMatch(
      /after 3 consecutive recovery attempts; last reason: No Codex extension IPC socket/,
    )
    const reasons = result.events.filter((e) => e.kind === "recovering").map((e) => e.detail)
    expect(reasons).toHaveLength(3)
    expect(reasons[0]).toContain("IpcDisconnectedError")
    expect(reasons[1]).toContain("EndpointMissingError")
  })

  it("never reconnects to a socket that became group/other accessible", async () => {
    const r = await startRouter()
    const end = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => r.chmodSocket(0o755))
        yield* promise(() => r.disconnectClients())
        yield* until(thread, recovering)
        yield* TestClock.adjust("250 millis")
        return yield* until(thread, closed)
      }),
    )
    expect(end.error._tag).toBe("EndpointPermissionError")
    expect(end.error.message).toContain("mode 0755")
    expect(r.requests("initialize")).toHaveLength(1)
  })

  it("refuses a missing socket at start without any fallback", async () => {
    const r = await startRouter()
    await r.stopListening()
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        return yield* Effect.flip(thread.awaitLive)
      }),
    )
    expect(error._tag).toBe("EndpointMissingError")
    expect(error.message).toContain(r.socketPath)
  })

  it("treats ipc-connection-reset as a disconnect and reconnects", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() =>
          r.broadcastAll({
            type: "broadcast",
            method: "ipc-connection-reset",
            version: 1,
            params: {},
          }),
        )
        const waiting = yield* until(thread, recovering)
        expect(waiting.reason).toContain("connection-reset")
        yield* TestClock.adjust("250 millis")
        yield* promise(() => r.waitForRequest("initialize", 2))
        yield* until(thread, (s): s is ExtensionSessionStatus => s._tag === "Live")
      }),
    )
  })

  it("resets the attempt counter once a connection stayed Live for stableLiveMs", async () => {
    const r = await startRouter()
    const delays = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const seen: Array<number> = []
        for (let round = 2; round <= 4; round++) {
          yield* TestClock.adjust(`${DEFAULT_EXTENSION_RECOVERY.stableLiveMs} millis`)
          yield* promise(() => r.disconnectClients())
          const waiting = yield* until(thread, recovering)
          seen.push(waiting.delayMs)
          yield* TestClock.adjust(`${waiting.delayMs} millis`)
          yield* promise(() => r.waitForRequest("initialize", round))
          yield* until(thread, (s): s is ExtensionSessionStatus => s._tag === "Live")
        }
        return seen
      }),
    )
    expect(delays).toEqual([250, 250, 250])
  })

  it("a router that drops every connection soon after the snapshot exhausts the attempts", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { recovery: { maxConsecutiveAttempts: 3 } })
        yield* thread.awaitLive
        const seen: Array<number> = []
        for (let round = 2; round <= 4; round++) {
          yield* TestClock.adjust("100 millis") // Live, but far shorter than stableLiveMs
          yield* promise(() => r.disconnectClients())
          const waiting = yield* until(
            thread,
            (s): s is Extract<ExtensionSessionStatus, { _tag: "Recovering" }> =>
              s._tag === "Recovering" && s.attempt === round - 1,
          )
          seen.push(waiting.delayMs)
          yield* TestClock.adjust(`${waiting.delayMs} millis`)
          yield* promise(() => r.waitForRequest("initialize", round))
          yield* until(thread, (s): s is ExtensionSessionStatus => s._tag === "Live")
        }
        yield* TestClock.adjust("100 millis")
        yield* promise(() => r.disconnectClients())
        const end = yield* until(thread, closed)
        return { seen, end }
      }),
    )
    expect(result.seen).toEqual([250, 500, 1000])
    expect(result.end.error._tag).toBe("RecoveryExhaustedError")
    expect(result.end.error.message).toContain("after 3 consecutive recovery attempts")
  })
})

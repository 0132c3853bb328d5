/**
 * The follow stream against the fake router over a real unix socket: snapshots, patch
 * streams, revision gaps and bad patches (resnapshot), filters, version drift, pending
 * approvals and idle/active flapping.
 */
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import type { ExtensionSessionStatus } from "@baton/ipc-codex"
import type { FakeExtensionRouter } from "@baton/ipc-codex/testing"
import { approvalRequestFixture } from "@baton/ipc-codex/testing"
import { liveAt, open, promise, run, startRouter, until } from "./extension-harness.js"

const closed = (
  s: ExtensionSessionStatus,
): s is Extract<ExtensionSessionStatus, { _tag: "Closed" }> => s._tag === "Closed"

describe("follow stream", () => {
  it("follows with the exact broadcast and goes live on the snapshot", async () => {
    const r = await startRouter()
    const live = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        return yield* thread.awaitLive
      }),
    )
    const [follow] = r.envelopes("broadcast", "thread-stream-following-changed")
    expect(follow).toEqual({
      type: "broadcast",
      method: "thread-stream-following-changed",
      params: { hostId: "local", conversationId: "thread-1", following: true },
      sourceClientId: live.clientId,
      version: 1,
      targetClientIds: ["owner-1"],
    })
    expect(live.revision).toBe(1)
    expect(live.view.runtimeStatus).toBe("idle")
  })

  it("applies contiguous patches (idle/active flapping, a pending approval)", async () => {
    const r = await startRouter()
    const seen = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const statuses: Array<string> = []
        for (const [revision, type] of [
          [2, "active"],
          [3, "idle"],
          [4, "active"],
          [5, "idle"],
        ] as const) {
          yield* promise(() =>
            r.sendPatches([{ op: "replace", path: ["threadRuntimeStatus", "type"], value: type }]),
          )
          const live = yield* until(thread, liveAt(revision))
          statuses.push(`${live.view.runtimeStatus}:${live.view.isIdle}`)
        }
        yield* promise(() =>
          r.sendPatches([{ op: "add", path: ["requests", "-"], value: approvalRequestFixture(9) }]),
        )
        const withApproval = yield* until(thread, liveAt(6))
        return { statuses, withApproval }
      }),
    )
    expect(seen.statuses).toEqual(["active:false", "idle:true", "active:false", "idle:true"])
    expect(seen.withApproval.view.isIdle).toBe(false)
    expect(seen.withApproval.view.pendingRequests).toEqual([
      {
        id: 9,
        method: "item/commandExecution/requestApproval",
        kind: "approval",
        completed: false,
      },
    ])
    expect(r.envelopes("broadcast", "thread-stream-following-changed")).toHaveLength(1)
  })

  it.each<[string, (r: FakeExtensionRouter) => Promise<void>, string]>([
    [
      "a revision gap",
      (r) =>
        r.sendPatches([{ op: "replace", path: ["title"], value: "t" }], {
          baseRevision: r.revision + 3,
        }),
      "revision-gap",
    ],
    [
      "a batch without baseRevision",
      (r) =>
        r.sendPatches([{ op: "replace", path: ["title"], value: "t" }], { baseRevision: null }),
      "missing-base-revision",
    ],
    [
      "an out-of-order batch",
      (r) =>
        r.sendPatches([{ op: "replace", path: ["title"], value: "t" }], {
          baseRevision: r.revision - 1,
          revision: r.revision,
        }),
      "revision-gap",
    ],
    [
      "a patch that does not apply",
      (r) => r.sendPatches([{ op: "replace", path: ["nope", "x"], value: 1 }]),
      "patch-failed",
    ],
    [
      "a patch with a forbidden key",
      (r) => r.sendPatches([{ op: "add", path: ["__proto__", "polluted"], value: true }]),
      "patch-failed",
    ],
    [
      "a patch removing a required field",
      (r) => r.sendPatches([{ op: "remove", path: ["requests"] }]),
      "patched-layout-invalid",
    ],
  ])("re-follows for a fresh snapshot after %s", async (_name, fault, reason) => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => fault(r))
        yield* promise(() => r.waitForFollow(2))
        const live = yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Live" }> =>
            s._tag === "Live" && s.revision === r.revision,
        )
        return { live, events: yield* thread.events }
      }),
    )
    expect(result.live.view.runtimeStatus).toBe("idle")
    expect(result.events.some((e) => e.kind === "resnapshot" && e.detail.startsWith(reason))).toBe(
      true,
    )
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("re-follows once when patches arrive before any snapshot", async () => {
    const r = await startRouter({ snapshotOnFollow: false })
    const live = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* promise(() => r.waitForFollow(1))
        yield* promise(() => r.sendPatches([{ op: "replace", path: ["title"], value: "a" }]))
        yield* promise(() => r.sendPatches([{ op: "replace", path: ["title"], value: "b" }]))
        yield* promise(() => r.waitForFollow(2))
        yield* promise(() => r.sendSnapshot())
        return yield* thread.awaitLive
      }),
    )
    expect(live.revision).toBe(3)
    expect(r.envelopes("broadcast", "thread-stream-following-changed")).toHaveLength(2)
  })

  it("ignores state broadcasts from a foreign source, for another thread or another host", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const set = (type: string) => ({
          type: "patches",
          baseRevision: 1,
          revision: 2,
          patches: [{ op: "replace", path: ["threadRuntimeStatus", "type"], value: type }],
        })
        yield* promise(() => r.broadcastState(set("active"), { sourceClientId: "intruder" }))
        yield* promise(() => r.broadcastState(set("active"), { conversationId: "other-thread" }))
        yield* promise(() =>
          r.broadcastState(set("active"), { sourceClientId: "intruder", version: 12 }),
        )
        yield* promise(() =>
          r.broadcastAll({
            type: "broadcast",
            method: "thread-stream-state-changed",
            sourceClientId: "owner-1",
            version: 11,
            params: { hostId: "remote", conversationId: "thread-1", change: set("active") },
          }),
        )
        yield* promise(() =>
          r.sendPatches([{ op: "replace", path: ["title"], value: "still mine" }]),
        )
        const live = yield* until(thread, liveAt(2))
        return { live, events: yield* thread.events }
      }),
    )
    expect(result.live.view.runtimeStatus).toBe("idle")
    expect(result.events.filter((e) => e.kind === "stream-ignored").map((e) => e.detail)).toEqual([
      "from intruder, owner is owner-1",
      "from intruder, owner is owner-1",
      "hostId remote",
    ])
  })

  it("ends with a version mismatch naming the version seen when the owner streams version 12", async () => {
    const r = await startRouter({ streamVersion: 12 })
    const error = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        return yield* Effect.flip(thread.awaitLive)
      }),
    )
    expect(error._tag).toBe("MethodVersionMismatchError")
    expect(error.message).toContain(
      "Protocol version mismatch on thread-stream-state-changed (saw 12)",
    )
    expect(error.message).toContain("Baton speaks version 11")
  })

  it("accepts another stream version only through an explicit override", async () => {
    const r = await startRouter({ streamVersion: 12 })
    const live = await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { versionOverrides: { "thread-stream-state-changed": 12 } })
        return yield* thread.awaitLive
      }),
    )
    expect(live.revision).toBe(1)
  })

  it("re-announces following when the owner asks", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => r.requestFollowStatus())
        yield* promise(() => r.waitForFollow(2))
      }),
    )
    expect(r.envelopes("broadcast", "thread-stream-following-changed")).toHaveLength(2)
  })

  it("re-follows after 12 s without a snapshot, then recovers and names the versions seen", async () => {
    const r = await startRouter({ snapshotOnFollow: false })
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* promise(() => r.waitForFollow(1))
        yield* TestClock.adjust("11999 millis")
        expect(r.envelopes("broadcast", "thread-stream-following-changed")).toHaveLength(1)
        yield* TestClock.adjust("1 millis")
        yield* promise(() => r.waitForFollow(2))
        yield* TestClock.adjust("12 seconds")
        yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Recovering" }> =>
            s._tag === "Recovering",
        )
        r.snapshotOnFollow = true
        yield* TestClock.adjust("250 millis")
        const live = yield* thread.awaitLive
        return { live, events: yield* thread.events }
      }),
    )
    expect(result.live.ownerId).toBe("owner-1")
    const recovering = result.events.find((e) => e.kind === "recovering")
    expect(recovering?.detail).toContain("SnapshotTimeoutError")
    expect(recovering?.detail).toContain(
      "expected stream version 11; no thread-stream-state-changed for this thread was seen",
    )
    expect(r.requests("initialize")).toHaveLength(2)
  })

  it("unfollows when the session closes", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* thread.close
        yield* until(thread, closed)
      }),
    )
    const unfollow = await r.waitFor(
      (e) =>
        e.envelope["method"] === "thread-stream-following-changed" &&
        (e.envelope["params"] as { following?: boolean }).following === false,
    )
    expect(unfollow.envelope["targetClientIds"]).toEqual(["owner-1"])
  })
})

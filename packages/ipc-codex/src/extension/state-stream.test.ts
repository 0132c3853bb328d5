import { describe, expect, it } from "vitest"
import type { PatchOperation, StreamChange } from "./envelope.js"
import { AWAITING_SNAPSHOT, reduceStream } from "./state-stream.js"
import type { StreamPhase } from "./state-stream.js"
import { conversationStateFixture } from "./testing/conversation-fixtures.js"

const good = conversationStateFixture()
const live = (revision: number): StreamPhase => {
  const step = reduceStream(AWAITING_SNAPSHOT, {
    type: "snapshot",
    revision,
    conversationState: good,
  })
  if (step.phase._tag !== "Live") throw new Error("fixture not live")
  return step.phase
}
const strayed: StreamPhase = { _tag: "AwaitingSnapshot", strayPatchRefollowed: true }
const snapshot = (revision: number, state: unknown = good): StreamChange => ({
  type: "snapshot",
  revision,
  conversationState: state,
})
const patches = (
  baseRevision: number | undefined,
  revision: number,
  ops: ReadonlyArray<PatchOperation>,
): StreamChange => ({
  type: "patches",
  ...(baseRevision === undefined ? {} : { baseRevision }),
  revision,
  patches: ops,
})
const setActive = [
  { op: "replace" as const, path: ["threadRuntimeStatus", "type"], value: "active" },
]

describe("reduceStream transition table", () => {
  it.each<[string, StreamPhase, StreamChange, string, string]>([
    ["awaiting + snapshot", AWAITING_SNAPSHOT, snapshot(1), "Snapshot", "Live"],
    [
      "awaiting + bad-layout snapshot",
      AWAITING_SNAPSHOT,
      snapshot(1, { nope: 1 }),
      "Fatal",
      "AwaitingSnapshot",
    ],
    [
      "awaiting + stray patches",
      AWAITING_SNAPSHOT,
      patches(1, 2, setActive),
      "Resnapshot",
      "AwaitingSnapshot",
    ],
    [
      "awaiting (already re-followed) + stray patches",
      strayed,
      patches(1, 2, setActive),
      "Ignored",
      "AwaitingSnapshot",
    ],
    ["live + snapshot (older revision accepted)", live(5), snapshot(1), "Snapshot", "Live"],
    ["live + bad-layout snapshot", live(5), snapshot(6, []), "Fatal", "AwaitingSnapshot"],
    ["live + contiguous patches", live(5), patches(5, 6, setActive), "Patched", "Live"],
    [
      "live + patches without baseRevision",
      live(5),
      patches(undefined, 6, setActive),
      "Resnapshot",
      "AwaitingSnapshot",
    ],
    ["live + revision gap", live(5), patches(6, 7, setActive), "Resnapshot", "AwaitingSnapshot"],
    [
      "live + stale (out of order) patches",
      live(5),
      patches(4, 5, setActive),
      "Resnapshot",
      "AwaitingSnapshot",
    ],
    [
      "live + patch that does not apply",
      live(5),
      patches(5, 6, [{ op: "remove", path: ["nope"] }]),
      "Resnapshot",
      "AwaitingSnapshot",
    ],
    [
      "live + forbidden key",
      live(5),
      patches(5, 6, [{ op: "add", path: ["__proto__", "x"], value: 1 }]),
      "Resnapshot",
      "AwaitingSnapshot",
    ],
    [
      "live + patch removing a required field",
      live(5),
      patches(5, 6, [{ op: "remove", path: ["requests"] }]),
      "Resnapshot",
      "AwaitingSnapshot",
    ],
  ])("%s → %s", (_name, phase, change, outcome, next) => {
    const step = reduceStream(phase, change)
    expect(step.outcome._tag).toBe(outcome)
    expect(step.phase._tag).toBe(next)
  })

  it("names the reason of each resnapshot", () => {
    const reason = (phase: StreamPhase, change: StreamChange) => {
      const { outcome } = reduceStream(phase, change)
      return outcome._tag === "Resnapshot" ? outcome.reason : outcome._tag
    }
    expect(reason(AWAITING_SNAPSHOT, patches(1, 2, setActive))).toBe("patch-before-snapshot")
    expect(reason(live(5), patches(undefined, 6, setActive))).toBe("missing-base-revision")
    expect(reason(live(5), patches(3, 4, setActive))).toBe("revision-gap")
    expect(reason(live(5), patches(5, 6, [{ op: "remove", path: ["nope"] }]))).toBe("patch-failed")
    expect(reason(live(5), patches(5, 6, [{ op: "remove", path: ["turns"] }]))).toBe(
      "patched-layout-invalid",
    )
  })

  it("applies patches to a new state and leaves the held one untouched", () => {
    const before = live(5)
    const held = JSON.stringify(before._tag === "Live" ? before.state : null)
    const step = reduceStream(before, patches(5, 6, setActive))
    expect(step.phase._tag === "Live" && step.phase.view.runtimeStatus).toBe("active")
    expect(step.phase._tag === "Live" && step.phase.revision).toBe(6)
    expect(JSON.stringify(before._tag === "Live" ? before.state : null)).toBe(held)
  })

  it("every phase is reachable and a snapshot always recovers", () => {
    for (const phase of [AWAITING_SNAPSHOT, strayed, live(3)]) {
      expect(reduceStream(phase, snapshot(9)).phase._tag).toBe("Live")
    }
  })
})

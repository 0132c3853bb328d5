import type { RateLimitsState } from "@baton/ipc-codex"
import { describe, expect, test } from "vitest"
import { bandOf, readPressure } from "./pressure.js"

const snapshot = (
  limitId: string | null,
  model: string | null,
  primary: number | null,
  secondary: number | null,
) => ({
  limitId,
  limitName: null,
  normalModelSlug: model,
  primary:
    primary === null ? null : { usedPercent: primary, windowDurationMins: 300, resetsAt: null },
  secondary:
    secondary === null
      ? null
      : { usedPercent: secondary, windowDurationMins: 10080, resetsAt: null },
  credits: null,
  spendControlReached: null,
  planType: null,
  rateLimitReachedType: null,
})

const state: RateLimitsState = {
  ordinaryUsageAllowed: true,
  snapshot: snapshot("codex", null, 50, 81),
  byLimitId: {
    codex: snapshot("codex", null, 50, 81),
    "codex-luna": snapshot("codex-luna", "gpt-5.6-luna", 96, 10),
    empty: snapshot("empty", "model-x", null, null),
  },
  lastReadAtMs: 0,
  lastUpdateAtMs: null,
}

describe("pressure bands", () => {
  test("thresholds", () => {
    expect([null, 0, 79.9, 80, 89.9, 90, 94.9, 95, 100].map(bandOf)).toEqual([
      "unknown",
      "normal",
      "normal",
      "prepare",
      "prepare",
      "high",
      "high",
      "final",
      "final",
    ])
  })
  test("the bucket is picked by limit id, then by model, else the main snapshot", () => {
    expect(readPressure(state, { limitId: null, model: null })).toEqual({
      band: "prepare",
      usedPercent: 81,
      limitId: "codex",
    })
    expect(readPressure(state, { limitId: null, model: "gpt-5.6-luna" }).band).toBe("final")
    expect(readPressure(state, { limitId: "codex", model: "gpt-5.6-luna" }).band).toBe("prepare")
    expect(readPressure(state, { limitId: null, model: "model-x" })).toEqual({
      band: "unknown",
      usedPercent: null,
      limitId: "empty",
    })
    expect(readPressure(null, { limitId: null, model: null }).band).toBe("unknown")
  })
  test("percentages are clamped", () => {
    const over = { ...state, snapshot: snapshot(null, null, 140, null), byLimitId: {} }
    expect(readPressure(over, { limitId: null, model: null })).toEqual({
      band: "final",
      usedPercent: 100,
      limitId: null,
    })
  })
})

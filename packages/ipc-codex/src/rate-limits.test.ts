import { describe, expect, test } from "vitest"
import type { RateLimitSnapshot } from "./protocol-schema.js"
import {
  applyRateLimitsRead,
  applyRateLimitsUpdate,
  mergeRateLimitSnapshot,
} from "./rate-limits.js"

const full: RateLimitSnapshot = {
  limitId: "codex",
  limitName: "Codex",
  normalModelSlug: null,
  primary: { usedPercent: 40, windowDurationMins: 300, resetsAt: 1_000 },
  secondary: { usedPercent: 10, windowDurationMins: 10_080, resetsAt: 9_000 },
  credits: { hasCredits: true, unlimited: false, balance: "5" },
  spendControlReached: false,
  planType: "plus",
  rateLimitReachedType: null,
}

describe("sparse merge", () => {
  test("null and missing members keep earlier values; present members win", () => {
    const merged = mergeRateLimitSnapshot(full, {
      limitId: "codex",
      primary: { usedPercent: 55, windowDurationMins: null, resetsAt: null },
      secondary: null,
      credits: null,
      planType: null,
    })
    expect(merged).toEqual({
      ...full,
      primary: { usedPercent: 55, windowDurationMins: 300, resetsAt: 1_000 },
    })
  })

  test("an all-null update (0.169.0 sends one when the model response carries no headers) changes nothing", () => {
    const merged = mergeRateLimitSnapshot(full, {
      limitId: "codex",
      limitName: null,
      primary: null,
      secondary: null,
      credits: null,
      individualLimit: null,
      spendControlReached: null,
      planType: null,
      rateLimitReachedType: null,
    } as RateLimitSnapshot)
    expect(merged).toEqual(full)
  })

  test("a reached limit is recorded", () => {
    expect(
      mergeRateLimitSnapshot(full, { rateLimitReachedType: "rate_limit_reached" })
        .rateLimitReachedType,
    ).toBe("rate_limit_reached")
  })
})

describe("state", () => {
  test("a read is authoritative for ordinaryUsageAllowed; updates never change it", () => {
    const read = applyRateLimitsRead(
      { ordinaryUsageAllowed: false, rateLimits: full, rateLimitsByLimitId: null },
      10,
    )
    const updated = applyRateLimitsUpdate(
      read,
      { limitId: "codex", primary: { usedPercent: 0, windowDurationMins: 300, resetsAt: 2_000 } },
      20,
    )
    expect(updated.ordinaryUsageAllowed).toBe(false)
    expect(updated.snapshot.primary?.usedPercent).toBe(0)
    expect(updated).toMatchObject({ lastReadAtMs: 10, lastUpdateAtMs: 20 })
  })

  test("updates without a read start from nothing and ordinaryUsageAllowed stays unknown", () => {
    const state = applyRateLimitsUpdate(
      null,
      { limitId: "codex", primary: { usedPercent: 12, windowDurationMins: 300, resetsAt: null } },
      5,
    )
    expect(state.ordinaryUsageAllowed).toBeNull()
    expect(state.snapshot.primary?.usedPercent).toBe(12)
    expect(state.byLimitId["codex"]?.primary?.usedPercent).toBe(12)
  })

  test("another bucket merges into its own view only", () => {
    const read = applyRateLimitsRead(
      { ordinaryUsageAllowed: true, rateLimits: full, rateLimitsByLimitId: { codex: full } },
      1,
    )
    const state = applyRateLimitsUpdate(
      read,
      {
        limitId: "codex_other",
        primary: { usedPercent: 90, windowDurationMins: 60, resetsAt: null },
      },
      2,
    )
    expect(state.snapshot).toEqual(full)
    expect(state.byLimitId["codex_other"]?.primary?.usedPercent).toBe(90)
  })
})

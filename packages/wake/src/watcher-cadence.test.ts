import { expect, test } from "vitest"
import { defaultWatcherLimits as limits, jobReadDueAt, quotaReadDueAt } from "./watcher-cadence.js"

const S = 1_000
const M = 60 * S

test.each([
  ["reset in 10 min → capped at 5 min", 10 * M, 5 * M],
  ["reset in 30 s → at the reset + 2 s", 30 * S, 32 * S],
  ["reset in 1 s → not sooner than 5 s", 1 * S, 5 * S],
  ["reset passed → every minute", -5 * S, 1 * M],
])("quota_waiting: %s", (_name, resetIn, due) => {
  expect(
    jobReadDueAt(
      { state: "quota_waiting", nextRetryAt: null, resetsAtMs: 1_000_000 + resetIn },
      1_000_000,
      limits,
    ),
  ).toBe(1_000_000 + due)
})

test("quota_waiting without a hint: every minute; monitoring and running: every minute; parked: never", () => {
  expect(
    jobReadDueAt({ state: "quota_waiting", nextRetryAt: null, resetsAtMs: null }, 0, limits),
  ).toBe(M)
  expect(
    jobReadDueAt({ state: "monitoring", nextRetryAt: null, resetsAtMs: null }, 0, limits),
  ).toBe(M)
  expect(jobReadDueAt({ state: "running", nextRetryAt: null, resetsAtMs: null }, 0, limits)).toBe(M)
  for (const state of ["draft", "waiting_user", "needs_attention", "stopped", "completed"] as const)
    expect(jobReadDueAt({ state, nextRetryAt: null, resetsAtMs: 0 }, 0, limits)).toBeNull()
})

test("retry_waiting: a fresh read exactly when the retry is due, then every 5 s", () => {
  expect(
    jobReadDueAt(
      { state: "retry_waiting", nextRetryAt: 120 * S, resetsAtMs: null },
      10 * S,
      limits,
    ),
  ).toBe(120 * S)
  expect(
    jobReadDueAt({ state: "retry_waiting", nextRetryAt: 5 * S, resetsAtMs: null }, 10 * S, limits),
  ).toBe(15 * S)
})

test("the earliest job wins; the first read is immediate; the cap bounds every delay", () => {
  const jobs = [
    { state: "quota_waiting" as const, nextRetryAt: null, resetsAtMs: 10 * M },
    { state: "monitoring" as const, nextRetryAt: null, resetsAtMs: null },
  ]
  expect(quotaReadDueAt(jobs, null, 7, limits)).toBe(7)
  expect(quotaReadDueAt(jobs, 0, 0, limits)).toBe(M)
  expect(quotaReadDueAt(jobs, 0, 0, { ...limits, pollCapMs: 500 })).toBe(500)
  expect(
    quotaReadDueAt([{ state: "stopped", nextRetryAt: null, resetsAtMs: null }], 0, 0, limits),
  ).toBeNull()
})

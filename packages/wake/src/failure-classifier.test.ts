import { expect, test } from "vitest"
import { classifyCodexError, classifyRun, codexErrorKind } from "./failure-classifier.js"

test("codex error kinds normalise from the rollout's snake_case and the app-server's camelCase", () => {
  expect(codexErrorKind("usage_limit_exceeded")).toEqual({
    kind: "usageLimitExceeded",
    httpStatusCode: null,
  })
  expect(codexErrorKind({ http_connection_failed: { http_status_code: 503 } })).toEqual({
    kind: "httpConnectionFailed",
    httpStatusCode: 503,
  })
  expect(codexErrorKind({ responseStreamDisconnected: { httpStatusCode: null } })).toEqual({
    kind: "responseStreamDisconnected",
    httpStatusCode: null,
  })
  expect(codexErrorKind(null)).toBeNull()
  expect(codexErrorKind(42)).toBeNull()
})

test.each([
  ["usageLimitExceeded", null, "usage_limit"],
  ["serverOverloaded", null, "overloaded"],
  ["internalServerError", null, "overloaded"],
  ["httpConnectionFailed", 503, "connection"],
  ["httpConnectionFailed", 429, "connection"],
  ["httpConnectionFailed", null, "connection"],
  ["httpConnectionFailed", 400, "other"],
  ["responseStreamConnectionFailed", null, "connection"],
  ["responseTooManyFailedAttempts", 502, "connection"],
  ["responseStreamDisconnected", null, "stream"],
  ["contextWindowExceeded", null, "other"],
  ["unauthorized", null, "other"],
  ["other", null, "other"],
] as const)("%s (%s) → %s", (kind, status, expected) => {
  expect(classifyCodexError({ kind, httpStatusCode: status })).toBe(expected)
})

test("a run is classified from structured data only: a transient-sounding message without a code is not transient", () => {
  const base = { exitCode: 1, signal: null, killedBy: null }
  expect(
    classifyRun({
      ...base,
      lastError: { kind: null, message: "request timed out; connection reset" },
    }).failure,
  ).toBe("other")
  expect(
    classifyRun({
      ...base,
      lastError: { kind: { kind: "usageLimitExceeded", httpStatusCode: null }, message: "limit" },
    }),
  ).toEqual({ failure: "usage_limit", detail: "usageLimitExceeded: limit" })
  expect(classifyRun({ ...base, exitCode: 0, lastError: null })).toEqual({
    failure: "none",
    detail: null,
  })
  expect(classifyRun({ ...base, lastError: null }).failure).toBe("other")
  expect(
    classifyRun({ ...base, exitCode: null, signal: "SIGKILL", lastError: null }).detail,
  ).toMatch(/SIGKILL/)
  expect(
    classifyRun({ ...base, killedBy: "watchdog: no output for 60 s", lastError: null }),
  ).toEqual({ failure: "other", detail: "watchdog: no output for 60 s" })
})

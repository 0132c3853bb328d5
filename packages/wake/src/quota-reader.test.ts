// The Codex quota reader against the in-memory twin of the app-server.
import type { FakeAppServer } from "@baton/ipc-codex/testing"
import { fakeTransport, makeFakeAppServer } from "@baton/ipc-codex/testing"
import * as Effect from "effect/Effect"
import { expect, test } from "vitest"
import { makeCodexQuotaReader } from "./quota-reader.js"

const reader = (server: FakeAppServer) => makeCodexQuotaReader(fakeTransport(server).connect)

test("signed in: the server's allowance (true, false, absent → null) and its windows; one connection kept", async () => {
  const server = makeFakeAppServer({
    rateLimitsRead: { kind: "ok", ordinaryUsageAllowed: true, primaryUsedPercent: 92 },
  })
  const quota = await Effect.runPromise(reader(server))
  const first = await Effect.runPromise(quota.read)
  expect(first).toMatchObject({ _tag: "Read", allowed: true })
  if (first._tag === "Read") expect(first.rateLimits.snapshot.primary?.usedPercent).toBe(92)
  server.scriptRateLimitsRead({ kind: "ok", ordinaryUsageAllowed: false })
  expect(await Effect.runPromise(quota.read)).toMatchObject({ _tag: "Read", allowed: false })
  server.scriptRateLimitsRead({ kind: "ok" })
  expect(await Effect.runPromise(quota.read)).toMatchObject({ _tag: "Read", allowed: null })
  expect(server.clientCount()).toBe(1)
  await Effect.runPromise(quota.close)
})

test("signed out is its own reading (no allowance); a failed read reconnects next time", async () => {
  const server = makeFakeAppServer({ rateLimitsRead: { kind: "notAuthenticated" } })
  const quota = await Effect.runPromise(reader(server))
  expect(await Effect.runPromise(quota.read)).toMatchObject({ _tag: "SignedOut" })
  server.scriptRateLimitsRead({ kind: "ok", ordinaryUsageAllowed: true })
  server.failNext("account/rateLimits/read", { code: -32603, message: "backend unavailable" })
  expect(await Effect.runPromise(quota.read)).toMatchObject({ _tag: "Unavailable" })
  expect(await Effect.runPromise(quota.read)).toMatchObject({ _tag: "Read", allowed: true })
  await Effect.runPromise(quota.close)
})

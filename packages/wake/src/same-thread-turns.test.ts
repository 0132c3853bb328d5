import { fakeTransport, makeFakeAppServer } from "@baton/ipc-codex/testing"
import * as Effect from "effect/Effect"
import { expect, test } from "vitest"
import { acceptsTurn, makeDaemonSameThreadTurns } from "./same-thread-turns.js"

const THREAD = "019a0000-0000-7000-8000-000000000001"

test("an idle, loaded original thread gets the turn; its activity is read back", async () => {
  const server = makeFakeAppServer({ threads: [{ id: THREAD }] })
  const turns = makeDaemonSameThreadTurns(fakeTransport(server).connect)
  const started = await Effect.runPromise(turns.start(THREAD, "Continue Baton wake job x"))
  expect(started._tag).toBe("Started")
  expect(server.turnInputs).toEqual([
    expect.objectContaining({ threadId: THREAD, text: "Continue Baton wake job x" }),
  ])
  expect(await Effect.runPromise(turns.isActive("019a0000-0000-7000-8000-00000000dead"))).toBeNull()
})

test("a busy thread is never steered: the caller falls back", async () => {
  const server = makeFakeAppServer({ threads: [{ id: THREAD, status: { type: "active" } }] })
  const turns = makeDaemonSameThreadTurns(fakeTransport(server).connect)
  expect(await Effect.runPromise(turns.start(THREAD, "x"))).toMatchObject({
    _tag: "Unavailable",
    detail: expect.stringContaining("active"),
  })
  expect(await Effect.runPromise(turns.isActive(THREAD))).toBe(true)
  expect(server.turnInputs).toHaveLength(0)
})

test("a thread whose last turn failed (systemError, e.g. a usage limit) gets the turn", async () => {
  const server = makeFakeAppServer({ threads: [{ id: THREAD, status: { type: "systemError" } }] })
  const turns = makeDaemonSameThreadTurns(fakeTransport(server).connect)
  expect(await Effect.runPromise(turns.isActive(THREAD))).toBe(false)
  expect(await Effect.runPromise(turns.start(THREAD, "Continue Baton wake job x"))).toMatchObject({
    _tag: "Started",
  })
  expect(server.turnInputs).toEqual([expect.objectContaining({ threadId: THREAD })])
})

test("only idle and systemError accept a turn", () => {
  expect(["idle", "systemError", "active", "notLoaded", "unknown"].filter(acceptsTurn)).toEqual([
    "idle",
    "systemError",
  ])
})

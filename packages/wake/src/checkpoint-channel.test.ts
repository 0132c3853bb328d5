import { fakeTransport, makeFakeAppServer } from "@baton/ipc-codex/testing"
import * as Effect from "effect/Effect"
import { expect, test } from "vitest"
import { makeDaemonCheckpointChannel, statusOnlyCheckpointChannel } from "./checkpoint-channel.js"
import { defaultJobBounds, newJobRecord } from "./job-record.js"

const THREAD = "019a0000-0000-7000-8000-000000000001"
const job = newJobRecord({
  jobId: "wake-20250131-120000-0123abcd",
  originalThreadId: THREAD,
  cwd: "/w",
  model: null,
  reasoningEffort: null,
  limitId: null,
  bounds: defaultJobBounds,
  createdAt: 0,
})

test("an idle original thread in the daemon gets one checkpoint turn naming the job", async () => {
  const server = makeFakeAppServer({ threads: [{ id: THREAD }] })
  const channel = makeDaemonCheckpointChannel(fakeTransport(server).connect)
  const outcome = await Effect.runPromise(channel.request(job, "prepare", "'/n' '/b.js'"))
  expect(outcome).toMatchObject({ delivered: true, retryable: false })
  expect(server.turnInputs).toHaveLength(1)
  expect(server.turnInputs[0]?.threadId).toBe(THREAD)
  expect(server.turnInputs[0]?.text).toContain(`'/n' '/b.js' wake refresh ${job.jobId}`)
})

test("a busy thread is never interrupted; no daemon means status only", async () => {
  const server = makeFakeAppServer({ threads: [{ id: THREAD, status: { type: "active" } }] })
  const busy = await Effect.runPromise(
    makeDaemonCheckpointChannel(fakeTransport(server).connect).request(job, "prepare", "baton"),
  )
  // Busy may pass: the watcher offers the request again later in the rise.
  expect(busy).toMatchObject({ delivered: false, retryable: true })
  expect(busy.detail).toContain("active")
  expect(server.turnInputs).toHaveLength(0)
  expect(
    await Effect.runPromise(statusOnlyCheckpointChannel.request(job, "high", "baton")),
  ).toMatchObject({
    delivered: false,
    retryable: false,
  })
})

test("the same channel delivers once the busy thread is idle; no original thread is never retryable", async () => {
  const server = makeFakeAppServer({ threads: [{ id: THREAD, status: { type: "active" } }] })
  const channel = makeDaemonCheckpointChannel(fakeTransport(server).connect)
  const first = await Effect.runPromise(channel.request(job, "prepare", "baton"))
  expect(first).toMatchObject({ delivered: false, retryable: true })
  expect(server.turnInputs).toHaveLength(0)
  server.setStatus(THREAD, { type: "idle" })
  const second = await Effect.runPromise(channel.request(job, "high", "baton"))
  expect(second).toMatchObject({ delivered: true, retryable: false })
  expect(server.turnInputs).toHaveLength(1)
  expect(server.turnInputs[0]?.text).toContain("is high.")
  const orphan = await Effect.runPromise(
    channel.request({ ...job, originalThreadId: null }, "prepare", "baton"),
  )
  expect(orphan).toMatchObject({ delivered: false, retryable: false })
})

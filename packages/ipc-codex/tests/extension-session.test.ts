/**
 * Handshake and framing against the fake router over a real unix socket: every chunking of
 * the router's frames, several frames per write, zero-length, oversized and invalid-JSON
 * frames, unknown envelopes, and `client-discovery-request` answers.
 */
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import type { ExtensionSessionStatus } from "@baton/ipc-codex"
import type { FakeExtensionRouter } from "@baton/ipc-codex/testing"
import type { ChunkingMode } from "@baton/ipc-codex/testing"
import { liveAt, open, promise, run, startRouter, until } from "./extension-harness.js"

// Encoded here from the spec (4-byte little-endian length + UTF-8 JSON), not with Baton's codec.
const frame = (message: unknown): Uint8Array => {
  const body = new TextEncoder().encode(JSON.stringify(message))
  const bytes = new Uint8Array(4 + body.byteLength)
  new DataView(bytes.buffer).setUint32(0, body.byteLength, true)
  bytes.set(body, 4)
  return bytes
}

describe("handshake and framing", () => {
  it.each<ChunkingMode>(["whole", "split-two", "byte-by-byte"])(
    "goes live with frames written %s",
    async (chunking) => {
      const r = await startRouter({ chunking })
      const live = await run(
        Effect.gen(function* () {
          const thread = yield* open(r)
          const first = yield* thread.awaitLive
          yield* promise(() =>
            r.sendPatches([
              { op: "replace", path: ["threadRuntimeStatus", "type"], value: "active" },
            ]),
          )
          yield* until(thread, liveAt(2))
          return first
        }),
      )
      expect(live.clientId).toBe("client-1")
      expect(r.requests("thread-owner-discovery")[0]!["sourceClientId"]).toBe("client-1")
    },
  )

  it("decodes several frames delivered in one write", async () => {
    const r = await startRouter({ chunking: "whole" })
    const live = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const patch = (base: number, type: string) => ({
          type: "broadcast",
          method: "thread-stream-state-changed",
          sourceClientId: "owner-1",
          version: 11,
          params: {
            hostId: "local",
            conversationId: "thread-1",
            change: {
              type: "patches",
              baseRevision: base,
              revision: base + 1,
              patches: [{ op: "replace", path: ["threadRuntimeStatus", "type"], value: type }],
            },
          },
        })
        const bytes = [
          frame(patch(1, "active")),
          frame(patch(2, "idle")),
          frame(patch(3, "active")),
        ]
        const joined = new Uint8Array(bytes.reduce((n, b) => n + b.byteLength, 0))
        let at = 0
        for (const b of bytes) {
          joined.set(b, at)
          at += b.byteLength
        }
        yield* promise(() => r.sendRaw(joined))
        return yield* until(thread, liveAt(4))
      }),
    )
    expect(live.view.runtimeStatus).toBe("active")
  })

  it("skips an invalid JSON frame, records it and keeps the connection", async () => {
    const r = await startRouter()
    const result = await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        yield* promise(() => r.sendTextFrame("{not json"))
        yield* promise(() => r.broadcastAll({ type: "mystery", foo: 1 }))
        yield* promise(() =>
          r.sendPatches([
            { op: "replace", path: ["threadRuntimeStatus", "type"], value: "active" },
          ]),
        )
        const live = yield* until(thread, liveAt(2))
        return { live, events: yield* thread.events }
      }),
    )
    expect(result.live.view.runtimeStatus).toBe("active")
    const diagnostics = result.events.filter((e) => e.kind === "diagnostic").map((e) => e.detail)
    expect(diagnostics[0]).toMatch(/^invalid-json: Skipped an IPC frame of 9 bytes/)
    expect(diagnostics[1]).toMatch(/^invalid-envelope: /)
    expect(diagnostics.join(" ")).not.toContain("not json")
    expect(r.requests("initialize")).toHaveLength(1)
  })

  it.each<[string, (r: FakeExtensionRouter) => Promise<void>, string]>([
    ["a zero-length frame", (r) => r.sendHeaderOnly(0), "frame-empty"],
    ["an oversized frame header", (r) => r.sendHeaderOnly(2048), "frame-too-large"],
  ])("closes the connection on %s and reconnects", async (_name, fault, reason) => {
    const r = await startRouter()
    const waiting = await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { maxFrameBytes: 1024 })
        yield* thread.awaitLive
        yield* promise(() => fault(r))
        const recovering = yield* until(
          thread,
          (s): s is Extract<ExtensionSessionStatus, { _tag: "Recovering" }> =>
            s._tag === "Recovering",
        )
        yield* TestClock.adjust("250 millis")
        yield* promise(() => r.waitForRequest("initialize", 2))
        yield* until(
          thread,
          (s): s is ExtensionSessionStatus => s._tag === "Live" && s.clientId === "client-2",
        )
        return recovering
      }),
    )
    expect(waiting.reason).toContain(reason)
  })

  it("answers every client-discovery-request with canHandle: false", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const thread = yield* open(r)
        yield* thread.awaitLive
        const id = yield* promise(() => r.sendClientDiscoveryRequest("probe-1"))
        yield* promise(() =>
          r.waitFor(
            (e) =>
              e.envelope["type"] === "client-discovery-response" && e.envelope["requestId"] === id,
          ),
        )
      }),
    )
    expect(r.envelopes("client-discovery-response")).toEqual([
      { type: "client-discovery-response", requestId: "probe-1", response: { canHandle: false } },
    ])
  })

  it("sends its own client type in initialize", async () => {
    const r = await startRouter()
    await run(
      Effect.gen(function* () {
        const thread = yield* open(r, { clientType: "baton-test" })
        yield* thread.awaitLive
      }),
    )
    expect(r.requests("initialize")[0]!["params"]).toEqual({ clientType: "baton-test" })
  })
})

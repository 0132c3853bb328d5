import { PassThrough } from "node:stream"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, test } from "vitest"
import type { IncomingMessage, JsonRpcConnection, JsonRpcStats } from "./json-rpc-connection.js"
import { makeJsonRpcConnection } from "./json-rpc-connection.js"
import { jsonlFrameLink } from "./jsonl-link.js"
import type { InMemoryServerEnd } from "./testing/index.js"
import { inMemoryLink, makeFakeAppServer } from "./testing/index.js"

/** A raw peer: records what the client wrote and lets the test write anything back. */
const rawPeer = () => {
  const written: Array<Record<string, unknown>> = []
  let end: InMemoryServerEnd | null = null
  return {
    written,
    send: (frame: string) => end?.send(frame),
    close: (reason: string) => end?.close(reason),
    link: inMemoryLink((e) => {
      end = e
      return {
        onFrame: (frame) => written.push(JSON.parse(frame) as Record<string, unknown>),
        onClose: () => undefined,
      }
    }),
  }
}

/**
 * Yields to the event loop until `condition` holds. Waits on what happened (frames written,
 * messages seen, counters), never on wall-clock time: a fixed `setTimeout(5)` here used to fire
 * before a forked request had even started when the machine was loaded.
 */
const until = (condition: () => boolean) =>
  Effect.promise(async () => {
    for (let turn = 0; turn < 100_000 && !condition(); turn++)
      await new Promise((r) => setImmediate(r))
    if (!condition()) throw new Error("condition never held")
  })
const untilStats = (conn: JsonRpcConnection, condition: (stats: JsonRpcStats) => boolean) =>
  Effect.gen(function* () {
    let stats = yield* conn.stats
    for (let turn = 0; turn < 100_000 && !condition(stats); turn++) {
      yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
      stats = yield* conn.stats
    }
    return stats
  })

const withRaw = <A, E>(
  body: (
    conn: JsonRpcConnection,
    peer: ReturnType<typeof rawPeer>,
    messages: Array<IncomingMessage>,
  ) => Effect.Effect<A, E, Scope.Scope>,
) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const peer = rawPeer()
        const messages: Array<IncomingMessage> = []
        const conn = yield* makeJsonRpcConnection({
          transport: "in-memory",
          openLink: peer.link,
          onMessage: (m) => Effect.sync(() => messages.push(m)),
        })
        return yield* body(conn, peer, messages)
      }),
    ),
  )

describe("JSON-RPC core", () => {
  test("requests carry ids, omit jsonrpc and absent params; answers match by id in any order", async () => {
    const result = await withRaw((conn, peer) =>
      Effect.gen(function* () {
        const a = yield* Effect.forkChild(conn.request("a", undefined))
        const b = yield* Effect.forkChild(conn.request("b", { x: 1 }))
        yield* until(() => peer.written.length === 2)
        expect(peer.written).toEqual([
          { id: 1, method: "a" },
          { id: 2, method: "b", params: { x: 1 } },
        ])
        peer.send(JSON.stringify({ id: 2, result: "B", extra: true }))
        peer.send(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "A" }))
        return [yield* Fiber.join(a), yield* Fiber.join(b)]
      }),
    )
    expect(result).toEqual(["A", "B"])
  })

  test("notifications without params and server requests reach onMessage in wire order", async () => {
    const messages = await withRaw((_conn, peer, seen) =>
      Effect.gen(function* () {
        peer.send(JSON.stringify({ method: "thread/closed" }))
        peer.send(
          JSON.stringify({
            method: "item/tool/requestUserInput",
            id: 0,
            params: { threadId: "t" },
            emittedAtMs: 1,
          }),
        )
        peer.send(JSON.stringify({ method: "n", params: { a: 1 } }))
        yield* until(() => seen.length === 3)
        return seen
      }),
    )
    expect(messages).toEqual([
      { _tag: "Notification", method: "thread/closed", params: undefined },
      {
        _tag: "ServerRequest",
        id: 0,
        method: "item/tool/requestUserInput",
        params: { threadId: "t" },
      },
      { _tag: "Notification", method: "n", params: { a: 1 } },
    ])
  })

  test("non-JSON, undecodable, unknown-id and duplicate frames are counted and skipped", async () => {
    const stats = await withRaw((conn, peer) =>
      Effect.gen(function* () {
        const req = yield* Effect.forkChild(conn.request("x", {}))
        yield* until(() => peer.written.length === 1)
        peer.send("WARN something on stdout")
        peer.send(JSON.stringify({ hello: "world" }))
        peer.send(JSON.stringify({ id: "nobody", result: {} }))
        peer.send(JSON.stringify({ id: 1, result: 1 }))
        peer.send(JSON.stringify({ id: 1, result: 2 }))
        expect(yield* Fiber.join(req)).toBe(1)
        return yield* untilStats(conn, (s) => s.framesReceived === 5)
      }),
    )
    expect(stats).toMatchObject({
      nonJsonFrames: 1,
      undecodableFrames: 1,
      unknownResponses: 2,
      requestsSent: 1,
    })
  })

  test("error answers keep code, message and data; a malformed error member still fails the request", async () => {
    const [a, b] = await withRaw((conn, peer) =>
      Effect.gen(function* () {
        const first = yield* Effect.forkChild(Effect.flip(conn.request("m", {})))
        const second = yield* Effect.forkChild(Effect.flip(conn.request("n", {})))
        yield* until(() => peer.written.length === 2)
        peer.send(
          JSON.stringify({ id: 1, error: { code: -32600, message: "bad", data: { k: 1 } } }),
        )
        peer.send(JSON.stringify({ id: 2, error: "weird" }))
        return [yield* Fiber.join(first), yield* Fiber.join(second)]
      }),
    )
    expect(a).toMatchObject({
      _tag: "RpcError",
      method: "m",
      code: -32600,
      detail: "bad",
      data: { k: 1 },
    })
    expect(b).toMatchObject({ _tag: "RpcError", method: "n", code: -32603 })
  })

  test("a timeout says the outcome may be unknown; the late answer is counted, not delivered", async () => {
    const [error, stats] = await withRaw((conn, peer) =>
      Effect.gen(function* () {
        const req = yield* Effect.forkChild(
          Effect.flip(conn.request("slow", {}, { timeoutMs: 1_000 })),
        )
        // Written means the request fiber ran past the send and armed its timeout.
        yield* until(() => peer.written.length === 1)
        yield* TestClock.adjust("1 second")
        const e = yield* Fiber.join(req)
        peer.send(JSON.stringify({ id: 1, result: "late" }))
        return [e, yield* untilStats(conn, (s) => s.lateResponses === 1)] as const
      }).pipe(Effect.provide(TestClock.layer())),
    )
    expect(error).toMatchObject({
      _tag: "RequestTimeoutError",
      method: "slow",
      timeoutMs: 1_000,
      outcomeMayBeUnknown: true,
    })
    expect(stats.lateResponses).toBe(1)
  })

  test("a close mid-request fails it with outcomeMayBeUnknown; later sends are refused as not sent", async () => {
    const [pending, later, reason] = await withRaw((conn, peer) =>
      Effect.gen(function* () {
        const req = yield* Effect.forkChild(Effect.flip(conn.request("compact", {})))
        yield* until(() => peer.written.length === 1)
        peer.close("socket reset")
        const e = yield* Fiber.join(req)
        const after = yield* Effect.flip(conn.request("again", {}))
        return [e, after, yield* conn.awaitClosed] as const
      }),
    )
    expect(pending).toMatchObject({
      _tag: "DisconnectedError",
      method: "compact",
      outcomeMayBeUnknown: true,
      reason: "socket reset",
    })
    expect(later).toMatchObject({ _tag: "DisconnectedError", outcomeMayBeUnknown: false })
    expect(reason).toBe("socket reset")
  })

  test("a huge burst is read without stalling (inbound drained in batches)", async () => {
    const [count, stats] = await withRaw((conn, peer, seen) =>
      Effect.gen(function* () {
        for (let i = 0; i < 5_000; i++)
          peer.send(JSON.stringify({ method: "thread/tokenUsage/updated", params: { i } }))
        yield* until(() => seen.length === 5_000)
        return [seen.length, yield* conn.stats] as const
      }),
    )
    expect(count).toBe(5_000)
    expect(stats.notifications).toBe(5_000)
  })
})

describe("fake app-server ordering rules", () => {
  test("requests before initialize get Not initialized; a second initialize gets Already initialized", async () => {
    const server = makeFakeAppServer()
    const [before, second] = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const conn = yield* makeJsonRpcConnection({
            transport: "in-memory",
            openLink: inMemoryLink(server.accept),
            onMessage: () => Effect.void,
          })
          const a = yield* Effect.flip(conn.request("thread/list", {}))
          yield* conn.request("initialize", {
            clientInfo: { name: "t", title: null, version: "0" },
            capabilities: null,
          })
          const b = yield* Effect.flip(
            conn.request("initialize", {
              clientInfo: { name: "t", title: null, version: "0" },
              capabilities: null,
            }),
          )
          return [a, b]
        }),
      ),
    )
    expect(before).toMatchObject({ _tag: "RpcError", code: -32600, detail: "Not initialized" })
    expect(second).toMatchObject({ _tag: "RpcError", code: -32600, detail: "Already initialized" })
  })
})

describe("oversized frames", () => {
  test("lines over the JSONL limit are skipped and counted in stats", async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const stats = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const conn = yield* makeJsonRpcConnection({
            transport: "stdio",
            openLink: (sink) =>
              Effect.succeed(
                jsonlFrameLink({ transport: "stdio", input, output, sink, maxLineLength: 100 }),
              ),
            onMessage: () => Effect.void,
          })
          input.write(`${"x".repeat(250)}\n`)
          input.write(`{"method":"thread/status/changed","params":{"pad":"${"y".repeat(300)}"}}\n`)
          input.write(`{"method":"configWarning","params":{}}\n`)
          return yield* untilStats(conn, (s) => s.notifications === 1)
        }),
      ),
    )
    expect(stats).toMatchObject({ oversizedFrames: 2, notifications: 1, framesReceived: 1 })
  })
})

#!/usr/bin/env node
// Benchmarks for @baton/ipc-codex, printed as a markdown table (run: pnpm --filter @baton/ipc-codex bench).
// - connect + initialize per transport: private stdio app-server (spawn) and the daemon socket, with
//   the pinned codex 0.169.0 from @baton/testkit in an isolated CODEX_HOME (rows skipped without it);
//   the VS Code extension IPC against the fake extension router on a real unix socket (endpoint
//   trust checks, connect, initialize, owner discovery, follow until the first snapshot is Live);
// - wire → typed event latency: a notification written on the wire until the decoded CodexEvent
//   reaches a subscriber of `connection.events`, over the in-memory duplex and over a loopback
//   WebSocket on a Unix socket (the daemon's framing). One notification in flight at a time.
// Uses dist/ (the bench script depends on build). No assertions: numbers only.
import { createServer } from "node:http"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { Effect, Exit, Scope, Stream } from "effect"
import { WebSocketServer } from "ws"
import {
  connectDaemon,
  connectStdio,
  makeCodexConnection,
  openExtensionThread,
} from "../dist/index.js"
import {
  FakeExtensionRouter,
  conversationStateFixture,
  fakeRouterEnvironment,
  fakeTransport,
  makeFakeAppServer,
  nodeIpcLayer,
} from "../dist/testing/index.js"
import { openUnixWebSocketLink } from "../dist/daemon-transport.js"

const CONNECT_RUNS = Number(process.env.BENCH_CONNECT_RUNS ?? 20)
const EXTENSION_RUNS = Number(process.env.BENCH_EXTENSION_RUNS ?? 50)
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 2000)

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
const summary = (samples) => {
  const s = [...samples].sort((a, b) => a - b)
  return {
    n: s.length,
    p50: quantile(s, 0.5),
    p95: quantile(s, 0.95),
    p99: quantile(s, 0.99),
    max: s.at(-1),
  }
}
const rows = []
const record = (name, samples, unit = "ms") => rows.push({ name, unit, ...summary(samples) })
const fmt = (v) => (v === undefined ? "—" : v < 1 ? v.toFixed(3) : v.toFixed(1))

const withScope = async (effect, body) => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const value = await Effect.runPromise(Scope.provide(effect, scope))
    return await body(value)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Emits one notification at a time and measures until the typed event is seen by a subscriber. */
const measureLatency = async (connection, emit, runs) => {
  let waiting = null
  const fiber = Effect.runFork(
    Stream.runForEach(connection.events, (event) =>
      Effect.sync(() => {
        if (event._tag === "TokenUsageUpdated" && waiting !== null) {
          const w = waiting
          waiting = null
          w(performance.now())
        }
      }),
    ),
  )
  await new Promise((r) => setTimeout(r, 20))
  const samples = []
  for (let i = 0; i < runs + 100; i++) {
    const seen = new Promise((resolve) => (waiting = resolve))
    const start = performance.now()
    emit(i)
    const end = await seen
    if (i >= 100) samples.push(end - start) // first 100 are warm-up
  }
  await Effect.runPromise(Fiber_interrupt(fiber))
  return samples
}
const Fiber_interrupt = (fiber) => Effect.sync(() => fiber.interruptUnsafe())

// 1. In-memory duplex.
{
  const server = makeFakeAppServer({ threads: [{ id: "t" }] })
  const samples = await withScope(fakeTransport(server).connect, (c) =>
    measureLatency(c, (i) => server.emitTokenUsage("t", "turn", i + 1), LATENCY_RUNS),
  )
  record("wire → typed event, in-memory duplex", samples)
}

// 2. Loopback WebSocket over a Unix socket (daemon framing), fake server behind it.
{
  const dir = await mkdtemp(join(tmpdir(), "baton-bench-"))
  const socketPath = join(dir, "bench.sock")
  const server = makeFakeAppServer({ threads: [{ id: "t" }] })
  const http = createServer()
  const wss = new WebSocketServer({ server: http })
  wss.on("connection", (ws) => {
    const h = server.accept({
      send: (f) => ws.send(f),
      close: () => ws.close(),
      isOpen: () => ws.readyState === ws.OPEN,
    })
    ws.on("message", (d) => h.onFrame(d.toString("utf8")))
    ws.on("close", () => h.onClose())
  })
  await new Promise((r) => http.listen(socketPath, r))
  try {
    const connect = makeCodexConnection({
      transport: "daemon",
      openLink: openUnixWebSocketLink(socketPath, socketPath, 5_000),
      serverRequests: "leave-pending",
    })
    const samples = await withScope(connect, (c) =>
      measureLatency(c, (i) => server.emitTokenUsage("t", "turn", i + 1), LATENCY_RUNS),
    )
    record("wire → typed event, loopback WebSocket (Unix socket)", samples)
    const connects = []
    for (let i = 0; i < CONNECT_RUNS; i++) {
      const start = performance.now()
      await withScope(connect, async () => connects.push(performance.now() - start))
    }
    record("connect + initialize, loopback WebSocket to the fake", connects)
  } finally {
    for (const client of wss.clients) client.terminate()
    await new Promise((r) => wss.close(r))
    await new Promise((r) => http.close(r))
    await rm(dir, { recursive: true, force: true })
  }
}

// 3. VS Code extension IPC against the fake router on a real unix socket: from opening the session
//    until it is Live (trust checks, connect, initialize, owner discovery, follow, first snapshot).
//    Closing (unfollow, socket close) is outside the timing.
{
  const router = await FakeExtensionRouter.start({
    state: conversationStateFixture(),
    chunking: "whole",
  })
  try {
    const session = Effect.provide(
      openExtensionThread({
        conversationId: router.conversationId,
        environment: fakeRouterEnvironment(router),
      }),
      nodeIpcLayer,
    )
    const samples = []
    for (let i = 0; i < EXTENSION_RUNS; i++) {
      const start = performance.now()
      await withScope(session, async (thread) => {
        await Effect.runPromise(thread.awaitLive)
        samples.push(performance.now() - start)
      })
    }
    record(
      "connect + initialize + owner discovery + first snapshot, extension IPC (fake router, unix socket)",
      samples,
    )
  } finally {
    await router.close()
  }
}

// 4. The real codex 0.169.0: stdio spawn and daemon socket.
let testkit = null
try {
  testkit = await import("@baton/testkit")
  if (testkit.resolveCodexBinary().native === undefined) testkit = null
} catch {
  testkit = null
}
if (testkit !== null) {
  const mock = await testkit.startMockResponses({})
  const home = await testkit.createCodexHome({ mock })
  try {
    const pinned = testkit.resolveCodexBinary()
    const binary = {
      path: pinned.native,
      source: "env",
      version: pinned.version,
      reason: "testkit pin",
    }
    const stdio = []
    for (let i = 0; i < Math.min(CONNECT_RUNS, 10); i++) {
      const start = performance.now()
      await withScope(connectStdio({ binary, env: home.env, cwd: home.workdir }), async () =>
        stdio.push(performance.now() - start),
      )
    }
    record("connect + initialize, stdio (spawn codex 0.169.0 app-server)", stdio)
    const daemon = await testkit.startCodexDaemon(home)
    try {
      const samples = []
      for (let i = 0; i < CONNECT_RUNS; i++) {
        const start = performance.now()
        await withScope(connectDaemon({ codexHome: home.codexHome }), async () =>
          samples.push(performance.now() - start),
        )
      }
      record(
        "connect + initialize, daemon socket (trust checks + WebSocket, codex 0.169.0)",
        samples,
      )
    } finally {
      await daemon.dispose()
    }
  } finally {
    await home.dispose()
    await mock.close()
  }
}

console.log(
  `\n### @baton/ipc-codex (node ${process.version}, ${process.platform}-${process.arch})\n`,
)
console.log("| measurement | n | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) |")
console.log("|---|---:|---:|---:|---:|---:|")
for (const r of rows)
  console.log(
    `| ${r.name} | ${r.n} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.p99)} | ${fmt(r.max)} |`,
  )
if (testkit === null)
  console.log("\n(real-binary rows skipped: @baton/testkit or its pinned codex is not installed)")

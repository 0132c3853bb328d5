import { spawn } from "node:child_process"
import { chmod, mkdir, mkdtemp, rm, symlink } from "node:fs/promises"
import type { Server as HttpServer } from "node:http"
import { createServer as createHttpServer } from "node:http"
import type { Server, Socket } from "node:net"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { WebSocketServer } from "ws"
import { connectDaemon, daemonSocketPath } from "./daemon-transport.js"
import { probeDaemon, selectTransport } from "./transport-selector.js"
import type { SocketFileSystem } from "./socket-trust.js"
import { nodeSocketFileSystem } from "./socket-trust.js"
import type { FakeAppServer } from "./testing/index.js"
import { makeFakeAppServer } from "./testing/index.js"

let root = ""
let codexHome = ""
let daemonDir = ""
const cleanups: Array<() => Promise<void>> = []

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "baton-daemon-"))
  codexHome = join(root, "home")
  daemonDir = join(root, "codex-daemon-0")
  await mkdir(join(codexHome, "app-server-control"), { recursive: true })
  await chmod(join(codexHome, "app-server-control"), 0o700)
  await mkdir(daemonDir, { mode: 0o700 })
})

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await rm(root, { recursive: true, force: true })
})

/** A WebSocket server on a Unix socket bridging frames to a fake app-server, linked like the real daemon. */
const startFakeDaemon = async (fake: FakeAppServer) => {
  const real = join(daemonDir, "d41d8cd98f00")
  const http: HttpServer = createHttpServer()
  const wss = new WebSocketServer({ server: http })
  wss.on("connection", (ws) => {
    const handlers = fake.accept({
      send: (frame) => ws.send(frame),
      close: () => ws.close(),
      isOpen: () => ws.readyState === ws.OPEN,
    })
    ws.on("message", (data: Buffer) => handlers.onFrame(data.toString("utf8")))
    ws.on("close", () => handlers.onClose())
  })
  await new Promise<void>((r) => http.listen(real, () => r()))
  await chmod(real, 0o600)
  await symlink(real, daemonSocketPath(codexHome))
  cleanups.push(async () => {
    for (const client of wss.clients) client.terminate()
    await new Promise((r) => wss.close(r))
    await new Promise((r) => http.close(r))
  })
  return real
}

describe("daemon transport", () => {
  test("verifies the socket, speaks WebSocket over it, and closes cleanly", async () => {
    const fake = makeFakeAppServer({ threads: [{ id: "t1" }, { id: "t2" }] })
    await startFakeDaemon(fake)
    const [transport, loaded, version] = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const connection = yield* connectDaemon({ codexHome })
          return [
            connection.transport,
            yield* connection.listLoadedThreads,
            connection.server.version,
          ] as const
        }),
      ),
    )
    expect([transport, loaded, version]).toEqual(["daemon", ["t1", "t2"], "0.169.0"])
    for (let i = 0; i < 1_000 && fake.clientCount() > 0; i++)
      await new Promise((r) => setTimeout(r, 5))
    expect(fake.clientCount()).toBe(0)
  })

  test("a foreign-owned socket is refused before any connection is made", async () => {
    const fake = makeFakeAppServer()
    const real = await startFakeDaemon(fake)
    const base = nodeSocketFileSystem()
    const foreign: SocketFileSystem = {
      ...base,
      stat: (p) =>
        Effect.map(base.stat(p), (f) => (f !== null && p === real ? { ...f, uid: 4242 } : f)),
    }
    const error = await Effect.runPromise(
      Effect.scoped(Effect.flip(connectDaemon({ codexHome, fileSystem: foreign }))),
    )
    expect(error).toMatchObject({ _tag: "SocketTrustError", path: real })
    expect(error.message).toContain("owned by uid 4242")
    expect(fake.received).toHaveLength(0)
  })

  test("no socket at all: DaemonNotRunningError", async () => {
    const error = await Effect.runPromise(Effect.scoped(Effect.flip(connectDaemon({ codexHome }))))
    expect(error._tag).toBe("DaemonNotRunningError")
  })

  test("a stale socket (nobody listening): DaemonNotRunningError", async () => {
    const real = join(daemonDir, "stale")
    const child = spawn(
      process.execPath,
      [
        "-e",
        `require("net").createServer().listen(${JSON.stringify(real)}, () => console.log("up"))`,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    )
    await new Promise((r) => child.stdout.once("data", r))
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    await chmod(real, 0o600)
    await symlink(real, daemonSocketPath(codexHome))
    const error = await Effect.runPromise(Effect.scoped(Effect.flip(connectDaemon({ codexHome }))))
    expect(error).toMatchObject({
      _tag: "DaemonNotRunningError",
      reason: expect.stringContaining("nothing is listening"),
    })
  })

  test("a socket that accepts but never answers the upgrade: DaemonNotRunningError after the timeout", async () => {
    const real = join(daemonDir, "silent")
    const sockets: Array<Socket> = []
    const silent: Server = createServer((socket) => void sockets.push(socket))
    await new Promise<void>((r) => silent.listen(real, () => r()))
    cleanups.push(
      () =>
        new Promise((r) => {
          for (const socket of sockets) socket.destroy()
          silent.close(() => r())
        }),
    )
    await chmod(real, 0o600)
    await symlink(real, daemonSocketPath(codexHome))
    const error = await Effect.runPromise(
      Effect.scoped(Effect.flip(connectDaemon({ codexHome, connectTimeoutMs: 200 }))),
    )
    expect(error._tag).toBe("DaemonNotRunningError")
    expect(error).toMatchObject({ listener: "unresponsive" })
    expect(error.message).toContain("did not complete the WebSocket upgrade")
    expect(error.message).not.toContain("daemon start")
  })

  test("a socket answering the upgrade with plain HTTP: something else is listening", async () => {
    const real = join(daemonDir, "http")
    const http: Server = createServer((socket) => {
      socket.on("error", () => undefined)
      socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"))
    })
    await new Promise<void>((r) => http.listen(real, () => r()))
    cleanups.push(() => new Promise((r) => http.close(() => r())))
    await chmod(real, 0o600)
    await symlink(real, daemonSocketPath(codexHome))
    const error = await Effect.runPromise(
      Effect.scoped(Effect.flip(connectDaemon({ codexHome, connectTimeoutMs: 2_000 }))),
    )
    expect(error).toMatchObject({ _tag: "DaemonNotRunningError", listener: "foreign" })
    expect(error.message).toContain("HTTP 200")
    expect(error.message).toContain("something else is listening")
    expect(error.message).not.toContain("daemon start")
  })

  test("initializeTimeoutMs bounds a daemon that never answers initialize", async () => {
    const mute = { accept: () => ({ onFrame: () => undefined, onClose: () => undefined }) }
    await startFakeDaemon(mute as unknown as FakeAppServer)
    const error = await Effect.runPromise(
      Effect.scoped(Effect.flip(connectDaemon({ codexHome, initializeTimeoutMs: 200 }))),
    )
    expect(error).toMatchObject({
      _tag: "RequestTimeoutError",
      method: "initialize",
      timeoutMs: 200,
    })
  })

  test("probeDaemon: a thread Codex has no rollout for is reported not found, and nothing is selected", async () => {
    const stored = "01a23b94-2222-7222-8222-222222222222"
    const unknown = "01a23b94-1111-7111-8111-111111111111"
    const fake = makeFakeAppServer({ threads: [{ id: stored, loaded: false }] })
    await startFakeDaemon(fake)
    const [storedProbe, unknownProbe] = await Effect.runPromise(
      Effect.all([probeDaemon({ codexHome })(stored), probeDaemon({ codexHome })(unknown)]),
    )
    expect(storedProbe).toEqual({
      running: true,
      threadLoaded: false,
      detail: "daemon running; thread not in thread/loaded/list (0 loaded)",
    })
    expect(unknownProbe).toMatchObject({
      running: true,
      threadLoaded: false,
      detail: `daemon running; thread not found: Codex has no thread ${unknown} (thread not loaded: ${unknown})`,
      threadNotFound: { _tag: "ThreadNotFoundError", threadId: unknown, method: "thread/read" },
    })
    const selection = await Effect.runPromise(
      selectTransport({
        threadId: unknown,
        daemon: { codexHome },
        extensionProbe: () => Effect.succeed({ available: false, detail: "no extension" }),
        stdioProbe: () => Effect.die("stdio must not be probed for a thread Codex does not have"),
      }),
    )
    expect(selection).toMatchObject({
      kind: null,
      openController: null,
      threadError: { _tag: "ThreadNotFoundError" },
    })
    expect(selection.reasons[2]).toEqual({
      transport: "stdio",
      verdict: "unavailable",
      detail: expect.stringContaining(`thread not found: Codex has no thread ${unknown}`),
    })
  })
})

// probeThread against the REAL codex 0.169.0 daemon in a private CODEX_HOME with the mock
// model: a thread loaded in the daemon, and an id no Codex process knows. The probe is
// read-only; nothing here blocks the event loop while a daemon connection is open, and the
// daemon, its home and the mock are always disposed.
import { Effect } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type {
  CodexDaemon,
  CodexDaemonConnection,
  CodexHome,
  MockResponsesServer,
} from "@baton/testkit"
import {
  createCodexHome,
  resolveCodexBinary,
  startCodexDaemon,
  startMockResponses,
  textReply,
} from "@baton/testkit"
import { probeThread } from "@baton/ipc-codex"
import type { ThreadProbeOptions } from "@baton/ipc-codex"

let mock: MockResponsesServer
let home: CodexHome
let daemon: CodexDaemon
let owner: CodexDaemonConnection
let cacheDir = ""
let threadId = ""

beforeAll(async () => {
  mock = await startMockResponses({
    defaultReply: textReply("ack", { usage: { inputTokens: 42_000, outputTokens: 100 } }),
  })
  home = await createCodexHome({ mock })
  daemon = await startCodexDaemon(home)
  owner = await daemon.connect()
  cacheDir = await mkdtemp(join(tmpdir(), "baton-probe-cache-"))
  const started = await owner.startThread({ cwd: home.workdir })
  threadId = started.threadId
  await owner.runTurn(threadId, "first turn")
}, 120_000)

afterAll(async () => {
  await owner?.close().catch(() => undefined)
  await daemon?.dispose().catch(() => undefined)
  await home?.dispose().catch(() => undefined)
  await mock?.close().catch(() => undefined)
  if (cacheDir !== "") await rm(cacheDir, { recursive: true, force: true })
}, 60_000)

const options = (id: string): ThreadProbeOptions => {
  const binary = resolveCodexBinary()
  return {
    threadId: id,
    daemon: { codexHome: home.codexHome },
    extension: {
      environment: {
        platform: process.platform,
        env: home.env,
        homeDir: home.home,
        uid: typeof process.getuid === "function" ? process.getuid() : undefined,
      },
      discoveryDelaysMs: [0],
    },
    stdio: { env: home.env, cwd: home.workdir },
    discoverBinary: Effect.succeed({
      path: binary.native!,
      source: "env" as const,
      version: binary.version,
      reason: "testkit pin",
    }),
    compatibilityCacheDir: cacheDir,
  }
}

describe("probeThread against the real codex 0.169.0 daemon", () => {
  test("a thread loaded in the daemon: daemon transport, idle, token usage and window, compatible", async () => {
    const report = await Effect.runPromise(probeThread(options(threadId)))
    expect(report.selected).toBe("daemon")
    expect(report.transports.map((t) => `${t.transport}:${t.verdict}`)).toEqual([
      "extension:unavailable",
      "daemon:chosen",
      "stdio:skipped",
    ])
    expect(report.transports[0]?.detail).toContain(
      `No Codex extension IPC socket at ${join(home.codexHome, "ipc", "ipc.sock")}`,
    )
    expect(report.owner).toMatchObject({ kind: "daemon", clientId: null })
    expect(report.thread).toMatchObject({ status: "idle", source: "daemon" })
    expect(report.context).toMatchObject({ window: 258_400, source: "rollout" })
    expect(report.context.tokens).toBeGreaterThan(40_000)
    expect(report.rateLimits).toMatchObject({ status: "not-signed-in", via: "daemon" })
    expect(report.compatibility).toMatchObject({
      status: "ok",
      failedChecks: [],
      binary: { version: "0.169.0", source: "env" },
    })
    // The second probe reads the compatibility from the cache.
    const again = await Effect.runPromise(probeThread(options(threadId)))
    expect(again.compatibility.fromCache).toBe(true)
  }, 60_000)

  test("an id no Codex process knows: thread not found, nothing selected", async () => {
    const unknown = "019a0000-0000-7000-8000-000000000000"
    const report = await Effect.runPromise(probeThread(options(unknown)))
    expect(report.selected).toBeNull()
    expect(report.transports.map((t) => `${t.transport}:${t.verdict}`)).toEqual([
      "extension:unavailable",
      "daemon:not-holding-thread",
      "stdio:unavailable",
    ])
    expect(report.owner.kind).toBe("none")
    expect(report.thread.status).toBeNull()
    // 0.169.0: thread/read of an id Codex has no rollout for is `-32600 thread not loaded: <id>`.
    expect(report.thread.detail).toContain("Codex does not know this thread (thread not loaded")
    expect(report.context.tokens).toBeNull()
    expect(report.transports[2]?.detail).toContain(
      `thread not found: Codex has no thread ${unknown}`,
    )
  }, 60_000)

  test("without a daemon the private app-server's thread/read says not found; a non-id spawns nothing", async () => {
    const unknown = "019a0000-0000-7000-8000-000000000000"
    const noDaemon = { ...options(unknown), daemon: { codexHome: join(cacheDir, "no-daemon") } }
    const report = await Effect.runPromise(probeThread(noDaemon))
    expect(report.selected).toBeNull()
    expect(report.transports.map((t) => `${t.transport}:${t.verdict}`)).toEqual([
      "extension:unavailable",
      "daemon:unavailable",
      "stdio:unavailable",
    ])
    expect(report.transports[2]?.detail).toContain(
      `thread not found: Codex has no thread ${unknown}`,
    )
    expect(report.rateLimits.via).toBe("stdio")
    const invalid = await Effect.runPromise(
      probeThread({ ...noDaemon, threadId: "not-a-uuid", discoverBinary: Effect.die("spawned") }),
    )
    expect(invalid.selected).toBeNull()
    expect(invalid.thread.detail).toContain("'not-a-uuid' is not a Codex thread id")
  }, 60_000)
})

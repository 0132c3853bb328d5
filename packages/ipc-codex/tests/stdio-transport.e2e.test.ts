// A private `codex app-server` (stdio) from the REAL codex 0.169.0 for a thread loaded nowhere:
// the rollout exists on disk from an earlier `codex exec`; Baton resumes it, compacts it, continues it.
import { Effect, Exit, Scope } from "effect"
import type { Scope as ScopeType } from "effect"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { CodexHome, MockResponsesServer, RecordedRequest } from "@baton/testkit"
import {
  createCodexHome,
  handlerReply,
  isCompactionRequest,
  resolveCodexBinary,
  runCodexExec,
  startMockResponses,
  textReply,
  userTexts,
} from "@baton/testkit"
import type { CodexBinary, StdioConnection, ThreadState } from "@baton/ipc-codex"
import {
  connectStdio,
  discoverCodexBinary,
  nodeBinaryHost,
  selectTransport,
} from "@baton/ipc-codex"
import { waitForThreadState } from "@baton/ipc-codex/testing"

const reply = (request: RecordedRequest) =>
  isCompactionRequest(request)
    ? textReply("STDIO-SUMMARY of the exec session", {
        usage: { inputTokens: 120_000, outputTokens: 200 },
      })
    : textReply(`ack: ${(userTexts(request.body).at(-1) ?? "").slice(0, 40)}`, {
        usage: { inputTokens: 120_000, outputTokens: 50 },
      })

let mock: MockResponsesServer
let home: CodexHome
let threadId = ""
let binary: CodexBinary
const scopes: Array<Scope.Closeable> = []

const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)
const open = async <A, E>(
  effect: Effect.Effect<A, E, ScopeType.Scope>,
): Promise<[A, Scope.Closeable]> => {
  const scope = await run(Scope.make())
  scopes.push(scope)
  return [await run(Scope.provide(effect, scope)), scope]
}
const waitFor = (c: StdioConnection, predicate: (s: ThreadState) => boolean) =>
  run(waitForThreadState(c, threadId, predicate, { timeoutMs: 30_000 }))

beforeAll(async () => {
  mock = await startMockResponses({ defaultReply: handlerReply(reply) })
  home = await createCodexHome({ mock })
  const exec = await runCodexExec({ home, prompt: "start the work" })
  expect(exec.exitCode).toBe(0)
  threadId = exec.threadId!
  const pinned = resolveCodexBinary()
  binary = await run(
    discoverCodexBinary({ ...nodeBinaryHost(), env: { BATON_CODEX_BINARY: pinned.native! } }),
  )
}, 120_000)

afterAll(async () => {
  for (const scope of scopes.splice(0).reverse()) await run(Scope.close(scope, Exit.void))
  await home?.dispose().catch(() => undefined)
  await mock?.close().catch(() => undefined)
}, 60_000)

describe("stdio transport against the real codex 0.169.0", () => {
  test("discovery reports the pinned binary, its source and its real version", () => {
    expect(binary).toMatchObject({
      source: "env",
      version: "0.169.0",
      reason: "BATON_CODEX_BINARY is set",
    })
  })

  test("the selector falls back to stdio when no daemon runs", async () => {
    const selection = await run(
      selectTransport({
        threadId,
        daemon: { codexHome: home.codexHome },
        stdioProbe: () => Effect.succeed({ binary }),
      }),
    )
    expect(selection.kind).toBe("stdio")
    expect(selection.reasons[1]).toMatchObject({
      transport: "daemon",
      verdict: "unavailable",
      detail: expect.stringContaining("not running"),
    })
  })

  test("resume a thread loaded nowhere, compact it (usage drops), continue it, then stop the process", async () => {
    const [stdio, scope] = await open(connectStdio({ binary, env: home.env, cwd: home.workdir }))
    expect(stdio.server.version).toBe("0.169.0")
    const summary = await run(stdio.resumeThread(threadId))
    expect(summary.id).toBe(threadId)
    // Loading from disk replays status and the last token usage.
    const loaded = await waitFor(stdio, (s) => s.tokenUsage !== null && s.status.type === "idle")
    const before = loaded.tokenUsage!.last.totalTokens
    expect(before).toBe(120_050)

    await run(stdio.compactThread(threadId))
    const compacted = await waitFor(stdio, (s) => {
      const turnId = s.compactionRequests.at(-1)?.turnId
      return (
        turnId != null &&
        s.compactions.some((c) => c.turnId === turnId && c.phase === "completed") &&
        s.turns.some((t) => t.id === turnId && t.status === "completed")
      )
    })
    expect(compacted.tokenUsage!.last.totalTokens).toBeLessThan(before / 2)

    const text = "Continue from the handoff: BATON-STDIO-41c2"
    const { turnId } = await run(stdio.startTurn(threadId, text))
    await waitFor(stdio, (s) => s.turns.some((t) => t.id === turnId && t.status === "completed"))
    expect(userTexts(mock.lastRequest().body).at(-1)).toBe(text)
    expect(userTexts(mock.lastRequest().body).some((t) => t.includes("STDIO-SUMMARY"))).toBe(true)

    const pid = stdio.pid
    await run(Scope.close(scope, Exit.void))
    expect(await run(stdio.awaitClosed)).toBe("closed by Baton")
    let alive = true
    try {
      process.kill(pid, 0)
    } catch {
      alive = false
    }
    const stat = alive
      ? await import("node:fs/promises").then((fs) =>
          fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => ""),
        )
      : ""
    expect(!alive || / Z /.test(stat)).toBe(true)
    expect(mock.outboundAttempts()).toEqual([])
  })
})

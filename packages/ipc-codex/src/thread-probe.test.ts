import * as Effect from "effect/Effect"
import { afterEach, describe, expect, test } from "vitest"
import { CodexBinaryNotFoundError } from "./errors.js"
import { conversationStateFixture } from "./extension/testing/conversation-fixtures.js"
import { fakeRouterEnvironment } from "./extension/testing/fake-router-environment.js"
import { FakeExtensionRouter } from "./extension/testing/fake-router.js"
import { isCodexThreadId } from "./codex-thread-id.js"
import { probeThread } from "./thread-probe.js"
import type { DaemonProbe } from "./transport-selector.js"

const THREAD = "019a1b2c-3d4e-7f00-8000-000000000001"
const daemonDown: DaemonProbe = () =>
  Effect.succeed({ running: false, detail: "Codex app-server daemon not running at /x: no socket" })
const noBinary = Effect.fail(
  new CodexBinaryNotFoundError({ searched: ["PATH: no executable codex"] }),
)

let router: FakeExtensionRouter | undefined
afterEach(async () => {
  await router?.close()
  router = undefined
})

describe("probeThread", () => {
  test("an extension-owned thread: owner, status and context from one snapshot, then unfollowed", async () => {
    router = await FakeExtensionRouter.start({
      conversationId: THREAD,
      state: conversationStateFixture({
        id: THREAD,
        tokenUsage: { last: 90_000, window: 100_000 },
      }),
    })
    const report = await Effect.runPromise(
      probeThread({
        threadId: THREAD,
        extension: { environment: fakeRouterEnvironment(router), discoveryDelaysMs: [0] },
        daemonProbe: daemonDown,
        discoverBinary: noBinary,
        compatibilityCacheDir: null,
      }),
    )
    expect(report).toEqual({
      threadId: THREAD,
      selected: "extension",
      transports: [
        expect.objectContaining({ transport: "extension", verdict: "chosen", available: true }),
        expect.objectContaining({ transport: "daemon", verdict: "skipped" }),
        expect.objectContaining({ transport: "stdio", verdict: "skipped" }),
      ],
      owner: { kind: "extension", clientId: "owner-1", detail: "a VS Code window owns the thread" },
      thread: {
        status: "idle",
        activeFlags: [],
        pendingRequests: 0,
        source: "extension",
        detail: "from the owner's conversation state",
      },
      context: {
        tokens: 90_000,
        window: 100_000,
        source: "extension",
        detail: "latestTokenUsageInfo of the owner's state",
      },
      rateLimits: {
        status: "unavailable",
        via: null,
        ordinaryUsageAllowed: null,
        primaryUsedPercent: null,
        secondaryUsedPercent: null,
        detail: "no usable codex binary: PATH: no executable codex",
      },
      compatibility: {
        status: "unknown",
        binary: null,
        fromCache: null,
        failedChecks: [],
        detail: "no usable codex binary: PATH: no executable codex",
      },
    })
    // Read-only towards the owner: followed for the snapshot, unfollowed, never written to.
    await router.waitFor(
      (r) =>
        r.envelope["method"] === "thread-stream-following-changed" &&
        (r.envelope["params"] as { following?: boolean }).following === false,
    )
    expect(
      router.received.filter((r) => String(r.envelope["method"]).startsWith("thread-follower-")),
    ).toEqual([])
  })

  test("nothing reachable is a finding, not a failure", async () => {
    router = await FakeExtensionRouter.start({ ownerId: undefined })
    const report = await Effect.runPromise(
      probeThread({
        threadId: THREAD,
        extension: { environment: fakeRouterEnvironment(router), discoveryDelaysMs: [0] },
        daemonProbe: daemonDown,
        discoverBinary: noBinary,
        compatibilityCacheDir: null,
      }),
    )
    expect(report.selected).toBeNull()
    expect(report.transports.map((t) => t.available)).toEqual([false, false, false])
    expect(report.owner.kind).toBe("none")
    expect(report.thread.status).toBeNull()
  })

  test("a value that is not a thread id is reported at once: nothing is discovered or spawned", async () => {
    const never = () => Effect.die("nothing may run for an invalid thread id")
    const report = await Effect.runPromise(
      probeThread({
        threadId: "not-a-uuid",
        extensionProbe: never,
        daemonProbe: never,
        discoverBinary: Effect.die("no binary discovery for an invalid thread id"),
        compatibilityCacheDir: "/nonexistent",
      }),
    )
    expect(report.selected).toBeNull()
    expect(report.transports.map((t) => t.available)).toEqual([false, false, false])
    expect(report.thread.detail).toContain("'not-a-uuid' is not a Codex thread id")
    expect(report.compatibility.status).toBe("unknown")
  })

  test("thread ids are UUIDs", () => {
    expect(isCodexThreadId(THREAD)).toBe(true)
    expect(isCodexThreadId("thread-1")).toBe(false)
    expect(isCodexThreadId(`${THREAD} `)).toBe(false)
  })
})

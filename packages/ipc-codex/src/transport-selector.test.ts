import * as Effect from "effect/Effect"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { conversationStateFixture } from "./extension/testing/conversation-fixtures.js"
import { fakeRouterEnvironment } from "./extension/testing/fake-router-environment.js"
import { FakeExtensionRouter } from "./extension/testing/fake-router.js"
import type { DaemonProbe, ExtensionProbe, StdioProbe } from "./transport-selector.js"
import { probeExtensionOwner, selectTransport } from "./transport-selector.js"

const binary = {
  path: "/usr/bin/codex",
  source: "path" as const,
  version: "0.169.0",
  reason: "first executable codex on PATH (/usr/bin)",
}
const THREAD = "019a1b2c-3d4e-7f00-8000-000000000001"
const stdioOk: StdioProbe = () => Effect.succeed({ binary })
const stdioNone: StdioProbe = () =>
  Effect.succeed({ binary: null, detail: "no usable codex binary" })
const daemonDown: DaemonProbe = () =>
  Effect.succeed({
    running: false,
    detail:
      "Codex app-server daemon not running at /h/app-server-control/app-server-control.sock: no control socket",
  })
const daemonHolding: DaemonProbe = () =>
  Effect.succeed({
    running: true,
    threadLoaded: true,
    detail: "daemon running; thread in thread/loaded/list",
  })
const daemonNotHolding: DaemonProbe = () =>
  Effect.succeed({
    running: true,
    threadLoaded: false,
    detail: "daemon running; thread not in thread/loaded/list (2 loaded)",
  })

const extensionAbsent: ExtensionProbe = () =>
  Effect.succeed({ available: false, detail: "No Codex extension IPC socket at /h/ipc/ipc.sock" })

const select = (
  extensionProbe: ExtensionProbe | undefined,
  daemonProbe: DaemonProbe,
  stdioProbe: StdioProbe,
) =>
  Effect.runPromise(
    selectTransport({
      threadId: THREAD,
      daemonProbe,
      stdioProbe,
      ...(extensionProbe === undefined ? {} : { extensionProbe }),
      daemon: { codexHome: "/h" },
    }),
  )

describe("selectTransport", () => {
  test("no extension owner, daemon holds the thread → daemon", async () => {
    const s = await select(extensionAbsent, daemonHolding, stdioOk)
    expect(s.kind).toBe("daemon")
    expect(s.transport?.endpoint).toBe("/h/app-server-control/app-server-control.sock")
    expect(s.reasons).toEqual([
      {
        transport: "extension",
        verdict: "unavailable",
        detail: "No Codex extension IPC socket at /h/ipc/ipc.sock",
      },
      {
        transport: "daemon",
        verdict: "chosen",
        detail: "daemon running; thread in thread/loaded/list",
      },
      { transport: "stdio", verdict: "skipped", detail: expect.stringContaining("single-writer") },
    ])
  })

  test("an extension owner wins over everything", async () => {
    const owner: ExtensionProbe = () =>
      Effect.succeed({
        available: true,
        ownerId: "owner-1",
        detail: "extension owner live for the thread",
        openController: Effect.die("not opened in this test"),
      })
    const s = await select(owner, daemonHolding, stdioOk)
    expect(s.kind).toBe("extension")
    expect(s.transport).toBeNull()
    expect(s.extensionOwnerId).toBe("owner-1")
    expect(s.openController).not.toBeNull()
    expect(s.reasons.map((r) => r.verdict)).toEqual(["chosen", "skipped", "skipped"])
  })

  test("daemon running without the thread → stdio, saying why", async () => {
    const s = await select(extensionAbsent, daemonNotHolding, stdioOk)
    expect(s.kind).toBe("stdio")
    expect(s.reasons[1]).toMatchObject({ transport: "daemon", verdict: "not-holding-thread" })
    expect(s.reasons[2]?.detail).toContain(
      "/usr/bin/codex (path: first executable codex on PATH (/usr/bin), 0.169.0)",
    )
  })

  test("no daemon → stdio", async () => {
    const s = await select(extensionAbsent, daemonDown, stdioOk)
    expect(s.kind).toBe("stdio")
    expect(s.reasons[1]).toMatchObject({
      verdict: "unavailable",
      detail: expect.stringContaining("not running"),
    })
  })

  test("a value that is not a thread id is refused before any probe runs", async () => {
    const never = () => Effect.die("no probe may run for an invalid thread id")
    const s = await Effect.runPromise(
      selectTransport({
        threadId: "not-a-uuid",
        extensionProbe: never,
        daemonProbe: never,
        stdioProbe: never,
      }),
    )
    expect(s).toMatchObject({
      kind: null,
      transport: null,
      openController: null,
      threadError: { _tag: "InvalidThreadIdError", value: "not-a-uuid" },
    })
    expect(s.reasons.map((r) => `${r.transport}:${r.verdict}`)).toEqual([
      "extension:unavailable",
      "daemon:unavailable",
      "stdio:unavailable",
    ])
    expect(s.reasons[2]?.detail).toContain("'not-a-uuid' is not a Codex thread id")
  })

  test("nothing available → null with every reason", async () => {
    const s = await select(extensionAbsent, daemonDown, stdioNone)
    expect(s.transport).toBeNull()
    expect(s.reasons.map((r) => `${r.transport}:${r.verdict}`)).toEqual([
      "extension:unavailable",
      "daemon:unavailable",
      "stdio:unavailable",
    ])
  })
})

describe("probeExtensionOwner (the default extension probe) against the fake router", () => {
  let router: FakeExtensionRouter | undefined
  afterEach(async () => {
    await router?.close()
    router = undefined
  })
  const probe = (r: FakeExtensionRouter, threadId = "thread-1") =>
    Effect.runPromise(
      probeExtensionOwner({ environment: fakeRouterEnvironment(r), discoveryDelaysMs: [0, 1, 1] })(
        threadId,
      ),
    )

  test("router present, owner found → extension chosen with the owner's client id", async () => {
    router = await FakeExtensionRouter.start({
      conversationId: THREAD,
      state: conversationStateFixture({ id: THREAD }),
    })
    router.discoveryFailures = 1 // one no-client-found first: the safe retry finds the owner
    const found = await probe(router, THREAD)
    expect(found).toMatchObject({ available: true, ownerId: "owner-1" })
    expect(found.detail).toContain(
      `VS Code client owner-1 owns the thread (router at ${router.socketPath})`,
    )
    expect(router.requests("thread-owner-discovery")).toHaveLength(2)
    // Read-only: no follow, no write.
    expect(router.envelopes("broadcast")).toEqual([])
    const s = await Effect.runPromise(
      selectTransport({
        threadId: THREAD,
        extension: { environment: fakeRouterEnvironment(router), discoveryDelaysMs: [0] },
        daemonProbe: daemonHolding,
        stdioProbe: stdioOk,
      }),
    )
    expect(s.kind).toBe("extension")
    expect(s.reasons.map((r) => `${r.transport}:${r.verdict}`)).toEqual([
      "extension:chosen",
      "daemon:skipped",
      "stdio:skipped",
    ])
  })

  test("router present, nobody owns the thread → unavailable after the bounded retries", async () => {
    router = await FakeExtensionRouter.start({ ownerId: undefined })
    const found = await probe(router)
    expect(found).toEqual({
      available: false,
      detail: expect.stringContaining(
        "No VS Code window owns thread thread-1 (3 discovery attempts)",
      ),
    })
    const s = await Effect.runPromise(
      selectTransport({
        threadId: THREAD,
        extension: { environment: fakeRouterEnvironment(router), discoveryDelaysMs: [0] },
        daemonProbe: daemonNotHolding,
        stdioProbe: stdioOk,
      }),
    )
    expect(s.kind).toBe("stdio")
    expect(s.reasons[0]).toMatchObject({ transport: "extension", verdict: "unavailable" })
  })

  test("socket missing → unavailable naming the path; nothing else → stdio with the binary", async () => {
    router = await FakeExtensionRouter.start()
    await router.stopListening()
    const found = await probe(router)
    expect(found).toEqual({
      available: false,
      detail: expect.stringContaining(
        `No Codex extension IPC socket at ${join(router.codexHome, "ipc", "ipc.sock")}`,
      ),
    })
    const s = await Effect.runPromise(
      selectTransport({
        threadId: THREAD,
        extension: { environment: fakeRouterEnvironment(router) },
        daemonProbe: daemonDown,
        stdioProbe: stdioOk,
      }),
    )
    expect(s.kind).toBe("stdio")
    expect(s.reasons.map((r) => `${r.transport}:${r.verdict}`)).toEqual([
      "extension:unavailable",
      "daemon:unavailable",
      "stdio:chosen",
    ])
    expect(s.reasons[2]?.detail).toContain("/usr/bin/codex")
  })

  test("an insecure socket is refused by the trust check, not connected to", async () => {
    router = await FakeExtensionRouter.start()
    await router.chmodSocket(0o666)
    const found = await probe(router)
    expect(found).toMatchObject({
      available: false,
      detail: expect.stringContaining("has mode 0666"),
    })
    expect(router.received).toEqual([])
  })
})

import { Effect } from "effect"
import { describe, expect, test } from "vitest"
import type { DaemonProbe, ExtensionProbe, StdioProbe } from "./transport-selector.js"
import { selectTransport } from "./transport-selector.js"
import { fakeTransport, makeFakeAppServer } from "./testing/index.js"

const binary = {
  path: "/usr/bin/codex",
  source: "path" as const,
  version: "0.169.0",
  reason: "first executable codex on PATH (/usr/bin)",
}
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

const select = (
  extensionProbe: ExtensionProbe | undefined,
  daemonProbe: DaemonProbe,
  stdioProbe: StdioProbe,
) =>
  Effect.runPromise(
    selectTransport({
      threadId: "t1",
      daemonProbe,
      stdioProbe,
      ...(extensionProbe === undefined ? {} : { extensionProbe }),
      daemon: { codexHome: "/h" },
    }),
  )

describe("selectTransport", () => {
  test("default: extension not wired, daemon holds the thread → daemon", async () => {
    const s = await select(undefined, daemonHolding, stdioOk)
    expect(s.kind).toBe("daemon")
    expect(s.transport?.endpoint).toBe("/h/app-server-control/app-server-control.sock")
    expect(s.reasons).toEqual([
      {
        transport: "extension",
        verdict: "unavailable",
        detail: "not available: extension transport not wired yet",
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
        transport: fakeTransport(makeFakeAppServer()),
        detail: "extension owner live for the thread",
      })
    const s = await select(owner, daemonHolding, stdioOk)
    expect(s.kind).toBe("extension")
    expect(s.reasons.map((r) => r.verdict)).toEqual(["chosen", "skipped", "skipped"])
  })

  test("daemon running without the thread → stdio, saying why", async () => {
    const s = await select(undefined, daemonNotHolding, stdioOk)
    expect(s.kind).toBe("stdio")
    expect(s.reasons[1]).toMatchObject({ transport: "daemon", verdict: "not-holding-thread" })
    expect(s.reasons[2]?.detail).toContain(
      "/usr/bin/codex (path: first executable codex on PATH (/usr/bin), 0.169.0)",
    )
  })

  test("no daemon → stdio", async () => {
    const s = await select(undefined, daemonDown, stdioOk)
    expect(s.kind).toBe("stdio")
    expect(s.reasons[1]).toMatchObject({
      verdict: "unavailable",
      detail: expect.stringContaining("not running"),
    })
  })

  test("nothing available → null with every reason", async () => {
    const s = await select(undefined, daemonDown, stdioNone)
    expect(s.transport).toBeNull()
    expect(s.reasons.map((r) => `${r.transport}:${r.verdict}`)).toEqual([
      "extension:unavailable",
      "daemon:unavailable",
      "stdio:unavailable",
    ])
  })
})

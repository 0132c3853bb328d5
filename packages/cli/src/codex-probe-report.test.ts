import type { ThreadProbeReport } from "@baton/ipc-codex"
import { describe, expect, it } from "vitest"
import { renderProbeJson, renderProbeText } from "./codex-probe-report.js"

const daemonReport: ThreadProbeReport = {
  threadId: "019a1b2c-3d4e-7f00-8000-000000000001",
  selected: "daemon",
  transports: [
    {
      transport: "extension",
      verdict: "unavailable",
      available: false,
      detail: "No Codex extension IPC socket at /h/.codex/ipc/ipc.sock.",
    },
    {
      transport: "daemon",
      verdict: "chosen",
      available: true,
      detail: "daemon running; thread in thread/loaded/list",
    },
    {
      transport: "stdio",
      verdict: "skipped",
      available: true,
      detail: "the daemon holds the thread",
    },
  ],
  owner: { kind: "daemon", clientId: null, detail: "loaded in the app-server daemon" },
  thread: {
    status: "idle",
    activeFlags: [],
    pendingRequests: null,
    source: "daemon",
    detail: "thread/read over the daemon",
  },
  context: {
    tokens: 42_100,
    window: 258_400,
    source: "rollout",
    detail: "last token_count in /r.jsonl",
  },
  rateLimits: {
    status: "not-signed-in",
    via: "daemon",
    ordinaryUsageAllowed: null,
    primaryUsedPercent: null,
    secondaryUsedPercent: null,
    detail: "not signed in",
  },
  compatibility: {
    status: "ok",
    binary: { path: "/usr/bin/codex", source: "path", version: "0.169.0" },
    fromCache: true,
    failedChecks: [],
    detail: "every protocol check passed",
  },
}

describe("renderProbeText", () => {
  it("prints aligned lines: transports with reasons, owner, status, context %, rate limits, compatibility", () => {
    expect(renderProbeText(daemonReport)).toBe(
      [
        "thread         019a1b2c-3d4e-7f00-8000-000000000001",
        "transport      daemon (chosen)",
        "  extension    unavailable — No Codex extension IPC socket at /h/.codex/ipc/ipc.sock.",
        "  daemon       chosen — daemon running; thread in thread/loaded/list",
        "  stdio        skipped — the daemon holds the thread",
        "owner          daemon — loaded in the app-server daemon",
        "status         idle (thread/read over the daemon)",
        "context        42,100 tokens of 258,400 (16.3%) — last token_count in /r.jsonl",
        "rate limits    not signed in (via daemon)",
        "compatibility  ok — codex 0.169.0 at /usr/bin/codex (path), cached; every protocol check passed",
        "",
      ].join("\n"),
    )
  })

  it("names the extension owner, busy flags, unknown values and read rate limits", () => {
    const text = renderProbeText({
      ...daemonReport,
      selected: null,
      owner: {
        kind: "extension",
        clientId: "client-7",
        detail: "a VS Code window owns the thread",
      },
      thread: {
        status: "active",
        activeFlags: ["waitingOnApproval"],
        pendingRequests: 1,
        source: "extension",
        detail: "from the owner's conversation state",
      },
      context: { tokens: null, window: null, source: null, detail: "no usage yet" },
      rateLimits: {
        status: "read",
        via: "stdio",
        ordinaryUsageAllowed: false,
        primaryUsedPercent: 97,
        secondaryUsedPercent: null,
        detail: "account/rateLimits/read",
      },
      compatibility: {
        status: "incompatible",
        binary: { path: "/c", source: "env", version: null },
        fromCache: false,
        failedChecks: ["compact-params"],
        detail: "1 protocol checks failed",
      },
    })
    expect(text).toContain("transport      none can reach this thread\n")
    expect(text).toContain(
      "owner          VS Code client client-7 — a VS Code window owns the thread\n",
    )
    expect(text).toContain(
      "status         active [waitingOnApproval], 1 pending requests (from the owner's conversation state)\n",
    )
    expect(text).toContain("context        unknown — no usage yet\n")
    expect(text).toContain(
      "rate limits    primary 97% used; ordinary usage NOT allowed (via stdio)\n",
    )
    expect(text).toContain(
      "compatibility  incompatible — codex (version unknown) at /c (env); 1 protocol checks failed [compact-params]\n",
    )
  })
})

describe("renderProbeJson", () => {
  it("is {ok: true, ...report} on one line", () => {
    const line = renderProbeJson(daemonReport)
    expect(line.endsWith("\n")).toBe(true)
    expect(line.trim().includes("\n")).toBe(false)
    expect(JSON.parse(line)).toEqual({ ok: true, ...daemonReport })
  })
})

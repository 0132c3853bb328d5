// `probe_compaction` through the SDK Client over stdio (`node packages/cli/dist/bin.js mcp`), in a
// private HOME / CODEX_HOME with no codex binary on PATH: the probe runs read-only and reports
// that nothing can reach the thread, in the declared output structure. Needs `npx tsc -b`.
import { mkdtemp, readdir, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const batonBin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))
const THREAD = "019a1b2c-3d4e-7f00-8000-000000000001"
let client: Client
let dir = ""

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "baton-mcp-probe-"))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [batonBin, "mcp"],
    env: {
      PATH: dirname(process.execPath),
      HOME: join(dir, "home"),
      CODEX_HOME: join(dir, "codex-home"),
      BATON_DATA_DIR: join(dir, "data"),
    },
    stderr: "pipe",
  })
  client = new Client({ name: "baton-probe-test", version: "0" })
  await client.connect(transport)
})

afterAll(async () => {
  await client.close()
  await rm(dir, { recursive: true, force: true })
})

describe("probe_compaction over stdio", () => {
  it("is listed with its input and output schemas, read-only", async () => {
    const { tools } = await client.listTools()
    const tool = tools.find((t) => t.name === "probe_compaction")
    expect(tool?.inputSchema).toMatchObject({ type: "object", required: ["threadId"] })
    expect(tool?.outputSchema).toMatchObject({
      type: "object",
      required: expect.arrayContaining([
        "threadId",
        "selected",
        "transports",
        "owner",
        "thread",
        "context",
        "rateLimits",
        "compatibility",
      ]),
    })
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true })
  })

  it("returns the probe report as structuredContent (checked by the client against outputSchema)", async () => {
    const result = await client.callTool({
      name: "probe_compaction",
      arguments: { threadId: THREAD },
    })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({
      threadId: THREAD,
      selected: null,
      transports: [
        {
          transport: "extension",
          verdict: "unavailable",
          available: false,
          detail: expect.stringContaining(
            `No Codex extension IPC socket at ${join(dir, "codex-home", "ipc", "ipc.sock")}`,
          ),
        },
        { transport: "daemon", verdict: "unavailable", available: false },
        { transport: "stdio", verdict: "unavailable", available: false },
      ],
      owner: { kind: "none", clientId: null },
      thread: { status: null },
      context: { tokens: null, window: null },
      rateLimits: { status: "unavailable" },
      compatibility: { status: "unknown", binary: null },
    })
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(
      result.structuredContent,
    )
    await expect(readdir(join(dir, "codex-home"))).rejects.toThrow(/ENOENT/)
  })

  it("refuses an id that is not a Codex thread id, naming it", async () => {
    const result = await client.callTool({
      name: "probe_compaction",
      arguments: { threadId: "latest" },
    })
    expect(result.isError).toBe(true)
    const text = (result.content as Array<{ text: string }>).map((c) => c.text).join("\n")
    expect(text).toContain("InvalidThreadIdError: 'latest' is not a Codex thread id")
  })
})

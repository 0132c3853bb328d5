// End to end over stdio: the SDK's Client spawns `node packages/cli/dist/bin.js mcp` — the exact
// command the plugin's .mcp.json runs — so this covers the CLI wiring and the server together.
// Needs both packages built (`npx tsc -b`).
import { spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const batonBin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))
let client: Client
let stderr = ""

beforeAll(async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [batonBin, "mcp"],
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "" },
    stderr: "pipe",
  })
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  client = new Client({ name: "baton-stdio-test", version: "0" })
  await client.connect(transport)
})

afterAll(async () => {
  await client.close()
})

describe("baton mcp over stdio", () => {
  it("initializes as the baton server with the package version", async () => {
    const manifest = JSON.parse(
      await readFile(new URL("../package.json", import.meta.url), "utf8"),
    ) as {
      version: string
    }
    expect(client.getServerVersion()).toEqual({ name: "baton", version: manifest.version })
    expect(client.getServerCapabilities()?.tools).toBeDefined()
  })

  it("lists handoff_validate with its input and output schemas", async () => {
    const { tools } = await client.listTools()
    const tool = tools.find((t) => t.name === "handoff_validate")
    expect(tool?.inputSchema).toMatchObject({ type: "object", required: ["handoff"] })
    expect(tool?.inputSchema.properties?.["handoff"]).toBeDefined()
    expect(tool?.outputSchema).toMatchObject({
      type: "object",
      required: ["valid", "sizeBytes", "limitBytes", "sha256"],
      properties: { valid: { type: "boolean" }, sha256: { type: "string" } },
    })
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true })
  })

  it("returns structuredContent for a valid handoff (the client checks it against outputSchema)", async () => {
    await client.listTools()
    const result = await client.callTool({
      name: "handoff_validate",
      arguments: { handoff: { summary: "Stdio works.", nextStep: "Ship it", resume: true } },
    })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ valid: true, limitBytes: 32000 })
    expect((result.structuredContent as { sha256: string }).sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(
      result.structuredContent,
    )
  })

  it("returns isError naming the field for an invalid handoff", async () => {
    const result = await client.callTool({
      name: "handoff_validate",
      arguments: { handoff: { summary: "Stop here.", resume: true } },
    })
    expect(result.isError).toBe(true)
    const text = (result.content as Array<{ text: string }>).map((c) => c.text).join("\n")
    expect(text).toContain(
      "HandoffInvalid: Invalid handoff: nextStep must contain non-whitespace text when resume is true.",
    )
  })

  it("answers ping and writes nothing to stderr", async () => {
    await expect(client.ping()).resolves.toEqual({})
    expect(stderr).toBe("")
  })
})

describe("baton mcp with piped input", () => {
  it("answers every request received before stdin ends, then exits 0", async () => {
    const child = spawn(process.execPath, [batonBin, "mcp"], { stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    const messages = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "pipe", version: "0" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "handoff_validate",
          arguments: { handoff: '{"summary":"piped","resume":false}' },
        },
      },
    ]
    child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(""))
    expect(await exited).toBe(0)
    const responses = stdout
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { id: number; result: { structuredContent?: { valid: boolean } } },
      )
    expect(responses.map((r) => r.id)).toEqual([1, 2])
    expect(responses[1]?.result.structuredContent?.valid).toBe(true)
  })

  it("answers an 11 MiB request and a line that is not JSON-RPC, and keeps serving", async () => {
    const child = spawn(process.execPath, [batonBin, "mcp"], { stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    // Over the SDK transport's 10 MiB buffer, which ended the server (exit 0) without a reply.
    const huge = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "handoff_validate",
        arguments: { handoff: { summary: "x".repeat(11 * 1024 * 1024), resume: false } },
      },
    }
    child.stdin.write(`${JSON.stringify(huge)}\n`)
    child.stdin.write('{"jsonrpc":"1.0","id":2,"method":"ping"}\n')
    child.stdin.end(`${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" })}\n`)
    expect(await exited).toBe(0)
    const responses = stdout
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as {
            id: number
            result?: { isError?: boolean; content?: Array<{ text: string }> }
            error?: { code: number }
          },
      )
    expect(responses.map((r) => r.id).sort()).toEqual([1, 2, 3])
    const byId = new Map(responses.map((r) => [r.id, r]))
    expect(byId.get(1)?.result?.isError).toBe(true)
    expect(byId.get(1)?.result?.content?.[0]?.text).toContain("HandoffTooLarge")
    expect(byId.get(2)?.error?.code).toBe(-32600)
    expect(byId.get(3)?.result).toEqual({})
    expect(stderr).toBe("baton mcp: ignored a message that is not JSON-RPC 2.0\n")
  })
})

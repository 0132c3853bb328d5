// A server whose embedder setting cannot be used (BATON_EMBEDDER=voyage without a key) searches by
// words and says why; its vector arm's skip reason must not read "no embedder configured" beside a
// note naming the missing key (a black-box sweep found the two side by side).
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generateBulkCorpus } from "@baton/recall-index/testing"

const batonBin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))
const root = mkdtempSync(join(tmpdir(), "baton-mcp-misconfigured-"))
let client: Client

beforeAll(async () => {
  const home = join(root, "home")
  for (const [path, text] of Object.entries(
    generateBulkCorpus({ homeDir: home, files: 2, seed: 3, exchangesPerFile: 3 }).files,
  )) {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
  }
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    CODEX_HOME: join(home, ".codex"),
    BATON_DATA_DIR: join(root, "data"),
  }
  execFileSync(process.execPath, [batonBin, "recall", "index", "--json"], {
    env: { ...env, BATON_EMBEDDER: "none" },
    stdio: "pipe",
  })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [batonBin, "mcp"],
    env: { ...env, BATON_EMBEDDER: "voyage" },
    stderr: "pipe",
  })
  client = new Client({ name: "baton-misconfigured-test", version: "0" })
  await client.connect(transport)
}, 60_000)

afterAll(async () => {
  await client.close()
  rmSync(root, { recursive: true, force: true })
})

describe("recall_search with an unusable embedder setting", () => {
  it("answers by words, names the missing key, and says the vector arm was skipped for it", async () => {
    const result = await client.callTool({ name: "recall_search", arguments: { query: "garden" } })
    expect(result.isError).not.toBe(true)
    const out = result.structuredContent as {
      degraded: string | null
      arms: { lexical: { ran: boolean }; vector: { ran: boolean; skipped: string | null } }
    }
    expect(out.degraded).toContain("VOYAGE_API_KEY")
    expect(out.arms.lexical.ran).toBe(true)
    expect(out.arms.vector).toMatchObject({
      ran: false,
      skipped: "the embedder setting cannot be used (see degraded)",
    })
  })
})

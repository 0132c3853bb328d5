/**
 * The plugin's MCP server declaration forwards every environment variable the server reads.
 *
 * Codex (0.169) starts a stdio MCP server with a cleared environment: its default allow-list
 * (HOME, PATH, TZ, TMPDIR…) plus the names the declaration lists in `env_vars`. A variable the
 * server reads but `.mcp.json` does not list silently falls back to its default inside Codex
 * (~/.codex instead of $CODEX_HOME, the default data dir instead of $BATON_DATA_DIR). This test
 * scans the sources of `@baton/mcp-server` and the workspace packages it depends on for the
 * variables they read, so a new one cannot be forgotten. The e2e test proves the forwarding with
 * the real binary.
 */
import { readdir, readFile } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")
const pluginRoot = join(repoRoot, "apps/plugin")

/** Codex's own allow-list for stdio MCP servers on Unix (rmcp-client `DEFAULT_ENV_VARS`). */
const codexDefaults = ["HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM"].concat(
  ["TMPDIR", "TZ", "__CF_USER_TEXT_ENCODING"],
)

/** Read by these packages, but never on the MCP server's behalf: not forwarded on purpose. */
const notForwarded: Record<string, string> = {
  // The CLI's defaults for `baton wake …` and `baton compact …`; the MCP tools take explicit ids.
  // Codex's own environment holds the outer thread's id when Codex runs inside a Codex shell.
  CODEX_THREAD_ID: "CLI default only",
  BATON_WAKE_JOB_ID: "CLI default only; set by the wake watcher for a continuation",
  BATON_WAKE_GENERATION: "set by the wake watcher for a continuation",
  BATON_COMPACTION_CRASH_AFTER: "fault injection for the crash tests",
}

const workspacePackages = async (): Promise<Map<string, string>> => {
  const byName = new Map<string, string>()
  for (const dir of await readdir(join(repoRoot, "packages"))) {
    const manifest = await readFile(join(repoRoot, "packages", dir, "package.json"), "utf8").catch(
      () => undefined,
    )
    if (manifest !== undefined)
      byName.set((JSON.parse(manifest) as { name: string }).name, join(repoRoot, "packages", dir))
  }
  return byName
}

/** `@baton/mcp-server` and every workspace package it depends on, transitively. */
const serverPackages = async (): Promise<ReadonlyArray<string>> => {
  const byName = await workspacePackages()
  const seen = new Set<string>()
  const visit = async (name: string): Promise<void> => {
    const dir = byName.get(name)
    if (dir === undefined || seen.has(dir)) return
    seen.add(dir)
    const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>
    }
    for (const dependency of Object.keys(manifest.dependencies ?? {})) await visit(dependency)
  }
  await visit("@baton/mcp-server")
  return [...seen]
}

const sourceFiles = async (dir: string): Promise<ReadonlyArray<string>> => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => join(e.parentPath, e.name))
}

/** Names read as `env["X"]`, `env.X`, `someHelper(env, "X")`, or any `"BATON_…"` literal. */
const readVariables = (source: string): ReadonlyArray<string> =>
  [
    ...source.matchAll(
      /env\??\.([A-Z][A-Z0-9_]+)\b|env\[\s*"([A-Z][A-Z0-9_]*)"|\(\s*env,\s*"([A-Z][A-Z0-9_]*)"|"(BATON_[A-Z0-9_]+)"/g,
    ),
  ].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4] ?? "")

describe("the plugin's MCP server declaration", () => {
  it("forwards, under Codex, every environment variable the server reads", async () => {
    const declared = JSON.parse(await readFile(join(pluginRoot, ".mcp.json"), "utf8")) as {
      mcpServers: Record<string, { command: string; env_vars?: Array<string> }>
    }
    const forwarded = declared.mcpServers["baton"]?.env_vars ?? []
    const packages = await serverPackages()
    expect(packages.map((dir) => dir.split("/").at(-1))).toEqual(
      expect.arrayContaining(["mcp-server", "recall-index", "compaction", "wake", "ipc-codex"]),
    )
    const read = new Set<string>()
    for (const dir of packages)
      for (const file of await sourceFiles(join(dir, "src")))
        for (const name of readVariables(await readFile(file, "utf8"))) read.add(name)
    // The scan itself works: these are known reads.
    expect([...read]).toEqual(
      expect.arrayContaining(["CODEX_HOME", "BATON_DATA_DIR", "BATON_EMBEDDER", "VOYAGE_API_KEY"]),
    )
    const missing = [...read]
      .filter((name) => !codexDefaults.includes(name) && !(name in notForwarded))
      .filter((name) => !forwarded.includes(name))
      .sort()
    expect(missing, "add these to env_vars in apps/plugin/.mcp.json").toEqual([])
    expect(forwarded.filter((name) => name in notForwarded)).toEqual([])
    expect(new Set(forwarded).size).toBe(forwarded.length)
  })
})

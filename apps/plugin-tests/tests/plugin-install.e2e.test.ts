/**
 * The plugin installs into the real agents and its MCP server really serves them.
 *
 * Each agent runs in an isolated home against a loopback mock model. The plugin's `.mcp.json`
 * starts `baton mcp`, so a `baton` shim for the freshly built CLI goes first on PATH (what
 * `npm install -g ./packages/cli` gives a user). The strongest proof is the last step of each test:
 * the mock model asks the agent to call `handoff_validate`, and the agent's next request carries
 * the server's answer. Each test also checks the plugin's SessionStart hook: the agent runs
 * `baton recall index --background --quiet` at session start, which returns at once and leaves a
 * detached indexer whose log lands in the Baton data directory. The Claude test then starts a
 * second session whose model calls `recall_search`, and the hit the agent passes back is the
 * first session's answer. A second Codex test runs Codex with a non-default CODEX_HOME,
 * BATON_DATA_DIR and other Baton settings: Codex passes a stdio MCP server only a default
 * allow-list of variables plus the declaration's `env_vars`, and `recall_status` must report the
 * paths and embedder those settings choose.
 */
import { execFile } from "node:child_process"
import { appendFile, chmod, cp, mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import {
  claudeEnv,
  createClaudeHome,
  createCodexHome,
  execCommandReply,
  functionCallItem,
  messagesTextReply,
  messagesToolUseReply,
  resolveClaudeBinary,
  resolveCodexBinary,
  runClaudePrint,
  runCodexExec,
  startCodexAppServer,
  startMockMessages,
  startMockResponses,
  streamReply,
  textReply,
} from "@baton/testkit"
import { describe, expect, it } from "vitest"

const run = promisify(execFile)

/**
 * Runs `baton recall index` to completion: the plugin's SessionStart hook may still be indexing
 * in the background (the run then refuses at once as busy), so it tries again for up to 60 s.
 */
const indexWhenFree = async (env: Record<string, string | undefined>): Promise<void> => {
  for (let attempt = 0; ; attempt++) {
    const out = await run(process.execPath, [cliBin, "recall", "index", "--json"], { env }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }),
    )
    const report = JSON.parse(out.stdout || "{}") as { ok?: boolean; error?: { _tag?: string } }
    if (report.ok === true) return
    if (report.error?._tag !== "IndexBusyError" || attempt >= 120) {
      throw new Error(`baton recall index failed: ${out.stdout}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")
const cliBin = join(repoRoot, "packages/cli/dist/bin.js")

const handoff = { summary: "done A", resume: false }
// The first Claude session's answer, which a later session recalls through the plugin.
const decision = "Validated. We keep the retry budget at five attempts with jitter."
// SHA-256 of the canonical encoding of `handoff` (see the golden vectors in @baton/handoff).
const handoffSha256 = "2b3336fe41a564c3f904a928e24881f70a1d8f4c463f3a5ae361966e18c5e22f"

/** Writes a `baton` shim for the built CLI into `dir/bin` and returns that folder. */
const batonShim = async (dir: string): Promise<string> => {
  const bin = join(dir, "bin")
  await mkdir(bin, { recursive: true })
  await writeFile(join(bin, "baton"), `#!/bin/sh\nexec "${process.execPath}" "${cliBin}" "$@"\n`)
  await chmod(join(bin, "baton"), 0o755)
  return bin
}

/** Starts the MCP server exactly as an installed plugin declares it and lists its tools. */
const listDeclaredTools = async (
  pluginRoot: string,
  env: Record<string, string>,
): Promise<ReadonlyArray<string>> => {
  const declared = JSON.parse(await readFile(join(pluginRoot, ".mcp.json"), "utf8")) as {
    mcpServers: Record<string, { command: string; args?: Array<string> }>
  }
  const server = declared.mcpServers["baton"]
  expect(server).toBeDefined()
  const client = new Client({ name: "plugin-test", version: "0.0.0" })
  await client.connect(
    new StdioClientTransport({ command: server!.command, args: server!.args ?? [], env }),
  )
  try {
    expect(client.getServerVersion()?.name).toBe("baton")
    const { tools } = await client.listTools()
    return tools.map((tool) => tool.name)
  } finally {
    await client.close()
  }
}

/** Waits for the background indexer started by the SessionStart hook to log a finished run. */
const recallIndexLog = async (home: string): Promise<string> => {
  const log = join(home, ".local", "share", "baton", "recall-index.log")
  const until = Date.now() + 60_000
  let text = ""
  while (Date.now() < until) {
    text = await readFile(log, "utf8").catch(() => "")
    if (/Indexed|Up to date|Nothing indexed yet/.test(text)) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return text
}

describe("Codex plugin", () => {
  it("installs from the repository marketplace, and Codex calls the plugin's MCP tool", async () => {
    await using mock = await startMockResponses({
      replies: [
        // Codex starts MCP servers in the background; the first request may go out before the
        // server's tools are listed, so the MCP call comes in the second reply.
        execCommandReply("true"),
        streamReply([
          { ...functionCallItem("handoff_validate", { handoff }), namespace: "mcp__baton" },
        ]),
        textReply("validated"),
      ],
    })
    await using home = await createCodexHome({ mock, features: { plugins: true } })
    const env = { ...home.env, PATH: `${await batonShim(home.root)}:${home.env["PATH"] ?? ""}` }
    const codex = resolveCodexBinary()
    const codexCli = (args: Array<string>) =>
      run(codex.node, [codex.script, ...args], { env, cwd: home.workdir })

    const added = await codexCli(["plugin", "marketplace", "add", repoRoot])
    expect(added.stdout).toContain("Added marketplace `baton`")
    const installed = await codexCli(["plugin", "add", "baton@baton"])
    expect(installed.stdout).toContain("Added plugin `baton` from marketplace `baton`")
    const pluginRoot = /Installed plugin root: (.+)/.exec(installed.stdout)?.[1]?.trim()
    expect(pluginRoot).toBeDefined()
    expect(await readFile(join(home.codexHome, "config.toml"), "utf8")).toMatch(
      /\[plugins\."baton@baton"\]\s+enabled = true/,
    )
    const mcpList = await codexCli(["mcp", "list"])
    expect(mcpList.stdout).toMatch(/^baton\s+baton\s+mcp\s/m)

    expect(await listDeclaredTools(pluginRoot!, env)).toContain("handoff_validate")

    // Codex discovers the plugin's SessionStart hook and holds it until the user reviews it
    // (/hooks). Trusting records the first half of its hash (observed with codex 0.169.0).
    const server = await startCodexAppServer({ home, env })
    const listed = await server.request<{
      data: Array<{
        hooks: Array<{
          key: string
          command?: string
          eventName: string
          source: string
          pluginId: string | null
          currentHash: string
          trustStatus: string
        }>
      }>
    }>("hooks/list", { cwds: [home.workdir] })
    await server.dispose()
    const hook = listed.data[0]?.hooks.find((h) => h.pluginId === "baton@baton")
    expect(hook).toMatchObject({
      eventName: "sessionStart",
      source: "plugin",
      command: "baton recall index --background --quiet",
      trustStatus: "untrusted",
    })
    await appendFile(
      join(home.codexHome, "config.toml"),
      `\n[hooks.state.${JSON.stringify(hook!.key)}]\ntrusted_hash = ${JSON.stringify(hook!.currentHash.split("/")[0])}\n`,
    )

    const result = await runCodexExec({ home, prompt: "validate my handoff", env })
    expect(result.exitCode, result.stderr).toBe(0)
    const call = result.events.find(
      (event) => event.type === "item.completed" && JSON.stringify(event).includes("mcp_tool_call"),
    ) as { item: { server: string; tool: string; status: string; result: unknown } } | undefined
    expect(call?.item).toMatchObject({
      server: "baton",
      tool: "handoff_validate",
      status: "completed",
    })
    expect(call?.item.result).toMatchObject({
      structured_content: { valid: true, limitBytes: 32_000, sha256: handoffSha256 },
    })
    const requests = mock.requests()
    expect(requests).toHaveLength(3)
    expect(JSON.stringify(requests[2]!.body)).toContain(handoffSha256)
    const log = await recallIndexLog(home.env["HOME"] ?? "")
    expect(log).toContain("baton recall index")
    expect(log).toMatch(/Indexed|Up to date|Nothing indexed yet/)
  })
})

describe("Codex plugin environment", () => {
  it("starts the plugin's MCP server with the user's CODEX_HOME, BATON_DATA_DIR and other Baton settings", async () => {
    await using mock = await startMockResponses({
      replies: [
        execCommandReply("true"),
        streamReply([{ ...functionCallItem("recall_status", {}), namespace: "mcp__baton" }]),
        textReply("status read"),
      ],
    })
    await using home = await createCodexHome({ mock, features: { plugins: true } })
    // Codex passes a stdio MCP server only a default allow-list of variables (HOME, PATH, TZ…)
    // plus the ones its declaration forwards. Every setting below differs from what the server
    // would fall back to without it: ~/.codex, ~/.local/share/baton, ~/.claude, embedded.
    const codexHome = join(home.root, "custom-codex-home")
    const dataDir = join(home.root, "custom-baton-data")
    const claudeDir = join(home.root, "custom-claude")
    await cp(home.codexHome, codexHome, { recursive: true })
    const env = {
      ...home.env,
      PATH: `${await batonShim(home.root)}:${home.env["PATH"] ?? ""}`,
      CODEX_HOME: codexHome,
      BATON_DATA_DIR: dataDir,
      CLAUDE_CONFIG_DIR: claudeDir,
      BATON_EMBEDDER: "none",
    }
    const codex = resolveCodexBinary()
    const codexCli = (args: Array<string>) =>
      run(codex.node, [codex.script, ...args], { env, cwd: home.workdir })
    await codexCli(["plugin", "marketplace", "add", repoRoot])
    const installed = await codexCli(["plugin", "add", "baton@baton"])
    expect(installed.stdout).toContain(join(codexHome, "plugins", "cache"))

    const result = await runCodexExec({ home, prompt: "how fresh is recall?", env })
    expect(result.exitCode, result.stderr).toBe(0)
    const call = result.events.find(
      (event) => event.type === "item.completed" && JSON.stringify(event).includes("mcp_tool_call"),
    ) as { item: { tool: string; status: string; result: unknown } } | undefined
    expect(call?.item).toMatchObject({ tool: "recall_status", status: "completed" })
    const status = (call?.item.result as { structured_content: Record<string, unknown> })
      .structured_content
    expect(status).toMatchObject({
      database_path: join(dataDir, "recall-index.db"),
      roots: [
        join(claudeDir, "projects"),
        join(codexHome, "sessions"),
        join(codexHome, "archived_sessions"),
      ],
      embedder: { configured: "none" },
    })

    // The rollout keeps the tool's answer, but grep skips it: a copy of what recall already
    // knows (its data directory's path appears nowhere else in the session).
    await indexWhenFree(env)
    const grep = async (...flags: Array<string>) => {
      const out = await run(
        process.execPath,
        [cliBin, "recall", "grep", "custom-baton-data", "--source", "codex", "--json", ...flags],
        { env },
      )
      return (JSON.parse(out.stdout) as { hits: Array<{ kind: string }> }).hits
    }
    expect(await grep()).toEqual([])
    expect((await grep("--all-records")).map((hit) => hit.kind)).toContain("tool-output")
  })
})

describe("Claude Code plugin", () => {
  it("validates, installs from the repository marketplace, Claude calls the MCP tools, and a later session recalls the first", async () => {
    const tool = "mcp__plugin_baton_baton__handoff_validate"
    await using mock = await startMockMessages({
      script: [messagesToolUseReply(tool, { handoff }), messagesTextReply(decision)],
    })
    await using home = await createClaudeHome()
    const env = claudeEnv(home, mock)
    env["PATH"] = `${await batonShim(home.root)}:${env["PATH"] ?? ""}`
    const claude = resolveClaudeBinary()
    const claudeCli = (args: Array<string>) =>
      run(claude.path, args, { env, cwd: home.workDir, timeout: 60_000 })

    const validated = await claudeCli(["plugin", "validate", join(repoRoot, "apps/plugin")])
    expect(validated.stdout).toContain("Validation passed")
    const marketplace = await claudeCli(["plugin", "validate", repoRoot])
    expect(marketplace.stdout).toContain("Validation passed")
    expect((await claudeCli(["plugin", "marketplace", "add", repoRoot])).stdout).toContain(
      "Successfully added marketplace: baton",
    )
    expect((await claudeCli(["plugin", "install", "baton@baton"])).stdout).toContain(
      "Successfully installed plugin: baton@baton",
    )
    const installed = JSON.parse(
      await readFile(join(home.configDir, "plugins/installed_plugins.json"), "utf8"),
    ) as { plugins: Record<string, Array<{ installPath: string }>> }
    const pluginRoot = installed.plugins["baton@baton"]?.[0]?.installPath
    expect(pluginRoot).toBeDefined()

    expect(await listDeclaredTools(pluginRoot!, env)).toContain("handoff_validate")

    const ask = (prompt: string, allowed: string) =>
      runClaudePrint({
        server: mock,
        home,
        prompt,
        env: { PATH: env["PATH"]! },
        allowedTools: [allowed],
      })
    const result = await ask("validate my handoff", tool)
    await using _run = result
    expect(result.exitCode, result.stderr).toBe(0)
    const requests = mock.requests("main")
    expect(requests).toHaveLength(2)
    const lastMessage = JSON.stringify(
      (requests[1]!.body as { messages: Array<unknown> }).messages.at(-1),
    )
    expect(lastMessage).toContain("tool_result")
    expect(lastMessage).toContain(handoffSha256)
    // Claude Code runs the plugin's SessionStart hook without a review step.
    const log = await recallIndexLog(env["HOME"]!)
    expect(log).toContain("baton recall index")
    expect(log).toMatch(/Indexed|Up to date|Nothing indexed yet/)

    // A later session recalls the first one: the model calls the plugin's recall_search, and
    // the agent's next request carries the hit — the first session's answer, found in the
    // transcript Claude Code wrote, indexed with the default embedder and no key.
    const indexed = await run(process.execPath, [cliBin, "recall", "index", "--json"], { env })
    expect(JSON.parse(indexed.stdout)).toMatchObject({ ok: true })
    const recall = "mcp__plugin_baton_baton__recall_search"
    mock.enqueue(
      messagesToolUseReply(recall, { query: "how many attempts does the retry budget allow?" }),
      messagesTextReply("Five attempts, as decided earlier."),
    )
    const later = await ask("what did we decide about the retry budget?", recall)
    await using _later = later
    expect(later.exitCode, later.stderr).toBe(0)
    const after = mock.requests("main")
    expect(after).toHaveLength(4)
    const last = (after[3]!.body as { messages: Array<{ content: unknown }> }).messages.at(-1)
    const block = (last?.content as Array<{ type: string; content: unknown }>)[0]
    expect(block?.type).toBe("tool_result")
    const answer = JSON.parse(String(block?.content)) as {
      hits: Array<{ session_id: string; role: string; text: string }>
    }
    expect(answer.hits[0]).toMatchObject({
      session_id: result.sessionId,
      role: "assistant",
      text: decision,
    })

    // The later session's transcript holds that answer again, as the tool's result: grep skips
    // the copy and finds the decision where it was made.
    await indexWhenFree(env)
    const grep = async (...flags: Array<string>) => {
      const out = await run(
        process.execPath,
        [cliBin, "recall", "grep", decision, "--source", "claude", "--json", ...flags],
        { env },
      )
      return (JSON.parse(out.stdout) as { hits: Array<{ sessionId: string }> }).hits
    }
    expect(new Set((await grep()).map((hit) => hit.sessionId))).toEqual(new Set([result.sessionId]))
    expect((await grep("--all-records")).map((hit) => hit.sessionId)).toContain(later.sessionId)
  })
})

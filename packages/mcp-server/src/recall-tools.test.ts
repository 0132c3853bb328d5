// The six recall tools through the MCP SDK client over the in-memory transport, against a real
// temp index built from a small synthetic history (Claude Code + Codex) with the default
// embedded embedder. Every structuredContent is checked by the client against the tool's
// output schema; the tests also parse it with the zod shapes.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  embedBacklog,
  embedderFromEnvironment,
  embeddingForIndex,
  forgetSessions,
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  RecallDatabase,
  recallDatabaseLayer,
  step,
} from "@baton/recall-index"
import { encodeClaudeProjectDir, rolloutName } from "@baton/recall-index/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { createBatonServer } from "./baton-server.js"
import { ECHO_CHARS } from "./echoed-input.js"
import {
  GREP_OUTPUT_CHARS,
  grepOutput,
  recallSearchOutput,
  recallStatusOutput,
  recallTools,
  recentSessionsOutput,
  WINDOW_OUTPUT_CHARS,
} from "./recall-tools.js"

const CLAUDE_ID = "aaaaaaaa-1111-4111-8111-000000000001"
const CODEX_ID = "019c0000-cccc-7ccc-8ccc-000000000003"
let root = ""
let client: Client
const closers: Array<() => Promise<void>> = []

/**
 * A writer of Claude Code records of session `id` in `cwd`, each `stepMs` after the last from
 * `start`, their uuids `<uuidHead>-0000-4000-8000-<n>`.
 */
const claudeRecords = (
  id: string,
  cwd: string,
  uuidHead: string,
  start: string,
  stepMs: number,
): ((type: string, message: unknown) => string) => {
  let n = 0
  let clock = Date.parse(start)
  return (type, message) => {
    n += 1
    clock += stepMs
    return JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      cwd,
      sessionId: id,
      version: "2.1.90",
      entrypoint: "cli",
      type,
      uuid: `${uuidHead}-0000-4000-8000-${String(n).padStart(12, "0")}`,
      timestamp: new Date(clock).toISOString(),
      message,
    })
  }
}

const claudeSession = (): string => {
  const line = claudeRecords(
    CLAUDE_ID,
    "/work/garden",
    "aaaaaaaa",
    "2026-03-10T10:00:00.000Z",
    5000,
  )
  let messages = 0
  const assistant = (content: unknown[]) => ({
    id: `m${++messages}`,
    type: "message",
    role: "assistant",
    model: "m",
    content,
  })
  return `${[
    line("user", { role: "user", content: "Which database did we pick for the garden planner?" }),
    line(
      "assistant",
      assistant([{ type: "text", text: "We picked SQLite with WAL mode for the garden planner." }]),
    ),
    line("user", { role: "user", content: "Count the migration files." }),
    line(
      "assistant",
      assistant([
        { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls migrations" } },
      ]),
    ),
    line("user", {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t1", content: "migrations=12" }],
    }),
    line("assistant", assistant([{ type: "text", text: "There are 12 migration files." }])),
  ].join("\n")}\n`
}

const codexRollout = (): string => {
  let clock = Date.parse("2026-03-12T08:00:00.000Z")
  const line = (type: string, payload: unknown) => {
    clock += 5000
    return JSON.stringify({ timestamp: new Date(clock).toISOString(), type, payload })
  }
  return `${[
    line("session_meta", {
      id: CODEX_ID,
      timestamp: "2026-03-12T08:00:00.000Z",
      cwd: "/work/payments",
      originator: "codex-tui",
      cli_version: "0.150.0",
      source: "cli",
    }),
    line("event_msg", {
      type: "user_message",
      message: "What retry policy should the webhook client use?",
    }),
    line("response_item", {
      type: "function_call",
      name: "exec_command",
      arguments: '{"cmd":"grep -r retry"}',
      call_id: "c1",
    }),
    line("response_item", {
      type: "function_call_output",
      call_id: "c1",
      output: "handlers=7 in C:\\pay\\hooks",
    }),
    line("event_msg", {
      type: "agent_message",
      message: "Use exponential backoff with jitter, 3 attempts.",
    }),
  ].join("\n")}\n`
}

const write = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

/** Indexes the transcripts under `home` (`claude/`, `codex/`) into `home/data`; its path. */
const indexHome = async (home: string): Promise<string> => {
  const dataDir = join(home, "data")
  await Effect.runPromise(
    indexTranscripts({
      environment: {
        env: { CLAUDE_CONFIG_DIR: join(home, "claude"), CODEX_HOME: join(home, "codex") },
        homeDir: home,
      },
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          recallDatabaseLayer({ dataDir }),
          nodeTranscriptFileSystemLayer,
          nodeIndexerProcessLayer,
        ),
      ),
    ),
  )
  return dataDir
}

/**
 * A Claude Code session of `rounds` prompts, each answered after 20 tool calls with thinking:
 * with `full`, one answer renders ~150 k characters, over the answer's budget on its own.
 */
const heavySession = (id: string, rounds: number): string => {
  const line = claudeRecords(id, "/work/heavy", "dddddddd", "2026-04-01T09:00:00.000Z", 1000)
  const assistant = (key: string, content: unknown[]) =>
    line("assistant", { id: key, type: "message", role: "assistant", model: "m", content })
  const lines: Array<string> = []
  for (let i = 0; i < rounds; i++) {
    lines.push(line("user", { role: "user", content: `heavy prompt ${i} ${"word ".repeat(1000)}` }))
    for (let j = 0; j < 20; j++) {
      const tool = `t${i}-${j}`
      lines.push(
        assistant(`m${i}-${j}`, [
          { type: "thinking", thinking: "thinking hard ".repeat(300), signature: "s" },
          {
            type: "tool_use",
            id: tool,
            name: "Bash",
            input: { command: `echo ${"arg".repeat(1200)}` },
          },
        ]),
        line("user", {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: tool,
              content: `out ${i}.${j} ${"output line\n".repeat(300)}`,
            },
          ],
        }),
      )
    }
    lines.push(
      assistant(`a${i}`, [
        { type: "text", text: `heavy answer ${i} ${"lorem ipsum ".repeat(900)}` },
      ]),
    )
  }
  return `${lines.join("\n")}\n`
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "baton-recall-mcp-"))
  const claudeDir = join(root, "claude")
  const codexHome = join(root, "codex")
  write(
    join(claudeDir, "projects", encodeClaudeProjectDir("/work/garden"), `${CLAUDE_ID}.jsonl`),
    claudeSession(),
  )
  const { dir, name } = rolloutName(Date.parse("2026-03-12T08:00:00.000Z"), CODEX_ID)
  write(join(codexHome, "sessions", dir, name), codexRollout())
  process.env["CLAUDE_CONFIG_DIR"] = claudeDir
  process.env["CODEX_HOME"] = codexHome
  process.env["BATON_DATA_DIR"] = join(root, "data")
  delete process.env["BATON_EMBEDDER"]
  const layers = Layer.mergeAll(
    recallDatabaseLayer({ dataDir: join(root, "data") }),
    nodeTranscriptFileSystemLayer,
    nodeIndexerProcessLayer,
  )
  await Effect.runPromise(
    Effect.gen(function* () {
      yield* indexTranscripts({ environment: { env: process.env, homeDir: root } })
      // As `baton recall index` does: the default (`auto`) picks USE-lite for a history this small.
      const configured = yield* embeddingForIndex(yield* embedderFromEnvironment(process.env))
      if (configured.embedder !== undefined) yield* embedBacklog(configured.embedder)
      if (configured.embedder?.close !== undefined) yield* configured.embedder.close()
    }).pipe(Effect.provide(layers)),
  )
  const server = createBatonServer({ tools: [...recallTools] })
  client = new Client({ name: "test", version: "0" })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await Promise.all([server.connect(b), client.connect(a)])
  closers.push(
    () => client.close(),
    () => server.close(),
  )
})

afterAll(async () => {
  for (const close of closers) await close()
  rmSync(root, { recursive: true, force: true })
})

type Call = Awaited<ReturnType<Client["callTool"]>>
/** Runs `sql` on the test index, as a writer outside the server would. */
const files = (sql: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const db = yield* RecallDatabase
      db.sqlite.exec(sql)
    }).pipe(Effect.provide(recallDatabaseLayer({ dataDir: join(root, "data") }))),
  )
const call = (name: string, args: Record<string, unknown>): Promise<Call> =>
  client.callTool({ name, arguments: args })
const content = (result: Call) => result.structuredContent as Record<string, never>

describe("recall tools over MCP", () => {
  it("lists the six tools, read-only, with input and output schemas", async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual([
      "recall_search",
      "expand_around",
      "step",
      "grep",
      "recent_sessions",
      "recall_status",
    ])
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe("object")
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true)
    }
    expect(tools.find((t) => t.name === "recall_search")?.inputSchema).toMatchObject({
      required: ["query"],
    })
    expect(tools.find((t) => t.name === "expand_around")?.inputSchema).toMatchObject({
      required: ["session_id", "turn_id"],
      additionalProperties: false,
    })
    // An optional argument may be null, and keeps its description.
    const k = (tools.find((t) => t.name === "recall_search")?.inputSchema.properties ?? {})["k"]
    expect(k).toMatchObject({
      anyOf: [{ type: "integer" }, { type: "null" }],
      description: expect.stringContaining("hits"),
    })
  })

  it("refuses an argument it does not know, and takes null for an omitted one", async () => {
    const unknown = await call("step", { session_id: CLAUDE_ID, uuid: "x", direction: "next" })
    expect(unknown.isError).toBe(true)
    expect(JSON.stringify(unknown.content)).toMatch(/[Uu]nrecognized key.*uuid/)
    const nulls = await call("recall_search", {
      query: "which database garden planner",
      k: null,
      source: null,
      scope_cwd: null,
      on_date: null,
    })
    expect(nulls.isError, JSON.stringify(nulls.content)).toBeFalsy()
    const plain = await call("recall_search", { query: "which database garden planner" })
    expect(content(nulls)["hits"]).toEqual(content(plain)["hits"])
    expect(content(plain)["note"]).toBeNull()
  })

  it("notes when hits hold none of the query's words, so the agent weighs them", async () => {
    const nonsense = content(await call("recall_search", { query: "zeppelin quokka" }))
    expect(nonsense["hits"]).not.toHaveLength(0)
    expect(nonsense["note"]).toMatch(/^none of these hits holds a word of the query/)
  })

  it("refuses a relative scope_cwd: the server's directory is not the agent's", async () => {
    for (const scope of ["garden", "./", "C:\\Users\\x\\garden"]) {
      const relative = await call("recall_search", { query: "database", scope_cwd: scope })
      expect(relative.isError, scope).toBe(true)
      expect(JSON.stringify(relative.content)).toContain(
        "an absolute path is needed (your working directory, e.g. /home/me/project), not a relative one at scope_cwd",
      )
    }
    const home = await call("recent_sessions", { scope_cwd: "~" })
    expect(home.isError).toBeFalsy()
  })

  it("refuses an empty filter instead of dropping it, naming the argument", async () => {
    for (const [tool, args, field] of [
      ["recall_search", { query: "database", on_date: "" }, "on_date"],
      ["recall_search", { query: "database", start_date: "" }, "start_date"],
      ["recall_search", { query: "database", end_date: " " }, "end_date"],
      ["recall_search", { query: "database", timezone: "" }, "timezone"],
      ["recall_search", { query: "database", scope_cwd: "" }, "scope_cwd"],
      ["recent_sessions", { on_date: "" }, "on_date"],
      ["recent_sessions", { scope_cwd: "  " }, "scope_cwd"],
      ["grep", { pattern: "retry", timezone: "" }, "timezone"],
      ["grep", { pattern: "retry", session_id: "" }, "session_id"],
      ["expand_around", { session_id: CLAUDE_ID, turn_id: "t", timezone: "" }, "timezone"],
      ["step", { session_id: CLAUDE_ID, direction: "next", timezone: "" }, "timezone"],
    ] as const) {
      const refused = await call(tool, args)
      const said = JSON.stringify(refused.content)
      expect(refused.isError, `${tool} ${JSON.stringify(args)}`).toBe(true)
      expect(said, tool).toMatch(
        new RegExp(`the value is empty: give .+, or omit the argument at ${field}`),
      )
    }
  })

  it("runs with a scope_cwd that does not exist, and says so", async () => {
    const nowhere = join(root, "no-such-dir")
    for (const [tool, args] of [
      ["recall_search", { query: "database" }],
      ["recent_sessions", {}],
      ["grep", { pattern: "retry" }],
    ] as const) {
      const gone = await call(tool, { ...args, scope_cwd: nowhere })
      expect(gone.isError, tool).toBeFalsy()
      expect(content(gone)["scope_missing"], tool).toBe(true)
      expect(content(gone)["note"], tool).toContain(
        `scope_cwd ${nowhere} is not a directory on this machine`,
      )
      const there = await call(tool, { ...args, scope_cwd: root })
      expect(content(there)["scope_missing"], tool).toBe(false)
      expect(String(content(there)["note"]), tool).not.toContain("not a directory")
      expect(content(await call(tool, args)), tool).not.toHaveProperty("scope_missing")
    }
  })

  it("recall_search finds by words and meaning, and the hit expands", async () => {
    const result = await call("recall_search", {
      query: "which database for the garden planner",
      timezone: "UTC",
    })
    expect(result.isError).toBeFalsy()
    const search = z.object(recallSearchOutput).parse(result.structuredContent)
    expect(search.index_empty).toBe(false)
    expect(search.arms.vector.ran).toBe(true)
    // The index was embedded with USE-lite, so the query is too.
    expect(search.arms.vector.fingerprint).toMatch(/^embedded\/use-lite\//)
    // The answer first (it follows the question the words match: conversation context); the
    // question among the hits.
    const texts = search.hits.map((h) => h.text)
    expect(texts[0]).toBe("We picked SQLite with WAL mode for the garden planner.")
    const question =
      search.hits[texts.indexOf("Which database did we pick for the garden planner?")]!
    expect(question).toMatchObject({ source: "claude", session_id: CLAUDE_ID, project: "garden" })
    expect(question.when_human).toMatch(/^2026-03-10 10:00 UTC/)
    expect(question.scores.lexical_rank).toBe(1)

    const window = await call("expand_around", {
      session_id: question.session_id,
      turn_id: question.turn_id,
      before: 0,
      after: 3,
    })
    expect(window.isError).toBeFalsy()
    const turns = (
      content(window) as unknown as {
        turns: Array<{ text: string; records: Array<{ kind: string; text: string }> }>
      }
    ).turns
    expect(turns.map((t) => t.text)).toEqual([
      "Which database did we pick for the garden planner?",
      "We picked SQLite with WAL mode for the garden planner.",
      "Count the migration files.",
      "There are 12 migration files.",
    ])
    expect(turns[3]!.records.map((r) => r.kind)).toEqual(["tool-call", "tool-output"])
  })

  it("filters by source, scope and day", async () => {
    const codex = z
      .object(recallSearchOutput)
      .parse(content(await call("recall_search", { query: "retry backoff", source: "codex" })))
    expect(codex.hits.length).toBeGreaterThan(0)
    expect(codex.hits.every((h) => h.source === "codex")).toBe(true)
    const scoped = z.object(recallSearchOutput).parse(
      content(
        await call("recall_search", {
          query: "retry backoff database",
          scope_cwd: "/work/garden/.claude/worktrees/x",
        }),
      ),
    )
    expect(scoped.applied.scope_root).toBe("/work/garden")
    expect(scoped.hits.every((h) => h.session_id === CLAUDE_ID)).toBe(true)
    const day = z
      .object(recallSearchOutput)
      .parse(
        content(
          await call("recall_search", { query: "retry", on_date: "2026-03-10", timezone: "UTC" }),
        ),
      )
    expect(day.applied).toMatchObject({ start_date: "2026-03-10", end_date: "2026-03-10" })
    expect(day.hits.length).toBeGreaterThan(0)
    expect(
      day.hits.every((h) => h.session_id === CLAUDE_ID && h.timestamp!.startsWith("2026-03-10")),
    ).toBe(true)
  })

  it("step walks the session and reports its end", async () => {
    const search = z
      .object(recallSearchOutput)
      .parse(content(await call("recall_search", { query: "migration files" })))
    const answer = search.hits.find((h) => h.text === "There are 12 migration files.")!
    const next = content(
      await call("step", { session_id: CLAUDE_ID, turn_id: answer.turn_id, direction: "next" }),
    )
    expect(next).toMatchObject({ turns: [], at_end: true })
    const prev = content(
      await call("step", {
        session_id: CLAUDE_ID,
        turn_id: answer.turn_id,
        direction: "prev",
        count: 2,
      }),
    )
    expect(
      (prev as unknown as { turns: Array<{ text: string }> }).turns.map((t) => t.text),
    ).toEqual([
      "We picked SQLite with WAL mode for the garden planner.",
      "Count the migration files.",
    ])
    // Without a turn, the session opens at its end (prev) or its start (next).
    const texts = async (direction: string) =>
      (
        content(await call("step", { session_id: CLAUDE_ID, direction, count: 1 })) as unknown as {
          turns: Array<{ text: string }>
        }
      ).turns.map((t) => t.text)
    expect(await texts("prev")).toEqual(["There are 12 migration files."])
    expect(await texts("next")).toEqual(["Which database did we pick for the garden planner?"])
  })

  it("grep finds tool output as written and refuses an unsafe regex", async () => {
    const hits = z
      .object(grepOutput)
      .parse(content(await call("grep", { pattern: "c:\\PAY\\hooks" })))
    expect(hits.hits.map((h) => [h.session_id, h.kind])).toEqual([[CODEX_ID, "tool-output"]])
    const regex = z
      .object(grepOutput)
      .parse(content(await call("grep", { pattern: "migrations=\\d+", regex: true })))
    expect(regex.hits[0]).toMatchObject({ session_id: CLAUDE_ID, kind: "tool-output" })
    const unsafe = await call("grep", { pattern: "(a+)+$", regex: true })
    expect(unsafe.isError).toBe(true)
    expect(JSON.stringify(unsafe.content)).toContain("RecallQueryError")
  })

  it("recent_sessions lists newest first with freshness", async () => {
    const recent = z
      .object(recentSessionsOutput)
      .parse(content(await call("recent_sessions", { timezone: "UTC" })))
    expect(recent.sessions.map((s) => s.session_id)).toEqual([CODEX_ID, CLAUDE_ID])
    expect(recent.sessions[1]).toMatchObject({
      title: "Which database did we pick for the garden planner?",
      title_source: "first-prompt",
      turns: 4,
      forked_from: null,
      transcript: "indexed",
    })
    expect(recent.index.last_run_ago).not.toBeNull()
    expect(recent.index.embedding_backlog).toBe(0)
  })

  it("recall_status reports counts, vectors and roots", async () => {
    const status = z.object(recallStatusOutput).parse(content(await call("recall_status", {})))
    expect(status).toMatchObject({
      empty: false,
      sessions: 2,
      embedding_backlog: 0,
      indexing_now: false,
    })
    expect(status.by_source.claude.sessions).toBe(1)
    expect(status.embedders[0]?.active).toBe(true)
    expect(status.roots).toContain(join(root, "codex", "sessions"))
    // The default, and what it embeds this small index with, as `baton recall status` says.
    expect(status.embedder).toMatchObject({
      configured: "auto",
      auto: { next_index_uses: "use-lite", chunks: status.chunks, max_chunks: 30_000 },
      problem: null,
    })
    expect(status.files_with_problems).toEqual([])
    expect(status.skipped_lines).toBeNull()
  })

  it("recall_status counts the lines indexing could not read, with the files", async () => {
    const stored = JSON.stringify({ malformed: 1, invalid: 0, unknownTypes: { future: 2 } })
    await files(`update files set skipped_lines = '${stored}' where source = 'codex'`)
    try {
      const status = z.object(recallStatusOutput).parse(content(await call("recall_status", {})))
      expect(status.skipped_lines).toEqual({
        lines: 3,
        files: 1,
        malformed: 1,
        invalid: 0,
        unknown_types: { future: 2 },
        top_files: [{ path: expect.stringContaining(CODEX_ID), lines: 3 }],
      })
    } finally {
      await files(`update files set skipped_lines = null`)
    }
  })

  it("recall_status names the files indexing failed on, with the last error", async () => {
    const columns = `(path, source, role, compression, size, mtime_ms, inode, head_hash, status,
      failure_count, last_error)`
    await files(`insert into files ${columns} values
      ('/h/a.jsonl', 'claude', 'session', 'none', 1, 0, 1, '', 'failed', 2, 'read failed: EIO'),
      ('/h/b.jsonl', 'codex', 'session', 'none', 1, 0, 2, '', 'quarantined', 3, null)`)
    try {
      const status = z.object(recallStatusOutput).parse(content(await call("recall_status", {})))
      expect(status).toMatchObject({ failing_files: 1, quarantined_files: 1 })
      expect(status.files_with_problems).toEqual([
        { path: "/h/a.jsonl", failures: 2, last_error: "read failed: EIO", quarantined: false },
        { path: "/h/b.jsonl", failures: 3, last_error: null, quarantined: true },
      ])
    } finally {
      await files(`delete from files where path in ('/h/a.jsonl', '/h/b.jsonl')`)
    }
  })

  it("recall_status names a chosen embedder, and a misconfigured one's problem", async () => {
    const previous = process.env["BATON_EMBEDDER"]
    try {
      process.env["BATON_EMBEDDER"] = "use-static"
      const named = z.object(recallStatusOutput).parse(content(await call("recall_status", {})))
      expect(named.embedder).toEqual({ configured: "use-static", auto: null, problem: null })
      process.env["BATON_EMBEDDER"] = "word2vec"
      const wrong = z.object(recallStatusOutput).parse(content(await call("recall_status", {})))
      expect(wrong.embedder.configured).toBeNull()
      expect(wrong.embedder.problem).toContain("word2vec")
      expect(wrong.sessions).toBe(2)
    } finally {
      if (previous === undefined) delete process.env["BATON_EMBEDDER"]
      else process.env["BATON_EMBEDDER"] = previous
    }
  })

  it("reports bad input and unknown turns as errors naming what to fix", async () => {
    const badZone = await call("recall_search", { query: "x", timezone: "Mars/Base" })
    expect(badZone.isError).toBe(true)
    expect(JSON.stringify(badZone.content)).toContain("is not an IANA time zone")
    const noSession = await call("grep", { pattern: "sqlite", session_id: "nope" })
    expect(noSession.isError).toBe(true)
    expect(JSON.stringify(noSession.content)).toContain("no session nope in the index")
    const missing = await call("expand_around", { session_id: CLAUDE_ID, turn_id: "nope" })
    expect(missing.isError).toBe(true)
    expect(JSON.stringify(missing.content)).toContain("RecallNotFoundError")
  })
})

describe("recall tools before anything is indexed", () => {
  it("say nothing is indexed yet, and where they looked, without creating the index", async () => {
    const previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = join(root, "no-index-here")
    try {
      const search = z
        .object(recallSearchOutput)
        .parse(content(await call("recall_search", { query: "anything" })))
      expect(search).toMatchObject({ hits: [], index_empty: true })
      expect(search.note).toContain("Nothing indexed yet")
      expect(search.note).toContain(join(root, "codex", "sessions"))
      // The fixture transcripts are there, waiting to be indexed.
      expect(search.note).toMatch(
        /: [1-9]\d* transcripts? found in .+, none indexed\. Run `baton recall index`/,
      )
      const status = z.object(recallStatusOutput).parse(content(await call("recall_status", {})))
      expect(status.empty).toBe(true)
      expect(status.data_dir_problem).toBeNull()
      expect(status.embedder).toEqual({ configured: "auto", auto: null, problem: null })
      const expand = await call("expand_around", { session_id: "s", turn_id: "t" })
      expect(expand.isError).toBe(true)
      expect(JSON.stringify(expand.content)).toContain("Nothing indexed yet")
      // Bad arguments are errors already: they would be with an index.
      for (const [tool, args, says] of [
        ["recall_search", { query: "x", on_date: "garbage" }, "is not a date"],
        ["recall_search", { query: "x", timezone: "Mars/Olympus" }, "is not an IANA time zone"],
        ["recent_sessions", { start_date: "2026-12-05", end_date: "2026-12-01" }, "is after"],
        ["grep", { pattern: "(", regex: true }, "not a valid regular expression"],
        ["grep", { pattern: "(a+)+$", regex: true }, "repeated group"],
        ["recall_search", { query: "   " }, "the query is empty"],
        ["expand_around", { session_id: "s", turn_id: "t", timezone: "Mars/X" }, "IANA"],
        ["step", { session_id: "s", direction: "next", timezone: "Mars/X" }, "IANA"],
      ] as const) {
        const refused = await call(tool, args)
        expect(refused.isError, `${tool} ${JSON.stringify(args)}`).toBe(true)
        expect(JSON.stringify(refused.content)).toContain(says)
      }
      const { existsSync } = await import("node:fs")
      expect(existsSync(join(root, "no-index-here"))).toBe(false)
    } finally {
      process.env["BATON_DATA_DIR"] = previous
    }
  })

  it("fail with the storage error when a file is where the data directory should be", async () => {
    const previous = process.env["BATON_DATA_DIR"]
    const file = join(root, "data-dir-is-a-file")
    const { writeFileSync } = await import("node:fs")
    writeFileSync(file, "not a directory")
    process.env["BATON_DATA_DIR"] = file
    try {
      for (const [tool, args] of [
        ["recall_status", {}],
        ["recall_search", { query: "anything" }],
        ["grep", { pattern: "x" }],
        ["recent_sessions", {}],
      ] as const) {
        const failed = await call(tool, args)
        expect(failed.isError, tool).toBe(true)
        expect(JSON.stringify(failed.content)).toContain(
          `${file} is not a directory (a file is in the way)`,
        )
      }
    } finally {
      process.env["BATON_DATA_DIR"] = previous
    }
  })

  it("refuse a relative BATON_DATA_DIR: the server's directory is not the hook's", async () => {
    const previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = "rel/dir"
    try {
      for (const [tool, args] of [
        ["recall_status", {}],
        ["recall_search", { query: "anything" }],
        ["grep", { pattern: "x" }],
        ["recent_sessions", {}],
        ["expand_around", { session_id: "s", turn_id: "t" }],
      ] as const) {
        const failed = await call(tool, args)
        expect(failed.isError, tool).toBe(true)
        const said = JSON.stringify(failed.content)
        expect(said, tool).toContain("RecallStorageError")
        expect(said, tool).toContain(
          "BATON_DATA_DIR is a relative path (rel/dir): give an absolute path",
        )
      }
    } finally {
      process.env["BATON_DATA_DIR"] = previous
    }
  })

  it("say the files that failed when every file so far failed to index", async () => {
    const previous = process.env["BATON_DATA_DIR"]
    const dataDir = join(root, "all-failed")
    await Effect.runPromise(
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        db.sqlite.exec(`insert into files (path, source, role, compression, size, mtime_ms, inode,
          head_hash, status, failure_count, last_error)
          values ('/h/a.jsonl', 'claude', 'session', 'none', 1, 0, 1, '', 'failed', 1, 'EIO')`)
      }).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
    )
    process.env["BATON_DATA_DIR"] = dataDir
    try {
      const search = z
        .object(recallSearchOutput)
        .parse(content(await call("recall_search", { query: "anything" })))
      expect(search).toMatchObject({ hits: [], index_empty: true })
      expect(search.note).toMatch(
        /: [1-9]\d* transcripts? found in .+, and 1 failed to index \(recall_status lists them/,
      )
    } finally {
      process.env["BATON_DATA_DIR"] = previous
    }
  })
})

describe("grep's answer size", () => {
  it("stops adding matches at GREP_OUTPUT_CHARS and says how to narrow", async () => {
    const previous = process.env["BATON_DATA_DIR"]
    const home = join(root, "many-matches")
    const id = "cccccccc-3333-4333-8333-000000000003"
    const lines = Array.from({ length: 600 }, (_, i) =>
      JSON.stringify({
        type: "user",
        sessionId: id,
        cwd: "/work/zoo",
        uuid: `cccccccc-0000-4000-8000-${String(i).padStart(12, "0")}`,
        timestamp: new Date(Date.parse("2026-03-01T00:00:00.000Z") + i * 1000).toISOString(),
        message: { role: "user", content: `zebra number ${i} walks past the gate` },
      }),
    )
    write(
      join(home, "claude", "projects", encodeClaudeProjectDir("/work/zoo"), `${id}.jsonl`),
      `${lines.join("\n")}\n`,
    )
    const dataDir = await indexHome(home)
    process.env["BATON_DATA_DIR"] = dataDir
    try {
      const result = await call("grep", { pattern: "zebra", limit: 500 })
      const grep = z.object(grepOutput).parse(content(result))
      expect(grep.hits.length).toBeGreaterThan(50)
      expect(grep.hits.length).toBeLessThan(500)
      expect(JSON.stringify(grep.hits).length).toBeLessThanOrEqual(GREP_OUTPUT_CHARS)
      expect(grep.truncated).toBe(true)
      // 600 match: the limit stopped the scan at 500, and the answer's size cut those.
      expect(grep.note).toBe(
        `showing the first ${grep.hits.length} of the first 500 matches (more matched past the limit of 500) to keep the answer under 60 k characters: narrow the pattern, session_id, scope_cwd or dates`,
      )
      // 400 match, all found under the limit: the count is the real one.
      const all = z
        .object(grepOutput)
        .parse(
          content(
            await call("grep", { pattern: "zebra number [1-4]\\d\\d ", regex: true, limit: 500 }),
          ),
        )
      expect(all.hits.length).toBeLessThan(400)
      expect(all.note).toBe(
        `showing the first ${all.hits.length} of 400 matches to keep the answer under 60 k characters: narrow the pattern, session_id, scope_cwd or dates`,
      )
      const few = z
        .object(grepOutput)
        .parse(content(await call("grep", { pattern: "zebra", limit: 20 })))
      expect(few).toMatchObject({ truncated: true, note: null })
      expect(few.hits).toHaveLength(20)
    } finally {
      process.env["BATON_DATA_DIR"] = previous
    }
  }, 60_000)
})

/** expand_around's or step's answer, as the tests read it. */
interface WindowAnswer {
  at_start: boolean
  at_end: boolean
  truncated: boolean
  note: string | null
  turns: Array<{
    turn_id: string
    is_anchor: boolean
    text: string
    records: Array<unknown>
    omitted_records: number
  }>
}
const windowOf = (result: Call): WindowAnswer => {
  expect(result.isError, JSON.stringify(result.content).slice(0, 300)).toBeFalsy()
  return result.structuredContent as WindowAnswer
}

describe("recent_sessions and grep on a fresh index", () => {
  let previous: string | undefined
  let claudePath = ""

  beforeAll(async () => {
    const home = join(root, "fresh")
    claudePath = join(
      home,
      "claude",
      "projects",
      encodeClaudeProjectDir("/work/garden"),
      `${CLAUDE_ID}.jsonl`,
    )
    write(claudePath, claudeSession())
    const { dir, name } = rolloutName(Date.parse("2026-03-12T08:00:00.000Z"), CODEX_ID)
    // A `codex exec` run: headless.
    write(
      join(home, "codex", "sessions", dir, name),
      codexRollout()
        .replace('"originator":"codex-tui"', '"originator":"codex_exec"')
        .replace('"source":"cli"', '"source":"exec"'),
    )
    const dataDir = await indexHome(home)
    previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = dataDir
  }, 60_000)

  afterAll(() => {
    process.env["BATON_DATA_DIR"] = previous
  })

  it("grep hits say whether their session is headless or a subagent", async () => {
    const grep = async (pattern: string) =>
      z.object(grepOutput).parse(content(await call("grep", { pattern }))).hits
    expect(await grep("c:\\PAY\\hooks")).toMatchObject([
      { session_id: CODEX_ID, headless: true, subagent: false },
    ])
    expect(await grep("migrations=12")).toMatchObject([
      { session_id: CLAUDE_ID, headless: false, subagent: false },
    ])
  })

  it("recent_sessions checks each transcript against the disk", async () => {
    const transcript = async () =>
      z
        .object(recentSessionsOutput)
        .parse(content(await call("recent_sessions", {})))
        .sessions.find((s) => s.session_id === CLAUDE_ID)?.transcript
    expect(await transcript()).toBe("indexed")
    appendFileSync(claudePath, "\n")
    expect(await transcript()).toBe("changed")
    rmSync(claudePath)
    expect(await transcript()).toBe("missing")
  })
})

describe("recall_search on an index embedded in another environment", () => {
  let previous: string | undefined
  let dataDir = ""
  const execute = (sql: string) =>
    Effect.runPromise(
      Effect.gen(function* () {
        ;(yield* RecallDatabase).sqlite.exec(sql)
      }).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
    )

  beforeAll(async () => {
    const home = join(root, "voyage-elsewhere")
    write(
      join(
        home,
        "claude",
        "projects",
        encodeClaudeProjectDir("/work/garden"),
        `${CLAUDE_ID}.jsonl`,
      ),
      claudeSession(),
    )
    // Indexed by words here; the vectors were made by Voyage in another environment (only the
    // active space matters to the note: this server has no VOYAGE_API_KEY).
    dataDir = await indexHome(home)
    previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = dataDir
    await execute(
      "insert or replace into meta (key, value) values ('embedder_fingerprint', 'voyage/voyage-4-large/1024')",
    )
  }, 60_000)

  afterAll(() => {
    process.env["BATON_DATA_DIR"] = previous
  })

  const degraded = async () =>
    z
      .object(recallSearchOutput)
      .parse(content(await call("recall_search", { query: "garden database" }))).degraded

  it("names the settings that search those vectors, and what an index run here would use", async () => {
    expect(await degraded()).toBe(
      "lexical only: the index's vectors were made by voyage/voyage-4-large: set " +
        "BATON_EMBEDDER=voyage (and VOYAGE_API_KEY) to search them by meaning, or run " +
        "'baton recall index' to embed with use-lite instead (re-embeds the whole history)",
    )
  })

  it("does not advise an index run while one is in progress", async () => {
    await execute(
      `insert or replace into index_lock (id, pid, run_token, acquired_at, lease_until)
       values (1, ${process.pid}, 'test', 0, ${Date.now() + 600_000})`,
    )
    try {
      const note = await degraded()
      expect(note).toContain("an index run is in progress")
      expect(note).not.toContain("run 'baton recall index'")
    } finally {
      await execute("delete from index_lock")
    }
  })
})

describe("expand_around and step's answer size", () => {
  const id = "dddddddd-4444-4444-8444-000000000004"
  let previous: string | undefined
  /** Every turn id of the session, in order (22 turns: 11 prompts and their answers). */
  let ids: Array<string> = []

  beforeAll(async () => {
    const home = join(root, "heavy")
    write(
      join(home, "claude", "projects", encodeClaudeProjectDir("/work/heavy"), `${id}.jsonl`),
      heavySession(id, 11),
    )
    const dataDir = await indexHome(home)
    const turns = (turnId?: string) =>
      Effect.runPromise(
        step({
          sessionId: id,
          ...(turnId === undefined ? {} : { turnId }),
          direction: "next",
          count: 20,
        }).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
      ).then((w) => w.turns.map((t) => t.turnId))
    const head = await turns()
    ids = [...head, ...(await turns(head.at(-1)))]
    previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = dataDir
  }, 60_000)

  afterAll(() => {
    process.env["BATON_DATA_DIR"] = previous
  })

  /** The turns shown are consecutive turns of the session, in order. */
  const consecutive = (w: WindowAnswer) => {
    const first = ids.indexOf(w.turns[0]!.turn_id)
    expect(first).toBeGreaterThanOrEqual(0)
    expect(w.turns.map((t) => t.turn_id)).toEqual(ids.slice(first, first + w.turns.length))
    return first
  }

  it("expand_around keeps the anchor and its nearest turns under WINDOW_OUTPUT_CHARS, and says where the rest is", async () => {
    expect(ids).toHaveLength(22)
    const anchor = ids[10]!
    for (const full of [false, true]) {
      const result = await call("expand_around", {
        session_id: id,
        turn_id: anchor,
        before: 10,
        after: 10,
        full,
      })
      const w = windowOf(result)
      expect(JSON.stringify(w.turns).length, `full ${full}`).toBeLessThanOrEqual(
        WINDOW_OUTPUT_CHARS,
      )
      expect(JSON.stringify(result).length, `full ${full}`).toBeLessThan(3 * WINDOW_OUTPUT_CHARS)
      expect(w.turns.filter((t) => t.is_anchor).map((t) => t.turn_id)).toEqual([anchor])
      const first = consecutive(w)
      const last = first + w.turns.length - 1
      // Farthest turns go first: what is left is centred on the anchor (within one turn).
      expect(Math.abs(10 - first - (last - 10)), `full ${full}`).toBeLessThanOrEqual(1)
      expect(w.turns.length).toBeLessThan(21)
      expect(w).toMatchObject({ truncated: true, at_start: false, at_end: false })
      expect(w.note).toContain(
        `showing ${w.turns.length} of 21 turns to keep the answer under 60 k characters: for the ${first} earlier turns, step prev from turn_id ${ids[first]}; for the ${20 - last} later turns, step next from turn_id ${ids[last]}`,
      )
      // The note's way on works: stepping from the last turn shown gives the first one left out.
      const next = windowOf(
        await call("step", { session_id: id, turn_id: ids[last], direction: "next" }),
      )
      expect(next.turns.map((t) => t.turn_id)).toEqual([ids[last + 1]])
    }
  })

  it("cuts the records of an anchor that alone is over, keeping its words and address", async () => {
    const answer = ids[1]!
    const result = await call("expand_around", {
      session_id: id,
      turn_id: answer,
      before: 0,
      after: 0,
      full: true,
    })
    const w = windowOf(result)
    expect(JSON.stringify(w.turns).length).toBeLessThanOrEqual(WINDOW_OUTPUT_CHARS)
    expect(w.turns).toHaveLength(1)
    const [turn] = w.turns
    expect(turn).toMatchObject({ turn_id: answer, is_anchor: true })
    expect(turn!.text).toMatch(/^heavy answer 0 /)
    expect(turn!.records.length).toBeGreaterThan(0)
    // 20 tool calls and their output, as the per-turn limit (60 with full) would show them all.
    expect(turn!.records.length + turn!.omitted_records).toBe(40)
    expect(w.truncated).toBe(true)
    expect(w.note).toMatch(
      new RegExp(
        `^${turn!.omitted_records} records of the turns shown were left out to keep the answer under 60 k characters \\(see omitted_records\\)`,
      ),
    )
  })

  it("step keeps the turns nearest the cursor: the first ones going next, the last going prev", async () => {
    // The 10 turns asked for end the session: at_end only if the last of them is shown.
    const forward = windowOf(
      await call("step", {
        session_id: id,
        turn_id: ids[11],
        direction: "next",
        count: 10,
        full: true,
      }),
    )
    expect(JSON.stringify(forward.turns).length).toBeLessThanOrEqual(WINDOW_OUTPUT_CHARS)
    expect(consecutive(forward)).toBe(12)
    expect(forward.turns.length).toBeLessThan(10)
    const shownLast = forward.turns.at(-1)!.turn_id
    expect(forward).toMatchObject({ truncated: true, at_end: false })
    expect(forward.note).toContain(`later turns, step next from turn_id ${shownLast}`)
    expect(forward.note).not.toContain("step prev")

    // The 10 turns before ids[10] start the session: at_start only if the first is shown.
    const back = windowOf(
      await call("step", {
        session_id: id,
        turn_id: ids[10],
        direction: "prev",
        count: 10,
        full: true,
      }),
    )
    expect(JSON.stringify(back.turns).length).toBeLessThanOrEqual(WINDOW_OUTPUT_CHARS)
    expect(back.turns.at(-1)!.turn_id).toBe(ids[9])
    expect(consecutive(back)).toBeGreaterThan(0)
    expect(back).toMatchObject({ truncated: true, at_start: false, at_end: false })
    expect(back.note).toContain(`earlier turns, step prev from turn_id ${back.turns[0]!.turn_id}`)
    expect(back.note).toContain("or leave out full")
  })

  it("a window under the budget is whole, with no note", async () => {
    const w = windowOf(
      await call("step", { session_id: id, turn_id: ids[0], direction: "next", count: 2 }),
    )
    expect(w.turns.map((t) => t.turn_id)).toEqual(ids.slice(1, 3))
    expect(w).toMatchObject({ truncated: false, note: null })
  })
})

describe("recall tools when the data directory cannot be created", () => {
  // Root writes through permission bits, but not into /sys (mkdir there fails even for root,
  // while access() allows it); anyone else is refused a directory made 0500.
  const asRoot = process.getuid?.() === 0
  it.skipIf(asRoot && process.platform !== "linux")(
    "say so, naming the directory and the fix, instead of promising the hook",
    async () => {
      const locked = join(root, "locked-data-parent")
      mkdirSync(locked, { mode: 0o500, recursive: true })
      const dataDir = asRoot ? "/sys/baton" : join(locked, "baton")
      const previous = process.env["BATON_DATA_DIR"]
      process.env["BATON_DATA_DIR"] = dataDir
      try {
        const says = `but the recall index directory ${dataDir} does not exist and cannot be created`
        const status = z.object(recallStatusOutput).parse(content(await call("recall_status", {})))
        expect(status.empty).toBe(true)
        expect(status.data_dir_problem).toContain(
          `the recall index directory ${dataDir} does not exist and cannot be created: `,
        )
        expect(status.data_dir_problem).toContain("set BATON_DATA_DIR to a directory you can write")
        expect(status.note).toContain(says)
        const search = z
          .object(recallSearchOutput)
          .parse(content(await call("recall_search", { query: "anything" })))
        expect(search.note).toMatch(/^Nothing indexed: [1-9]\d* transcripts? found in /)
        expect(search.note).toContain(says)
        expect(search.note).not.toContain("does it in the background")
        const recent = z
          .object(recentSessionsOutput)
          .parse(content(await call("recent_sessions", {})))
        expect(recent.note).toContain(says)
      } finally {
        process.env["BATON_DATA_DIR"] = previous
      }
    },
  )
})

describe("recall tools on an index file that holds no session", () => {
  /** Runs `check` with BATON_DATA_DIR at `dataDir`. */
  const withDataDir = async (dataDir: string, check: () => Promise<void>) => {
    const previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = dataDir
    try {
      await check()
    } finally {
      process.env["BATON_DATA_DIR"] = previous
    }
  }

  /** grep, expand_around and step answer with `says`, as recall_search and recent_sessions do. */
  const sayNothingIndexed = async (says: RegExp) => {
    const search = z
      .object(recallSearchOutput)
      .parse(content(await call("recall_search", { query: "garden" })))
    expect(search.note).toMatch(says)
    const recent = z.object(recentSessionsOutput).parse(content(await call("recent_sessions", {})))
    expect(recent.note).toMatch(says)
    for (const args of [{ pattern: "garden" }, { pattern: "garden", session_id: CLAUDE_ID }]) {
      const grep = z.object(grepOutput).parse(content(await call("grep", args)))
      expect(grep.hits, JSON.stringify(args)).toEqual([])
      expect(grep.note, JSON.stringify(args)).toMatch(says)
    }
    for (const [tool, args] of [
      ["expand_around", { session_id: CLAUDE_ID, turn_id: "t" }],
      ["step", { session_id: CLAUDE_ID, direction: "next" }],
    ] as const) {
      const failed = await call(tool, args)
      expect(failed.isError, tool).toBe(true)
      expect(JSON.stringify(failed.content), tool).toMatch(says)
    }
  }

  it("says a first index run has transcripts to index when the file has no session yet", async () => {
    const dataDir = join(root, "created-not-filled")
    // The index file as an index run creates it, before it writes the first session.
    await Effect.runPromise(Effect.void.pipe(Effect.provide(recallDatabaseLayer({ dataDir }))))
    await withDataDir(dataDir, () =>
      sayNothingIndexed(
        /Nothing indexed yet: [1-9]\d* transcripts? found in .+, none indexed\. Run `baton recall index`/,
      ),
    )
  })

  it("says what search says after forget --all: the transcripts wait for an index run", async () => {
    const dataDir = join(root, "forgotten")
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* indexTranscripts({ environment: { env: process.env, homeDir: root } })
        yield* forgetSessions({ _tag: "All" })
      }).pipe(
        Effect.provide(
          Layer.mergeAll(
            recallDatabaseLayer({ dataDir }),
            nodeTranscriptFileSystemLayer,
            nodeIndexerProcessLayer,
          ),
        ),
      ),
    )
    await withDataDir(dataDir, () =>
      sayNothingIndexed(
        /Nothing indexed yet: 2 transcripts found in .+, none indexed\. Run `baton recall index`/,
      ),
    )
  })

  it("a search that finds nothing in a filled index adds no such note", async () => {
    const grep = z.object(grepOutput).parse(content(await call("grep", { pattern: "zeppelin" })))
    expect(grep).toMatchObject({ hits: [], note: null })
    const missing = await call("step", { session_id: "no-such-session", direction: "next" })
    expect(JSON.stringify(missing.content)).toContain("no session no-such-session in the index")
  })
})

describe("recall tools' declared input", () => {
  it("lists the limits the tools enforce: lengths, non-empty strings, absolute scope_cwd", async () => {
    const { tools } = await client.listTools()
    const property = (tool: string, name: string) => {
      const schema = (tools.find((t) => t.name === tool)?.inputSchema.properties ?? {})[name] as {
        anyOf?: Array<Record<string, unknown>>
        description?: string
      }
      return { ...schema, ...schema.anyOf?.[0] }
    }
    expect(property("recall_search", "query")).toMatchObject({ minLength: 1, maxLength: 2000 })
    expect(property("grep", "pattern")).toMatchObject({
      minLength: 1,
      maxLength: 1000,
      description: expect.stringContaining("a regex at most 300"),
    })
    for (const tool of ["recall_search", "grep", "recent_sessions"]) {
      for (const name of ["timezone", "on_date", "start_date", "end_date", "scope_cwd"])
        expect(property(tool, name), `${tool} ${name}`).toMatchObject({ minLength: 1 })
      expect(property(tool, "scope_cwd").description).toContain("absolute path")
      expect(property(tool, "exclude_headless"), tool).toMatchObject({ type: "boolean" })
    }
    expect(property("expand_around", "timezone")).toMatchObject({ minLength: 1 })
    expect(property("grep", "session_id")).toMatchObject({ minLength: 1 })
  })

  it("refuses a query or pattern over its limit at the schema, naming the limit", async () => {
    const long = await call("recall_search", { query: "q".repeat(2001) })
    expect(long.isError).toBe(true)
    expect(JSON.stringify(long.content)).toContain("the query may be at most 2,000 characters")
    const longPattern = await call("grep", { pattern: "p".repeat(1001) })
    expect(longPattern.isError).toBe(true)
    expect(JSON.stringify(longPattern.content)).toContain(
      "the pattern may be at most 1,000 characters",
    )
    const atLimit = await call("grep", { pattern: "p".repeat(1000) })
    expect(atLimit.isError).toBeFalsy()
  })

  it("reads a leading ~ in scope_cwd as the home directory", async () => {
    const previous = process.env["HOME"]
    const home = join(root, "tilde-home")
    mkdirSync(join(home, "garden"), { recursive: true })
    process.env["HOME"] = home
    try {
      const there = z
        .object(recallSearchOutput)
        .parse(content(await call("recall_search", { query: "database", scope_cwd: "~/garden" })))
      expect(there.applied.scope_root).toBe(join(home, "garden"))
      expect(there.scope_missing).toBe(false)
      const gone = z
        .object(grepOutput)
        .parse(content(await call("grep", { pattern: "retry", scope_cwd: "~/nowhere" })))
      expect(gone.scope_missing).toBe(true)
      expect(gone.note).toContain(
        `scope_cwd ~/nowhere (${join(home, "nowhere")}) is not a directory on this machine`,
      )
    } finally {
      process.env["HOME"] = previous
    }
  })

  it("echoes at most ECHO_CHARS characters of an argument in an error", async () => {
    const huge = "x".repeat(100_000)
    const expand = await call("expand_around", { session_id: huge, turn_id: "t" })
    expect(expand.isError).toBe(true)
    const said = JSON.stringify(expand.content)
    expect(said.length).toBeLessThan(2 * ECHO_CHARS + 500)
    expect(said).toContain(`"sessionId\\":\\"${"x".repeat(ECHO_CHARS)}…\\"`)
    const previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = join(root, "no-index-for-echo")
    try {
      const none = await call("step", { session_id: huge, direction: "next" })
      expect(none.isError).toBe(true)
      expect(JSON.stringify(none.content)).toContain("Nothing indexed yet")
      expect(JSON.stringify(none.content).length).toBeLessThan(2000)
    } finally {
      process.env["BATON_DATA_DIR"] = previous
    }
  })
})

describe("headless sessions", () => {
  const interactive = "eeeeeeee-5555-4555-8555-000000000005"
  const machine = "019c0000-eeee-7eee-8eee-000000000006"
  let previous: string | undefined

  beforeAll(async () => {
    const home = join(root, "headless")
    write(
      join(
        home,
        "claude",
        "projects",
        encodeClaudeProjectDir("/work/farm"),
        `${interactive}.jsonl`,
      ),
      `${JSON.stringify({
        type: "user",
        sessionId: interactive,
        cwd: "/work/farm",
        uuid: "eeeeeeee-0000-4000-8000-000000000001",
        timestamp: "2026-05-01T10:00:00.000Z",
        message: { role: "user", content: "feed the ferret at noon" },
      })}\n`,
    )
    const at = Date.parse("2026-05-02T10:00:00.000Z")
    const { dir, name } = rolloutName(at, machine)
    write(
      join(home, "codex", "sessions", dir, name),
      `${[
        {
          timestamp: "2026-05-02T10:00:00.000Z",
          type: "session_meta",
          payload: {
            id: machine,
            timestamp: "2026-05-02T10:00:00.000Z",
            cwd: "/work/farm",
            originator: "codex_exec",
            cli_version: "0.150.0",
            source: "exec",
          },
        },
        {
          timestamp: "2026-05-02T10:00:01.000Z",
          type: "event_msg",
          payload: { type: "user_message", message: "check the ferret feeder logs" },
        },
      ]
        .map((line) => JSON.stringify(line))
        .join("\n")}\n`,
    )
    const dataDir = await indexHome(home)
    previous = process.env["BATON_DATA_DIR"]
    process.env["BATON_DATA_DIR"] = dataDir
  }, 60_000)

  afterAll(() => {
    process.env["BATON_DATA_DIR"] = previous
  })

  it("exclude_headless leaves machine-driven runs out of search, grep and recent sessions", async () => {
    const search = async (extra: object) =>
      z
        .object(recallSearchOutput)
        .parse(content(await call("recall_search", { query: "ferret", ...extra })))
        .hits.map((h) => [h.session_id, h.headless, h.subagent])
    expect(await search({})).toEqual(
      expect.arrayContaining([
        [interactive, false, false],
        [machine, true, false],
      ]),
    )
    expect(new Set((await search({ exclude_headless: true })).map(([s]) => s))).toEqual(
      new Set([interactive]),
    )
    const grep = async (extra: object) =>
      z
        .object(grepOutput)
        .parse(content(await call("grep", { pattern: "ferret", ...extra })))
        .hits.map((h) => h.session_id)
    expect(new Set(await grep({}))).toEqual(new Set([interactive, machine]))
    expect(new Set(await grep({ exclude_headless: true }))).toEqual(new Set([interactive]))
    const recent = async (extra: Record<string, unknown>) =>
      z
        .object(recentSessionsOutput)
        .parse(content(await call("recent_sessions", extra)))
        .sessions.map((s) => [s.session_id, s.headless, s.subagent])
    expect(await recent({})).toEqual([
      [machine, true, false],
      [interactive, false, false],
    ])
    expect(await recent({ exclude_headless: true })).toEqual([[interactive, false, false]])
  })
})

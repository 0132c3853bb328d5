// The six recall tools through the MCP SDK client over the in-memory transport, against a real
// temp index built from a small synthetic history (Claude Code + Codex) with the default
// embedded embedder. Every structuredContent is checked by the client against the tool's
// output schema; the tests also parse it with the zod shapes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
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
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  RecallDatabase,
  recallDatabaseLayer,
} from "@baton/recall-index"
import { encodeClaudeProjectDir, rolloutName } from "@baton/recall-index/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { createBatonServer } from "./baton-server.js"
import {
  GREP_OUTPUT_CHARS,
  grepOutput,
  recallSearchOutput,
  recallStatusOutput,
  recallTools,
  recentSessionsOutput,
} from "./recall-tools.js"

const CLAUDE_ID = "aaaaaaaa-1111-4111-8111-000000000001"
const CODEX_ID = "019c0000-cccc-7ccc-8ccc-000000000003"
let root = ""
let client: Client
const closers: Array<() => Promise<void>> = []

const claudeSession = (): string => {
  let n = 0
  let clock = Date.parse("2026-03-10T10:00:00.000Z")
  const line = (type: string, message: unknown) => {
    n += 1
    clock += 5000
    return JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      cwd: "/work/garden",
      sessionId: CLAUDE_ID,
      version: "2.1.90",
      entrypoint: "cli",
      type,
      uuid: `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, "0")}`,
      timestamp: new Date(clock).toISOString(),
      message,
    })
  }
  const assistant = (content: unknown[]) => ({
    id: `m${n}`,
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
    expect(nonsense["note"]).toMatch(/^no indexed text in scope holds a word of the query/)
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
    const dataDir = join(home, "data")
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
    process.env["BATON_DATA_DIR"] = dataDir
    try {
      const result = await call("grep", { pattern: "zebra", limit: 500 })
      const grep = z.object(grepOutput).parse(content(result))
      expect(grep.hits.length).toBeGreaterThan(50)
      expect(grep.hits.length).toBeLessThan(500)
      expect(JSON.stringify(grep.hits).length).toBeLessThanOrEqual(GREP_OUTPUT_CHARS)
      expect(grep.truncated).toBe(true)
      expect(grep.note).toBe(
        `showing the first ${grep.hits.length} of 500 matches to keep the answer under 60 k characters: narrow the pattern, session_id, scope_cwd or dates`,
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

// `baton recall …` through the built dist/bin.js in a private HOME: the fresh-machine path
// ("nothing indexed yet", exit 0), index → search → expand → step → grep → recent → status →
// prune / forget, usage errors (exit 2) and domain errors (exit 1, one line), the progress bar,
// --background (returns at once, a detached child indexes under the lock) and --watch (picks up
// a new transcript, stops cleanly on SIGINT). Needs `npx tsc -b packages/cli`.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  deferLexicalIndex,
  dropLookupIndexes,
  RecallDatabase,
  recallDatabaseLayer,
} from "@baton/recall-index"
import { generateBulkCorpus } from "@baton/recall-index/testing"
import { runBaton, startBaton } from "./run-baton.js"

const CLAUDE_ID = "aaaaaaaa-1111-4111-8111-000000000001"
const CODEX_ID = "019c0000-cccc-7ccc-8ccc-000000000003"
let root = ""

const write = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

const claudeLines = (
  sessionId: string,
  cwd: string,
  at: string,
  exchanges: ReadonlyArray<[string, string, string?]>,
): string => {
  let n = 0
  let clock = Date.parse(at)
  const line = (type: string, message: unknown) => {
    n += 1
    clock += 5000
    return JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      cwd,
      sessionId,
      version: "2.1.90",
      entrypoint: "cli",
      type,
      uuid: `${sessionId.slice(0, 8)}-0000-4000-8000-${String(n).padStart(12, "0")}`,
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
  const lines: string[] = []
  for (const [user, answer, tool] of exchanges) {
    lines.push(line("user", { role: "user", content: user }))
    if (tool !== undefined) {
      lines.push(
        line(
          "assistant",
          assistant([{ type: "tool_use", id: `t${n}`, name: "Bash", input: { command: "ls" } }]),
        ),
      )
      lines.push(
        line("user", {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `t${n - 1}`, content: tool }],
        }),
      )
    }
    lines.push(line("assistant", assistant([{ type: "text", text: answer }])))
  }
  return `${lines.join("\n")}\n`
}

const codexLines = (): string => {
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
    line("event_msg", {
      type: "agent_message",
      message: "Use exponential backoff with jitter, 3 attempts.",
    }),
  ].join("\n")}\n`
}

const homeWithHistory = (name: string): { home: string; env: Record<string, string> } => {
  const home = join(root, name)
  const project = join(home, ".claude", "projects", "-work-garden")
  write(
    join(project, `${CLAUDE_ID}.jsonl`),
    claudeLines(CLAUDE_ID, "/work/garden", "2026-03-10T10:00:00.000Z", [
      [
        "Which database did we pick for the garden planner?",
        "We picked SQLite with WAL mode for the garden planner.",
      ],
      [
        "Count the migration files.",
        "There are 12 migration files.",
        "migrations=12 in C:\\garden\\db",
      ],
    ]),
  )
  write(
    join(
      home,
      ".codex",
      "sessions",
      "2026",
      "03",
      "12",
      `rollout-2026-03-12T08-00-00-${CODEX_ID}.jsonl`,
    ),
    codexLines(),
  )
  return { home, env: { PATH: process.env["PATH"] ?? "", HOME: home, TZ: "UTC" } }
}

// JSON output under test stays untyped so assertions can walk it freely.
// eslint-disable-next-line @typescript-eslint/no-unsafe-return
const json = (stdout: string) => JSON.parse(stdout)

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "baton-recall-cli-"))
})
afterAll(() => {
  rmSync(root, { recursive: true, force: true })
})

describe("baton recall on a fresh machine", () => {
  it(
    "says nothing is indexed yet, where it looked, and exits 0 — without creating the index for reads",
    { timeout: 60_000 },
    async () => {
      const home = join(root, "fresh")
      mkdirSync(home)
      const env = { PATH: process.env["PATH"] ?? "", HOME: home }
      const search = await runBaton(["recall", "search", "anything"], { env })
      expect(search.code).toBe(0)
      expect(search.stdout).toContain("Nothing indexed yet")
      expect(search.stdout).toContain(`${join(home, ".codex", "sessions")} (missing)`)
      expect(existsSync(join(home, ".local"))).toBe(false)
      // Bad input is refused as it is with an index (exit 2), not answered "nothing indexed".
      for (const args of [
        ["search", ""],
        ["search", "x", "--date", "notadate"],
        ["grep", "(", "--regex"],
        ["recent", "--start-date", "2026-13-01"],
      ]) {
        const bad = await runBaton(["recall", ...args, "--json"], { env })
        expect([bad.code, json(bad.stdout)], args.join(" ")).toMatchObject([
          2,
          { ok: false, error: { _tag: "RecallQueryError" } },
        ])
      }

      const index = await runBaton(["recall", "index"], { env })
      expect(index.code, index.stderr).toBe(0)
      expect(index.stdout).toContain(
        "Nothing indexed yet: no Claude Code or Codex transcripts were found.",
      )
      expect(index.stdout).toContain(`${join(home, ".claude", "projects")} (missing)`)
      const status = await runBaton(["recall", "status", "--json"], { env })
      expect(json(status.stdout)).toMatchObject({ ok: true, empty: true, sessions: 0 })
      const indexJson = await runBaton(["recall", "index", "--json"], { env })
      expect(json(indexJson.stdout)).toMatchObject({
        ok: true,
        empty: true,
        index: { discovered: 0 },
      })
      // The README's main job ends with this search, on the empty index the run just made. It
      // starts worker threads and stops them as it ends; stopping one still starting up used
      // to leave the process's last await unsettled (exit code 13) in about one run of four.
      for (let run = 0; run < 8; run++) {
        const again = await runBaton(["recall", "search", "what did we decide about retries"], {
          env,
        })
        expect(again.code, `run ${run}: ${again.stderr}`).toBe(0)
        expect(again.stdout).toContain("Nothing indexed yet")
        expect(again.stdout).toContain(`${join(home, ".claude", "projects")} (missing)`)
      }
    },
  )

  it(
    "says why the index is empty: transcripts waiting, none indexed, or an indexer running",
    { timeout: 60_000 },
    async () => {
      const { env } = homeWithHistory("waiting")
      const before = await runBaton(["recall", "search", "garden"], { env })
      expect(before.code, before.stderr).toBe(0)
      expect(before.stdout).toMatch(
        /^Nothing indexed yet \(no index at .+\): 2 transcripts found\. Run 'baton recall index' first\./,
      )
      const beforeJson = json((await runBaton(["recall", "recent", "--json"], { env })).stdout)
      expect(beforeJson).toMatchObject({ empty: true, indexed: false, transcripts: 2 })

      // An index made while the history lived elsewhere: it exists and holds nothing.
      const elsewhere = {
        ...env,
        CLAUDE_CONFIG_DIR: join(root, "none"),
        CODEX_HOME: join(root, "none"),
      }
      expect((await runBaton(["recall", "index"], { env: elsewhere })).code).toBe(0)
      for (const command of [
        ["search", "garden"],
        ["recent"],
        ["status"],
        ["grep", "garden"],
        ["recent", "--source", "codex"],
      ]) {
        const run = await runBaton(["recall", ...command], { env })
        expect(run.code, run.stderr).toBe(0)
        expect(run.stdout, command.join(" ")).toMatch(
          /^Nothing indexed yet: 2 transcripts found, none indexed\. Run 'baton recall index'\./,
        )
      }
      const searchJson = json(
        (await runBaton(["recall", "search", "garden", "--json"], { env })).stdout,
      )
      expect(searchJson).toMatchObject({ empty: true, transcripts: 2, hits: [] })
      // grep and recent carry search's empty-index fields in --json.
      const grepJson = json(
        (await runBaton(["recall", "grep", "garden", "--json"], { env })).stdout,
      )
      expect(grepJson).toMatchObject({
        ok: true,
        indexEmpty: true,
        empty: true,
        transcripts: 2,
        hits: [],
      })
      const recentJson = json((await runBaton(["recall", "recent", "--json"], { env })).stdout)
      expect(recentJson).toMatchObject({
        ok: true,
        indexEmpty: true,
        empty: true,
        transcripts: 2,
        sessions: [],
      })

      // An indexer holds the lock (its lease runs for another minute).
      const dataDir = join(env["HOME"]!, ".local", "share", "baton")
      await Effect.runPromise(
        Effect.gen(function* () {
          const db = yield* RecallDatabase
          db.sqlite
            .prepare(
              "insert into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, ?, 't', ?, ?)",
            )
            .run(process.pid, Date.now(), Date.now() + 60_000)
        }).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
      )
      const status = await runBaton(["recall", "status"], { env })
      expect(status.stdout).toMatch(
        new RegExp(
          `^Nothing indexed yet: an index run \\(pid ${process.pid}, since .+\\) is writing`,
        ),
      )
      const statusJson = json((await runBaton(["recall", "status", "--json"], { env })).stdout)
      expect(statusJson).toMatchObject({
        empty: true,
        transcripts: 2,
        indexing: { pid: process.pid },
      })
    },
  )

  it("expand, step and forget of a named session or project exit 1 with the note", async () => {
    const home = join(root, "fresh-lookups")
    mkdirSync(home)
    const env = { PATH: process.env["PATH"] ?? "", HOME: home }
    const looked = `${join(home, ".claude", "projects")} (missing)`
    for (const [command, error] of [
      [["expand", "s-1", "t-1"], "no session s-1 to expand: nothing is indexed yet"],
      [["step", "s-1", "next"], "no session s-1 to step through: nothing is indexed yet"],
      [
        ["forget", "--session", "s-1"],
        "no session s-1 in the index: nothing is indexed yet; nothing was forgotten",
      ],
    ] as const) {
      const run = await runBaton(["recall", ...command], { env })
      expect(run.code, command.join(" ")).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr).toMatch(
        new RegExp(
          `^baton: RecallNotFoundError: ${error.replace(/[()]/g, "\\$&")}\nNothing indexed yet \\(no index at `,
        ),
      )
      expect(run.stderr).toContain(looked)
      const asJson = await runBaton(["recall", ...command, "--json"], { env })
      expect(asJson.code).toBe(1)
      expect(json(asJson.stdout)).toMatchObject({
        ok: false,
        indexed: false,
        empty: true,
        transcripts: 0,
        error: { _tag: "RecallNotFoundError", message: error, sessionId: "s-1" },
      })
    }
    const project = await runBaton(["recall", "forget", "--project", home], { env })
    expect(project.code).toBe(1)
    expect(project.stderr).toContain(
      `baton: RecallNotFoundError: no sessions of the repository ${realpathSync(home)} in the index: nothing is indexed yet; nothing was forgotten\n`,
    )
    // Everything else still says "nothing indexed yet" and exits 0.
    expect((await runBaton(["recall", "forget", "--all", "--yes"], { env })).code).toBe(0)
    expect(existsSync(join(home, ".local"))).toBe(false)
  }, 60_000)

  it("has help for every recall command", { timeout: 60_000 }, async () => {
    for (const command of [
      "index",
      "search",
      "recent",
      "grep",
      "expand",
      "step",
      "status",
      "prune",
      "forget",
      "vacuum",
    ]) {
      const run = await runBaton(["recall", command, "--help"])
      expect(run.code, command).toBe(0)
      expect(run.stdout).toContain(`Usage\n  baton recall ${command}`)
    }
    const group = await runBaton(["recall", "--help"])
    expect(group.stdout).toContain("Quick start")
  })
})

describe("baton recall with history", () => {
  let env: Record<string, string> = {}
  let home = ""

  beforeAll(async () => {
    ;({ env, home } = homeWithHistory("history"))
    const index = await runBaton(["recall", "index", "--json"], { env })
    expect(index.code, index.stderr + index.stdout).toBe(0)
    const report = json(index.stdout)
    expect(report.index).toMatchObject({ discovered: 2, indexedNew: 2, failed: [] })
    expect(report.embedding.embedded).toBeGreaterThan(0)
    expect(report.embedding.remaining).toBe(0)
    // The default (`auto`) embeds a history this small with USE-lite.
    expect(report.embedding.fingerprint).toMatch(/^embedded\/use-lite\//)
  }, 120_000)

  it("answers by words when the embedding service does not answer, and exits at once", async () => {
    // Accepts connections and never answers (a hung provider).
    const hung = createServer(() => undefined)
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve))
    const { port } = hung.address() as AddressInfo
    try {
      const started = Date.now()
      const search = await runBaton(["recall", "search", "database garden planner retry policy"], {
        env: {
          ...env,
          BATON_EMBEDDER: "voyage",
          VOYAGE_API_KEY: "test-key",
          BATON_VOYAGE_BASE_URL: `http://127.0.0.1:${port}/v1`,
        },
      })
      const took = Date.now() - started
      expect(search.code, search.stderr).toBe(0)
      expect(search.stdout).toContain("Which database did we pick for the garden planner?")
      expect(search.stdout).toContain("not reranked: voyage did not rerank within 6000 ms")
      // The query's embedding and the rerank each get 6 s; then the process ends, though the
      // HTTP client's own 90 s request timer is still running.
      expect(took).toBeLessThan(30_000)
    } finally {
      hung.close()
      hung.closeAllConnections?.()
    }
  }, 60_000)

  it("says what degraded meaning search once, names the settings of the index's space, and fails --vector-only", async () => {
    let failing = false
    const endpoint = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        if (failing) {
          res.writeHead(500, { "content-type": "application/json" })
          res.end(JSON.stringify({ error: { message: "boom" } }))
          return
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string[] }
        const data = body.input.map((text, index) => ({
          index,
          embedding: Array.from({ length: 8 }, (_, i) => 1 + ((text.charCodeAt(i) || 0) % 7)),
        }))
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ data }))
      })
    })
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve))
    const { port } = endpoint.address() as AddressInfo
    const plain = homeWithHistory("endpoint-notes").env
    const withEndpoint = {
      ...plain,
      BATON_EMBEDDER: "openai",
      BATON_EMBEDDINGS_URL: `http://127.0.0.1:${port}`,
      BATON_EMBEDDINGS_MODEL: "m8",
    }
    try {
      expect((await runBaton(["recall", "index"], { env: withEndpoint })).code).toBe(0)
      // Another shell, without the endpoint's settings: what to set, and what indexing here
      // would use (the default picks USE-lite at this size, though search resolves to the
      // static table: the index holds no embedded vectors).
      const elsewhere = await runBaton(["recall", "search", "garden planner database"], {
        env: plain,
      })
      expect(elsewhere.code).toBe(0)
      expect(elsewhere.stdout).toContain(
        "Note: lexical only: the index's vectors were made by openai-compatible/m8: set " +
          "BATON_EMBEDDER=openai (with BATON_EMBEDDINGS_URL of its endpoint and " +
          "BATON_EMBEDDINGS_MODEL=m8) to search them by meaning, or run 'baton recall index' to " +
          "embed with use-lite instead (re-embeds the whole history).",
      )
      expect(elsewhere.stdout).not.toMatch(/in code|embeddingForSearch|Words only/)
      failing = true
      const degraded = await runBaton(["recall", "search", "garden planner database"], {
        env: withEndpoint,
      })
      expect(degraded.code).toBe(0)
      expect(degraded.stdout).toContain("Which database did we pick for the garden planner?")
      expect(degraded.stdout).toMatch(/Note: lexical only: the embedder failed: /)
      // Said once.
      expect(degraded.stdout.match(/embedder failed/g)).toHaveLength(1)
      expect(degraded.stdout).not.toContain("Words only")
      const vectorOnly = await runBaton(
        ["recall", "search", "garden planner database", "--vector-only"],
        { env: withEndpoint },
      )
      expect(vectorOnly.code).toBe(1)
      expect(vectorOnly.stderr).toMatch(/^baton: vector search unavailable: the embedder failed: /)
      expect(vectorOnly.stdout).not.toMatch(/No hits|lexical only/)
      const asJson = await runBaton(
        ["recall", "search", "garden planner database", "--vector-only", "--json"],
        { env: plain },
      )
      expect(asJson.code).toBe(1)
      const out = json(asJson.stdout)
      expect(out).toMatchObject({
        ok: false,
        hits: [],
        error: {
          _tag: "VectorSearchUnavailable",
          message: expect.stringMatching(
            /^vector search unavailable: the index's vectors were made by openai-compatible\/m8: /,
          ),
        },
      })
      expect(out.degraded).not.toContain("lexical only")
    } finally {
      endpoint.close()
    }
  }, 90_000)

  it("says ok: false in --json when the index run's embedding fails (exit 1)", async () => {
    const refusing = createServer((_req, res) => {
      res.writeHead(401, { "content-type": "application/json" })
      res.end(JSON.stringify({ detail: "Provided API key is invalid." }))
    })
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve))
    const { port } = refusing.address() as AddressInfo
    try {
      const run = await runBaton(["recall", "index", "--json"], {
        env: {
          ...env,
          BATON_EMBEDDER: "voyage",
          VOYAGE_API_KEY: "wrong-key",
          BATON_VOYAGE_BASE_URL: `http://127.0.0.1:${port}/v1`,
        },
      })
      expect(run.code).toBe(1)
      const out = json(run.stdout)
      expect(out.ok).toBe(false)
      expect(out.embeddingNote).toMatch(/unauthorized/)
      // The error's own sentence, without its class name.
      expect(out.embeddingNote).toMatch(/^Embedding failed \(the voyage embedder failed /)
    } finally {
      refusing.close()
    }
  }, 60_000)

  it("searches an endpoint-embedded index with one request: the index knows the vector length", async () => {
    const bodies: Array<{ input: string[] }> = []
    const endpoint = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string[] }
        bodies.push(body)
        const data = body.input.map((text, index) => ({
          index,
          embedding: Array.from({ length: 8 }, (_, i) => 1 + ((text.charCodeAt(i) || 0) % 7)),
        }))
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ data }))
      })
    })
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve))
    const { port } = endpoint.address() as AddressInfo
    const withEndpoint = {
      ...homeWithHistory("endpoint-dim").env,
      BATON_EMBEDDER: "openai",
      BATON_EMBEDDINGS_URL: `http://127.0.0.1:${port}`,
      BATON_EMBEDDINGS_MODEL: "local/model",
    }
    try {
      const index = await runBaton(["recall", "index", "--json"], { env: withEndpoint })
      expect(index.code).toBe(0)
      const before = bodies.length
      const search = await runBaton(["recall", "search", "garden planner database", "--json"], {
        env: withEndpoint,
      })
      expect(search.code).toBe(0)
      expect(json(search.stdout)).toMatchObject({ degraded: null })
      // The query alone: no "dimension probe" call before it.
      expect(bodies.slice(before).map((b) => b.input)).toEqual([["garden planner database"]])
    } finally {
      endpoint.close()
    }
  }, 60_000)

  it("indexes the words when the endpoint cannot be set up, then reports the embedding failed", async () => {
    const refusing = createServer((_req, res) => {
      res.writeHead(401, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "bad key" } }))
    })
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve))
    const { port } = refusing.address() as AddressInfo
    const fresh = homeWithHistory("probe-fails").env
    const endpoint = {
      ...fresh,
      BATON_EMBEDDER: "openai",
      BATON_EMBEDDINGS_URL: `http://127.0.0.1:${port}`,
      BATON_EMBEDDINGS_MODEL: "m",
    }
    try {
      const run = await runBaton(["recall", "index", "--json"], { env: endpoint })
      expect(run.code).toBe(1)
      const out = json(run.stdout)
      expect(out).toMatchObject({ ok: false, index: { indexedNew: 2 } })
      expect(out.embeddingNote).toMatch(
        /^Embedding failed \(the openai-compatible embedder failed \(unauthorized\)/,
      )
      // Recorded for status (also what a background run leaves), though the embedder was never
      // built: its first request (the dimension probe) failed.
      const status = await runBaton(["recall", "status", "--json"], { env: endpoint })
      expect(json(status.stdout).embeddingFailure).toMatchObject({
        fingerprint: "openai-compatible",
        failure: "unauthorized",
        reason: expect.stringMatching(/^the openai-compatible embedder failed \(unauthorized\)/),
      })
      const search = await runBaton(["recall", "search", "garden planner database"], {
        env: endpoint,
      })
      expect(search.stdout).toContain("Which database did we pick for the garden planner?")
      expect(search.stdout).toMatch(
        /Note: embedder configuration: the openai-compatible embedder failed/,
      )
      expect(search.stdout).not.toContain("Words only")
    } finally {
      refusing.close()
    }
  }, 60_000)

  it("indexes the words when the embedder settings are incomplete, then reports and records it", async () => {
    const fresh = homeWithHistory("config-fails").env
    const voyage = { ...fresh, BATON_EMBEDDER: "voyage" }
    const run = await runBaton(["recall", "index", "--json"], { env: voyage })
    expect(run.code).toBe(1)
    const out = json(run.stdout)
    expect(out).toMatchObject({ ok: false, index: { indexedNew: 2 } })
    expect(out.embeddingNote).toMatch(
      /^Embedding failed \(BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY\)/,
    )
    const text = await runBaton(["recall", "index"], { env: voyage })
    expect(text.code).toBe(1)
    expect(text.stdout + text.stderr).toContain(
      "Embedding failed (BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY)",
    )
    expect(text.stdout + text.stderr).not.toContain("EmbedderConfigError")
    const status = await runBaton(["recall", "status"], { env: voyage })
    expect(status.stdout).toContain("Last embedding failed (")
    expect(status.stdout).toContain(
      ", VOYAGE_API_KEY): BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY; 'baton recall index' indexes words only until the setting is fixed",
    )
  }, 60_000)

  it("searches by words alone when embeddings are off", async () => {
    const search = await runBaton(["recall", "search", "which database garden planner", "--json"], {
      env: { ...env, BATON_EMBEDDER: "none" },
    })
    expect(search.code, search.stderr).toBe(0)
    const result = json(search.stdout)
    expect(result.arms.vector.ran).toBe(false)
    expect(result.arms.lexical.ran).toBe(true)
    expect(result.hits.map((h: { text: string }) => h.text)).toContain(
      "Which database did we pick for the garden planner?",
    )
  })

  it("searches, then expands and steps from a hit", async () => {
    const search = await runBaton(["recall", "search", "which database garden planner", "--json"], {
      env,
    })
    expect(search.code).toBe(0)
    const result = json(search.stdout)
    expect(result.arms.vector.ran).toBe(true)
    expect(result.arms.vector.fingerprint).toBe(
      json((await runBaton(["recall", "index", "--json"], { env })).stdout).embedding.fingerprint,
    )
    // The answer first (it follows the question the words match); the question among the hits
    // (in a corpus this small, where it lands among the rest depends on the embedder).
    const texts = result.hits.map((h: { text: string }) => h.text)
    expect(texts[0]).toBe("We picked SQLite with WAL mode for the garden planner.")
    const hit = result.hits[texts.indexOf("Which database did we pick for the garden planner?")]
    expect(hit).toMatchObject({
      sessionId: CLAUDE_ID,
      project: "garden",
      scores: { lexicalRank: 1 },
    })

    const text = await runBaton(["recall", "search", "which database garden planner"], { env })
    expect(text.stdout).toContain(`baton recall expand ${CLAUDE_ID} ${hit.turnId}`)
    expect(text.stdout).toMatch(/^1\. Claude Code · garden · 2026-03-10 10:00 UTC/m)

    const expand = await runBaton(["recall", "expand", CLAUDE_ID, hit.turnId, "--after", "3"], {
      env,
    })
    expect(expand.code).toBe(0)
    expect(expand.stdout).toContain("◀ anchor")
    expect(expand.stdout).toContain("[tool-output] migrations=12 in C:\\garden\\db")

    const next = await runBaton(["recall", "step", CLAUDE_ID, hit.turnId, "next", "--json"], {
      env,
    })
    expect(json(next.stdout).turns[0].text).toBe(
      "We picked SQLite with WAL mode for the garden planner.",
    )
    const bad = await runBaton(["recall", "step", CLAUDE_ID, hit.turnId, "sideways"], { env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("direction must be next or prev")
    const missing = await runBaton(["recall", "expand", CLAUDE_ID, "no-such-turn"], { env })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(
      /^baton: RecallNotFoundError: session .* has no turn no-such-turn/,
    )
    expect(missing.stderr.trim().split("\n")).toHaveLength(1)
  }, 60_000)

  it("filters search by source, scope and day", async () => {
    const codex = json(
      (
        await runBaton(["recall", "search", "retry backoff", "--source", "codex", "--json"], {
          env,
        })
      ).stdout,
    )
    expect(codex.hits.length).toBeGreaterThan(0)
    expect(codex.hits.every((h: { source: string }) => h.source === "codex")).toBe(true)
    const day = json(
      (
        await runBaton(
          [
            "recall",
            "search",
            "retry",
            "--date",
            "2026-03-12",
            "--timezone",
            "UTC",
            "--lexical-only",
            "--json",
          ],
          { env },
        )
      ).stdout,
    )
    expect(day.hits.map((h: { sessionId: string }) => h.sessionId)).toEqual([CODEX_ID])
    const scoped = json(
      (
        await runBaton(
          ["recall", "search", "retry", "--scope", "/work/garden", "--lexical-only", "--json"],
          { env },
        )
      ).stdout,
    )
    expect(scoped.hits).toEqual([])
    // A scope that does not exist still runs, and says so (a mistyped path should show).
    const nowhere = join(root, "no-such-dir")
    const gone = await runBaton(["recall", "recent", "--scope", nowhere], { env })
    expect(gone.code, gone.stderr).toBe(0)
    expect(gone.stdout).toBe(
      `No sessions match (searched in ${nowhere}).\nNote: ${nowhere} (--scope) does not exist on this machine; only sessions recorded there before it went away can match.\n`,
    )
    const goneJson = json(
      (await runBaton(["recall", "grep", "retry", "--scope", nowhere, "--json"], { env })).stdout,
    )
    expect(goneJson).toMatchObject({ ok: true, hits: [], scopeMissing: true })
    const here = json(
      (
        await runBaton(["recall", "search", "retry", "--scope", root, "--lexical-only", "--json"], {
          env,
        })
      ).stdout,
    )
    expect(here).toMatchObject({ ok: true, scopeMissing: false })
    // A file is not a missing directory: the project holding it is searched, and the note says so.
    const aFile = join(root, "scope-file.txt")
    writeFileSync(aFile, "x")
    const fileScoped = await runBaton(["recall", "recent", "--scope", aFile], { env })
    expect(fileScoped.code, fileScoped.stderr).toBe(0)
    expect(fileScoped.stdout).toContain(
      `Note: ${aFile} (--scope) is a file, not a directory; searching the project that holds it.\n`,
    )
    expect(fileScoped.stdout).not.toContain("does not exist")
    // Days back from today: the fixtures' March sessions are within 1 000 days, not within 7.
    const since = (days: string) =>
      runBaton(["recall", "search", "retry", "--start-date", days, "--lexical-only", "--json"], {
        env,
      })
    expect(json((await since("1000d")).stdout).hits.length).toBeGreaterThan(0)
    expect(json((await since("7 days ago")).stdout).hits).toEqual([])
    const bad = await since("7 weeks ago")
    expect(bad.code).toBe(2)
    expect(json(bad.stdout).error).toMatchObject({
      _tag: "RecallQueryError",
      field: "date",
      message: expect.stringMatching(
        /^--start-date '7 weeks ago' is not a date: .*N days ago \(7d\)$/,
      ),
    })
    // Finding nothing, each command names the filters it searched with.
    const nothing = async (args: ReadonlyArray<string>) =>
      (await runBaton(["recall", ...args, "--timezone", "Asia/Tokyo"], { env })).stdout
    // (The fixtures' /work/garden is not on this machine: a note after the line says so.)
    expect(
      await nothing(["search", "retry", "--scope", "/work/garden", "--source", "codex"]),
    ).toMatch(/^No hits for "retry" \(searched in \/work\/garden, Codex only\)\.\n/)
    expect(await nothing(["grep", "retry", "--date", "2026-03-11"])).toBe(
      'No match for "retry" (searched on 2026-03-11, Asia/Tokyo time).\n',
    )
    expect(
      await nothing(["recent", "--start-date", "2026-03-13", "--end-date", "2026-03-20"]),
    ).toBe("No sessions match (searched from 2026-03-13 to 2026-03-20, Asia/Tokyo time).\n")
  }, 60_000)

  it("greps tool output, and refuses a runaway regex in one line", async () => {
    const grep = await runBaton(["recall", "grep", "C:\\GARDEN\\db"], { env })
    expect(grep.code).toBe(0)
    expect(grep.stdout).toContain("tool-output")
    expect(grep.stdout).toContain("migrations=12 in C:\\garden\\db")
    const regex = json(
      (await runBaton(["recall", "grep", "migrations=\\d+", "--regex", "--json"], { env })).stdout,
    )
    expect(regex.hits).toHaveLength(1)
    expect(regex.indexEmpty).toBe(false)
    const unsafe = await runBaton(["recall", "grep", "(a+)+$", "--regex"], { env })
    expect(unsafe.code).toBe(2)
    expect(unsafe.stderr).toMatch(/^baton: a repeated group contains another repeat/)
  }, 60_000)

  it("lists recent sessions and reports status", async () => {
    const recent = await runBaton(["recall", "recent"], { env })
    expect(recent.stdout.indexOf(CODEX_ID)).toBeLessThan(recent.stdout.indexOf(CLAUDE_ID))
    expect(recent.stdout).toContain("What retry policy should the webhook client use?")
    // How fresh each session's index is, as the help says.
    expect(recent.stdout).toMatch(/ · 2 turns · indexed (just now|\d+ (min|h) ago)\n/)
    // Each session comes with the command that opens it where it left off.
    const open = new RegExp(`baton recall step (${CODEX_ID}) prev --count 3`).exec(recent.stdout)
    expect(open).not.toBeNull()
    type Window = {
      turns: Array<{ turnId: string; text: string }>
      atStart: boolean
      atEnd: boolean
    }
    const stepped = async (...args: Array<string>) =>
      json(
        (await runBaton(["recall", "step", CODEX_ID, ...args, "--json"], { env })).stdout,
      ) as Window
    // The session has two turns: prev --count 3 gives both, --count 1 the last.
    expect(await stepped("prev", "--count", "3")).toMatchObject({ atStart: true, atEnd: true })
    const last = await stepped("prev")
    expect(last).toMatchObject({ atStart: false, atEnd: true })
    expect(last.turns).toHaveLength(1)
    // From the start, the first turn.
    const first = await stepped()
    expect(first).toMatchObject({ atStart: true, atEnd: false })
    expect(first.turns).toHaveLength(1)
    expect(first.turns[0]?.text).toBe("What retry policy should the webhook client use?")
    const text = await runBaton(["recall", "step", CODEX_ID, "next"], { env })
    expect(text.stdout).toContain("What retry policy should the webhook client use?")
    const status = await runBaton(["recall", "status"], { env })
    expect(status.stdout).toContain("Sessions: 2 (1 Claude Code, 1 Codex)")
    expect(status.stdout).toContain("backlog 0 chunks")
    expect(status.stdout).toMatch(
      /^Embedder: auto → use-lite \(\d+ of 30,000 chunks, [\d,]+ of 3,000,000 characters; past either limit/m,
    )
    const statusJson = json((await runBaton(["recall", "status", "--json"], { env })).stdout)
    expect(statusJson.embedder).toMatchObject({
      configured: "auto",
      auto: { name: "use-lite", chunks: statusJson.chunks },
      limits: { maxChunks: 30_000, maxChars: 3_000_000 },
      problem: null,
    })
    const chosen = await runBaton(["recall", "status"], {
      env: { ...env, BATON_EMBEDDER: "use-static" },
    })
    expect(chosen.stdout).toContain("Embedder: use-static (BATON_EMBEDDER)")
    const broken = await runBaton(["recall", "status"], { env: { ...env, BATON_EMBEDDER: "bert" } })
    expect(broken.stdout).toContain('Embedder: not usable (unknown BATON_EMBEDDER "bert"')
    const again = await runBaton(["recall", "index"], { env })
    expect(again.stdout).toMatch(/^Up to date: 2 transcripts, none changed/)
  }, 60_000)

  it("names lookup indexes a stopped run left missing, and the next index builds them", async () => {
    const dataDir = join(home, ".local", "share", "baton")
    await Effect.runPromise(
      Effect.scoped(
        RecallDatabase.use((db) => Effect.sync(() => dropLookupIndexes(db.sqlite))),
      ).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
    )
    const status = await runBaton(["recall", "status"], { env })
    expect(status.stdout).toContain(
      "Lookup indexes: turns_turn_id, turns_timestamp, chunks_content_hash missing, left by an indexing run that stopped early",
    )
    const statusJson = json((await runBaton(["recall", "status", "--json"], { env })).stdout)
    expect(statusJson.missingLookupIndexes).toHaveLength(3)
    // Search answers meanwhile.
    const search = await runBaton(["recall", "search", "retry policy webhook", "--json"], { env })
    expect(json(search.stdout).hits.length).toBeGreaterThan(0)
    const index = await runBaton(["recall", "index"], { env })
    expect(index.code).toBe(0)
    const after = await runBaton(["recall", "status"], { env })
    expect(after.stdout).not.toContain("Lookup indexes")
  }, 60_000)

  it("names chunks a stopped run left out of the full-text index, and the next index adds them", async () => {
    const dataDir = join(home, ".local", "share", "baton")
    // What a bulk run stopped after writing leaves: a mark, and a chunk above it.
    await Effect.runPromise(
      Effect.scoped(
        RecallDatabase.use((db) =>
          Effect.sync(() => {
            deferLexicalIndex(db.sqlite)
            db.sqlite.exec(`insert into chunks (turn_row, surface_index, chunk_index, role,
                char_start, char_end, text, content_hash)
              select turn_row, surface_index, chunk_index + 1000, role, char_start, char_end,
                'quokkaphrase ' || text, content_hash from chunks order by id limit 1`)
          }),
        ),
      ).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
    )
    // Hits holding the word (the vector arm answers too, but the new chunk has no vector yet).
    const found = async () =>
      (
        json((await runBaton(["recall", "search", "quokkaphrase", "--json"], { env })).stdout)
          .hits as Array<{ text: string }>
      ).filter((hit) => hit.text.includes("quokkaphrase")).length
    const status = await runBaton(["recall", "status"], { env })
    expect(status.stdout).toContain(
      "Full-text index: 1 chunk left out by an indexing run that stopped early; search does not find their words until 'baton recall index' adds them",
    )
    expect(json((await runBaton(["recall", "status", "--json"], { env })).stdout)).toMatchObject({
      lexicalBacklog: 1,
    })
    expect(await found()).toBe(0)
    expect((await runBaton(["recall", "index", "--no-embed"], { env })).code).toBe(0)
    expect((await runBaton(["recall", "status"], { env })).stdout).not.toContain("Full-text index")
    expect(await found()).toBe(1)
  }, 60_000)

  it("says which lines indexing skipped, and status names the file", async () => {
    const { home: other, env: otherEnv } = homeWithHistory("skipped")
    expect((await runBaton(["recall", "index", "--no-embed"], { env: otherEnv })).code).toBe(0)
    const transcript = join(other, ".claude", "projects", "-work-garden", `${CLAUDE_ID}.jsonl`)
    appendFileSync(transcript, '{"type":"user","message":\n{"type":"future-thing","x":1}\n')
    const index = await runBaton(["recall", "index", "--no-embed"], { env: otherEnv })
    expect(index.code, index.stderr).toBe(0)
    expect(index.stdout).toContain(
      "\nSkipped 2 lines in 1 transcript that could not be read: 1 not a JSON object, 1 of an unknown record type (future-thing 1). 'baton recall status' lists the files.\n",
    )
    const status = await runBaton(["recall", "status"], { env: otherEnv })
    expect(status.stdout).toContain(
      `\nSkipped lines: 2 in 1 transcript, not searchable: 1 not a JSON object, 1 of an unknown record type (future-thing 1)\n  ${transcript} — 2 lines: 1 not a JSON object, 1 of an unknown record type (future-thing 1)\n`,
    )
    expect(
      json((await runBaton(["recall", "status", "--json"], { env: otherEnv })).stdout),
    ).toMatchObject({ skippedLines: { files: 1, lines: 2, listed: [{ path: transcript }] } })
    // The history itself was indexed as before.
    expect((await runBaton(["recall", "status"], { env: otherEnv })).stdout).toContain(
      "Sessions: 2 (1 Claude Code, 1 Codex)",
    )
  }, 60_000)

  it("rejects bad flags and bad values with exit 2, naming the flag", async () => {
    const limit = await runBaton(["recall", "search", "x", "--limit", "many"], { env })
    expect(limit.code).toBe(2)
    expect(limit.stderr).toBe(
      "baton: --limit must be a whole number from 1 to 100, not 'many' (see 'baton recall search --help')\n",
    )
    expect((await runBaton(["recall", "recent", "--source", "cursor"], { env })).code).toBe(2)
    const zone = await runBaton(["recall", "recent", "--timezone", "Mars/Base", "--json"], { env })
    expect(zone.code).toBe(2)
    expect(json(zone.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "RecallQueryError", field: "timezone" },
    })
    // A value the library rejects reads as the flag it came from, without the error's tag.
    const day = await runBaton(["recall", "search", "x", "--date", "2026-13-45"], { env })
    expect(day).toMatchObject({
      code: 2,
      stderr:
        "baton: --date '2026-13-45' is not a date: use YYYY-MM-DD, today, yesterday or N days ago (7d) (see 'baton recall search --help')\n",
    })
    const range = await runBaton(
      ["recall", "grep", "x", "--start-date", "2026-12-05", "--end-date", "2026-12-01"],
      { env },
    )
    expect(range).toMatchObject({
      code: 2,
      stderr:
        "baton: --start-date 2026-12-05 is after --end-date 2026-12-01 (see 'baton recall grep --help')\n",
    })
    const zoneText = await runBaton(["recall", "grep", "x", "--timezone", "Mars/X"], { env })
    expect(zoneText.code).toBe(2)
    expect(zoneText.stderr).toMatch(/^baton: --timezone 'Mars\/X' is not an IANA time zone/)
    expect(zoneText.stderr).toMatch(/ \(see 'baton recall grep --help'\)\n$/)
    // Whole numbers are digits; flags that only mean something together come together.
    const sci = await runBaton(["recall", "search", "x", "--limit", "1e1"], { env })
    expect(sci.code).toBe(2)
    expect(sci.stderr).toContain("--limit must be a whole number from 1 to 100, not '1e1'")
    for (const [args, says] of [
      [["--interval", "5"], "--interval needs --watch"],
      [["--background", "--watch"], "--background runs one index pass"],
    ] as const) {
      const index = await runBaton(["recall", "index", ...args], { env })
      expect(index.code, args.join(" ")).toBe(2)
      expect(index.stderr).toContain(says)
    }
    const forgetAll = await runBaton(["recall", "forget", "--all"], { env })
    expect(forgetAll.code).toBe(2)
    expect(forgetAll.stderr).toContain("add --yes")
    // An empty value is not an absent flag: `--date "$DAY"` with DAY unset must not search all.
    const emptyDay = await runBaton(["recall", "recent", "--date", ""], { env })
    expect(emptyDay).toMatchObject({
      code: 2,
      stdout: "",
      stderr:
        "baton: flag '--date' is empty: give <day> or leave the flag out (see 'baton recall recent --help')\n",
    })
    const emptyScope = await runBaton(["recall", "search", "x", "--scope", "", "--json"], { env })
    expect(emptyScope.code).toBe(2)
    expect(json(emptyScope.stdout)).toMatchObject({ ok: false, error: { _tag: "CliUsageError" } })
    // A direction where the turn goes, then another word, is not a turn id.
    const extra = await runBaton(["recall", "step", CODEX_ID, "next", "prev"], { env })
    expect(extra.code).toBe(2)
    expect(extra.stderr).toBe(
      "baton: unexpected argument 'prev' after the direction 'next': give 'step <session> [turn] [next|prev]' (see 'baton recall step --help')\n",
    )
  }, 60_000)

  it("forgets a session and prunes", async () => {
    // --source narrows a project: /work/garden holds only a Claude Code session.
    const none = await runBaton(
      ["recall", "forget", "--project", "/work/garden", "--source", "codex"],
      { env },
    )
    // A project that matches nothing is not found, as an unknown session is (exit 1).
    expect(none).toMatchObject({
      code: 1,
      stdout: "",
      stderr:
        "baton: RecallNotFoundError: no Codex sessions of the repository /work/garden in the index ('baton recall recent' lists sessions and their projects); nothing was forgotten\n",
    })
    // A session id that matches nothing is an error, not "forgot 0".
    const typo = await runBaton(["recall", "forget", "--session", "nope"], { env })
    expect(typo.code).toBe(1)
    expect(typo.stderr).toBe(
      "baton: RecallNotFoundError: no session nope in the index ('baton recall recent' lists sessions); nothing was forgotten\n",
    )
    expect(json((await runBaton(["recall", "status", "--json"], { env })).stdout).sessions).toBe(2)
    const forget = await runBaton(["recall", "forget", "--session", CODEX_ID], { env })
    expect(forget).toMatchObject({
      code: 0,
      stdout: "Forgot 1 session (1 transcript left out of later index runs).\n",
    })
    const prune = await runBaton(["recall", "prune", "--json"], { env })
    expect(json(prune.stdout)).toMatchObject({ ok: true, removed: { sessions: 0 } })
    expect((await runBaton(["recall", "prune"], { env })).stdout).toBe(
      "Nothing to prune: the index keeps no history of deleted transcripts.\n",
    )
    const status = json((await runBaton(["recall", "status", "--json"], { env })).stdout)
    expect(status.sessions).toBe(1)
    expect(home).not.toBe("")
    // The forgotten session's space goes back to the disk.
    const vacuum = await runBaton(["recall", "vacuum", "--json"], { env })
    expect(vacuum.code).toBe(0)
    const report = json(vacuum.stdout) as {
      ok: boolean
      vacuum: { bytesBefore: number; bytesAfter: number; freeBytesBefore: number }
    }
    expect(report.ok).toBe(true)
    // (How much comes back is the library's test; this small index frees partial pages only.)
    expect(report.vacuum.freeBytesBefore).toBeGreaterThanOrEqual(0)
    expect(report.vacuum.bytesAfter).toBeLessThanOrEqual(report.vacuum.bytesBefore)
    const again = await runBaton(["recall", "vacuum"], { env })
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^Vacuumed the recall index: [\d.]+ MiB, nothing to give back/)
    expect(again.stderr).toContain("Rewriting the recall index")
    expect(json((await runBaton(["recall", "status", "--json"], { env })).stdout).sessions).toBe(1)
    // A project: the output names the repository root it forgot, as --json does.
    const project = await runBaton(["recall", "forget", "--project", "/work/garden"], { env })
    expect(project.stdout).toBe(
      "Forgot 1 session of the repository /work/garden (its worktrees and subdirectories included); 1 transcript left out of later index runs.\n",
    )
    const again2 = await runBaton(["recall", "forget", "--project", "/work/garden", "--json"], {
      env,
    })
    expect(again2.code).toBe(1)
    expect(json(again2.stdout)).toEqual({
      ok: false,
      error: {
        _tag: "RecallNotFoundError",
        repositoryRoot: "/work/garden",
        message:
          "no sessions of the repository /work/garden in the index ('baton recall recent' lists sessions and their projects); nothing was forgotten",
      },
    })
  }, 60_000)
})

describe("baton recall with a symlinked project and control characters in a transcript", () => {
  it("scopes through a symlink to the real repository, and prints control characters inert", async () => {
    const home = join(root, "symlinked")
    // `~/code -> <home>/data/code`; the agent recorded the real path (getcwd()).
    const repo = join(home, "data", "code", "repo")
    mkdirSync(join(repo, ".git"), { recursive: true })
    writeFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
    symlinkSync(join(home, "data", "code"), join(home, "code"))
    const linked = join(home, "code", "repo")
    write(
      join(home, ".claude", "projects", "-repo", `${CLAUDE_ID}.jsonl`),
      claudeLines(CLAUDE_ID, repo, "2026-03-10T10:00:00.000Z", [
        ["symscopeprobe: where is the config loaded?", "In config.ts, see nul\u0000marker"],
      ]),
    )
    const env = { PATH: process.env["PATH"] ?? "", HOME: home, TZ: "UTC", BATON_EMBEDDER: "none" }
    const index = await runBaton(["recall", "index", "--quiet"], { env })
    expect(index.code, index.stderr).toBe(0)

    for (const scope of [repo, linked, join(linked, "src")]) {
      const grep = json(
        (await runBaton(["recall", "grep", "symscopeprobe", "--scope", scope, "--json"], { env }))
          .stdout,
      )
      expect(grep.hits, scope).toHaveLength(1)
      const search = json(
        (await runBaton(["recall", "search", "symscopeprobe", "--scope", scope, "--json"], { env }))
          .stdout,
      )
      expect(search.hits.length, scope).toBeGreaterThan(0)
      expect(search.applied.scopeRoot).toBe(repo)
      const recent = json(
        (await runBaton(["recall", "recent", "--scope", scope, "--json"], { env })).stdout,
      )
      expect(recent.sessions, scope).toHaveLength(1)
    }

    // Text output shows a NUL in a message instead of writing it to the terminal.
    const grep = await runBaton(["recall", "grep", "nul"], { env })
    expect(grep.stdout).toContain("nul\\x00marker")
    const expand = await runBaton(
      [
        "recall",
        "expand",
        CLAUDE_ID,
        json((await runBaton(["recall", "grep", "nul", "--json"], { env })).stdout).hits[0].turnId,
      ],
      { env },
    )
    const step = await runBaton(["recall", "step", CLAUDE_ID, "prev", "--count", "2"], { env })
    for (const run of [grep, expand, step]) {
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).not.toContain("\u0000")
      expect(run.stdout).toContain("nul\\x00marker")
    }

    const forget = await runBaton(["recall", "forget", "--project", linked, "--json"], { env })
    expect(json(forget.stdout)).toMatchObject({
      ok: true,
      removed: { sessions: 1 },
      repositoryRoot: repo,
    })
  }, 60_000)
})

describe("baton recall index modes", () => {
  it("draws a progress bar on stderr when asked (a terminal), none otherwise", async () => {
    const { env } = homeWithHistory("progress")
    const run = await runBaton(["recall", "index", "--no-embed"], {
      env: { ...env, BATON_PROGRESS: "1" },
    })
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(/\rindexing {2}\[#{20}\] 2\/2 files · \d+ turns/)
    expect(run.stdout).toMatch(/^Indexed 2 transcripts/)
    const quiet = await runBaton(["recall", "index", "--quiet"], { env })
    expect(quiet).toMatchObject({ code: 0, stdout: "", stderr: "" })
  }, 60_000)

  it("--background returns at once and a detached child indexes, logging to the data dir", async () => {
    const { env, home } = homeWithHistory("background")
    const started = Date.now()
    const run = await runBaton(["recall", "index", "--background", "--quiet", "--no-embed"], {
      env,
    })
    expect(run).toMatchObject({ code: 0, stdout: "", stderr: "" })
    const log = join(home, ".local", "share", "baton", "recall-index.log")
    let text = ""
    while (Date.now() - started < 60_000) {
      text = existsSync(log) ? readFileSync(log, "utf8") : ""
      if (/Indexed 2 transcripts/.test(text)) break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(text).toMatch(/baton recall index --no-embed\n/)
    // The detached child yields the CPU to the agent's own work.
    const nice = /Indexing in the background at low priority \(nice (\d+)\)\./.exec(text)?.[1]
    expect(Number(nice)).toBeGreaterThanOrEqual(10)
    expect(text).toContain("Indexed 2 transcripts")
    const status = json((await runBaton(["recall", "status", "--json"], { env })).stdout)
    expect(status).toMatchObject({ sessions: 2, indexing: null })
    // With the data directory there, the hook's path loads no index module: the same child.
    const again = await runBaton(
      ["recall", "index", "--background", "--json", "--source", "claude"],
      {
        env,
      },
    )
    expect(again.code).toBe(0)
    expect(json(again.stdout)).toMatchObject({ ok: true, background: true, log })
    const secondRun = Date.now()
    while (Date.now() - secondRun < 60_000) {
      text = readFileSync(log, "utf8")
      // The second child's nice line, then its summary.
      const second = text.split("at low priority")[2]
      if (second !== undefined && second.split("\n").length > 2) break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(text).toMatch(/baton recall index --source claude\n/)
    expect(text.match(/at low priority \(nice \d+\)/g)).toHaveLength(2)
    expect(text.split("at low priority")[2]?.split("\n").length).toBeGreaterThan(2)
  }, 120_000)

  it("a data directory that is a file fails with what to set, in the foreground and background", async () => {
    const { env, home } = homeWithHistory("data-dir-file")
    const file = join(home, "not-a-dir")
    writeFileSync(file, "x")
    const inFile = { ...env, BATON_DATA_DIR: file }
    const message =
      `baton: RecallStorageError: the recall index directory ${file} is not a directory (a file ` +
      "is in the way): set BATON_DATA_DIR to a directory you can write (default: " +
      "$XDG_DATA_HOME/baton, else ~/.local/share/baton)\n"
    for (const args of [
      ["recall", "index", "--no-embed"],
      ["recall", "index", "--background", "--quiet"],
      // Reads say so too, instead of "nothing indexed yet: run 'baton recall index'".
      ["recall", "status"],
      ["recall", "search", "retry"],
    ]) {
      const run = await runBaton(args, { env: inFile })
      expect(run).toMatchObject({ code: 1, stdout: "", stderr: message })
    }
    const asJson = await runBaton(["recall", "index", "--background", "--json"], { env: inFile })
    expect(json(asJson.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "RecallStorageError", operation: "create-directory", path: file },
    })
    expect(readFileSync(file, "utf8")).toBe("x")
  })

  it("refuses a relative BATON_DATA_DIR in every command instead of resolving it here", async () => {
    const cwd = join(root, "relative-data-dir")
    mkdirSync(cwd, { recursive: true })
    const env = { PATH: process.env["PATH"] ?? "", HOME: cwd, BATON_DATA_DIR: "rel/dir" }
    for (const args of [
      ["index"],
      ["index", "--background"],
      ["status"],
      ["search", "x"],
      ["grep", "x"],
      ["recent"],
    ]) {
      const run = await runBaton(["recall", ...args], { env, cwd })
      expect(run.code, args.join(" ")).toBe(1)
      expect(run.stderr, args.join(" ")).toMatch(
        /^baton: RecallStorageError: BATON_DATA_DIR is a relative path \(rel\/dir\): give an absolute path/,
      )
    }
    const asJson = json((await runBaton(["recall", "status", "--json"], { env, cwd })).stdout)
    expect(asJson).toMatchObject({ ok: false, error: { _tag: "RecallStorageError" } })
    expect(existsSync(join(cwd, "rel"))).toBe(false)
  }, 60_000)

  // Ctrl-C used to end a one-shot run silently (exit 130, nothing on either stream).
  const INTERRUPTED_RUN_MESSAGE =
    "stopped by a signal: what was written so far is kept; run 'baton recall index' again to finish"
  it("a one-shot run stopped by SIGINT or SIGTERM says so, keeps what it wrote and exits 130", async () => {
    const home = join(root, "interrupted")
    const corpus = generateBulkCorpus({ files: 800, homeDir: home, exchangesPerFile: 20 })
    for (const [path, text] of Object.entries(corpus.files)) write(path, text)
    const env = { PATH: process.env["PATH"] ?? "", HOME: home, BATON_PROGRESS: "1" }
    const stopped = async (signal: NodeJS.Signals, extra: ReadonlyArray<string>) => {
      const run = startBaton(["recall", "index", "--no-embed", ...extra], env)
      try {
        // The progress bar shows files being indexed.
        await run.waitFor("stderr", /\d+\/\d+ files/)
        run.child.kill(signal)
        return { code: await run.exited, ...run.output() }
      } finally {
        run.child.kill("SIGKILL")
      }
    }
    const text = await stopped("SIGINT", [])
    expect(text.code).toBe(130)
    expect(text.stderr).toContain(`K\nbaton: ${INTERRUPTED_RUN_MESSAGE}\n`)
    const status = json((await runBaton(["recall", "status", "--json"], { env })).stdout)
    expect(status).toMatchObject({ indexing: null })
    expect(status.sessions).toBeGreaterThan(0)
    expect(status.sessions).toBeLessThan(800)
    const asJson = await stopped("SIGTERM", ["--json"])
    expect(asJson.code).toBe(130)
    expect(json(asJson.stdout)).toEqual({
      ok: false,
      error: { _tag: "Interrupted", message: INTERRUPTED_RUN_MESSAGE },
    })
    // Its help names the exit code.
    expect((await runBaton(["recall", "index", "--help"], { env })).stdout).toContain(
      "130 a run without --watch stopped by Ctrl-C or SIGTERM",
    )
    // The next run finishes the job.
    const finished = await runBaton(["recall", "index", "--no-embed", "--json"], { env })
    expect(finished.code).toBe(0)
    expect(json((await runBaton(["recall", "status", "--json"], { env })).stdout)).toMatchObject({
      sessions: 800,
    })
  }, 180_000)

  it("--watch re-indexes a new transcript and stops cleanly on SIGINT", async () => {
    const { env, home } = homeWithHistory("watch")
    const run = startBaton(["recall", "index", "--watch", "--interval", "1", "--no-embed"], env)
    const { child, exited } = run
    const waitFor = async (pattern: RegExp) => {
      await run.waitFor("stdout", pattern)
      expect(run.output().stdout).toMatch(pattern)
    }
    try {
      await waitFor(/Indexed 2 transcripts/)
      const second = "bbbbbbbb-2222-4222-8222-000000000002"
      const path = join(home, ".claude", "projects", "-work-garden", `${second}.jsonl`)
      write(
        path,
        claudeLines(second, "/work/garden", "2026-03-13T10:00:00.000Z", [
          ["Plan the frost feature.", "Frost dates by postcode."],
        ]),
      )
      await waitFor(
        /Indexed 1 transcript \(1 new, 0 appended, 0 rewritten\) in [\d.]+ s: 2 turns, 2 chunks;/,
      )
      appendFileSync(
        path,
        claudeLines(second, "/work/garden", "2026-03-13T11:00:00.000Z", [
          ["More frost?", "Cache per session."],
        ]),
      )
      await waitFor(/1 appended/)
      // More than ten rounds: each used to leave an abort listener on the watch's signal.
      await new Promise((r) => setTimeout(r, 11_500))
      child.kill("SIGINT")
      expect(await exited).toBe(0)
      expect(run.output().stderr).toContain("Stopped watching.")
      expect(run.output().stderr).not.toContain("MaxListenersExceededWarning")
    } finally {
      child.kill("SIGKILL")
    }
    const status = json((await runBaton(["recall", "status", "--json"], { env })).stdout)
    expect(status).toMatchObject({ sessions: 3, indexing: null })
  }, 120_000)
})

describe("baton recall with an OpenAI-compatible endpoint", () => {
  /** One model's 8-dimensional vector of a text. */
  const modelA = (text: string): number[] =>
    Array.from({ length: 8 }, (_, i) => 1 + ((text.charCodeAt(i) || 0) % 7))
  /** Another model's: other directions for the same texts. */
  const modelB = (text: string): number[] =>
    Array.from(
      { length: 8 },
      (_, i) => ((text.charCodeAt(7 - i) || 0) % 5) - 2 + (i % 2 === 0 ? -0.5 : 0.5),
    )

  /**
   * A loopback endpoint answering 8-dimensional vectors of `model`; `failNext` answers 503 that
   * many times; `texts` counts the texts it was asked to embed.
   */
  const startEndpoint = async (model: (text: string) => number[] = modelA) => {
    const state = { failNext: 0, requests: 0, texts: 0 }
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        state.requests += 1
        if (state.failNext > 0) {
          state.failNext -= 1
          res.writeHead(503, { "content-type": "application/json" })
          res.end(JSON.stringify({ error: "loading model" }))
          return
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string[] }
        state.texts += body.input.length
        const data = body.input.map((text, index) => ({ index, embedding: model(text) }))
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ data }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    return { server, state, url: `http://127.0.0.1:${port}/v1` }
  }

  it("refuses to add another server's vectors to a space, names both endpoints, and status and search show it", async () => {
    const first = await startEndpoint()
    const second = await startEndpoint(modelB)
    const { home, env: base } = homeWithHistory("endpoint-switch")
    const env = { ...base, BATON_EMBEDDER: "openai", BATON_EMBEDDINGS_MODEL: "m1" }
    try {
      const index = await runBaton(["recall", "index", "--json"], {
        env: { ...env, BATON_EMBEDDINGS_URL: first.url },
      })
      expect(index.code, index.stderr).toBe(0)
      expect(json(index.stdout).embedding.fingerprint).toBe("openai-compatible/m1/8")
      const status = await runBaton(["recall", "status"], {
        env: { ...env, BATON_EMBEDDINGS_URL: first.url },
      })
      expect(status.stdout).toContain(`openai-compatible/m1/8 (`)
      expect(status.stdout).toContain(`active, from ${first.url})`)
      // A new session, then the same model name and length at another server.
      const mailer = "5b1f2c9e-8d4a-4f3b-9c2e-1a7d6e5f4b3c"
      write(
        join(home, ".claude", "projects", "-work-mailer", `${mailer}.jsonl`),
        claudeLines(mailer, "/work/mailer", "2026-03-14T10:00:00.000Z", [
          ["Which queue did we pick for the mailer?", "We picked a SQLite-backed queue."],
        ]),
      )
      const switched = { ...env, BATON_EMBEDDINGS_URL: second.url }
      const before = second.state.requests
      const again = await runBaton(["recall", "index", "--json"], { env: switched })
      expect(again.code).toBe(1)
      const out = json(again.stdout)
      expect(out.index.indexedNew).toBe(1)
      expect(out.embeddingNote).toContain(
        `the space openai-compatible/m1/8 holds vectors from ${first.url}, but BATON_EMBEDDINGS_URL now names ${second.url}`,
      )
      expect(out.embeddingNote).toContain(
        "set BATON_EMBEDDINGS_MODEL to a name unique to its model",
      )
      expect(out.embeddingNote).toMatch(/differ from the stored ones: cosine -?\d\.\d\d, where/)
      // Only the dimension probe and the comparison of stored texts reached the new server: no
      // new document was embedded, and the space still names the first server.
      expect(second.state.requests - before).toBe(2)
      const refusedStatus = await runBaton(["recall", "status"], { env: switched })
      expect(refusedStatus.stdout).toContain(`active, from ${first.url})`)
      // Search from there still answers, with a note naming both servers.
      const search = await runBaton(["recall", "search", "garden planner database", "--json"], {
        env: switched,
      })
      expect(search.code).toBe(0)
      const found = json(search.stdout)
      expect(found.hits.length).toBeGreaterThan(0)
      expect(found.degraded).toContain(
        `the vectors of openai-compatible/m1/8 came from ${first.url}, but the query was embedded by ${second.url}`,
      )
      // Back at the first server, the run embeds the new session into the space.
      const back = await runBaton(["recall", "index", "--json"], {
        env: { ...env, BATON_EMBEDDINGS_URL: first.url },
      })
      expect(back.code, back.stdout).toBe(0)
      expect(json(back.stdout).embedding.embedded).toBeGreaterThan(0)
    } finally {
      first.server.close()
      second.server.close()
    }
  }, 120_000)

  it("adopts a server that moved (the same vectors of stored texts at another port) and keeps the space's vectors", async () => {
    const first = await startEndpoint()
    const moved = await startEndpoint()
    const { home, env: base } = homeWithHistory("endpoint-moved")
    const env = { ...base, BATON_EMBEDDER: "openai", BATON_EMBEDDINGS_MODEL: "m1" }
    try {
      const index = await runBaton(["recall", "index", "--json"], {
        env: { ...env, BATON_EMBEDDINGS_URL: first.url },
      })
      expect(index.code, index.stderr).toBe(0)
      const vectors = json(index.stdout).embedding.embedded as number
      expect(vectors).toBeGreaterThan(3)
      const mailer = "5b1f2c9e-8d4a-4f3b-9c2e-1a7d6e5f4b3c"
      write(
        join(home, ".claude", "projects", "-work-mailer", `${mailer}.jsonl`),
        claudeLines(mailer, "/work/mailer", "2026-03-14T10:00:00.000Z", [
          ["Which queue did we pick for the mailer?", "We picked a SQLite-backed queue."],
        ]),
      )
      const movedEnv = { ...env, BATON_EMBEDDINGS_URL: moved.url }
      const again = await runBaton(["recall", "index", "--json"], { env: movedEnv })
      expect(again.code, again.stdout).toBe(0)
      const out = json(again.stdout)
      expect(out.embedding.endpointMoved).toMatchObject({ from: first.url, to: moved.url, vectors })
      expect(out.embedding.endpointMoved.cosine).toBeGreaterThanOrEqual(0.98)
      expect(out.embedding.switchedFrom).toBeNull()
      const added = out.embedding.embedded as number
      expect(added).toBeGreaterThan(0)
      // The moved server embedded the dimension probe, the 3 compared texts and the new session's
      // texts, none of the history again.
      expect(moved.state.texts).toBe(1 + 3 + added)
      const status = await runBaton(["recall", "status", "--json"], { env: movedEnv })
      const space = (
        json(status.stdout).embedders as Array<{ fingerprint: string; vectors: number }>
      ).find((e) => e.fingerprint === "openai-compatible/m1/8")
      expect(space).toMatchObject({ vectors: vectors + added, endpoint: moved.url })
      // Search from the new address has no endpoint note.
      const search = await runBaton(["recall", "search", "mailer queue", "--json"], {
        env: movedEnv,
      })
      expect(search.code).toBe(0)
      expect(JSON.stringify(json(search.stdout).degraded ?? null)).not.toContain("came from")
    } finally {
      first.server.close()
      moved.server.close()
    }
  }, 120_000)

  it("says on stderr when it retries the endpoint, and --json stays one document", async () => {
    const endpoint = await startEndpoint()
    const env = {
      ...homeWithHistory("endpoint-retry").env,
      BATON_EMBEDDER: "openai",
      BATON_EMBEDDINGS_MODEL: "m1",
      BATON_EMBEDDINGS_DIM: "8",
      BATON_EMBEDDINGS_URL: endpoint.url,
    }
    const host = new URL(endpoint.url).host
    try {
      endpoint.state.failNext = 2
      const run = await runBaton(["recall", "index", "--json"], { env })
      expect(run.code, run.stderr).toBe(0)
      expect(json(run.stdout).embedding.embedded).toBeGreaterThan(0)
      const lines = run.stderr.split("\n").filter((l) => l.includes("retrying"))
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatch(
        new RegExp(
          `^baton: the embedding server at ${host} answered HTTP 503; retrying in \\d+ s \\(attempt 2 of 5\\)$`,
        ),
      )
      expect(lines[1]).toContain("(attempt 3 of 5)")
    } finally {
      endpoint.server.close()
    }
  }, 120_000)
})

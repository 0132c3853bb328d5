// A small, hand-written history for the search and navigation tests: Claude Code sessions and
// Codex rollouts in the current formats, with known words, tool output, working directories
// (a repository, its worktree, a sibling sharing its name prefix) and timestamps around
// midnight in several time zones. Synthetic; never derived from a real transcript.
import { Effect, Layer } from "effect"
import { join } from "node:path"
import {
  embedBacklog,
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  RecallDatabase,
  recallDatabaseLayer,
  searchRecall,
} from "@baton/recall-index"
import type {
  Embedder,
  IndexerProcess,
  RecallSearchInput,
  TranscriptFileSystem,
} from "@baton/recall-index"
import { encodeClaudeProjectDir, rolloutName } from "@baton/recall-index/testing"
import { tempDir, writeTree } from "./index-harness.js"

/** One exchange: a prompt, an optional tool call with its output, the answer. */
export interface Exchange {
  readonly user: string
  readonly assistant: string
  readonly tool?: { readonly command: string; readonly output: string }
  readonly reasoning?: string
}

/** One session to write. */
export interface SessionSpec {
  readonly source: "claude" | "codex"
  readonly id: string
  readonly cwd: string
  /** ISO time of the first prompt; each line adds a few seconds. */
  readonly at: string
  readonly exchanges: ReadonlyArray<Exchange>
  readonly headless?: boolean
  readonly title?: string
}

const claudeLines = (spec: SessionSpec): string => {
  let clock = Date.parse(spec.at)
  let parent: string | null = null
  let n = 0
  const lines: Array<string> = []
  const uuid = () => `${spec.id.slice(0, 8)}-0000-4000-8000-${String(++n).padStart(12, "0")}`
  const push = (type: string, message: unknown) => {
    const id = uuid()
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        isSidechain: false,
        userType: "external",
        cwd: spec.cwd,
        sessionId: spec.id,
        version: "2.1.90",
        gitBranch: "main",
        entrypoint: spec.headless === true ? "sdk-cli" : "cli",
        type,
        uuid: id,
        timestamp: new Date(clock).toISOString(),
        message,
      }),
    )
    clock += 5_000
    parent = id
  }
  if (spec.title !== undefined) {
    lines.push(JSON.stringify({ type: "ai-title", aiTitle: spec.title, sessionId: spec.id }))
  }
  spec.exchanges.forEach((e, i) => {
    push("user", { role: "user", content: e.user })
    const content: Array<unknown> = []
    if (e.reasoning !== undefined) {
      content.push({ type: "thinking", thinking: e.reasoning, signature: "c2lnbmF0dXJl" })
    }
    if (e.tool !== undefined) {
      const toolId = `toolu_${spec.id.slice(0, 8)}${i}`
      content.push({
        type: "tool_use",
        id: toolId,
        name: "Bash",
        input: { command: e.tool.command },
      })
      push("assistant", {
        id: `msg_${i}a`,
        type: "message",
        role: "assistant",
        model: "m",
        content,
      })
      push("user", {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: toolId, content: e.tool.output }],
      })
      push("assistant", {
        id: `msg_${i}b`,
        type: "message",
        role: "assistant",
        model: "m",
        content: [{ type: "text", text: e.assistant }],
      })
    } else {
      content.push({ type: "text", text: e.assistant })
      push("assistant", { id: `msg_${i}`, type: "message", role: "assistant", model: "m", content })
    }
  })
  return lines.map((l) => `${l}\n`).join("")
}

const codexLines = (spec: SessionSpec): string => {
  let clock = Date.parse(spec.at)
  const lines: Array<string> = []
  const push = (type: string, payload: unknown) => {
    lines.push(JSON.stringify({ timestamp: new Date(clock).toISOString(), type, payload }))
    clock += 5_000
  }
  push("session_meta", {
    id: spec.id,
    timestamp: spec.at,
    cwd: spec.cwd,
    originator: spec.headless === true ? "codex_exec" : "codex-tui",
    cli_version: "0.150.0",
    source: spec.headless === true ? "exec" : "cli",
  })
  spec.exchanges.forEach((e, i) => {
    push("event_msg", { type: "task_started", turn_id: `turn-${i}` })
    push("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: e.user }],
    })
    push("event_msg", { type: "user_message", message: e.user, images: [] })
    if (e.reasoning !== undefined) {
      push("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: e.reasoning }],
        encrypted_content: "ZW5jcnlwdGVk",
      })
    }
    if (e.tool !== undefined) {
      const callId = `call_${i}`
      push("response_item", {
        type: "function_call",
        name: "exec_command",
        arguments: JSON.stringify({ cmd: e.tool.command }),
        call_id: callId,
      })
      push("response_item", {
        type: "function_call_output",
        call_id: callId,
        output: e.tool.output,
      })
    }
    push("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: e.assistant }],
      phase: "final_answer",
    })
    push("event_msg", { type: "agent_message", message: e.assistant, phase: "final_answer" })
    push("event_msg", { type: "task_complete", last_agent_message: e.assistant })
  })
  return lines.map((l) => `${l}\n`).join("")
}

/** File contents by absolute path for `specs` under `home`. */
export const historyFiles = (
  home: string,
  specs: ReadonlyArray<SessionSpec>,
): Record<string, string> => {
  const files: Record<string, string> = {}
  for (const spec of specs) {
    if (spec.source === "claude") {
      files[
        join(home, ".claude", "projects", encodeClaudeProjectDir(spec.cwd), `${spec.id}.jsonl`)
      ] = claudeLines(spec)
    } else {
      const { dir, name } = rolloutName(Date.parse(spec.at), spec.id)
      files[join(home, ".codex", "sessions", dir, name)] = codexLines(spec)
    }
  }
  return files
}

/** The default history of these tests. */
export const defaultHistory: ReadonlyArray<SessionSpec> = [
  {
    source: "claude",
    id: "aaaaaaaa-1111-4111-8111-000000000001",
    cwd: "/work/garden",
    at: "2026-03-10T10:00:00.000Z",
    title: "Garden planner storage",
    exchanges: [
      {
        user: "Which database did we pick for the garden planner?",
        assistant: "We picked SQLite with WAL mode, because the app is single-user and local.",
      },
      {
        user: "Count the migration files.",
        tool: { command: "ls migrations | wc -l", output: "migrations=12 (C:\\garden\\db)" },
        assistant: "There are 12 migration files.",
        reasoning: "The user wants a count; list the folder.",
      },
      {
        user: "Plan the frost-date feature.",
        assistant: "Frost dates come from a lookup table keyed by postcode; cache it per session.",
      },
    ],
  },
  {
    source: "claude",
    id: "bbbbbbbb-2222-4222-8222-000000000002",
    cwd: "/work/garden/.claude/worktrees/feature-x",
    // 23:30 UTC: the next day in Asia/Kolkata, the same day in America/New_York.
    at: "2026-03-11T23:30:00.000Z",
    exchanges: [
      {
        user: "Add a watering schedule to the frost calendar.",
        assistant: "Watering reminders now skip frost days; the schedule lives in calendar.ts.",
      },
    ],
  },
  {
    source: "codex",
    id: "019c0000-cccc-7ccc-8ccc-000000000003",
    cwd: "/work/payments",
    at: "2026-03-12T08:00:00.000Z",
    exchanges: [
      {
        user: "What retry policy should the payment webhook client use?",
        assistant: "Use exponential backoff with jitter: 3 attempts, starting at 200 ms, doubling.",
      },
      {
        user: "Check how many handlers are in the webhooks folder.",
        tool: { command: "ls webhooks | wc -l", output: 'handlers=7 "quoted" path\\to\\file' },
        assistant: "There are 7 webhook handlers.",
      },
    ],
  },
  {
    source: "codex",
    id: "019c0000-dddd-7ddd-8ddd-000000000004",
    cwd: "/work/payments-backend",
    at: "2026-03-12T09:00:00.000Z",
    headless: true,
    exchanges: [
      {
        user: "Summarise the retry budget of the backend.",
        assistant: "The backend allows a retry budget of ten percent of requests.",
      },
    ],
  },
  {
    source: "claude",
    id: "eeeeeeee-5555-4555-8555-000000000005",
    cwd: "/work/garden",
    at: "2026-03-09T12:00:00.000Z",
    exchanges: Array.from({ length: 8 }, (_, i) => ({
      user: `Frost note ${i + 1}: how does frost affect seedling ${i + 1}?`,
      assistant: `Frost answer ${i + 1}: cover seedling ${i + 1} when frost is forecast.`,
    })),
  },
  {
    source: "claude",
    id: "ffffffff-6666-4666-8666-000000000006",
    cwd: "/work/notes",
    at: "2026-03-08T08:00:00.000Z",
    exchanges: [
      {
        user: "Notiz: die Größe der Straße prüfen.",
        assistant: "Noted for the ÉCOLE survey.",
      },
    ],
  },
]

type Env = RecallDatabase | TranscriptFileSystem | IndexerProcess

/** A temp home holding `specs`, indexed (and embedded when `embedder` is given) into a temp data dir. */
export const indexedHistory = async (
  specs: ReadonlyArray<SessionSpec> = defaultHistory,
  embedder?: Embedder,
): Promise<{
  readonly home: string
  readonly dataDir: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, Env>) => Promise<A>
  readonly dispose: () => void
}> => {
  const home = tempDir("recall-home")
  const data = tempDir("recall-data")
  writeTree(historyFiles(home.path, specs))
  const dataDir = join(data.path, "baton")
  const layers = Layer.mergeAll(
    recallDatabaseLayer({ dataDir }),
    nodeTranscriptFileSystemLayer,
    nodeIndexerProcessLayer,
  )
  const run = <A, E>(effect: Effect.Effect<A, E, Env>): Promise<A> =>
    Effect.runPromise(effect.pipe(Effect.provide(layers)))
  const environment = {
    env: { CLAUDE_CONFIG_DIR: join(home.path, ".claude"), CODEX_HOME: join(home.path, ".codex") },
    homeDir: home.path,
  }
  await run(indexTranscripts({ environment }))
  if (embedder !== undefined) await run(embedBacklog(embedder))
  return {
    home: home.path,
    dataDir,
    run,
    dispose: () => {
      home.dispose()
      data.dispose()
    },
  }
}

/** A history from {@link indexedHistory}. */
export type IndexedHistory = Awaited<ReturnType<typeof indexedHistory>>

/** The hits of `query` from the lexical arm alone. */
export const lexicalHits = async (
  history: IndexedHistory,
  embedder: Embedder,
  query: string,
  extra: Partial<RecallSearchInput> = {},
) => (await history.run(searchRecall({ query, arms: ["lexical"], ...extra }, { embedder }))).hits

/** FTS5's `integrity-check` of `chunks_fts` (throws when it fails), then SQLite's: "ok". */
export const lexicalIndexIntegrity = (history: IndexedHistory) =>
  history.run(
    RecallDatabase.use((db) =>
      Effect.sync(() => {
        db.sqlite.prepare("insert into chunks_fts(chunks_fts) values ('integrity-check')").run()
        return db.sqlite.pragma("integrity_check", { simple: true })
      }),
    ),
  )

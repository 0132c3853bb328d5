/**
 * Corpus builder: drives the real `codex` and `claude` binaries through scripted sessions against
 * the loopback mocks and returns the transcript files they wrote, for the recall tests.
 *
 * Guarantees: every file returned was written by a real agent binary (never synthesised here);
 * nothing reaches the network; one Codex home and one Claude home hold every session, laid out
 * exactly as on a user's machine, so an indexer can be pointed at `codexHome` / `claudeConfigDir`.
 */
import { mkdir } from "node:fs/promises"
import { join } from "node:path"
import { realpathSync } from "node:fs"
import { createClaudeHome } from "./claude-home.js"
import type { ClaudeHome } from "./claude-home.js"
import { runClaudePrint, startClaudeSession } from "./claude.js"
import { startCodexAppServer } from "./codex-app-server.js"
import { runCodexExec } from "./codex-exec.js"
import { createCodexHome } from "./codex-home.js"
import type { CodexHome } from "./codex-home.js"
import { messagesBashReply, messagesTextReply, startMockMessages } from "./mock-messages.js"
import type { MockMessagesServer } from "./mock-messages.js"
import { execCommandReply, startMockResponses, textReply } from "./mock-responses.js"
import type { MockResponsesServer } from "./mock-responses.js"
import { findRolloutForThread } from "./rollout-files.js"

/** One scripted exchange: the user's text, an optional shell command the agent runs, its answer. */
export interface CorpusTurn {
  readonly user: string
  readonly assistant: string
  /** The agent runs this through its shell tool (Codex `exec_command`, Claude `Bash`) first. */
  readonly command?: string
}

/** One session to record. */
export interface CorpusSessionSpec {
  readonly agent: "codex" | "claude"
  /** Project folder name (created under the corpus root); the session's cwd. */
  readonly project: string
  readonly turns: ReadonlyArray<CorpusTurn>
  /** Headless single run (`codex exec` / `claude -p`): exactly one turn. */
  readonly headless?: boolean
  /** Codex only: run `thread/compact/start` after this many turns (the mock's reply is the summary). */
  readonly compactAfterTurn?: number
  /**
   * Codex only, not headless: name the thread (`thread/name/set`) after its turns. Codex 0.169
   * writes the name to `$CODEX_HOME/session_index.jsonl`, not into the rollout.
   */
  readonly threadName?: string
}

/** A recorded session. */
export interface CorpusSession {
  readonly spec: CorpusSessionSpec
  /** Codex thread id or Claude session id. */
  readonly sessionId: string
  readonly cwd: string
  /** The rollout or transcript file the agent wrote. */
  readonly path: string
}

/** The corpus: the agents' homes and the sessions recorded in them. */
export interface Corpus {
  readonly root: string
  /** `CODEX_HOME` holding every Codex rollout (`sessions/YYYY/MM/DD/rollout-*.jsonl`). */
  readonly codexHome: string
  /** Claude Code's config dir (`projects/<encoded cwd>/<session>.jsonl`). */
  readonly claudeConfigDir: string
  readonly sessions: ReadonlyArray<CorpusSession>
  /** Removes both homes. */
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Summary text the mock returns for a Codex compaction request. */
export const CORPUS_COMPACTION_SUMMARY = "Compacted: retry policy agreed; tests still to write."

/** A small default corpus: two projects, both agents, tool calls, a compaction, headless runs. */
export const defaultCorpusSessions: ReadonlyArray<CorpusSessionSpec> = [
  {
    agent: "codex",
    project: "payments-service",
    compactAfterTurn: 2,
    turns: [
      {
        user: "What retry policy should the payment webhook client use?",
        assistant:
          "Use exponential backoff: 3 attempts, starting at 200 ms, doubling, with jitter.",
      },
      {
        user: "Check how many handlers are in the webhooks folder.",
        command: "echo handlers=$((3+4))",
        assistant: "There are 7 webhook handlers.",
      },
      {
        user: "Write the tests for the retry policy next.",
        assistant: "I will add table tests for backoff timing and the attempt limit.",
      },
    ],
  },
  {
    agent: "codex",
    project: "payments-service",
    headless: true,
    turns: [
      {
        user: "Summarise the changelog for release 2.4.",
        assistant: "Release 2.4 adds idempotency keys to refunds.",
      },
    ],
  },
  {
    agent: "claude",
    project: "garden-planner",
    turns: [
      {
        user: "Which database did we pick for the garden planner?",
        assistant: "We picked SQLite with WAL mode, because the app is single-user and local.",
      },
      {
        user: "Count the migration files.",
        command: "echo migrations=$((2*6))",
        assistant: "There are 12 migration files.",
      },
      {
        user: "Plan the frost-date feature.",
        assistant: "Frost dates come from a lookup table keyed by postcode; cache it per session.",
      },
    ],
  },
  {
    agent: "claude",
    project: "garden-planner",
    headless: true,
    turns: [
      {
        user: "Name the colour palette we chose.",
        assistant: "The palette is called Moss and Clay.",
      },
    ],
  },
]

const recordCodex = async (
  home: CodexHome,
  mock: MockResponsesServer,
  specs: ReadonlyArray<CorpusSessionSpec>,
  projectDir: (name: string) => Promise<string>,
): Promise<Array<CorpusSession>> => {
  const sessions: Array<CorpusSession> = []
  const interactive = specs.filter((spec) => spec.headless !== true)
  if (interactive.length > 0) {
    await using server = await startCodexAppServer({ home })
    for (const spec of interactive) {
      const cwd = await projectDir(spec.project)
      const { threadId } = await server.startThread({ cwd })
      for (const [index, turn] of spec.turns.entries()) {
        if (turn.command !== undefined) mock.enqueue(execCommandReply(turn.command))
        mock.enqueue(textReply(turn.assistant))
        const done = await server.runTurn(threadId, turn.user, { timeoutMs: 60_000 })
        if (done.status !== "completed") {
          throw new Error(`corpus: Codex turn ${index + 1} of ${spec.project} ended ${done.status}`)
        }
        if (spec.compactAfterTurn === index + 1) {
          mock.enqueue(textReply(CORPUS_COMPACTION_SUMMARY))
          await server.compact(threadId, 60_000)
        }
      }
      if (spec.threadName !== undefined)
        await server.request("thread/name/set", { threadId, name: spec.threadName })
      sessions.push({ spec, sessionId: threadId, cwd, path: "" })
    }
  }
  // Rollouts are complete once the app-server has exited.
  const located = await Promise.all(
    sessions.map(async (session) => {
      const path = await findRolloutForThread(home.codexHome, session.sessionId)
      if (path === undefined) throw new Error(`corpus: no rollout for thread ${session.sessionId}`)
      return { ...session, path }
    }),
  )
  for (const spec of specs.filter((s) => s.headless === true)) {
    const [turn] = spec.turns
    if (turn === undefined || spec.turns.length !== 1) {
      throw new Error(`corpus: a headless session takes exactly one turn (${spec.project})`)
    }
    const cwd = await projectDir(spec.project)
    if (turn.command !== undefined) mock.enqueue(execCommandReply(turn.command))
    mock.enqueue(textReply(turn.assistant))
    const run = await runCodexExec({ home, prompt: turn.user, cwd, sandbox: "workspace-write" })
    const path = run.rolloutPaths[0]
    if (run.exitCode !== 0 || run.threadId === undefined || path === undefined) {
      throw new Error(
        `corpus: codex exec failed (${String(run.exitCode)}): ${run.stderr.slice(-800)}`,
      )
    }
    located.push({ spec, sessionId: run.threadId, cwd, path })
  }
  return located
}

const recordClaude = async (
  home: ClaudeHome,
  mock: MockMessagesServer,
  specs: ReadonlyArray<CorpusSessionSpec>,
  projectDir: (name: string) => Promise<string>,
): Promise<Array<CorpusSession>> => {
  const sessions: Array<CorpusSession> = []
  for (const spec of specs) {
    const cwd = await projectDir(spec.project)
    const enqueue = (turn: CorpusTurn): void => {
      if (turn.command !== undefined) mock.enqueue(messagesBashReply(turn.command))
      mock.enqueue(messagesTextReply(turn.assistant))
    }
    if (spec.headless === true) {
      const [turn] = spec.turns
      if (turn === undefined || spec.turns.length !== 1) {
        throw new Error(`corpus: a headless session takes exactly one turn (${spec.project})`)
      }
      enqueue(turn)
      const run = await runClaudePrint({ server: mock, home, cwd, prompt: turn.user })
      if (run.exitCode !== 0) {
        throw new Error(
          `corpus: claude -p failed (${String(run.exitCode)}): ${run.stderr.slice(-800)}`,
        )
      }
      sessions.push({ spec, sessionId: run.sessionId, cwd, path: run.transcriptPath })
      continue
    }
    const session = await startClaudeSession({ server: mock, home, cwd })
    try {
      for (const turn of spec.turns) {
        enqueue(turn)
        await session.send(turn.user)
      }
      await session.close()
      sessions.push({ spec, sessionId: session.sessionId, cwd, path: session.transcriptPath })
    } finally {
      await session.dispose()
    }
  }
  return sessions
}

/**
 * Records `specs` (default `defaultCorpusSessions`) with the real agents. Codex sessions run
 * first, then Claude sessions, each agent against its own mock; the result lists sessions in
 * that order.
 */
export const buildCorpus = async (
  specs: ReadonlyArray<CorpusSessionSpec> = defaultCorpusSessions,
): Promise<Corpus> => {
  await using mockResponses = await startMockResponses()
  await using mockMessages = await startMockMessages()
  const codexHome = await createCodexHome({ mock: mockResponses })
  const claudeHome = await createClaudeHome()
  const dispose = async (): Promise<void> => {
    await Promise.allSettled([codexHome.dispose(), claudeHome.dispose()])
  }
  const projectsRoot = join(codexHome.root, "projects")
  const projectDir = async (name: string): Promise<string> => {
    const dir = join(projectsRoot, name)
    await mkdir(dir, { recursive: true })
    return realpathSync(dir)
  }
  try {
    const codex = await recordCodex(
      codexHome,
      mockResponses,
      specs.filter((s) => s.agent === "codex"),
      projectDir,
    )
    const claude = await recordClaude(
      claudeHome,
      mockMessages,
      specs.filter((s) => s.agent === "claude"),
      projectDir,
    )
    return {
      root: codexHome.root,
      codexHome: codexHome.codexHome,
      claudeConfigDir: claudeHome.configDir,
      sessions: [...codex, ...claude],
      dispose,
      [Symbol.asyncDispose]: dispose,
    }
  } catch (error) {
    await dispose()
    throw error
  }
}

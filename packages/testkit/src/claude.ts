/**
 * Launchers for the real Claude Code binary against a loopback mock model: one `claude -p`
 * turn (`runClaudePrint`) and a multi-turn session held in one process over stream-json
 * (`startClaudeSession`, transcripts.md §4.3). Every launch uses an isolated `ClaudeHome`, a fixed
 * `--session-id` (so the transcript path is known) and runs in its own process group, killed on
 * dispose or timeout. Errors thrown here carry the stderr tail; they are test-support errors.
 */
import { randomUUID } from "node:crypto"
import { resolveClaudeBinary } from "./claude-binary.js"
import { claudeEnv, createClaudeHome } from "./claude-home.js"
import type { ClaudeHome, ClaudeModelEndpoint } from "./claude-home.js"
import { spawnAgent, tail } from "./claude-process.js"
import type { AgentProcess, ChildExit } from "./claude-process.js"
import { claudeTranscriptPath, locateClaudeTranscript } from "./claude-transcripts.js"

/** One line of `--output-format stream-json` (or the single `json` result). */
export interface ClaudeStreamMessage {
  readonly type: string
  readonly subtype?: string
  readonly [key: string]: unknown
}

/** The `result` message that ends a turn. */
export interface ClaudeResultMessage extends ClaudeStreamMessage {
  readonly type: "result"
  readonly is_error: boolean
  readonly session_id: string
  /** The final assistant text, or the API error text when `is_error`. */
  readonly result?: string
  readonly num_turns?: number
  readonly api_error_status?: number | null
  readonly terminal_reason?: string
}

/** Claude Code permission modes (2.1.328 `--permission-mode`). */
export type ClaudePermissionMode =
  "acceptEdits" | "auto" | "bypassPermissions" | "manual" | "dontAsk" | "plan"

/** Options shared by both launchers. */
export interface ClaudeLaunchOptions {
  /** The mock model (a `MockMessagesServer`). */
  readonly server: ClaudeModelEndpoint
  /** Reuse a home (e.g. for several runs); default a fresh one, removed on dispose. */
  readonly home?: ClaudeHome
  /** Default `home.workDir`. */
  readonly cwd?: string
  /** Default a random UUID; passed as `--session-id`. */
  readonly sessionId?: string
  /**
   * `--allowedTools`; default `["Bash"]` so a scripted Bash call runs without a prompt
   * (`--dangerously-skip-permissions` is refused when running as root).
   */
  readonly allowedTools?: ReadonlyArray<string>
  readonly permissionMode?: ClaudePermissionMode
  readonly model?: string
  /** `CLAUDE_CODE_MAX_RETRIES`; unset = Claude Code's default (10). */
  readonly maxRetries?: number
  /**
   * Continue an earlier session: `--resume <sessionId>`, which appends to its transcript (the run's
   * session id is then that one, and `sessionId` is ignored); with `fork`, `--fork-session` too,
   * which copies it into a new transcript under `sessionId`.
   */
  readonly resume?: { readonly sessionId: string; readonly fork?: boolean }
  /** Extra CLI arguments, placed before the prompt. */
  readonly args?: ReadonlyArray<string>
  /** Extra or overriding environment variables. */
  readonly env?: Readonly<Record<string, string>>
}

/** Options of `runClaudePrint`. */
export interface ClaudePrintOptions extends ClaudeLaunchOptions {
  readonly prompt: string
  /** Default `json`. */
  readonly outputFormat?: "json" | "stream-json"
  /** Kill the run and throw after this long; default 120 s. */
  readonly timeoutMs?: number
}

/** A finished `claude -p` run; dispose to remove its home (if the run created it). */
export interface ClaudePrintRun {
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** Parsed stdout: the single result (`json`) or every line (`stream-json`). */
  readonly messages: ReadonlyArray<ClaudeStreamMessage>
  /** The `result` message, if stdout held one. */
  readonly result: ClaudeResultMessage | undefined
  readonly sessionId: string
  readonly cwd: string
  /** Where the transcript was found (or would be: `<projects>/<encoded cwd>/<session>.jsonl`). */
  readonly transcriptPath: string
  readonly home: ClaudeHome
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Options of `ClaudeSession.send`. */
export interface ClaudeSendOptions {
  /** Reject (and kill the session) after this long; default 120 s. */
  readonly timeoutMs?: number
}

/** A live `claude -p --input-format stream-json` process holding one session. */
export interface ClaudeSession {
  readonly sessionId: string
  readonly cwd: string
  readonly pid: number
  readonly home: ClaudeHome
  /** `<projects>/<encoded cwd>/<session>.jsonl` (complete once `close` resolved). */
  readonly transcriptPath: string
  /** Sends one user turn and resolves with its `result` message; one turn at a time. */
  send(text: string, options?: ClaudeSendOptions): Promise<ClaudeResultMessage>
  /** Every stdout message so far. */
  messages(): ReadonlyArray<ClaudeStreamMessage>
  /** The stderr tail so far. */
  stderr(): string
  /** Ends stdin and waits for a clean exit (killing the group after `timeoutMs`, default 30 s). */
  close(options?: { readonly timeoutMs?: number }): Promise<ChildExit>
  /** Kills the process group if still running and removes the home if the session created it. */
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

const isMessage = (value: unknown): value is ClaudeStreamMessage =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { type?: unknown }).type === "string"

const isResult = (message: ClaudeStreamMessage): message is ClaudeResultMessage =>
  message.type === "result"

const parseLine = (line: string): ClaudeStreamMessage | undefined => {
  if (line.trim().length === 0) return undefined
  try {
    const parsed: unknown = JSON.parse(line)
    return isMessage(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

const commonArgs = (options: ClaudeLaunchOptions, sessionId: string): Array<string> => [
  // Claude Code refuses --session-id with --resume unless the session is forked.
  ...(options.resume === undefined
    ? ["--session-id", sessionId]
    : options.resume.fork === true
      ? ["--resume", options.resume.sessionId, "--fork-session", "--session-id", sessionId]
      : ["--resume", options.resume.sessionId]),
  ...(options.model === undefined ? [] : ["--model", options.model]),
  ...(options.permissionMode === undefined ? [] : ["--permission-mode", options.permissionMode]),
  // Variadic flag: keep it away from the prompt, which goes after `--`.
  "--allowedTools",
  (options.allowedTools ?? ["Bash"]).join(","),
  ...(options.args ?? []),
]

const prepare = async (options: ClaudeLaunchOptions) => {
  const ownsHome = options.home === undefined
  const home = options.home ?? (await createClaudeHome())
  const cwd = options.cwd ?? home.workDir
  const sessionId =
    options.resume !== undefined && options.resume.fork !== true
      ? options.resume.sessionId
      : (options.sessionId ?? randomUUID())
  const env = claudeEnv(home, options.server, {
    ...(options.maxRetries === undefined
      ? {}
      : { CLAUDE_CODE_MAX_RETRIES: String(options.maxRetries) }),
    ...options.env,
  })
  const disposeHome = () => (ownsHome ? home.dispose() : Promise.resolve())
  return { home, cwd, sessionId, env, disposeHome }
}

const describe = (what: string, agent: AgentProcess) =>
  `${what}\n--- stderr tail ---\n${tail(agent.stderr())}\n--- stdout tail ---\n${tail(agent.stdout())}`

/** Runs `claude -p <prompt>` to completion and parses its output; never throws for a non-zero exit. */
export const runClaudePrint = async (options: ClaudePrintOptions): Promise<ClaudePrintRun> => {
  const { home, cwd, sessionId, env, disposeHome } = await prepare(options)
  const binary = resolveClaudeBinary()
  const outputFormat = options.outputFormat ?? "json"
  const args = [
    "-p",
    "--output-format",
    outputFormat,
    ...(outputFormat === "stream-json" ? ["--verbose"] : []),
    ...commonArgs(options, sessionId),
    "--",
    options.prompt,
  ]
  let agent: AgentProcess
  try {
    agent = spawnAgent(binary.path, args, { cwd, env, stdin: "ignore" })
  } catch (error) {
    await disposeHome()
    throw error
  }
  const timeoutMs = options.timeoutMs ?? 120_000
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs)
  })
  const outcome = await Promise.race([agent.exited, timedOut])
  clearTimeout(timer)
  if (outcome === "timeout") {
    await agent.terminate()
    await disposeHome()
    throw new Error(
      describe(`claude -p did not exit within ${timeoutMs} ms (session ${sessionId})`, agent),
    )
  }
  const stdout = agent.stdout()
  const messages = stdout.split("\n").flatMap((line) => {
    const message = parseLine(line)
    return message === undefined ? [] : [message]
  })
  const transcriptPath =
    (await locateClaudeTranscript(home.projectsDir, sessionId)) ??
    claudeTranscriptPath(home.projectsDir, cwd, sessionId)
  return {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    stdout,
    stderr: agent.stderr(),
    messages,
    result: messages.findLast(isResult),
    sessionId,
    cwd,
    transcriptPath,
    home,
    dispose: disposeHome,
    [Symbol.asyncDispose]: disposeHome,
  }
}

/**
 * Starts `claude -p --input-format stream-json --output-format stream-json --verbose
 * --session-id <uuid>`; each `send` writes one user line and waits for the next `result` line.
 */
export const startClaudeSession = async (options: ClaudeLaunchOptions): Promise<ClaudeSession> => {
  const { home, cwd, sessionId, env, disposeHome } = await prepare(options)
  const binary = resolveClaudeBinary()
  const args = [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    ...commonArgs(options, sessionId),
  ]
  let agent: AgentProcess
  try {
    agent = spawnAgent(binary.path, args, { cwd, env, stdin: "pipe" })
  } catch (error) {
    await disposeHome()
    throw error
  }
  const messages: Array<ClaudeStreamMessage> = []
  let resultCount = 0
  const resultWaiters = new Set<() => void>()
  agent.onLine((line) => {
    const message = parseLine(line)
    if (message === undefined) return
    messages.push(message)
    if (isResult(message)) resultCount += 1
    for (const wake of [...resultWaiters]) wake()
  })
  // A write to a dead process surfaces through `exited`; keep EPIPE from crashing the test runner.
  agent.child.stdin?.on("error", () => undefined)
  let inFlight = false

  const send = async (
    text: string,
    sendOptions: ClaudeSendOptions = {},
  ): Promise<ClaudeResultMessage> => {
    if (inFlight) throw new Error(`claude session ${sessionId}: send() while a turn is in flight`)
    if (agent.exit() !== undefined)
      throw new Error(describe(`claude session ${sessionId} already exited`, agent))
    inFlight = true
    const target = resultCount + 1
    const timeoutMs = sendOptions.timeoutMs ?? 120_000
    try {
      return await new Promise<ClaudeResultMessage>((resolve, reject) => {
        const timer = setTimeout(() => {
          cleanup()
          void agent.terminate()
          reject(
            new Error(
              describe(
                `claude session ${sessionId}: no result within ${timeoutMs} ms for ${JSON.stringify(text)}`,
                agent,
              ),
            ),
          )
        }, timeoutMs)
        const wake = () => {
          if (resultCount < target) return
          cleanup()
          const result = messages.filter(isResult)[target - 1]
          if (result === undefined)
            reject(new Error(`claude session ${sessionId}: result ${target} vanished`))
          else resolve(result)
        }
        const cleanup = () => {
          clearTimeout(timer)
          resultWaiters.delete(wake)
        }
        resultWaiters.add(wake)
        agent.exited.then(
          (exit) => {
            if (resultCount >= target) return
            cleanup()
            reject(
              new Error(
                describe(
                  `claude session ${sessionId} exited (${JSON.stringify(exit)}) before answering ${JSON.stringify(text)}`,
                  agent,
                ),
              ),
            )
          },
          () => undefined,
        )
        agent.child.stdin?.write(
          `${JSON.stringify({ type: "user", message: { role: "user", content: text } })}\n`,
        )
      })
    } finally {
      inFlight = false
    }
  }

  const close = async (closeOptions: { readonly timeoutMs?: number } = {}) => {
    agent.child.stdin?.end()
    const timeoutMs = closeOptions.timeoutMs ?? 30_000
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs)
    })
    const outcome = await Promise.race([agent.exited, timedOut])
    clearTimeout(timer)
    if (outcome !== "timeout") return outcome
    await agent.terminate()
    throw new Error(
      describe(
        `claude session ${sessionId} did not exit within ${timeoutMs} ms of closing stdin`,
        agent,
      ),
    )
  }

  const dispose = async () => {
    await agent.terminate()
    await disposeHome()
  }

  return {
    sessionId,
    cwd,
    pid: agent.pid,
    home,
    transcriptPath: claudeTranscriptPath(home.projectsDir, cwd, sessionId),
    send,
    messages: () => [...messages],
    stderr: () => agent.stderr(),
    close,
    dispose,
    [Symbol.asyncDispose]: dispose,
  }
}

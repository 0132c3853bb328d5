/**
 * `codex exec --json` launcher: stdin closed (otherwise Codex waits for EOF, §10(k)), stdout
 * parsed as JSONL events, the rollout files the run wrote collected afterwards. The process runs
 * in its own group and is killed on timeout or dispose.
 */
import { resolveCodexBinary } from "./codex-binary.js"
import type { CodexHome } from "./codex-home.js"
import { spawnProcess, withTimeout } from "./process.js"
import type { TestProcess } from "./process.js"
import { findRolloutFiles } from "./rollout-files.js"

/** One `--json` event, e.g. `{type: "item.completed", item}`. */
export interface CodexExecEvent {
  readonly type: string
  readonly [key: string]: unknown
}

/** Options of `startCodexExec` / `runCodexExec`. */
export interface CodexExecOptions {
  readonly home: CodexHome
  readonly prompt: string
  /** Default `read-only` (what `codex exec` uses); `workspace-write` lets commands write in cwd. */
  readonly sandbox?: "read-only" | "workspace-write" | "danger-full-access"
  /** Extra CLI arguments placed before the prompt (e.g. `["-c", "model_auto_compact_token_limit=1000"]`). */
  readonly args?: ReadonlyArray<string>
  /** Default `home.workdir`. */
  readonly cwd?: string
  /** Default true: pass `--skip-git-repo-check`. */
  readonly skipGitRepoCheck?: boolean
  /** Extra environment on top of `home.env`. */
  readonly env?: Readonly<Record<string, string>>
  /** Kill the run after this long; default 60 s. */
  readonly timeoutMs?: number
}

/** What a finished run produced. */
export interface CodexExecResult {
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly events: ReadonlyArray<CodexExecEvent>
  /** stdout lines that were not JSON. */
  readonly otherStdout: ReadonlyArray<string>
  readonly stderr: string
  /** From the `thread.started` event. */
  readonly threadId: string | undefined
  /** Rollout files that exist after the run and did not exist before it. */
  readonly rolloutPaths: ReadonlyArray<string>
  readonly durationMs: number
}

/** A running `codex exec`. */
export interface CodexExecRun {
  readonly process: TestProcess
  /** Settles when the process exits (or rejects on timeout, after killing it). */
  readonly result: Promise<CodexExecResult>
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Spawns `codex exec --json … <prompt>`. */
export const startCodexExec = async (options: CodexExecOptions): Promise<CodexExecRun> => {
  const { home } = options
  const binary = resolveCodexBinary()
  const before = new Set(await findRolloutFiles(home.codexHome))
  const args = [
    binary.script,
    "exec",
    "--json",
    "--sandbox",
    options.sandbox ?? "read-only",
    ...(options.skipGitRepoCheck === false ? [] : ["--skip-git-repo-check"]),
    ...(options.args ?? []),
    "--",
    options.prompt,
  ]
  const started = Date.now()
  const child = spawnProcess(binary.node, {
    args,
    cwd: options.cwd ?? home.workdir,
    env: { ...home.env, ...options.env },
    stdin: "ignore",
  })
  const events: Array<CodexExecEvent> = []
  const otherStdout: Array<string> = []
  let buffer = ""
  const takeLine = (line: string): void => {
    if (line.trim() === "") return
    try {
      const parsed = JSON.parse(line) as unknown
      if (typeof parsed === "object" && parsed !== null && "type" in parsed)
        events.push(parsed as CodexExecEvent)
      else otherStdout.push(line)
    } catch {
      otherStdout.push(line)
    }
  }
  child.child.stdout?.setEncoding("utf8")
  child.child.stdout?.on("data", (chunk: string) => {
    buffer += chunk
    let newline = buffer.indexOf("\n")
    while (newline !== -1) {
      takeLine(buffer.slice(0, newline))
      buffer = buffer.slice(newline + 1)
      newline = buffer.indexOf("\n")
    }
  })
  const stdoutDone = new Promise<void>((resolve) => {
    if (child.child.stdout === null) resolve()
    else child.child.stdout.once("close", () => resolve())
  })
  const timeoutMs = options.timeoutMs ?? 60_000
  const result = withTimeout(
    child.exited.then(async (exit) => {
      await stdoutDone
      takeLine(buffer)
      const after = await findRolloutFiles(home.codexHome)
      const threadStarted = events.find((e) => e.type === "thread.started")
      return {
        exitCode: exit.code,
        signal: exit.signal,
        events,
        otherStdout,
        stderr: child.stderrTail(),
        threadId:
          typeof threadStarted?.["thread_id"] === "string" ? threadStarted["thread_id"] : undefined,
        rolloutPaths: after.filter((path) => !before.has(path)),
        durationMs: Date.now() - started,
      }
    }),
    timeoutMs,
    () =>
      `codex exec did not finish within ${timeoutMs} ms; events: ${events.map((e) => e.type).join(", ")}\nstderr tail:\n${child.stderrTail()}`,
  )
  result.catch(() => child.kill("SIGKILL"))
  const dispose = async (): Promise<void> => {
    await child.stop(1000)
  }
  return { process: child, result, dispose, [Symbol.asyncDispose]: dispose }
}

/** Runs `codex exec` to completion and returns what it produced; always kills the process group. */
export const runCodexExec = async (options: CodexExecOptions): Promise<CodexExecResult> => {
  const run = await startCodexExec(options)
  try {
    return await run.result
  } finally {
    await run.dispose()
  }
}

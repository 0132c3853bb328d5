/**
 * Process plumbing for the Claude Code launchers: each agent runs as the leader of its own
 * process group (so the shells its Bash tool spawns die with it), stdout is split into lines,
 * stderr keeps a bounded tail for error messages, and a process-exit hook kills any group a
 * failing test left behind. Internal to the testkit.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"

/** How a child ended. */
export interface ChildExit {
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
}

/** A spawned agent process. */
export interface AgentProcess {
  readonly child: ChildProcess
  readonly pid: number
  /** Settles when the process has exited and its stdio closed. */
  readonly exited: Promise<ChildExit>
  /** The exit, once known. */
  exit(): ChildExit | undefined
  /** Everything written to stdout so far. */
  stdout(): string
  /** The last `STDERR_TAIL` characters of stderr. */
  stderr(): string
  /** Registers a callback for every complete stdout line. */
  onLine(listener: (line: string) => void): void
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once exited. */
  terminate(graceMs?: number): Promise<ChildExit>
}

const STDERR_TAIL = 16_000
const live = new Set<number>()
let exitHookInstalled = false

const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // Already gone.
  }
}

/** Spawns `command` detached (own process group) with piped stdio. */
export const spawnAgent = (
  command: string,
  args: ReadonlyArray<string>,
  options: {
    readonly cwd: string
    readonly env: Readonly<Record<string, string>>
    readonly stdin: "pipe" | "ignore"
  },
): AgentProcess => {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.once("exit", () => {
      for (const pid of live) killGroup(pid, "SIGKILL")
    })
  }
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.stdin, "pipe", "pipe"],
    detached: true,
  })
  if (child.pid === undefined) throw new Error(`failed to spawn ${command}`)
  const pid = child.pid
  live.add(pid)
  let stdout = ""
  let stderr = ""
  let partial = ""
  let exitInfo: ChildExit | undefined
  const listeners: Array<(line: string) => void> = []
  child.stdout?.setEncoding("utf8")
  child.stderr?.setEncoding("utf8")
  child.stdout?.on("data", (chunk: string) => {
    stdout += chunk
    partial += chunk
    let newline = partial.indexOf("\n")
    while (newline >= 0) {
      const line = partial.slice(0, newline)
      partial = partial.slice(newline + 1)
      for (const listener of listeners) listener(line)
      newline = partial.indexOf("\n")
    }
  })
  child.stderr?.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL)
  })
  const exited = new Promise<ChildExit>((resolve) => {
    child.once("error", (error) => {
      stderr += `\n[spawn error] ${String(error)}`
    })
    child.once("close", (exitCode, signal) => {
      live.delete(pid)
      // The leader is gone; reap anything it left in its group.
      killGroup(pid, "SIGKILL")
      if (partial.length > 0) for (const listener of listeners) listener(partial)
      partial = ""
      exitInfo = { exitCode, signal }
      resolve(exitInfo)
    })
  })
  const terminate = async (graceMs = 3_000) => {
    if (exitInfo !== undefined) return exitInfo
    killGroup(pid, "SIGTERM")
    const timer = setTimeout(() => killGroup(pid, "SIGKILL"), graceMs)
    try {
      return await exited
    } finally {
      clearTimeout(timer)
    }
  }
  return {
    child,
    pid,
    exited,
    exit: () => exitInfo,
    stdout: () => stdout,
    stderr: () => stderr,
    onLine: (listener) => void listeners.push(listener),
    terminate,
  }
}

/** Last `n` characters of a text, for error messages. */
export const tail = (text: string, n = 2_000): string =>
  text.length <= n ? text : `…${text.slice(-n)}`

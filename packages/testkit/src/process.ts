/**
 * Child processes for tests: each one leads its own process group so `kill` reaches everything
 * it spawned, stderr keeps a bounded tail for error messages, and every live group is SIGKILLed
 * when the test process exits. Never blocks the event loop (no spawnSync/execSync).
 */
import { spawn } from "node:child_process"
import type { ChildProcess, StdioOptions } from "node:child_process"
import { readdir, readFile } from "node:fs/promises"

/** How a process ended. */
export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** A spawned process group. */
export interface TestProcess {
  readonly pid: number
  readonly child: ChildProcess
  /** Settles when the leader exits. */
  readonly exited: Promise<ProcessExit>
  /** The last bytes of stderr (bounded), for error messages. */
  stderrTail(): string
  /** Sends `signal` to the whole group; ignores an already-gone group. */
  kill(signal?: NodeJS.Signals): void
  /**
   * SIGTERM the group, SIGKILL after `graceMs`, resolve once the leader is gone and (on Linux)
   * every other member of the group has exited too, or `graceMs` more has passed.
   */
  stop(graceMs?: number): Promise<ProcessExit>
}

/** Options of `spawnProcess`. */
export interface SpawnOptions {
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** stdin: `ignore` (closed) or `pipe`; default `ignore`. */
  readonly stdin?: "ignore" | "pipe"
  /** Bytes of stderr to keep; default 16 KiB. */
  readonly stderrLimit?: number
}

const liveGroups = new Set<number>()
let exitHookInstalled = false

const killGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal)
  } catch {
    // ESRCH: the group is already gone.
  }
}

const installExitHook = (): void => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const pid of liveGroups) killGroup(pid, "SIGKILL")
  })
}

/**
 * Whether process group `pgid` still has a member that has not exited (zombies are done). Reads
 * /proc; elsewhere false.
 */
const groupHasLiveMember = async (pgid: number): Promise<boolean> => {
  let entries: Array<string>
  try {
    entries = await readdir("/proc")
  } catch {
    return false
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8")
      // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true
    } catch {
      // Gone while reading.
    }
  }
  return false
}

/** Resolves once group `pgid` has no live member, or after `timeoutMs`. */
const groupGone = async (pgid: number, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && (await groupHasLiveMember(pgid)))
    await new Promise((resolve) => setTimeout(resolve, 20))
}

/** Spawns `command` as the leader of a new process group. */
export const spawnProcess = (command: string, options: SpawnOptions): TestProcess => {
  installExitHook()
  const stdio: StdioOptions = [options.stdin ?? "ignore", "pipe", "pipe"]
  const child = spawn(command, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    stdio,
    detached: true,
  })
  const pid = child.pid
  if (pid === undefined) throw new Error(`spawn ${command} failed: no pid`)
  liveGroups.add(pid)
  const limit = options.stderrLimit ?? 16 * 1024
  let tail = ""
  child.stderr?.setEncoding("utf8")
  child.stderr?.on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-limit)
  })
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }))
    child.once("error", () => resolve({ code: null, signal: null }))
  })
  void exited.then(() => {
    // The leader is gone; its group may still hold children, so kill them too.
    killGroup(pid, "SIGKILL")
    liveGroups.delete(pid)
  })
  const kill = (signal: NodeJS.Signals = "SIGTERM"): void => killGroup(pid, signal)
  return {
    pid,
    child,
    exited,
    stderrTail: () => tail,
    kill,
    stop: async (graceMs = 2000) => {
      kill("SIGTERM")
      const timer = setTimeout(() => kill("SIGKILL"), graceMs)
      const exit = await exited
      clearTimeout(timer)
      // The leader's exit SIGKILLs the rest of its group (above); they may take a moment to go.
      await groupGone(pid, graceMs)
      return exit
    },
  }
}

/** Resolves with the value or rejects with `message` after `timeoutMs`. */
export const withTimeout = <A>(promise: Promise<A>, timeoutMs: number, message: () => string) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message())), timeoutMs)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error instanceof Error ? error : new Error(String(error)))
      },
    )
  })

/**
 * Pids of live processes whose environment contains `needle` (e.g. `CODEX_HOME=/tmp/x`).
 * Linux only (reads /proc); elsewhere it returns an empty list.
 */
export const findProcessesByEnv = async (needle: string): Promise<ReadonlyArray<number>> => {
  let entries: Array<string>
  try {
    entries = await readdir("/proc")
  } catch {
    return []
  }
  const pids: Array<number> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    try {
      const environ = await readFile(`/proc/${entry}/environ`)
      if (environ.toString("utf8").split("\0").includes(needle)) pids.push(pid)
    } catch {
      // Gone or not ours.
    }
  }
  return pids
}

/**
 * `codex app-server daemon` inside an isolated CODEX_HOME: start (parse the one JSON object it
 * prints), WebSocket connections over its unix control socket (`ws+unix://<socket>:/`, one
 * JSON-RPC message per text frame), stop, and cleanup that kills what `stop` leaves behind (the
 * `pid-update-loop`, §10(g)) by pid. Everything here is asynchronous: a blocked event loop
 * stalls the daemon for every subscriber (§10(j)).
 */
import { realpath } from "node:fs/promises"
import { WebSocket } from "ws"
import { codexAppClient } from "./codex-app-server.js"
import type { CodexAppClient } from "./codex-app-server.js"
import { resolveCodexBinary } from "./codex-binary.js"
import { removeDaemonSocketTargets } from "./codex-home.js"
import type { CodexHome } from "./codex-home.js"
import { createJsonRpcPeer } from "./json-rpc-peer.js"
import { findProcessesByEnv, spawnProcess, withTimeout } from "./process.js"

/** A client connected to the daemon's control socket. */
export interface CodexDaemonConnection extends CodexAppClient {
  /** Closes the WebSocket. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** What `stop()` observed. */
export interface CodexDaemonStopReport {
  /** The JSON object `daemon stop` printed. */
  readonly output: Record<string, unknown>
  /** Pids that still carried this CODEX_HOME once the server had exited (≤ 5 s), SIGKILLed. */
  readonly leftoverPids: ReadonlyArray<number>
}

/** A daemon started in an isolated home. */
export interface CodexDaemon {
  /** The JSON object `daemon start` printed (`status`, `pid`, `socketPath`, versions, …). */
  readonly startOutput: Record<string, unknown>
  /** `socketPath` as printed (a symlink in 0.169.0). */
  readonly socketPath: string
  /** The symlink's target (what the WebSocket connects to). */
  readonly resolvedSocketPath: string
  /** Opens a WebSocket client; by default performs `initialize` + `initialized`. */
  connect(options?: { readonly initialize?: boolean }): Promise<CodexDaemonConnection>
  /** Runs `codex app-server daemon <verb>` and parses its JSON output. */
  command(verb: string): Promise<Record<string, unknown>>
  /** `daemon stop`, then SIGKILLs leftovers by pid. */
  stop(): Promise<CodexDaemonStopReport>
  /** Closes connections, stops if still running, kills leftovers, removes the socket files. */
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

const runDaemonCommand = async (
  home: CodexHome,
  verb: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> => {
  const binary = resolveCodexBinary()
  const child = spawnProcess(binary.node, {
    args: [binary.script, "app-server", "daemon", verb],
    cwd: home.workdir,
    env: home.env,
  })
  let stdout = ""
  child.child.stdout?.setEncoding("utf8")
  child.child.stdout?.on("data", (chunk: string) => {
    stdout += chunk
  })
  const exit = await withTimeout(child.exited, timeoutMs, () => {
    child.kill("SIGKILL")
    return `codex app-server daemon ${verb}: no exit within ${timeoutMs} ms\nstderr tail:\n${child.stderrTail()}`
  })
  const line = stdout
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.startsWith("{"))
  let parsed: unknown
  try {
    parsed = line === undefined ? undefined : JSON.parse(line)
  } catch {
    parsed = undefined
  }
  if (exit.code !== 0 || typeof parsed !== "object" || parsed === null)
    throw new Error(
      `codex app-server daemon ${verb} exited ${exit.code}; stdout: ${stdout.trim()}\nstderr tail:\n${child.stderrTail()}`,
    )
  return parsed as Record<string, unknown>
}

const killPid = (pid: number): void => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // already gone
  }
}

/** Starts the daemon in `home` (first start copies the CLI into CODEX_HOME/packages, ~3 s). */
export const startCodexDaemon = async (
  home: CodexHome,
  options: { readonly timeoutMs?: number } = {},
): Promise<CodexDaemon> => {
  const startOutput = await runDaemonCommand(home, "start", options.timeoutMs ?? 60_000)
  const socketPath = startOutput["socketPath"]
  if (typeof socketPath !== "string")
    throw new Error(`daemon start printed no socketPath: ${JSON.stringify(startOutput)}`)
  const resolvedSocketPath = await realpath(socketPath)
  const connections = new Set<CodexDaemonConnection>()
  let stopped: Promise<CodexDaemonStopReport> | undefined

  // The updater loop and the server inherit our environment, so CODEX_HOME identifies them.
  /** SIGKILLs every process still carrying this CODEX_HOME and waits (≤ 5 s) until they are gone. */
  const killLeftovers = async (): Promise<Array<number>> => {
    const pids = [...(await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`))]
    for (const pid of pids) killPid(pid)
    const deadline = Date.now() + 5000
    while (Date.now() < deadline) {
      const alive = await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`)
      if (!pids.some((pid) => alive.includes(pid))) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return pids
  }

  const connect = async (
    connectOptions: { readonly initialize?: boolean } = {},
  ): Promise<CodexDaemonConnection> => {
    const socket = new WebSocket(`ws+unix://${resolvedSocketPath}:/`)
    const handle = createJsonRpcPeer({
      send: (message) => socket.send(message),
      describe: () => ` (daemon socket ${socketPath})`,
    })
    socket.on("message", (data: Buffer, isBinary) => {
      if (!isBinary) handle.receive(data.toString("utf8"))
    })
    socket.on("close", (code) => handle.close(`websocket closed with code ${code}`))
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve())
      socket.once("error", (error) =>
        reject(new Error(`cannot connect to daemon socket ${socketPath}: ${error.message}`)),
      )
    })
    socket.on("error", () => undefined)
    const close = async (): Promise<void> => {
      connections.delete(connection)
      if (socket.readyState === WebSocket.CLOSED) return
      const done = new Promise<void>((resolve) => socket.once("close", () => resolve()))
      socket.close()
      await withTimeout(done, 1000, () => "").catch(() => socket.terminate())
    }
    const connection: CodexDaemonConnection = {
      ...codexAppClient(handle.peer),
      close,
      [Symbol.asyncDispose]: close,
    }
    connections.add(connection)
    if (connectOptions.initialize !== false) await connection.initialize()
    return connection
  }

  const stop = (): Promise<CodexDaemonStopReport> => {
    stopped ??= (async () => {
      for (const connection of [...connections]) await connection.close()
      const output = await runDaemonCommand(home, "stop", 30_000)
      // `stop` may return while the server is still shutting down; give it time to go by itself
      // so only genuine leftovers are reported (no event to wait on: poll /proc).
      const serverPid = startOutput["pid"]
      const deadline = Date.now() + 5000
      while (
        typeof serverPid === "number" &&
        Date.now() < deadline &&
        (await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`)).includes(serverPid)
      )
        await new Promise((resolve) => setTimeout(resolve, 50))
      return { output, leftoverPids: await killLeftovers() }
    })()
    return stopped
  }

  let disposed: Promise<void> | undefined
  const dispose = (): Promise<void> => {
    disposed ??= (async () => {
      try {
        await stop()
      } finally {
        await killLeftovers()
        await removeDaemonSocketTargets(home.codexHome)
      }
    })()
    return disposed
  }

  return {
    startOutput,
    socketPath,
    resolvedSocketPath,
    connect,
    command: (verb) => runDaemonCommand(home, verb, 30_000),
    stop,
    dispose,
    [Symbol.asyncDispose]: dispose,
  }
}

/**
 * A test client for the Codex app-server protocol (codex-app-server.md §3–§7) on any JSON-RPC
 * peer, and a launcher for `codex app-server` over stdio (one JSON object per line). This is test
 * support only; Baton's product transport lives in @baton/ipc-codex.
 */
import { resolveCodexBinary } from "./codex-binary.js"
import type { CodexHome } from "./codex-home.js"
import { createJsonRpcPeer } from "./json-rpc-peer.js"
import type { JsonRpcNotification, JsonRpcPeer, WaitOptions } from "./json-rpc-peer.js"
import { spawnProcess, withTimeout } from "./process.js"
import type { TestProcess } from "./process.js"

/** The outcome of a turn run to completion. */
export interface CompletedTurn {
  readonly turnId: string
  /** The `turn/completed` notification. */
  readonly completed: JsonRpcNotification
  /** `turn.status` from it: `completed`, `failed` or `interrupted`. */
  readonly status: string
  /** Index of the first notification that belongs to this turn's wait window. */
  readonly since: number
}

/** The outcome of `compact`. */
export interface CompletedCompaction extends CompletedTurn {
  /** The `item/completed` notification whose item is the `contextCompaction`. */
  readonly compactionItem: JsonRpcNotification
}

/** App-server helpers on top of a JSON-RPC peer. */
export interface CodexAppClient extends JsonRpcPeer {
  /** `initialize` (clientInfo, `capabilities: null`) then the `initialized` notification. */
  initialize(clientInfo?: { name: string; title: string; version: string }): Promise<unknown>
  /** `thread/start`; resolves with the thread id and raw result once `thread/started` arrived. */
  startThread(params?: Record<string, unknown>): Promise<{ threadId: string; result: unknown }>
  /** `turn/start` with one text input; resolves once the request is acknowledged. */
  startTurn(
    threadId: string,
    text: string,
    params?: Record<string, unknown>,
  ): Promise<{ turnId: string; result: unknown }>
  /** Waits for `turn/completed` of `turnId`. */
  waitForTurnCompleted(turnId: string, options?: WaitOptions): Promise<JsonRpcNotification>
  /** `startTurn` + `waitForTurnCompleted`. */
  runTurn(
    threadId: string,
    text: string,
    options?: { params?: Record<string, unknown>; timeoutMs?: number },
  ): Promise<CompletedTurn>
  /**
   * `thread/compact/start`, then waits for the compaction turn (the first `turn/started` of the
   * thread after the request), its `contextCompaction` `item/completed`, and its `turn/completed`.
   */
  compact(threadId: string, timeoutMs?: number): Promise<CompletedCompaction>
}

const field = (value: unknown, ...path: ReadonlyArray<string>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

const stringField = (value: unknown, ...path: ReadonlyArray<string>): string => {
  const found = field(value, ...path)
  if (typeof found !== "string")
    throw new Error(`expected string at ${path.join(".")} in ${JSON.stringify(value)}`)
  return found
}

/** Wraps a peer with the app-server helpers. */
export const codexAppClient = (peer: JsonRpcPeer): CodexAppClient => {
  const waitForTurnCompleted = (turnId: string, options: WaitOptions = {}) =>
    peer.waitForNotification(
      (n) => n.method === "turn/completed" && field(n.params, "turn", "id") === turnId,
      options,
    )
  const startTurn = async (
    threadId: string,
    text: string,
    params: Record<string, unknown> = {},
  ) => {
    const result = await peer.request("turn/start", {
      threadId,
      input: [{ type: "text", text, text_elements: [] }],
      ...params,
    })
    return { turnId: stringField(result, "turn", "id"), result }
  }
  return {
    ...peer,
    initialize: async (
      clientInfo = { name: "baton-testkit", title: "Baton testkit", version: "0.0.0" },
    ) => {
      const result = await peer.request("initialize", { clientInfo, capabilities: null })
      peer.notify("initialized")
      return result
    },
    startThread: async (params = {}) => {
      const since = peer.notifications().length
      const result = await peer.request("thread/start", params)
      const threadId = stringField(result, "thread", "id")
      // The response can overtake `thread/started`; waiting keeps later turn windows clean.
      await peer.waitForNotification(
        (n) => n.method === "thread/started" && field(n.params, "thread", "id") === threadId,
        { since, timeoutMs: 10_000 },
      )
      return { threadId, result }
    },
    startTurn,
    waitForTurnCompleted,
    runTurn: async (threadId, text, options = {}) => {
      const since = peer.notifications().length
      const { turnId } = await startTurn(threadId, text, options.params)
      const completed = await waitForTurnCompleted(turnId, {
        since,
        timeoutMs: options.timeoutMs ?? 60_000,
      })
      return { turnId, completed, status: String(field(completed.params, "turn", "status")), since }
    },
    compact: async (threadId, timeoutMs = 60_000) => {
      const since = peer.notifications().length
      await peer.request("thread/compact/start", { threadId })
      const started = await peer.waitForNotification(
        (n) => n.method === "turn/started" && field(n.params, "threadId") === threadId,
        { since, timeoutMs },
      )
      const turnId = stringField(started.params, "turn", "id")
      const completed = await waitForTurnCompleted(turnId, { since, timeoutMs })
      const compactionItem = await peer.waitForNotification(
        (n) =>
          n.method === "item/completed" &&
          field(n.params, "turnId") === turnId &&
          field(n.params, "item", "type") === "contextCompaction",
        { since, timeoutMs: 5000 },
      )
      return {
        turnId,
        completed,
        compactionItem,
        status: String(field(completed.params, "turn", "status")),
        since,
      }
    },
  }
}

/** Options of `startCodexAppServer`. */
export interface CodexAppServerOptions {
  readonly home: CodexHome
  /** Extra arguments after `app-server` (e.g. `["-c", "key=value"]`). */
  readonly args?: ReadonlyArray<string>
  /** Default `home.workdir`. */
  readonly cwd?: string
  readonly env?: Readonly<Record<string, string>>
  /** Default true: perform `initialize` + `initialized` before resolving. */
  readonly initialize?: boolean
}

/** A `codex app-server` child over stdio with the client helpers. */
export interface CodexAppServer extends CodexAppClient {
  readonly process: TestProcess
  /** Closes stdin, then terminates the process group. */
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Spawns `codex app-server` (stdio) and, by default, performs the handshake. */
export const startCodexAppServer = async (
  options: CodexAppServerOptions,
): Promise<CodexAppServer> => {
  const binary = resolveCodexBinary()
  const child = spawnProcess(binary.node, {
    args: [binary.script, "app-server", ...(options.args ?? [])],
    cwd: options.cwd ?? options.home.workdir,
    env: { ...options.home.env, ...options.env },
    stdin: "pipe",
  })
  const stdin = child.child.stdin
  if (stdin === null) throw new Error("codex app-server: no stdin pipe")
  stdin.on("error", () => undefined)
  const handle = createJsonRpcPeer({
    send: (message) => {
      stdin.write(`${message}\n`)
    },
    describe: () => `\ncodex app-server stderr tail:\n${child.stderrTail().slice(-4000)}`,
  })
  let buffer = ""
  child.child.stdout?.setEncoding("utf8")
  child.child.stdout?.on("data", (chunk: string) => {
    buffer += chunk
    let newline = buffer.indexOf("\n")
    while (newline !== -1) {
      handle.receive(buffer.slice(0, newline))
      buffer = buffer.slice(newline + 1)
      newline = buffer.indexOf("\n")
    }
  })
  void child.exited.then((exit) =>
    handle.close(`codex app-server exited with code ${exit.code} signal ${exit.signal}`),
  )
  const dispose = async (): Promise<void> => {
    stdin.end()
    await withTimeout(child.exited, 2000, () => "").catch(() => undefined)
    await child.stop(1000)
  }
  const server: CodexAppServer = {
    ...codexAppClient(handle.peer),
    process: child,
    dispose,
    [Symbol.asyncDispose]: dispose,
  }
  if (options.initialize !== false) {
    try {
      await server.initialize()
    } catch (error) {
      await dispose()
      throw error
    }
  }
  return server
}

/**
 * A small JSON-RPC peer for tests, independent of the transport (stdio lines or WebSocket
 * frames). Lenient the way Codex's wire needs (codex-app-server.md §2.1): messages without
 * `jsonrpc` or `params`, extra members, and non-JSON input are accepted (non-JSON is kept in
 * `garbage()`). Outgoing messages omit `jsonrpc`, as Codex does. Every notification is kept so
 * tests can assert order; waits search that history, so a notification that arrived before the
 * wait started is still found.
 */

/** A notification received from the server. */
export interface JsonRpcNotification {
  readonly method: string
  readonly params: unknown
  /** Position in arrival order (0-based), usable as `since` for later waits. */
  readonly index: number
  readonly receivedAt: number
}

/** A request the server sent to the client (approvals, user input, …). */
export interface JsonRpcServerRequest {
  readonly id: string | number
  readonly method: string
  readonly params: unknown
}

/** An error response from the server, thrown by `request`. */
export class JsonRpcError extends Error {
  readonly code: number
  readonly data: unknown
  readonly method: string
  constructor(method: string, code: number, message: string, data: unknown) {
    super(`${method} failed: ${code} ${message}`)
    this.name = "JsonRpcError"
    this.method = method
    this.code = code
    this.data = data
  }
}

/** Answers a server→client request; return the `result`, or throw a `JsonRpcError` to fail it. */
export type ServerRequestHandler = (request: JsonRpcServerRequest) => unknown

/** Options of `waitForNotification`. */
export interface WaitOptions {
  /** Default 30 s. */
  readonly timeoutMs?: number
  /** Only consider notifications with `index >= since`. */
  readonly since?: number
}

/** The client side of a JSON-RPC connection. */
export interface JsonRpcPeer {
  /** Sends a request and resolves with its `result`; rejects with `JsonRpcError` or on timeout/close. */
  request<R = unknown>(method: string, params?: unknown, timeoutMs?: number): Promise<R>
  /** Sends a notification (no id). */
  notify(method: string, params?: unknown): void
  /** All notifications so far, in arrival order. */
  notifications(): ReadonlyArray<JsonRpcNotification>
  /** Resolves with the first notification (from `since`) that matches. */
  waitForNotification(
    predicate: (notification: JsonRpcNotification) => boolean,
    options?: WaitOptions,
  ): Promise<JsonRpcNotification>
  /** Server→client requests received so far. */
  serverRequests(): ReadonlyArray<JsonRpcServerRequest>
  /** Replaces the handler for server→client requests (default: answer error -32601). */
  onServerRequest(handler: ServerRequestHandler): void
  /** Lines or frames that were not JSON-RPC messages. */
  garbage(): ReadonlyArray<string>
  /** Resolves when the transport closed. */
  readonly closed: Promise<void>
}

/** The transport half the peer needs. */
export interface JsonRpcTransport {
  send(message: string): void
  /** Extra context for error messages (e.g. the server's stderr tail). */
  describe(): string
}

/** A peer plus the hooks its transport feeds. */
export interface JsonRpcPeerHandle {
  readonly peer: JsonRpcPeer
  /** Feed one complete message (a line or a frame). */
  readonly receive: (text: string) => void
  /** Mark the transport closed; pending requests and waits reject. */
  readonly close: (reason: string) => void
}

interface Pending {
  readonly method: string
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
  readonly timer: NodeJS.Timeout
}

interface Waiter {
  readonly predicate: (notification: JsonRpcNotification) => boolean
  readonly since: number
  readonly resolve: (notification: JsonRpcNotification) => void
  readonly reject: (error: Error) => void
  readonly timer: NodeJS.Timeout
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Creates a peer over `transport`. */
export const createJsonRpcPeer = (transport: JsonRpcTransport): JsonRpcPeerHandle => {
  let nextId = 1
  const pending = new Map<string, Pending>()
  const notifications: Array<JsonRpcNotification> = []
  const waiters = new Set<Waiter>()
  const serverRequests: Array<JsonRpcServerRequest> = []
  const garbage: Array<string> = []
  let closedReason: string | undefined
  let resolveClosed: () => void = () => undefined
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve
  })
  let handler: ServerRequestHandler = (request) => {
    throw new JsonRpcError(request.method, -32601, "testkit: no handler for server request", null)
  }

  const send = (message: Record<string, unknown>): void => {
    if (closedReason !== undefined) throw new Error(`json-rpc: connection closed (${closedReason})`)
    transport.send(JSON.stringify(message))
  }

  const answerServerRequest = async (request: JsonRpcServerRequest): Promise<void> => {
    try {
      const result = await handler(request)
      send({ id: request.id, result: result ?? {} })
    } catch (error) {
      const rpc =
        error instanceof JsonRpcError
          ? error
          : new JsonRpcError(request.method, -32603, String(error), null)
      send({ id: request.id, error: { code: rpc.code, message: rpc.message } })
    }
  }

  const receive = (text: string): void => {
    if (text.trim() === "") return
    let message: unknown
    try {
      message = JSON.parse(text)
    } catch {
      garbage.push(text)
      return
    }
    if (!isRecord(message)) {
      garbage.push(text)
      return
    }
    const { id, method } = message
    const hasId = typeof id === "string" || typeof id === "number"
    if (typeof method === "string" && hasId) {
      const request = { id, method, params: message["params"] }
      serverRequests.push(request)
      void answerServerRequest(request).catch(() => undefined)
      return
    }
    if (typeof method === "string") {
      const notification: JsonRpcNotification = {
        method,
        params: message["params"],
        index: notifications.length,
        receivedAt: Date.now(),
      }
      notifications.push(notification)
      for (const waiter of [...waiters]) {
        if (notification.index >= waiter.since && waiter.predicate(notification)) {
          waiters.delete(waiter)
          clearTimeout(waiter.timer)
          waiter.resolve(notification)
        }
      }
      return
    }
    if (hasId) {
      const entry = pending.get(String(id))
      if (entry === undefined) {
        garbage.push(text)
        return
      }
      pending.delete(String(id))
      clearTimeout(entry.timer)
      const error = message["error"]
      if (isRecord(error)) {
        entry.reject(
          new JsonRpcError(
            entry.method,
            typeof error["code"] === "number" ? error["code"] : 0,
            typeof error["message"] === "string" ? error["message"] : JSON.stringify(error),
            error["data"],
          ),
        )
      } else {
        entry.resolve(message["result"])
      }
      return
    }
    garbage.push(text)
  }

  const close = (reason: string): void => {
    if (closedReason !== undefined) return
    closedReason = reason
    const detail = `json-rpc: connection closed (${reason})${transport.describe()}`
    for (const entry of pending.values()) {
      clearTimeout(entry.timer)
      entry.reject(new Error(`${entry.method}: ${detail}`))
    }
    pending.clear()
    for (const waiter of waiters) {
      clearTimeout(waiter.timer)
      waiter.reject(new Error(`waitForNotification: ${detail}`))
    }
    waiters.clear()
    resolveClosed()
  }

  const peer: JsonRpcPeer = {
    request: <R>(method: string, params?: unknown, timeoutMs = 30_000): Promise<R> =>
      new Promise<R>((resolve, reject) => {
        const id = nextId++
        const timer = setTimeout(() => {
          pending.delete(String(id))
          reject(new Error(`${method}: no response within ${timeoutMs} ms${transport.describe()}`))
        }, timeoutMs)
        pending.set(String(id), {
          method,
          resolve: (value) => resolve(value as R),
          reject,
          timer,
        })
        try {
          send(params === undefined ? { id, method } : { id, method, params })
        } catch (error) {
          clearTimeout(timer)
          pending.delete(String(id))
          reject(error instanceof Error ? error : new Error(String(error)))
        }
      }),
    notify: (method, params) => send(params === undefined ? { method } : { method, params }),
    notifications: () => [...notifications],
    waitForNotification: (predicate, options = {}) =>
      new Promise((resolve, reject) => {
        const since = options.since ?? 0
        const found = notifications.find((n) => n.index >= since && predicate(n))
        if (found !== undefined) return resolve(found)
        if (closedReason !== undefined)
          return reject(new Error(`waitForNotification: connection closed (${closedReason})`))
        const timeoutMs = options.timeoutMs ?? 30_000
        const waiter: Waiter = {
          predicate,
          since,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(waiter)
            const seen = notifications
              .slice(since)
              .map((n) => n.method)
              .join(", ")
            reject(
              new Error(
                `waitForNotification: nothing matched within ${timeoutMs} ms; seen since ${since}: [${seen}]${transport.describe()}`,
              ),
            )
          }, timeoutMs),
        }
        waiters.add(waiter)
      }),
    serverRequests: () => [...serverRequests],
    onServerRequest: (next) => {
      handler = next
    },
    garbage: () => [...garbage],
    closed,
  }
  return { peer, receive, close }
}

/**
 * The server side of MCP's stdio framing: one JSON-RPC message per line on stdin, one per line on
 * stdout. Guarantees, where the SDK's `StdioServerTransport` falls short for a long-lived agent
 * tool: a line over `maxLineBytes` is dropped (not buffered) and answered with an Invalid Request
 * error when its id can be read, and the server keeps serving — one oversized request never ends
 * the session's tools; reading a long line costs its length once (no re-copying per chunk); a
 * line that is JSON but not a JSON-RPC 2.0 message is answered with Invalid Request when it
 * carries an id, so its sender is not left waiting; nothing from a client line is ever echoed to
 * `onerror` (logs never quote client input).
 */
import type { Readable, Writable } from "node:stream"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

/**
 * The longest request line read (64 MiB): far above any tool's arguments, so only a runaway
 * client meets it.
 */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

/** JSON-RPC's Invalid Request code. */
const INVALID_REQUEST = -32600

/** Options of {@link LineTransport}. */
export interface LineTransportOptions {
  readonly stdin?: Readable
  readonly stdout?: Writable
  readonly maxLineBytes?: number
}

/** How much of a dropped line's start and end is kept to find its id. */
const EDGE_BYTES = 512

type RequestId = string | number

const isRequestId = (value: unknown): value is RequestId =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`
// The id as the first member (optionally after "jsonrpc"), or as the last (optionally before
// it): the orders clients write. Anything else is not trusted to be the top-level id.
const LEADING_ID = new RegExp(
  String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}\s*[,}]`,
)
const TRAILING_ID = new RegExp(
  String.raw`,\s*"id"\s*:\s*${ID}\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`,
)

/** The top-level id of a line too long to parse, from its first and last bytes; else undefined. */
export const idOfDroppedLine = (head: string, tail: string): RequestId | undefined => {
  const found = LEADING_ID.exec(head) ?? TRAILING_ID.exec(tail)
  if (found === null) return undefined
  try {
    const id: unknown = JSON.parse(found[1]!)
    return isRequestId(id) ? id : undefined
  } catch {
    return undefined
  }
}

/** The `id` of a parsed line that is not a valid message, when it has a usable one. */
const idOf = (value: unknown): RequestId | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const id = (value as { id?: unknown }).id
  return isRequestId(id) ? id : undefined
}

/** A newline-delimited JSON-RPC transport over a readable and a writable stream. */
export class LineTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  private readonly stdin: Readable
  private readonly stdout: Writable
  private readonly maxLineBytes: number
  private parts: Array<Buffer> = []
  private size = 0
  /** Set while the rest of an oversized line is skipped: its first bytes and its length so far. */
  private dropping: { head: Buffer; tail: Buffer; bytes: number } | undefined
  private started = false
  private closed = false

  constructor(options: LineTransportOptions = {}) {
    this.stdin = options.stdin ?? process.stdin
    this.stdout = options.stdout ?? process.stdout
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    let from = 0
    for (;;) {
      const newline = bytes.indexOf(10, from)
      if (newline === -1) {
        this.hold(bytes.subarray(from))
        return
      }
      this.hold(bytes.subarray(from, newline))
      this.endLine()
      from = newline + 1
    }
  }

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error)
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error("LineTransport already started"))
    this.started = true
    this.stdin.on("data", this.onData)
    this.stdin.on("error", this.onStreamError)
    return Promise.resolve()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.stdout.once("drain", resolve)
    })
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.closed = true
    this.stdin.off("data", this.onData)
    this.stdin.off("error", this.onStreamError)
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause()
    this.parts = []
    this.size = 0
    this.dropping = undefined
    this.onclose?.()
    return Promise.resolve()
  }

  private hold(part: Buffer): void {
    if (part.length === 0) return
    const dropping = this.dropping
    if (dropping !== undefined) {
      dropping.bytes += part.length
      dropping.tail = lastBytes(Buffer.concat([dropping.tail, part]))
      return
    }
    if (this.size + part.length > this.maxLineBytes) {
      const held = Buffer.concat([...this.parts, part])
      this.dropping = {
        head: held.subarray(0, EDGE_BYTES),
        tail: lastBytes(held),
        bytes: held.length,
      }
      this.parts = []
      this.size = 0
      return
    }
    this.parts.push(part)
    this.size += part.length
  }

  private endLine(): void {
    const dropping = this.dropping
    if (dropping !== undefined) {
      this.dropping = undefined
      const id = idOfDroppedLine(
        dropping.head.toString("utf8"),
        dropping.tail.toString("utf8").replace(/\r$/, ""),
      )
      const limit =
        this.maxLineBytes >= 1024 * 1024
          ? `${Math.round(this.maxLineBytes / (1024 * 1024))} MiB`
          : `${this.maxLineBytes}-byte`
      this.onerror?.(
        new Error(`ignored a message of ${dropping.bytes} bytes, over the ${limit} line limit`),
      )
      if (id !== undefined)
        this.refuse(
          id,
          `the request is ${dropping.bytes} bytes, over this server's ${limit} limit per ` +
            "message, and was not read: send smaller arguments",
        )
      return
    }
    const line = (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts))
      .toString("utf8")
      .replace(/\r$/, "")
    this.parts = []
    this.size = 0
    if (line.trim() === "") return
    this.receive(line)
  }

  private receive(line: string): void {
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      this.onerror?.(new Error("ignored a line that is not valid JSON"))
      return
    }
    const parsed = JSONRPCMessageSchema.safeParse(json)
    if (parsed.success) {
      this.onmessage?.(parsed.data)
      return
    }
    this.onerror?.(new Error("ignored a message that is not JSON-RPC 2.0"))
    const id = idOf(json)
    if (id === undefined) return
    this.refuse(
      id,
      'not a JSON-RPC 2.0 message: it needs "jsonrpc": "2.0", a string "method" and, when ' +
        'present, "params" as an object (MCP takes no positional params)',
    )
  }

  /** Answers request `id` with an Invalid Request error. */
  private refuse(id: RequestId, message: string): void {
    void this.send({ jsonrpc: "2.0", id, error: { code: INVALID_REQUEST, message } })
  }
}

const lastBytes = (bytes: Buffer): Buffer =>
  bytes.length <= EDGE_BYTES ? bytes : Buffer.from(bytes.subarray(bytes.length - EDGE_BYTES))

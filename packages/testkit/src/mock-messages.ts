/**
 * A scriptable loopback stand-in for the Anthropic Messages API as Claude Code 2.1.328 calls it
 * (`POST /v1/messages?beta=true`, streamed as SSE; non-streaming and `count_tokens` answered too).
 *
 * Guarantees: binds 127.0.0.1 only; every request (and every proxied egress attempt) is recorded;
 * any request gets an answer, so a stray side request never hangs the agent. Scripted replies are
 * consumed only by requests classified `main` (see `classifyMessagesRequest`), so subagent and
 * side requests (prompt suggestions, compaction, titles) never eat the script. Never reaches the
 * network; `close()` destroys open sockets, including ones held by pending delays.
 */
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import type { Duplex } from "node:stream"
import { setTimeout as sleep } from "node:timers/promises"
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib"

/** Token usage the mock reports in `message_start` / `message_delta` (and non-streamed bodies). */
export interface MessagesUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheCreationInputTokens?: number
  readonly cacheReadInputTokens?: number
}

/** A content block of a scripted assistant message. */
export type MessagesContentBlock =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "tool_use"
      readonly name: string
      readonly input: unknown
      readonly id?: string
    }
  | { readonly type: "thinking"; readonly thinking: string; readonly signature?: string }

/** Why an assistant message stopped. */
export type MessagesStopReason =
  "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "pause_turn" | "refusal"

/** Options shared by the message reply constructors. */
export interface MessagesReplyOptions {
  /** Default 100 in / 10 out, no cache tokens. */
  readonly usage?: MessagesUsage
  /** Default `tool_use` when the content holds a tool_use block, else `end_turn`. */
  readonly stopReason?: MessagesStopReason
  /** Default `msg_mock_<n>`. */
  readonly messageId?: string
  /** Default: the model named in the request. */
  readonly model?: string
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>
  /** Wait before the status line. */
  readonly delayMs?: number
  /** Wait between SSE events. */
  readonly eventDelayMs?: number
  /** Max characters per `text_delta` / `input_json_delta` / `thinking_delta`; default 16. */
  readonly chunkSize?: number
  /**
   * How a stream ends: `complete` (message_delta + message_stop), `drop` (socket destroyed after the
   * content blocks) or an in-stream `error` event (as the API sends for mid-stream overload).
   */
  readonly ending?:
    "complete" | "drop" | { readonly error: { readonly type: string; readonly message: string } }
}

/** A 200 reply: an assistant message, streamed as SSE when the request has `stream: true`. */
export interface MessagesMessageReply extends MessagesReplyOptions {
  readonly kind: "message"
  readonly content: ReadonlyArray<MessagesContentBlock>
}

/** An HTTP error reply in the Anthropic error shape `{type: "error", error: {type, message}}`. */
export interface MessagesErrorReply {
  readonly kind: "error"
  readonly status: number
  readonly errorType: string
  readonly message: string
  readonly headers?: Readonly<Record<string, string>>
  readonly delayMs?: number
}

/** A reply computed from the recorded request. */
export interface MessagesHandlerReply {
  readonly kind: "handler"
  readonly handle: (request: RecordedMessagesRequest) => MessagesReply | Promise<MessagesReply>
}

/** Anything the mock can answer to `POST /v1/messages`. */
export type MessagesReply = MessagesMessageReply | MessagesErrorReply | MessagesHandlerReply

/**
 * What a request is: `main` (the top-level conversation; consumes the script), `subagent`
 * (a subagent's conversation), `side` (a forked or tool-less helper call), `count_tokens`,
 * `egress` (a proxied request for another host: Claude Code tried to go online; refused) or `other`.
 */
export type MessagesRequestKind = "main" | "subagent" | "side" | "count_tokens" | "egress" | "other"

/** Where the answer came from: the script, the `handler` option, the default text, or neither (non-messages). */
export type MessagesReplySource = "script" | "handler" | "default" | "none"

/** One HTTP request as the mock saw it. */
export interface RecordedMessagesRequest {
  /** 1-based arrival order across all endpoints. */
  readonly seq: number
  readonly method: string
  /** Path and query as sent (`/v1/messages?beta=true`); the target host for `egress` CONNECTs. */
  readonly url: string
  /** Path without the query string. */
  readonly path: string
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON body, or `undefined` when empty or not JSON. */
  readonly body: unknown
  readonly rawBody: string
  /** `Date.now()` once the body was read. */
  readonly receivedAt: number
  readonly kind: MessagesRequestKind
  /** Claude Code's `x-claude-code-session-id` header, when present. */
  readonly sessionId: string | undefined
  /** Set once the answer is chosen. */
  source: MessagesReplySource
  /** HTTP status answered (0 until chosen; 403 for refused egress). */
  status: number
}

/** Options of `startMockMessages`. */
export interface MockMessagesOptions {
  /** Initial script for `main` requests; more can be queued with `enqueue`. */
  readonly script?: ReadonlyArray<MessagesReply>
  /**
   * Answers every messages request the script does not (script empty, or kind not `main`);
   * return `undefined` to fall back to the default text.
   */
  readonly handler?: (
    request: RecordedMessagesRequest,
  ) => MessagesReply | undefined | Promise<MessagesReply | undefined>
  /** Default text when nothing else answers a `main` request; default `mock: no scripted reply`. */
  readonly defaultText?: string
  /** Default text for `subagent` / `side` requests; default `OK`. */
  readonly sideText?: string
  /** Override the classification of `POST /v1/messages` requests (default `classifyMessagesRequest`). */
  readonly classify?: (
    body: unknown,
    headers: Readonly<Record<string, string>>,
  ) => "main" | "subagent" | "side"
}

/** Options of `waitForRequests`. */
export interface WaitForMessagesRequestsOptions {
  /** Default 30 s. */
  readonly timeoutMs?: number
  /** Count only requests of these kinds (default: all). */
  readonly kind?: MessagesRequestKind | ReadonlyArray<MessagesRequestKind>
}

/** A running mock; dispose with `close()` or `await using`. */
export interface MockMessagesServer {
  readonly port: number
  /** `http://127.0.0.1:PORT` — the value for `ANTHROPIC_BASE_URL` (Claude Code appends `/v1/messages`). */
  readonly baseUrl: string
  /** Same origin, for `HTTPS_PROXY` / `HTTP_PROXY`: egress attempts are recorded and refused. */
  readonly proxyUrl: string
  /** Appends replies to the `main` script. */
  enqueue(...replies: ReadonlyArray<MessagesReply>): void
  /** Scripted replies not yet consumed. */
  pending(): number
  /** Every request so far, in arrival order (optionally only some kinds). */
  requests(
    kind?: MessagesRequestKind | ReadonlyArray<MessagesRequestKind>,
  ): ReadonlyArray<RecordedMessagesRequest>
  /** Resolves with the first `count` matching requests once they have arrived; rejects on timeout. */
  waitForRequests(
    count: number,
    options?: WaitForMessagesRequestsOptions,
  ): Promise<ReadonlyArray<RecordedMessagesRequest>>
  /** Stops listening and destroys every open socket. Idempotent. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** A `tool_result` block found in a request's user messages. */
export interface MessagesToolResult {
  readonly toolUseId: string
  /** String content, or the text blocks of array content joined with newlines. */
  readonly content: string
  readonly isError: boolean
}

const DEFAULT_USAGE: MessagesUsage = { inputTokens: 100, outputTokens: 10 }

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
}

/** A text-only assistant message. */
export const messagesTextReply = (
  text: string,
  options: MessagesReplyOptions = {},
): MessagesMessageReply => ({
  ...options,
  kind: "message",
  content: [{ type: "text", text }],
})

/** An assistant message calling one tool (`stop_reason: tool_use`), optionally after some text. */
export const messagesToolUseReply = (
  name: string,
  input: unknown,
  options: MessagesReplyOptions & { readonly id?: string; readonly preamble?: string } = {},
): MessagesMessageReply => {
  const { id, preamble, ...rest } = options
  const toolUse: MessagesContentBlock =
    id === undefined ? { type: "tool_use", name, input } : { type: "tool_use", name, input, id }
  return {
    ...rest,
    kind: "message",
    content: preamble === undefined ? [toolUse] : [{ type: "text", text: preamble }, toolUse],
  }
}

/** A Claude Code `Bash` tool call running `command`. */
export const messagesBashReply = (
  command: string,
  options: MessagesReplyOptions & { readonly id?: string; readonly preamble?: string } = {},
): MessagesMessageReply =>
  messagesToolUseReply("Bash", { command, description: "Run a scripted command" }, options)

/** An HTTP error; `errorType` defaults from the status (429 `rate_limit_error`, 529 `overloaded_error`, 500 `api_error`, …). */
export const messagesErrorReply = (
  status: number,
  options: {
    readonly errorType?: string
    readonly message?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly delayMs?: number
  } = {},
): MessagesErrorReply => ({
  kind: "error",
  status,
  errorType: options.errorType ?? ERROR_TYPES[status] ?? "api_error",
  message: options.message ?? `mock error ${status}`,
  ...(options.headers === undefined ? {} : { headers: options.headers }),
  ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
})

/** A reply computed from the request body at answer time. */
export const messagesHandlerReply = (
  handle: (request: RecordedMessagesRequest) => MessagesReply | Promise<MessagesReply>,
): MessagesHandlerReply => ({ kind: "handler", handle })

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const messagesOf = (body: unknown): ReadonlyArray<Record<string, unknown>> =>
  isRecord(body) && Array.isArray(body["messages"]) ? body["messages"].filter(isRecord) : []

const blocksOf = (content: unknown): ReadonlyArray<Record<string, unknown>> =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : Array.isArray(content)
      ? content.filter(isRecord)
      : []

const SYSTEM_REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g

/**
 * The texts of every `user` message of a request body, in order, with complete
 * `<system-reminder>` blocks removed and empty results dropped (tool results are not texts).
 */
export const messagesUserTexts = (body: unknown): ReadonlyArray<string> =>
  messagesOf(body)
    .filter((message) => message["role"] === "user")
    .flatMap((message) => blocksOf(message["content"]))
    .flatMap((block) =>
      block["type"] === "text" && typeof block["text"] === "string" ? [block["text"]] : [],
    )
    .map((text) => text.replace(SYSTEM_REMINDER, "").trim())
    .filter((text) => text.length > 0)

/** Every `tool_result` block in a request body's user messages, in order. */
export const messagesToolResults = (body: unknown): ReadonlyArray<MessagesToolResult> =>
  messagesOf(body)
    .filter((message) => message["role"] === "user")
    .flatMap((message) => blocksOf(message["content"]))
    .filter((block) => block["type"] === "tool_result")
    .map((block) => ({
      toolUseId: typeof block["tool_use_id"] === "string" ? block["tool_use_id"] : "",
      content:
        typeof block["content"] === "string"
          ? block["content"]
          : blocksOf(block["content"])
              .flatMap((inner) => (typeof inner["text"] === "string" ? [inner["text"]] : []))
              .join("\n"),
      isError: block["is_error"] === true,
    }))

/**
 * Harness instructions that open the last user turn of a forked side request, which reuses the
 * main conversation's model, tools and system prompt (observed: prompt suggestions; from the
 * binary's strings: compaction summaries).
 */
const SIDE_TURN_MARKERS = [
  "[SUGGESTION MODE:",
  "CRITICAL: Respond with TEXT ONLY",
  "Your task is to create a detailed summary",
]

const systemText = (body: Record<string, unknown>): string => {
  const system = body["system"]
  if (typeof system === "string") return system
  return blocksOf(system)
    .flatMap((block) => (typeof block["text"] === "string" ? [block["text"]] : []))
    .join("\n")
}

/**
 * Default classification of a `POST /v1/messages` body: `subagent` when the system prompt's billing
 * line says `cc_is_subagent=true`; `side` when it offers no tools or its last user turn starts with
 * a known harness side instruction; otherwise `main`.
 */
export const classifyMessagesRequest = (body: unknown): "main" | "subagent" | "side" => {
  if (!isRecord(body)) return "side"
  if (systemText(body).includes("cc_is_subagent=true")) return "subagent"
  const tools = body["tools"]
  if (!Array.isArray(tools) || tools.length === 0) return "side"
  const lastUser = messagesOf(body)
    .filter((message) => message["role"] === "user")
    .at(-1)
  const lastTexts = messagesUserTexts({ messages: lastUser === undefined ? [] : [lastUser] })
  return lastTexts.some((text) => SIDE_TURN_MARKERS.some((marker) => text.startsWith(marker)))
    ? "side"
    : "main"
}

const sse = (event: string, data: unknown): string =>
  `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

const chunks = (text: string, size: number): ReadonlyArray<string> => {
  if (text.length === 0) return [""]
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const wireUsage = (usage: MessagesUsage) => ({
  input_tokens: usage.inputTokens,
  cache_creation_input_tokens: usage.cacheCreationInputTokens ?? 0,
  cache_read_input_tokens: usage.cacheReadInputTokens ?? 0,
  output_tokens: usage.outputTokens,
})

const decodeBody = (raw: Buffer, encoding: string | undefined): string => {
  switch (encoding?.trim().toLowerCase() ?? "identity") {
    case "gzip":
      return gunzipSync(raw).toString("utf8")
    case "deflate":
      return inflateSync(raw).toString("utf8")
    case "br":
      return brotliDecompressSync(raw).toString("utf8")
    default:
      return raw.toString("utf8")
  }
}

const flattenHeaders = (request: IncomingMessage): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

const kindsMatch = (
  request: RecordedMessagesRequest,
  kind: MessagesRequestKind | ReadonlyArray<MessagesRequestKind> | undefined,
): boolean =>
  kind === undefined ||
  (typeof kind === "string" ? request.kind === kind : kind.includes(request.kind))

/** Starts the mock on 127.0.0.1 at a random port. */
export const startMockMessages = async (
  options: MockMessagesOptions = {},
): Promise<MockMessagesServer> => {
  const script: Array<MessagesReply> = [...(options.script ?? [])]
  const recorded: Array<RecordedMessagesRequest> = []
  const waiters = new Set<() => void>()
  const sockets = new Set<Duplex>()
  const abort = new AbortController()
  const classify = options.classify ?? classifyMessagesRequest
  let seq = 0
  let messageCounter = 0
  let toolCounter = 0
  let closed: Promise<void> | undefined

  const record = (
    entry: Omit<RecordedMessagesRequest, "seq" | "receivedAt" | "source" | "status">,
  ) => {
    const request: RecordedMessagesRequest = {
      ...entry,
      seq: ++seq,
      receivedAt: Date.now(),
      source: "none",
      status: 0,
    }
    recorded.push(request)
    for (const wake of [...waiters]) wake()
    return request
  }

  const pause = async (ms: number | undefined) => {
    if (ms !== undefined && ms > 0) await sleep(ms, undefined, { signal: abort.signal })
  }

  const sendJson = (
    request: RecordedMessagesRequest,
    response: ServerResponse,
    body: unknown,
    headers: Readonly<Record<string, string>> = {},
  ) => {
    response.writeHead(request.status, {
      "content-type": "application/json",
      "request-id": `req_mock_${request.seq}`,
      ...headers,
    })
    response.end(JSON.stringify(body))
  }

  const resolveReply = async (
    request: RecordedMessagesRequest,
  ): Promise<MessagesMessageReply | MessagesErrorReply> => {
    let reply: MessagesReply | undefined
    if (request.kind === "main" && script.length > 0) {
      reply = script.shift()
      request.source = "script"
    } else if (options.handler !== undefined) {
      reply = await options.handler(request)
      if (reply !== undefined) request.source = "handler"
    }
    if (reply === undefined) {
      request.source = "default"
      reply = messagesTextReply(
        request.kind === "main"
          ? (options.defaultText ?? "mock: no scripted reply")
          : (options.sideText ?? "OK"),
      )
    }
    while (reply.kind === "handler") reply = await reply.handle(request)
    return reply
  }

  const answerMessage = async (
    request: RecordedMessagesRequest,
    reply: MessagesMessageReply,
    response: ServerResponse,
    socket: Socket,
  ) => {
    const body = isRecord(request.body) ? request.body : {}
    const model = reply.model ?? (typeof body["model"] === "string" ? body["model"] : "claude-mock")
    const id = reply.messageId ?? `msg_mock_${++messageCounter}`
    const usage = reply.usage ?? DEFAULT_USAGE
    const content = reply.content.map((block) =>
      block.type === "tool_use"
        ? { ...block, id: block.id ?? `toolu_mock_${++toolCounter}` }
        : block,
    )
    const stopReason =
      reply.stopReason ??
      (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn")
    await pause(reply.delayMs)
    request.status = 200
    if (body["stream"] !== true) {
      const wire = content.map((block) =>
        block.type === "thinking"
          ? { type: "thinking", thinking: block.thinking, signature: block.signature ?? "" }
          : block,
      )
      sendJson(
        request,
        response,
        {
          id,
          type: "message",
          role: "assistant",
          model,
          content: wire,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: wireUsage(usage),
        },
        reply.headers,
      )
      return
    }
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "request-id": `req_mock_${request.seq}`,
      ...reply.headers,
    })
    const size = Math.max(1, reply.chunkSize ?? 16)
    const emit = async (event: string, data: Record<string, unknown>) => {
      response.write(sse(event, { type: event, ...data }))
      await pause(reply.eventDelayMs)
    }
    await emit("message_start", {
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...wireUsage(usage), output_tokens: Math.min(1, usage.outputTokens) },
      },
    })
    await emit("ping", {})
    for (const [index, block] of content.entries()) {
      switch (block.type) {
        case "text":
          await emit("content_block_start", { index, content_block: { type: "text", text: "" } })
          for (const text of chunks(block.text, size))
            await emit("content_block_delta", { index, delta: { type: "text_delta", text } })
          break
        case "tool_use":
          await emit("content_block_start", {
            index,
            content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
          })
          for (const partial of chunks(JSON.stringify(block.input ?? {}), size)) {
            await emit("content_block_delta", {
              index,
              delta: { type: "input_json_delta", partial_json: partial },
            })
          }
          break
        case "thinking":
          await emit("content_block_start", {
            index,
            content_block: { type: "thinking", thinking: "", signature: "" },
          })
          for (const thinking of chunks(block.thinking, size)) {
            await emit("content_block_delta", {
              index,
              delta: { type: "thinking_delta", thinking },
            })
          }
          await emit("content_block_delta", {
            index,
            delta: {
              type: "signature_delta",
              signature: block.signature ?? randomBytes(32).toString("base64"),
            },
          })
          break
      }
      await emit("content_block_stop", { index })
    }
    const ending = reply.ending ?? "complete"
    if (ending === "drop") {
      socket.destroy()
      return
    }
    if (ending !== "complete") {
      response.end(sse("error", { type: "error", error: ending.error }))
      return
    }
    await emit("message_delta", {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: wireUsage(usage),
    })
    response.end(sse("message_stop", { type: "message_stop" }))
  }

  const answer = async (
    request: RecordedMessagesRequest,
    response: ServerResponse,
    socket: Socket,
  ) => {
    switch (request.kind) {
      case "egress":
        request.status = 403
        sendJson(request, response, {
          type: "error",
          error: { type: "permission_error", message: "testkit: egress refused" },
        })
        return
      case "count_tokens": {
        request.status = 200
        sendJson(request, response, { input_tokens: Math.ceil(request.rawBody.length / 4) })
        return
      }
      case "other":
        request.status = 404
        sendJson(request, response, {
          type: "error",
          error: {
            type: "not_found_error",
            message: `testkit: no route ${request.method} ${request.path}`,
          },
        })
        return
      case "main":
      case "subagent":
      case "side": {
        const reply = await resolveReply(request)
        if (reply.kind === "error") {
          await pause(reply.delayMs)
          request.status = reply.status
          sendJson(
            request,
            response,
            {
              type: "error",
              error: { type: reply.errorType, message: reply.message },
              request_id: `req_mock_${request.seq}`,
            },
            reply.headers,
          )
          return
        }
        await answerMessage(request, reply, response, socket)
        return
      }
    }
  }

  const server = createServer((incoming, response) => {
    const parts: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => parts.push(chunk))
    incoming.on("end", () => {
      const headers = flattenHeaders(incoming)
      const url = incoming.url ?? "/"
      const absolute = /^[a-z]+:\/\//i.test(url)
      const path = absolute ? url : (url.split("?")[0] ?? url)
      let rawBody = ""
      let body: unknown
      try {
        rawBody = decodeBody(Buffer.concat(parts), headers["content-encoding"])
        body = rawBody.length > 0 ? JSON.parse(rawBody) : undefined
      } catch {
        body = undefined
      }
      const method = incoming.method ?? "GET"
      const kind: MessagesRequestKind = absolute
        ? "egress"
        : method === "POST" && path === "/v1/messages"
          ? classify(body, headers)
          : method === "POST" && path === "/v1/messages/count_tokens"
            ? "count_tokens"
            : "other"
      const request = record({
        method,
        url,
        path,
        headers,
        body,
        rawBody,
        kind,
        sessionId: headers["x-claude-code-session-id"],
      })
      answer(request, response, incoming.socket).catch((error: unknown) => {
        if (abort.signal.aborted) return
        if (!response.headersSent) {
          request.status = 500
          sendJson(request, response, {
            type: "error",
            error: { type: "api_error", message: `testkit mock failed: ${String(error)}` },
          })
        } else response.destroy()
      })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.on("connect", (incoming: IncomingMessage, socket: Duplex) => {
    sockets.add(socket)
    socket.on("error", () => undefined)
    socket.on("close", () => sockets.delete(socket))
    const request = record({
      method: "CONNECT",
      url: incoming.url ?? "",
      path: incoming.url ?? "",
      headers: flattenHeaders(incoming),
      body: undefined,
      rawBody: "",
      kind: "egress",
      sessionId: undefined,
    })
    request.status = 403
    socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const baseUrl = `http://127.0.0.1:${port}`

  const requests = (kind?: MessagesRequestKind | ReadonlyArray<MessagesRequestKind>) =>
    recorded.filter((request) => kindsMatch(request, kind))

  const waitForRequests = (count: number, waitOptions: WaitForMessagesRequestsOptions = {}) =>
    new Promise<ReadonlyArray<RecordedMessagesRequest>>((resolve, reject) => {
      const timeoutMs = waitOptions.timeoutMs ?? 30_000
      const check = () => {
        const matching = requests(waitOptions.kind)
        if (matching.length < count) return false
        cleanup()
        resolve(matching.slice(0, count))
        return true
      }
      const timer = setTimeout(() => {
        cleanup()
        const seen = recorded
          .map((request) => `${request.seq}:${request.kind} ${request.method} ${request.url}`)
          .join("; ")
        reject(
          new Error(
            `mock messages: waited ${timeoutMs} ms for ${count} request(s) of kind ${String(waitOptions.kind ?? "any")}; saw [${seen}]`,
          ),
        )
      }, timeoutMs)
      const wake = () => void check()
      const cleanup = () => {
        clearTimeout(timer)
        waiters.delete(wake)
      }
      waiters.add(wake)
      check()
    })

  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      abort.abort()
      server.close(() => resolve())
      server.closeAllConnections()
      for (const socket of sockets) socket.destroy()
    })
    return closed
  }

  return {
    port,
    baseUrl,
    proxyUrl: baseUrl,
    enqueue: (...replies) => void script.push(...replies),
    pending: () => script.length,
    requests,
    waitForRequests,
    close,
    [Symbol.asyncDispose]: close,
  }
}

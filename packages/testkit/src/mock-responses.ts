/**
 * A scriptable loopback stand-in for the OpenAI Responses API (`POST /v1/responses`, streamed as
 * SSE the way codex-cli 0.169 parses it) and for the ChatGPT backend endpoints a simulated sign-in
 * reaches (`/backend-api/wham/*`). Replies come from a queue; when the queue is empty a short
 * default text answers so a stray request never hangs Codex, and the request is flagged
 * `unscripted`. Every request is recorded. Binds 127.0.0.1 only; never reaches the network.
 */
import { createServer } from "node:http"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib"
import { encodeSseEvent } from "./sse.js"

/** Token usage reported in `response.completed` (becomes Codex `last_token_usage`). */
export interface MockUsage {
  readonly inputTokens: number
  readonly cachedInputTokens?: number
  readonly outputTokens: number
  readonly reasoningOutputTokens?: number
  /** Defaults to `inputTokens + outputTokens`. */
  readonly totalTokens?: number
}

/** One rate-limit window, sent as `x-codex-<primary|secondary>-*` response headers. */
export interface MockRateLimitWindow {
  readonly usedPercent: number
  readonly windowMinutes?: number
  /** Unix seconds; sent as `x-codex-*-reset-at` (the header Codex parses into `resets_at`). */
  readonly resetAt?: number
  /** Sent as `x-codex-*-reset-after-seconds` (Codex 0.169 ignores it). */
  readonly resetAfterSeconds?: number
}

/** The primary and secondary windows of the `codex` limit family. */
export interface MockRateLimits {
  readonly primary?: MockRateLimitWindow
  readonly secondary?: MockRateLimitWindow
}

/** Options shared by every streamed reply. */
export interface MockStreamOptions {
  /** `null` omits `usage` from `response.completed`; default 100 in / 10 out. */
  readonly usage?: MockUsage | null
  readonly rateLimits?: MockRateLimits
  /** Extra response headers, e.g. other `x-codex-*` families. */
  readonly headers?: Readonly<Record<string, string>>
  readonly responseId?: string
  /** Wait before sending the response status line. */
  readonly delayMs?: number
  /** Wait between consecutive SSE events. */
  readonly eventDelayMs?: number
  /** Also send `response.output_item.added` and `response.output_text.delta` for messages. */
  readonly deltas?: boolean
  /** Raw events sent after the output items and before the terminal event. */
  readonly extraEvents?: ReadonlyArray<{ readonly event: string; readonly data: unknown }>
  /** How the stream ends: `completed` (default), `failed` (a `response.failed` event), or `drop` (socket closed without a terminal event). */
  readonly ending?: "completed" | "drop" | { readonly failed: { code: string; message: string } }
}

/** A streamed `200 text/event-stream` reply carrying Responses output items. */
export interface MockStreamReply extends MockStreamOptions {
  readonly kind: "stream"
  /** Raw Responses output items (see `messageItem`, `functionCallItem`). */
  readonly output: ReadonlyArray<Readonly<Record<string, unknown>>>
}

/** A non-streamed HTTP error reply (429, 5xx, …) with a JSON or text body. */
export interface MockHttpErrorReply {
  readonly kind: "http-error"
  readonly status: number
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  readonly delayMs?: number
}

/** A reply computed from the recorded request (e.g. answer the compaction request differently). */
export interface MockHandlerReply {
  readonly kind: "handler"
  readonly handle: (request: RecordedRequest) => MockReply | Promise<MockReply>
}

/** Anything the mock can answer to `POST /v1/responses`. */
export type MockReply = MockStreamReply | MockHttpErrorReply | MockHandlerReply

/** How a recorded request was answered. */
export type RequestOrigin = "scripted" | "default" | "backend" | "refused" | "unhandled"

/** One HTTP request as the mock saw it. */
export interface RecordedRequest {
  /** 1-based arrival order across all endpoints. */
  readonly seq: number
  readonly method: string
  /** Path without the query string. */
  readonly path: string
  readonly url: string
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON body, or `undefined` when empty or not JSON. */
  readonly body: unknown
  readonly rawBody: string
  /** `Date.now()` when the body had been read. */
  readonly receivedAt: number
  /** `outbound` = a proxied request for a non-loopback host (refused; Codex tried to go online). */
  readonly kind: "responses" | "backend" | "outbound" | "other"
  /** Set once the reply is chosen; `default` = the script was empty (the request is unscripted). */
  origin: RequestOrigin
}

/** A scripted answer for a backend endpoint: a JSON body (status 200) or an explicit status. */
export type MockBackendAnswer =
  | { readonly status: number; readonly body?: unknown }
  | ((request: RecordedRequest) => { readonly status: number; readonly body?: unknown })

/** Options of `startMockResponses`. */
export interface MockResponsesOptions {
  /** Initial script; more can be queued with `enqueue`. */
  readonly replies?: ReadonlyArray<MockReply>
  /** Answer when the script is empty; default `textReply("mock: no scripted reply")`. */
  readonly defaultReply?: MockReply
  /** `GET /backend-api/wham/usage`; default a signed-in plus plan at 0 %. */
  readonly whamUsage?: MockBackendAnswer
  /** `GET /backend-api/wham/accounts/check`; default 404 (as observed in the reference run). */
  readonly whamAccountsCheck?: MockBackendAnswer
  /** `GET /backend-api/wham/rate-limit-reset-credits`; default no credits. */
  readonly whamResetCredits?: MockBackendAnswer
  /** Any other `/backend-api/...` path (without the prefix) → answer; otherwise 404. */
  readonly backendRoutes?: Readonly<Record<string, MockBackendAnswer>>
}

/** A running mock; dispose with `close()` or `await using`. */
export interface MockResponsesServer {
  readonly port: number
  /** `http://127.0.0.1:PORT/v1` — the provider `base_url`. */
  readonly baseUrl: string
  /** `http://127.0.0.1:PORT/backend-api/` — the `chatgpt_base_url`. */
  readonly chatgptBaseUrl: string
  /** `http://127.0.0.1:PORT` — set as HTTP(S)_PROXY so any non-loopback request is recorded and refused. */
  readonly proxyUrl: string
  /** Appends replies to the script. */
  enqueue(...replies: ReadonlyArray<MockReply>): void
  /** Replies still queued. */
  pending(): number
  /** Replaces the `/wham/usage` answer. */
  setWhamUsage(answer: MockBackendAnswer): void
  /** Recorded `POST /v1/responses` requests, oldest first. */
  requests(): ReadonlyArray<RecordedRequest>
  /** Every recorded request (model, backend and unknown paths). */
  allRequests(): ReadonlyArray<RecordedRequest>
  /** Recorded `/backend-api/...` requests. */
  backendRequests(): ReadonlyArray<RecordedRequest>
  /** Proxied attempts to reach a non-loopback host (`CONNECT host:443` or absolute-URL requests). */
  outboundAttempts(): ReadonlyArray<RecordedRequest>
  /** Model requests answered by the default reply because the script was empty. */
  unscriptedRequests(): ReadonlyArray<RecordedRequest>
  /** The latest model request; throws when there is none. */
  lastRequest(): RecordedRequest
  /** Resolves once at least `count` model requests arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReadonlyArray<RecordedRequest>>
  /** Stops listening and destroys every open socket. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

let idCounter = 0
const nextId = (prefix: string): string => `${prefix}_mock_${(++idCounter).toString(36)}`

/** An assistant `message` output item with one `output_text` part. */
export const messageItem = (text: string, id?: string): Record<string, unknown> => ({
  type: "message",
  role: "assistant",
  id: id ?? nextId("msg"),
  content: [{ type: "output_text", text, annotations: [] }],
})

/** A `function_call` output item; object arguments are JSON-encoded as Codex expects. */
export const functionCallItem = (
  name: string,
  args: unknown,
  callId?: string,
): Record<string, unknown> => ({
  type: "function_call",
  id: nextId("fc"),
  call_id: callId ?? nextId("call"),
  name,
  arguments: typeof args === "string" ? args : JSON.stringify(args),
})

/** A streamed reply with raw output items. */
export const streamReply = (
  output: ReadonlyArray<Readonly<Record<string, unknown>>>,
  options: MockStreamOptions = {},
): MockStreamReply => ({ ...options, kind: "stream", output })

/** A streamed reply with one assistant message per text. */
export const textReply = (
  text: string | ReadonlyArray<string>,
  options: MockStreamOptions = {},
): MockStreamReply =>
  streamReply(
    (typeof text === "string" ? [text] : text).map((t) => messageItem(t)),
    options,
  )

/** A streamed reply with one `function_call` item. */
export const functionCallReply = (
  name: string,
  args: unknown,
  options: MockStreamOptions & { readonly callId?: string } = {},
): MockStreamReply => {
  const { callId, ...rest } = options
  return streamReply([functionCallItem(name, args, callId)], rest)
}

/** A streamed reply asking Codex to run `cmd` through its `exec_command` tool. */
export const execCommandReply = (
  cmd: string,
  options: MockStreamOptions & { readonly callId?: string } = {},
): MockStreamReply => functionCallReply("exec_command", { cmd }, options)

/** An HTTP error reply (e.g. 500, 503) with an optional JSON body and headers. */
export const httpErrorReply = (
  status: number,
  body?: unknown,
  options: { readonly headers?: Readonly<Record<string, string>>; readonly delayMs?: number } = {},
): MockHttpErrorReply => ({
  kind: "http-error",
  status,
  ...(body === undefined ? {} : { body }),
  ...options,
})

/** Options of `usageLimitReply`. */
export interface UsageLimitOptions {
  /** Unix seconds; default one hour from now. */
  readonly resetsAt?: number
  readonly planType?: string
  readonly message?: string
  /** Also sent as rate-limit headers; default primary at 100 % resetting at `resetsAt`. */
  readonly rateLimits?: MockRateLimits
  readonly headers?: Readonly<Record<string, string>>
}

/** HTTP 429 `usage_limit_reached`, the body and headers the ChatGPT backend sends (§10(i)). */
export const usageLimitReply = (options: UsageLimitOptions = {}): MockHttpErrorReply => {
  const now = Math.floor(Date.now() / 1000)
  const resetsAt = options.resetsAt ?? now + 3600
  const rateLimits = options.rateLimits ?? {
    primary: { usedPercent: 100, windowMinutes: 300, resetAt: resetsAt },
  }
  return {
    kind: "http-error",
    status: 429,
    headers: { ...rateLimitHeaders(rateLimits), ...options.headers },
    body: {
      error: {
        type: "usage_limit_reached",
        message: options.message ?? "The usage limit has been reached",
        plan_type: options.planType ?? "plus",
        resets_at: resetsAt,
        resets_in_seconds: Math.max(0, resetsAt - now),
      },
    },
  }
}

/** A reply computed per request, e.g. `handlerReply((r) => isCompaction(r) ? a : b)`. */
export const handlerReply = (
  handle: (request: RecordedRequest) => MockReply | Promise<MockReply>,
): MockHandlerReply => ({ kind: "handler", handle })

/** The `x-codex-*` headers for a rate-limit snapshot. */
export const rateLimitHeaders = (limits: MockRateLimits): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const [name, window] of [
    ["primary", limits.primary],
    ["secondary", limits.secondary],
  ] as const) {
    if (window === undefined) continue
    headers[`x-codex-${name}-used-percent`] = String(window.usedPercent)
    if (window.windowMinutes !== undefined)
      headers[`x-codex-${name}-window-minutes`] = String(window.windowMinutes)
    if (window.resetAt !== undefined) headers[`x-codex-${name}-reset-at`] = String(window.resetAt)
    if (window.resetAfterSeconds !== undefined)
      headers[`x-codex-${name}-reset-after-seconds`] = String(window.resetAfterSeconds)
  }
  return headers
}

const defaultUsage: MockUsage = { inputTokens: 100, outputTokens: 10 }

const usageJson = (usage: MockUsage): Record<string, unknown> => ({
  input_tokens: usage.inputTokens,
  input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
  output_tokens: usage.outputTokens,
  output_tokens_details: { reasoning_tokens: usage.reasoningOutputTokens ?? 0 },
  total_tokens: usage.totalTokens ?? usage.inputTokens + usage.outputTokens,
})

const sleep = (ms: number): Promise<void> =>
  ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()

const decodeBody = (raw: Buffer, encoding: string | undefined): string => {
  switch (encoding?.toLowerCase()) {
    case "gzip":
      return gunzipSync(raw).toString("utf8")
    case "br":
      return brotliDecompressSync(raw).toString("utf8")
    case "deflate":
      return inflateSync(raw).toString("utf8")
    case undefined:
    case "":
    case "identity":
      return raw.toString("utf8")
    default:
      // e.g. zstd, which Node 20 cannot decode: keep the bytes visible as base64.
      return `<${encoding} ${raw.toString("base64")}>`
  }
}

const parseJson = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

const flattenHeaders = (req: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value
  }
  return headers
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const sendJson = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void => {
  const text = typeof body === "string" ? body : JSON.stringify(body ?? {})
  res.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain" : "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  })
  res.end(text)
}

/** Starts the mock on 127.0.0.1 with a random port. */
export const startMockResponses = async (
  options: MockResponsesOptions = {},
): Promise<MockResponsesServer> => {
  const script: Array<MockReply> = [...(options.replies ?? [])]
  const defaultReply = options.defaultReply ?? textReply("mock: no scripted reply")
  const recorded: Array<RecordedRequest> = []
  const waiters = new Set<() => void>()
  let whamUsage: MockBackendAnswer = options.whamUsage ?? {
    status: 200,
    body: {
      plan_type: "plus",
      rate_limit: {
        allowed: true,
        limit_reached: false,
        // 0.169 requires every window field, `reset_after_seconds` included.
        primary_window: {
          used_percent: 0,
          limit_window_seconds: 18000,
          reset_after_seconds: 18000,
          reset_at: Math.floor(Date.now() / 1000) + 18000,
        },
        secondary_window: null,
      },
      credits: { has_credits: false, unlimited: false, balance: "0" },
    },
  }
  const backendRoutes: Record<string, MockBackendAnswer> = {
    "wham/accounts/check": options.whamAccountsCheck ?? {
      status: 404,
      body: { detail: "Not Found" },
    },
    "wham/rate-limit-reset-credits": options.whamResetCredits ?? {
      status: 200,
      body: { available_count: 0, credits: [] },
    },
    ...options.backendRoutes,
  }
  let seq = 0
  const modelRequests = (): Array<RecordedRequest> => recorded.filter((r) => r.kind === "responses")

  const streamReplyTo = async (res: ServerResponse, reply: MockStreamReply): Promise<void> => {
    await sleep(reply.delayMs ?? 0)
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      ...rateLimitHeaders(reply.rateLimits ?? {}),
      ...reply.headers,
    })
    const responseId = reply.responseId ?? nextId("resp")
    const events: Array<{ event: string; data: Record<string, unknown> }> = [
      {
        event: "response.created",
        data: { type: "response.created", response: { id: responseId } },
      },
    ]
    reply.output.forEach((item, outputIndex) => {
      const isMessage = item["type"] === "message"
      if (reply.deltas === true && isMessage) {
        events.push({
          event: "response.output_item.added",
          data: {
            type: "response.output_item.added",
            output_index: outputIndex,
            item: { ...item, content: [] },
          },
        })
        const parts = Array.isArray(item["content"]) ? (item["content"] as Array<unknown>) : []
        parts.forEach((part, contentIndex) => {
          const text = (part as { text?: unknown }).text
          if (typeof text !== "string") return
          events.push({
            event: "response.output_text.delta",
            data: {
              type: "response.output_text.delta",
              item_id: item["id"],
              output_index: outputIndex,
              content_index: contentIndex,
              delta: text,
            },
          })
        })
      }
      events.push({
        event: "response.output_item.done",
        data: { type: "response.output_item.done", output_index: outputIndex, item },
      })
    })
    for (const extra of reply.extraEvents ?? []) {
      events.push({ event: extra.event, data: extra.data as Record<string, unknown> })
    }
    const ending = reply.ending ?? "completed"
    if (ending === "completed") {
      const usage = reply.usage === undefined ? defaultUsage : reply.usage
      events.push({
        event: "response.completed",
        data: {
          type: "response.completed",
          response: {
            id: responseId,
            ...(usage === null ? {} : { usage: usageJson(usage) }),
          },
        },
      })
    } else if (ending !== "drop") {
      events.push({
        event: "response.failed",
        data: {
          type: "response.failed",
          response: { id: responseId, error: ending.failed },
        },
      })
    }
    for (const [index, { event, data }] of events.entries()) {
      if (index > 0) await sleep(reply.eventDelayMs ?? 0)
      if (res.destroyed) return
      // Await the flush so a `drop` really cuts the stream after these bytes, not before them.
      await new Promise<void>((resolve) => res.write(encodeSseEvent(event, data), () => resolve()))
    }
    if (ending === "drop") res.socket?.destroy()
    else res.end()
  }

  const answer = async (res: ServerResponse, reply: MockReply, request: RecordedRequest) => {
    switch (reply.kind) {
      case "stream":
        return streamReplyTo(res, reply)
      case "http-error":
        await sleep(reply.delayMs ?? 0)
        return sendJson(
          res,
          reply.status,
          reply.body ?? { error: { message: "mock error" } },
          reply.headers,
        )
      case "handler":
        return answer(res, await reply.handle(request), request)
    }
  }

  const answerBackend = (res: ServerResponse, request: RecordedRequest, route: string): void => {
    const answerSpec = route === "wham/usage" ? whamUsage : backendRoutes[route]
    if (answerSpec === undefined) {
      request.origin = "unhandled"
      sendJson(res, 404, { detail: "Not Found" })
      return
    }
    const result = typeof answerSpec === "function" ? answerSpec(request) : answerSpec
    sendJson(res, result.status, result.body ?? {})
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req)
    const headers = flattenHeaders(req)
    const url = req.url ?? "/"
    const path = url.split("?")[0] ?? "/"
    const rawBody = decodeBody(raw, headers["content-encoding"])
    const isOutbound = /^[a-z]+:\/\//i.test(url)
    const isResponses = !isOutbound && req.method === "POST" && /\/responses$/.test(path)
    const isBackend = !isOutbound && path.startsWith("/backend-api/")
    const request: RecordedRequest = {
      seq: ++seq,
      method: req.method ?? "GET",
      path,
      url,
      headers,
      body: parseJson(rawBody),
      rawBody,
      receivedAt: Date.now(),
      kind: isOutbound ? "outbound" : isResponses ? "responses" : isBackend ? "backend" : "other",
      origin: isOutbound
        ? "refused"
        : isResponses
          ? "scripted"
          : isBackend
            ? "backend"
            : "unhandled",
    }
    recorded.push(request)
    for (const wake of [...waiters]) wake()
    if (isOutbound) {
      sendJson(res, 403, { error: { message: "mock: outbound requests are refused" } })
    } else if (isResponses) {
      const next = script.shift()
      if (next === undefined) request.origin = "default"
      await answer(res, next ?? defaultReply, request)
    } else if (isBackend) {
      answerBackend(res, request, path.slice("/backend-api/".length))
    } else {
      sendJson(res, 404, { error: { message: `mock: no route for ${req.method} ${path}` } })
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } })
      else res.destroy()
    })
  })
  const tunnels = new Set<Duplex>()
  // Codex honours HTTPS_PROXY: CONNECT attempts are Codex trying to leave the loopback.
  server.on("connect", (req: IncomingMessage, socket: Duplex) => {
    recorded.push({
      seq: ++seq,
      method: "CONNECT",
      path: req.url ?? "",
      url: req.url ?? "",
      headers: flattenHeaders(req),
      body: undefined,
      rawBody: "",
      receivedAt: Date.now(),
      kind: "outbound",
      origin: "refused",
    })
    tunnels.add(socket)
    // The client may reset the refused tunnel (seen once in CI as an uncaught ECONNRESET): a raw
    // CONNECT socket has no error listener of its own, so it gets one that ignores the reset.
    socket.on("error", () => undefined)
    socket.once("close", () => tunnels.delete(socket))
    socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  let closed: Promise<void> | undefined

  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
      for (const socket of tunnels) socket.destroy()
    })
    return closed
  }

  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    chatgptBaseUrl: `http://127.0.0.1:${port}/backend-api/`,
    proxyUrl: `http://127.0.0.1:${port}`,
    enqueue: (...replies) => {
      script.push(...replies)
    },
    pending: () => script.length,
    setWhamUsage: (answerSpec) => {
      whamUsage = answerSpec
    },
    requests: modelRequests,
    allRequests: () => [...recorded],
    backendRequests: () => recorded.filter((r) => r.kind === "backend"),
    outboundAttempts: () => recorded.filter((r) => r.kind === "outbound"),
    unscriptedRequests: () => modelRequests().filter((r) => r.origin === "default"),
    lastRequest: () => {
      const last = modelRequests().at(-1)
      if (last === undefined) throw new Error("mock-responses: no /v1/responses request yet")
      return last
    },
    waitForRequests: (count, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const current = modelRequests()
          if (current.length < count) return false
          waiters.delete(check)
          clearTimeout(timer)
          resolve(current)
          return true
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(
            new Error(
              `mock-responses: waited ${timeoutMs} ms for ${count} /v1/responses request(s), got ${modelRequests().length}`,
            ),
          )
        }, timeoutMs)
        waiters.add(check)
        check()
      }),
    close,
    [Symbol.asyncDispose]: close,
  }
}

/** The parsed `x-codex-turn-metadata` request header (turn id, `request_kind`, compaction info…). */
export const turnMetadata = (request: RecordedRequest): Record<string, unknown> | undefined => {
  const raw = request.headers["x-codex-turn-metadata"]
  if (raw === undefined) return undefined
  const parsed = parseJson(raw)
  return typeof parsed === "object" && parsed !== null
    ? (parsed as Record<string, unknown>)
    : undefined
}

/** True for Codex's summarization request (`request_kind: "compaction"` in the turn metadata). */
export const isCompactionRequest = (request: RecordedRequest): boolean =>
  turnMetadata(request)?.["request_kind"] === "compaction"

/** Message content parts of a Responses `input` item, as text. */
const contentTexts = (content: unknown): Array<string> => {
  if (typeof content === "string") return [content]
  if (!Array.isArray(content)) return []
  return content.flatMap((part: unknown) => {
    const text = (part as { text?: unknown } | null)?.text
    return typeof text === "string" ? [text] : []
  })
}

const inputItems = (body: unknown): Array<Record<string, unknown>> => {
  const input = (body as { input?: unknown } | null)?.input
  return Array.isArray(input) ? (input as Array<Record<string, unknown>>) : []
}

/**
 * The texts of every `role: "user"` message in a Responses request body's `input`, in order.
 * Includes Codex's injected context messages (`<environment_context>`, AGENTS.md, …); filter
 * them yourself when you only want the typed prompt.
 */
export const userTexts = (body: unknown): ReadonlyArray<string> =>
  inputItems(body)
    .filter((item) => item["role"] === "user" && (item["type"] ?? "message") === "message")
    .flatMap((item) => contentTexts(item["content"]))

/** The `function_call_output` items of a Responses request body: `{callId, output}` as text. */
export const functionCallOutputs = (
  body: unknown,
): ReadonlyArray<{ readonly callId: string; readonly output: string }> =>
  inputItems(body)
    .filter((item) => item["type"] === "function_call_output")
    .map((item) => ({
      callId: String(item["call_id"]),
      output:
        typeof item["output"] === "string"
          ? item["output"]
          : contentTexts(item["output"]).join("\n"),
    }))

import { request as httpRequest } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import {
  classifyMessagesRequest,
  messagesBashReply,
  messagesErrorReply,
  messagesHandlerReply,
  messagesTextReply,
  messagesToolResults,
  messagesToolUseReply,
  messagesUserTexts,
  startMockMessages,
} from "./mock-messages.js"
import type { MockMessagesOptions, MockMessagesServer } from "./mock-messages.js"

const servers: Array<MockMessagesServer> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
const start = async (options?: MockMessagesOptions) => {
  const server = await startMockMessages(options)
  servers.push(server)
  return server
}

const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }]
const mainBody = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "claude-test-1",
  max_tokens: 100,
  stream: true,
  system: [
    {
      type: "text",
      text: "x-anthropic-billing-header: cc_version=2.1.328; cc_entrypoint=sdk-cli;",
    },
  ],
  tools: TOOLS,
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "<system-reminder>\nharness\n</system-reminder>\n" },
        { type: "text", text },
      ],
    },
  ],
  ...extra,
})

const post = (server: MockMessagesServer, body: unknown, path = "/v1/messages?beta=true") =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-claude-code-session-id": "sess-1" },
    body: JSON.stringify(body),
  })

interface Frame {
  readonly event: string
  readonly data: Record<string, unknown>
}
const parseSse = (text: string): ReadonlyArray<Frame> => {
  expect(text.endsWith("\n\n")).toBe(true)
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      const lines = frame.split("\n")
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatch(/^event: [a-z_]+$/)
      expect(lines[1]).toMatch(/^data: /)
      const event = lines[0]!.slice("event: ".length)
      const data = JSON.parse(lines[1]!.slice("data: ".length)) as Record<string, unknown>
      expect(data["type"]).toBe(event)
      return { event, data }
    })
}

describe("startMockMessages", () => {
  it("streams a text reply in the Messages SSE framing and event order", async () => {
    const server = await start({
      script: [
        messagesTextReply("hello from the mock", {
          usage: { inputTokens: 1234, outputTokens: 56, cacheReadInputTokens: 7 },
          chunkSize: 5,
        }),
      ],
    })
    const response = await post(server, mainBody("hi"))
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(response.headers.get("request-id")).toBe("req_mock_1")
    const frames = parseSse(await response.text())
    expect(frames.map((frame) => frame.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ])
    expect(frames[0]!.data["message"]).toEqual({
      id: "msg_mock_1",
      type: "message",
      role: "assistant",
      model: "claude-test-1",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 1234,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 7,
        output_tokens: 1,
      },
    })
    expect(frames[2]!.data).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    })
    const text = frames
      .filter((frame) => frame.event === "content_block_delta")
      .map((frame) => (frame.data["delta"] as { type: string; text: string }).text)
    expect(text).toEqual(["hello", " from", " the ", "mock"])
    expect(frames[8]!.data).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: 1234,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 7,
        output_tokens: 56,
      },
    })
  })

  it("streams tool_use input as input_json_delta fragments with stop_reason tool_use", async () => {
    const server = await start({
      script: [messagesBashReply("echo baton-$((6*7))", { preamble: "Running it.", chunkSize: 7 })],
    })
    const frames = parseSse(await (await post(server, mainBody("run"))).text())
    const starts = frames
      .filter((frame) => frame.event === "content_block_start")
      .map((frame) => frame.data)
    expect(starts).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_mock_1", name: "Bash", input: {} },
      },
    ])
    const partials = frames
      .filter((frame) => frame.event === "content_block_delta" && frame.data["index"] === 1)
      .map((frame) => frame.data["delta"] as { type: string; partial_json: string })
    expect(partials.length).toBeGreaterThan(3)
    expect(
      partials.every(
        (delta) => delta.type === "input_json_delta" && delta.partial_json.length <= 7,
      ),
    ).toBe(true)
    expect(JSON.parse(partials.map((delta) => delta.partial_json).join(""))).toEqual({
      command: "echo baton-$((6*7))",
      description: "Run a scripted command",
    })
    expect(frames.find((frame) => frame.event === "message_delta")!.data["delta"]).toEqual({
      stop_reason: "tool_use",
      stop_sequence: null,
    })
  })

  it("answers non-streaming requests with a JSON message and count_tokens with an estimate", async () => {
    const server = await start({
      script: [messagesToolUseReply("Read", { file_path: "/x" }, { id: "toolu_fixed" })],
    })
    const response = await post(server, mainBody("read", { stream: false }))
    expect(await response.json()).toEqual({
      id: "msg_mock_1",
      type: "message",
      role: "assistant",
      model: "claude-test-1",
      content: [{ type: "tool_use", id: "toolu_fixed", name: "Read", input: { file_path: "/x" } }],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 100,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 10,
      },
    })
    const count = await post(
      server,
      { model: "m", messages: [] },
      "/v1/messages/count_tokens?beta=true",
    )
    expect(await count.json()).toEqual({
      input_tokens: Math.ceil(JSON.stringify({ model: "m", messages: [] }).length / 4),
    })
    expect((await post(server, {}, "/v1/other")).status).toBe(404)
    expect(server.requests().map((request) => [request.kind, request.status])).toEqual([
      ["main", 200],
      ["count_tokens", 200],
      ["other", 404],
    ])
  })

  it("answers scripted errors in the Anthropic error shape, then the next step", async () => {
    const server = await start({
      script: [
        messagesErrorReply(429, { headers: { "retry-after": "0" } }),
        messagesErrorReply(529),
        messagesErrorReply(500, { message: "boom" }),
        messagesTextReply("recovered"),
      ],
    })
    const first = await post(server, mainBody("a"))
    expect(first.status).toBe(429)
    expect(first.headers.get("retry-after")).toBe("0")
    expect(await first.json()).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "mock error 429" },
      request_id: "req_mock_1",
    })
    const second = await post(server, mainBody("a"))
    expect([
      second.status,
      ((await second.json()) as { error: { type: string } }).error.type,
    ]).toEqual([529, "overloaded_error"])
    const third = await post(server, mainBody("a"))
    expect([third.status, ((await third.json()) as { error: { message: string } }).error]).toEqual([
      500,
      { type: "api_error", message: "boom" },
    ])
    const fourth = parseSse(await (await post(server, mainBody("a"))).text())
    expect(fourth.at(-1)!.event).toBe("message_stop")
    expect(server.pending()).toBe(0)
  })

  it("ends a stream with an in-stream error event when asked", async () => {
    const server = await start({
      script: [
        messagesTextReply("partial", {
          ending: { error: { type: "overloaded_error", message: "Overloaded" } },
        }),
      ],
    })
    const frames = parseSse(await (await post(server, mainBody("a"))).text())
    expect(frames.map((frame) => frame.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "error",
    ])
    expect(frames.at(-1)!.data).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    })
  })

  it("spends the script only on main requests; side and subagent requests get defaults", async () => {
    const server = await start({ script: [messagesTextReply("scripted")] })
    const side = await post(server, {
      model: "claude-haiku",
      stream: false,
      messages: [{ role: "user", content: "title this" }],
    })
    expect(((await side.json()) as { content: unknown }).content).toEqual([
      { type: "text", text: "OK" },
    ])
    const suggestion = mainBody("x", {
      stream: false,
      messages: [
        ...mainBody("x").messages,
        { role: "assistant", content: "a" },
        { role: "user", content: "[SUGGESTION MODE: Suggest…]" },
      ],
    })
    await post(server, suggestion)
    const subagent = mainBody("sub", {
      stream: false,
      system: [{ type: "text", text: "x-anthropic-billing-header: cc_is_subagent=true;" }],
    })
    await post(server, subagent)
    expect(server.pending()).toBe(1)
    const main = await post(server, mainBody("real", { stream: false }))
    expect(((await main.json()) as { content: unknown }).content).toEqual([
      { type: "text", text: "scripted" },
    ])
    const unscripted = await post(server, mainBody("again", { stream: false }))
    expect(((await unscripted.json()) as { content: unknown }).content).toEqual([
      { type: "text", text: "mock: no scripted reply" },
    ])
    expect(server.requests().map((request) => [request.kind, request.source])).toEqual([
      ["side", "default"],
      ["side", "default"],
      ["subagent", "default"],
      ["main", "script"],
      ["main", "default"],
    ])
    expect(server.requests("main").map((request) => messagesUserTexts(request.body))).toEqual([
      ["real"],
      ["again"],
    ])
  })

  it("records method, url, headers, parsed body and time, and waits for requests", async () => {
    const server = await start()
    const before = Date.now()
    const waiting = server.waitForRequests(2, { kind: "main", timeoutMs: 5_000 })
    await post(server, mainBody("one"))
    await post(server, { model: "m", messages: [] })
    await post(server, mainBody("two"))
    const [first, second] = await waiting
    expect(first!.seq).toBe(1)
    expect(second!.seq).toBe(3)
    expect(first!.method).toBe("POST")
    expect(first!.url).toBe("/v1/messages?beta=true")
    expect(first!.path).toBe("/v1/messages")
    expect(first!.headers["x-claude-code-session-id"]).toBe("sess-1")
    expect(first!.sessionId).toBe("sess-1")
    expect(first!.body).toEqual(mainBody("one"))
    expect(first!.receivedAt).toBeGreaterThanOrEqual(before)
    await expect(server.waitForRequests(5, { timeoutMs: 50 })).rejects.toThrow(
      /waited 50 ms for 5 request\(s\).*1:main POST/,
    )
  })

  it("computes replies with handler steps and the handler option", async () => {
    const server = await start({
      script: [
        messagesHandlerReply((request) =>
          messagesTextReply(`echo: ${messagesUserTexts(request.body).join("|")}`),
        ),
      ],
      handler: (request) =>
        request.kind === "side" ? messagesTextReply("side handled") : undefined,
    })
    const main = await post(server, mainBody("ping", { stream: false }))
    expect(((await main.json()) as { content: unknown }).content).toEqual([
      { type: "text", text: "echo: ping" },
    ])
    const side = await post(server, { model: "m", stream: false, messages: [] })
    expect(((await side.json()) as { content: unknown }).content).toEqual([
      { type: "text", text: "side handled" },
    ])
    expect(server.requests().map((request) => request.source)).toEqual(["script", "handler"])
  })

  it("records and refuses proxied egress (CONNECT)", async () => {
    const server = await start()
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest({
        host: "127.0.0.1",
        port: server.port,
        method: "CONNECT",
        path: "api.anthropic.com:443",
      })
      request.on("connect", (response, socket) => {
        socket.destroy()
        resolve(response.statusCode ?? 0)
      })
      request.on("error", reject)
      request.end()
    })
    expect(status).toBe(403)
    expect(
      server.requests("egress").map((request) => [request.method, request.url, request.status]),
    ).toEqual([["CONNECT", "api.anthropic.com:443", 403]])
  })

  it("closes promptly while a delayed reply is pending", async () => {
    const server = await start({ script: [messagesTextReply("late", { delayMs: 60_000 })] })
    const pending = post(server, mainBody("wait")).then(
      () => "answered",
      () => "failed",
    )
    await server.waitForRequests(1, { timeoutMs: 5_000 })
    const started = Date.now()
    await server.close()
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(await pending).toBe("failed")
  })
})

describe("request helpers", () => {
  it("extracts typed user texts without system reminders, and tool results", () => {
    const body = {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>\nx\n</system-reminder>" },
            { type: "text", text: "first" },
          ],
        },
        { role: "system", content: [{ type: "text", text: "# Environment" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "baton-42", is_error: false },
          ],
        },
        {
          role: "user",
          content:
            "<system-reminder>r</system-reminder>second <system-reminder>s</system-reminder>",
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t2",
              content: [
                { type: "text", text: "a" },
                { type: "text", text: "b" },
              ],
              is_error: true,
            },
          ],
        },
      ],
    }
    expect(messagesUserTexts(body)).toEqual(["first", "second"])
    expect(messagesToolResults(body)).toEqual([
      { toolUseId: "t1", content: "baton-42", isError: false },
      { toolUseId: "t2", content: "a\nb", isError: true },
    ])
    expect(messagesUserTexts(undefined)).toEqual([])
  })

  it("classifies main, subagent and side bodies", () => {
    expect(classifyMessagesRequest(mainBody("x"))).toBe("main")
    expect(classifyMessagesRequest({ ...mainBody("x"), tools: [] })).toBe("side")
    expect(
      classifyMessagesRequest({ ...mainBody("x"), system: "billing; cc_is_subagent=true;" }),
    ).toBe("subagent")
    expect(
      classifyMessagesRequest({
        ...mainBody("x"),
        messages: [
          { role: "user", content: "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools." },
        ],
      }),
    ).toBe("side")
    expect(classifyMessagesRequest("nope")).toBe("side")
  })
})

import { connect } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import {
  execCommandReply,
  functionCallOutputs,
  handlerReply,
  httpErrorReply,
  startMockResponses,
  textReply,
  usageLimitReply,
  userTexts,
} from "./mock-responses.js"
import type { MockResponsesServer } from "./mock-responses.js"
import { decodeSseStream } from "./sse.js"

const servers: Array<MockResponsesServer> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const start = async (...args: Parameters<typeof startMockResponses>) => {
  const server = await startMockResponses(...args)
  servers.push(server)
  return server
}

const post = (server: MockResponsesServer, body: unknown) =>
  fetch(`${server.baseUrl}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body: JSON.stringify(body),
  })

const requestBody = {
  model: "mock-model",
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "<env/>" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] },
    { type: "function_call_output", call_id: "call_1", output: "exit 0\nbaton-42" },
  ],
}

describe("startMockResponses", () => {
  it("survives a client that resets a refused CONNECT tunnel", async () => {
    const server = await start()
    const errors: unknown[] = []
    const onError = (error: unknown) => errors.push(error)
    process.on("uncaughtException", onError)
    try {
      for (let i = 0; i < 5; i++) {
        await new Promise<void>((resolve, reject) => {
          const socket = connect(server.port, "127.0.0.1", () => {
            socket.write("CONNECT api.openai.com:443 HTTP/1.1\r\nhost: api.openai.com:443\r\n\r\n")
          })
          // Reset (RST, not FIN) as soon as the 403 arrives, while the server still reads.
          socket.once("data", () => {
            socket.resetAndDestroy()
            setTimeout(resolve, 50)
          })
          socket.once("error", reject)
        })
      }
    } finally {
      process.off("uncaughtException", onError)
    }
    expect(errors).toEqual([])
    expect(server.outboundAttempts().map((r) => r.method)).toEqual(Array(5).fill("CONNECT"))
  })

  it("frames a text reply as Responses SSE with usage and rate-limit headers", async () => {
    const server = await start({
      replies: [
        textReply("hi there", {
          responseId: "resp_1",
          usage: {
            inputTokens: 10,
            cachedInputTokens: 4,
            outputTokens: 3,
            reasoningOutputTokens: 1,
          },
          rateLimits: {
            primary: { usedPercent: 12.5, windowMinutes: 300, resetAt: 1_900_000_000 },
            secondary: { usedPercent: 40, windowMinutes: 10_080, resetAt: 1_900_500_000 },
          },
          headers: { "x-extra": "1" },
        }),
      ],
    })
    const response = await post(server, requestBody)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(response.headers.get("x-codex-primary-used-percent")).toBe("12.5")
    expect(response.headers.get("x-codex-primary-window-minutes")).toBe("300")
    expect(response.headers.get("x-codex-primary-reset-at")).toBe("1900000000")
    expect(response.headers.get("x-codex-secondary-used-percent")).toBe("40")
    expect(response.headers.get("x-codex-secondary-reset-at")).toBe("1900500000")
    expect(response.headers.get("x-extra")).toBe("1")
    const text = await response.text()
    expect(text.startsWith("event: response.created\ndata: {")).toBe(true)
    const events = decodeSseStream(text)
    expect(events.map((e) => e.event)).toEqual([
      "response.created",
      "response.output_item.done",
      "response.completed",
    ])
    for (const e of events) expect((e.data as { type: string }).type).toBe(e.event)
    expect(events[1]?.data).toMatchObject({
      item: {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "hi there" }],
      },
    })
    expect(events[2]?.data).toEqual({
      type: "response.completed",
      response: {
        id: "resp_1",
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens: 3,
          output_tokens_details: { reasoning_tokens: 1 },
          total_tokens: 13,
        },
      },
    })
  })

  it("streams deltas and ends with response.failed or a dropped connection on request", async () => {
    const server = await start({
      replies: [
        textReply("abc", { deltas: true, responseId: "resp_d" }),
        textReply("x", { ending: { failed: { code: "server_error", message: "oops" } } }),
        textReply("y", { ending: "drop" }),
      ],
    })
    const deltas = decodeSseStream(await (await post(server, requestBody)).text())
    expect(deltas.map((e) => e.event)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_item.done",
      "response.completed",
    ])
    expect(deltas[1]?.data).toMatchObject({ item: { type: "message", content: [] } })
    expect(deltas[2]?.data).toMatchObject({ delta: "abc", output_index: 0, content_index: 0 })
    const failed = decodeSseStream(await (await post(server, requestBody)).text())
    expect(failed.at(-1)?.data).toMatchObject({
      type: "response.failed",
      response: { error: { code: "server_error", message: "oops" } },
    })
    const dropped = await post(server, requestBody)
    await expect(dropped.text()).rejects.toThrow()
  })

  it("records requests and extracts user texts and function call outputs", async () => {
    const server = await start({ replies: [textReply("a")] })
    await (await post(server, requestBody)).text()
    const recorded = server.lastRequest()
    expect(recorded.method).toBe("POST")
    expect(recorded.path).toBe("/v1/responses")
    expect(recorded.headers["authorization"]).toBe("Bearer k")
    expect(recorded.body).toEqual(requestBody)
    expect(recorded.origin).toBe("scripted")
    expect(userTexts(recorded.body)).toEqual(["<env/>", "hello"])
    expect(functionCallOutputs(recorded.body)).toEqual([
      { callId: "call_1", output: "exit 0\nbaton-42" },
    ])
  })

  it("answers with the default reply when the script is empty and records that", async () => {
    const server = await start()
    const events = decodeSseStream(await (await post(server, requestBody)).text())
    expect(events[1]?.data).toMatchObject({
      item: { content: [{ text: "mock: no scripted reply" }] },
    })
    expect(server.unscriptedRequests()).toHaveLength(1)
  })

  it("sends function calls with JSON-string arguments", async () => {
    const server = await start({ replies: [execCommandReply("echo hi", { callId: "call_x" })] })
    const events = decodeSseStream(await (await post(server, requestBody)).text())
    expect(events[1]?.data).toMatchObject({
      item: {
        type: "function_call",
        call_id: "call_x",
        name: "exec_command",
        arguments: '{"cmd":"echo hi"}',
      },
    })
  })

  it("answers 429 usage_limit_reached with the reset headers", async () => {
    const server = await start({
      replies: [usageLimitReply({ resetsAt: 1_900_000_000, planType: "pro" })],
    })
    const response = await post(server, requestBody)
    expect(response.status).toBe(429)
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(response.headers.get("x-codex-primary-used-percent")).toBe("100")
    expect(response.headers.get("x-codex-primary-reset-at")).toBe("1900000000")
    const body = (await response.json()) as { error: Record<string, unknown> }
    expect(body.error).toMatchObject({
      type: "usage_limit_reached",
      plan_type: "pro",
      resets_at: 1_900_000_000,
    })
    expect(typeof body.error["resets_in_seconds"]).toBe("number")
  })

  it("answers 5xx errors and handler replies computed from the request", async () => {
    const server = await start({
      replies: [
        httpErrorReply(503, { error: { message: "busy" } }),
        handlerReply((r) => textReply(`saw ${userTexts(r.body).at(-1) ?? "?"}`)),
      ],
    })
    const first = await post(server, requestBody)
    expect(first.status).toBe(503)
    expect(await first.json()).toEqual({ error: { message: "busy" } })
    const events = decodeSseStream(await (await post(server, requestBody)).text())
    expect(events[1]?.data).toMatchObject({ item: { content: [{ text: "saw hello" }] } })
    expect(server.requests()).toHaveLength(2)
  })

  it("delays before the reply and between events", async () => {
    const server = await start({ replies: [textReply("slow", { delayMs: 150, eventDelayMs: 50 })] })
    const started = Date.now()
    const response = await post(server, requestBody)
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    await response.text()
    expect(Date.now() - started).toBeGreaterThanOrEqual(240)
  })

  it("waits for requests and times out with a descriptive error", async () => {
    const server = await start()
    const waiting = server.waitForRequests(2, 2000)
    await (await post(server, requestBody)).text()
    await (await post(server, requestBody)).text()
    expect((await waiting).map((r) => r.seq)).toEqual([1, 2])
    await expect(server.waitForRequests(3, 50)).rejects.toThrow(/waited 50 ms for 3/)
  })

  it("serves scripted /backend-api/wham endpoints and records them", async () => {
    const server = await start({
      whamUsage: { status: 200, body: { plan_type: "pro" } },
    })
    const usage = await fetch(`${server.chatgptBaseUrl}wham/usage`)
    expect(await usage.json()).toEqual({ plan_type: "pro" })
    const check = await fetch(`${server.chatgptBaseUrl}wham/accounts/check`)
    expect(check.status).toBe(404)
    expect(server.backendRequests().map((r) => r.path)).toEqual([
      "/backend-api/wham/usage",
      "/backend-api/wham/accounts/check",
    ])
    expect(server.requests()).toHaveLength(0)
  })

  it("close() ends promptly even with a stream still open", async () => {
    const server = await start({ replies: [textReply("never", { eventDelayMs: 60_000 })] })
    const response = await post(server, requestBody)
    expect(response.status).toBe(200)
    const reading = response.text().catch((error: unknown) => error)
    const started = Date.now()
    await server.close()
    expect(Date.now() - started).toBeLessThan(1000)
    expect(await reading).toBeInstanceOf(Error)
  })
})

// Real `codex exec` (the pinned @openai/codex) against the loopback mock model.
import { afterEach, describe, expect, it } from "vitest"
import {
  createCodexHome,
  execCommandReply,
  findProcessesByEnv,
  functionCallOutputs,
  httpErrorReply,
  readRollout,
  resolveCodexBinary,
  rolloutEvents,
  runCodexExec,
  startMockResponses,
  textReply,
  usageLimitReply,
  userTexts,
} from "@baton/testkit"
import type { CodexHome, MockResponsesOptions, MockResponsesServer } from "@baton/testkit"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const setup = async (
  options: MockResponsesOptions,
  providerOptions?: Record<string, number>,
): Promise<{ mock: MockResponsesServer; home: CodexHome }> => {
  const mock = await startMockResponses(options)
  cleanups.push(() => mock.close())
  const home = await createCodexHome({ mock, ...(providerOptions ? { providerOptions } : {}) })
  cleanups.push(() => home.dispose())
  return { mock, home }
}

const agentMessages = (events: ReadonlyArray<Record<string, unknown>>): Array<unknown> =>
  events
    .filter((e) => e["type"] === "item.completed")
    .map((e) => e["item"] as Record<string, unknown>)
    .filter((item) => item["type"] === "agent_message")
    .map((item) => item["text"])

describe("codex exec against the mock", () => {
  it("uses the pinned binary", () => {
    expect(resolveCodexBinary().version).toBe("0.169.0")
  })

  it("sends the prompt, prints the scripted reply and writes a rollout", async () => {
    const { mock, home } = await setup({ replies: [textReply("hello from the mock")] })
    const result = await runCodexExec({ home, prompt: "say hello, baton" })

    expect(result.exitCode, result.stderr).toBe(0)
    expect(agentMessages(result.events)).toEqual(["hello from the mock"])
    expect(result.events.map((e) => e.type)).toEqual([
      "thread.started",
      "item.completed", // the "Model metadata for `mock-model` not found" warning item
      "turn.started",
      "item.completed",
      "turn.completed",
    ])
    expect(mock.requests()).toHaveLength(1)
    expect(mock.unscriptedRequests()).toHaveLength(0)
    expect(mock.outboundAttempts()).toEqual([])
    const request = mock.lastRequest()
    expect(request.headers["authorization"]).toBe("Bearer sk-baton-mock")
    expect(request.headers["originator"]).toBe("codex_exec")
    expect(userTexts(request.body).at(-1)).toBe("say hello, baton")
    expect((request.body as { model: string }).model).toBe("mock-model")

    expect(result.threadId).toMatch(/^[0-9a-f-]{36}$/)
    expect(result.rolloutPaths).toHaveLength(1)
    const rolloutPath = result.rolloutPaths[0]!
    expect(rolloutPath).toContain(`${home.codexHome}/sessions/`)
    expect(rolloutPath).toMatch(new RegExp(`rollout-[0-9T-]+-${result.threadId}\\.jsonl$`))
    const lines = await readRollout(rolloutPath)
    expect(lines[0]?.type).toBe("session_meta")
    expect(lines[0]?.payload).toMatchObject({
      id: result.threadId,
      originator: "codex_exec",
      cli_version: "0.169.0",
      cwd: home.workdir,
    })
    const completed = rolloutEvents(lines, "item_completed").map(
      (p) => p["item"] as Record<string, unknown>,
    )
    expect(completed.map((i) => i["type"])).toEqual(["UserMessage", "AgentMessage"])
    expect(rolloutEvents(lines, "user_message")).toEqual([])
    expect(rolloutEvents(lines, "agent_message")).toEqual([])
    expect(rolloutEvents(lines, "task_complete")[0]).toMatchObject({
      last_agent_message: "hello from the mock",
    })
    expect(new Set(lines.map((l) => l.type))).toEqual(
      new Set([
        "session_meta",
        "event_msg",
        "response_item",
        "world_state",
        "turn_context",
        "token_usage_record",
      ]),
    )
  })

  it("really runs an exec_command function call and sends its output back", async () => {
    const { mock, home } = await setup({
      replies: [
        execCommandReply("echo baton-$((6*7))", { callId: "call_baton" }),
        textReply("the command printed baton-42"),
      ],
    })
    const result = await runCodexExec({ home, prompt: "run the command" })

    expect(result.exitCode, result.stderr).toBe(0)
    expect(mock.requests()).toHaveLength(2)
    const outputs = functionCallOutputs(mock.requests()[1]!.body)
    expect(outputs).toHaveLength(1)
    expect(outputs[0]!.callId).toBe("call_baton")
    expect(outputs[0]!.output).toMatch(/Process exited with code 0/)
    expect(outputs[0]!.output).toMatch(/Output:\nbaton-42\n?$/)
    const commands = result.events
      .filter((e) => e.type === "item.completed")
      .map((e) => e["item"] as Record<string, unknown>)
      .filter((item) => item["type"] === "command_execution")
    expect(commands).toHaveLength(1)
    expect(commands[0]).toMatchObject({
      command: "/bin/bash -lc 'echo baton-$((6*7))'",
      aggregated_output: "baton-42\n",
      exit_code: 0,
      status: "completed",
    })
    expect(agentMessages(result.events)).toEqual(["the command printed baton-42"])
  })

  it("reports mock usage and rate-limit headers in the rollout token_count", async () => {
    const { home } = await setup({
      replies: [
        textReply("counted", {
          usage: {
            inputTokens: 1234,
            cachedInputTokens: 200,
            outputTokens: 56,
            reasoningOutputTokens: 7,
            totalTokens: 1290,
          },
          rateLimits: {
            primary: { usedPercent: 12.5, windowMinutes: 300, resetAt: 1_900_000_000 },
            // Only reset-after-seconds: Codex 0.169 ignores it, so resets_at stays null.
            secondary: { usedPercent: 40, windowMinutes: 10_080, resetAfterSeconds: 3600 },
          },
        }),
      ],
    })
    const result = await runCodexExec({ home, prompt: "count" })
    expect(result.exitCode, result.stderr).toBe(0)

    const lines = await readRollout(result.rolloutPaths[0]!)
    const counts = rolloutEvents(lines, "token_count")
    expect(counts).toHaveLength(1)
    const usage = {
      input_tokens: 1234,
      cached_input_tokens: 200,
      cache_write_input_tokens: 0,
      output_tokens: 56,
      reasoning_output_tokens: 7,
      total_tokens: 1290,
    }
    expect(counts[0]).toEqual({
      type: "token_count",
      info: {
        total_token_usage: usage,
        last_token_usage: usage,
        last_usage_includes_reasoning: false,
        model_context_window: 258_400,
      },
      rate_limits: {
        limit_id: "codex",
        limit_name: null,
        primary: { used_percent: 12.5, window_minutes: 300, resets_at: 1_900_000_000 },
        secondary: { used_percent: 40, window_minutes: 10_080, resets_at: null },
        credits: null,
        individual_limit: null,
        spend_control_reached: null,
        plan_type: null,
        rate_limit_reached_type: null,
      },
    })
    const record = lines.find((l) => l.type === "token_usage_record")
    expect(record?.payload["usage"]).toEqual(usage)
  })

  it("fails a 429 usage_limit_reached turn after exactly one request", async () => {
    const { mock, home } = await setup({
      replies: [usageLimitReply({ resetsAt: 1_900_000_000, planType: "plus" })],
    })
    const result = await runCodexExec({ home, prompt: "over the limit" })

    expect(result.exitCode).toBe(1)
    expect(mock.requests()).toHaveLength(1)
    expect(mock.unscriptedRequests()).toHaveLength(0)
    const error = result.events.find((e) => e.type === "error")
    expect(error?.["message"]).toMatch(
      /^You’ve hit your usage limit\..*try again at Mar 17th, 2030/,
    )
    const failed = result.events.find((e) => e.type === "turn.failed")
    expect(failed?.["error"]).toEqual({ message: error?.["message"] })
    expect(result.events.at(-1)?.type).toBe("turn.failed")
  })

  it("retries 5xx: 4 request retries per attempt, then a stream reconnect", async () => {
    const { mock, home } = await setup({
      replies: [
        ...Array.from({ length: 5 }, () => httpErrorReply(500, { error: { message: "boom" } })),
        textReply("recovered"),
      ],
    })
    const result = await runCodexExec({ home, prompt: "flaky backend" })

    expect(result.exitCode, result.stderr).toBe(0)
    // 1 + 4 request-level retries fail, the stream-level reconnect's first request succeeds.
    expect(mock.requests()).toHaveLength(6)
    expect(mock.unscriptedRequests()).toHaveLength(0)
    expect(result.events.filter((e) => e.type === "error").map((e) => e["message"])).toEqual([
      "Reconnecting... 1/5 (We’re currently experiencing high demand, which may cause temporary errors.)",
    ])
    expect(agentMessages(result.events)).toEqual(["recovered"])
  })

  it("gives up on 5xx after (request_max_retries+1) × (stream_max_retries+1) requests", async () => {
    const { mock, home } = await setup(
      { replies: Array.from({ length: 8 }, () => httpErrorReply(503)) },
      { request_max_retries: 1, stream_max_retries: 1 },
    )
    const result = await runCodexExec({ home, prompt: "down" })

    expect(result.exitCode).toBe(1)
    expect(mock.requests()).toHaveLength(4)
    expect(result.events.filter((e) => e.type === "error").map((e) => e["message"])).toEqual([
      `Reconnecting... 1/1 (unexpected status 503 Service Unavailable: mock error, url: ${mock.baseUrl}/responses)`,
      `unexpected status 503 Service Unavailable: mock error, url: ${mock.baseUrl}/responses`,
    ])
    expect(result.events.at(-1)?.type).toBe("turn.failed")
  })

  it("leaves no process behind once the home is disposed", async () => {
    const { home } = await setup({ replies: [textReply("bye")] })
    await runCodexExec({ home, prompt: "quick" })
    expect(await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`)).toEqual([])
  })
})

// Real `codex app-server` over stdio against the loopback mock model.
import { afterEach, describe, expect, it } from "vitest"
import {
  createCodexHome,
  findRolloutForThread,
  handlerReply,
  isCompactionRequest,
  JsonRpcError,
  readRollout,
  rolloutEvents,
  startCodexAppServer,
  startMockResponses,
  textReply,
  turnMetadata,
  usageLimitReply,
  userTexts,
} from "@baton/testkit"
import type { JsonRpcNotification } from "@baton/testkit"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const methods = (notifications: ReadonlyArray<JsonRpcNotification>): Array<string> =>
  notifications.map((n) => n.method)

/** The value at `path` inside a notification's params (undefined when absent). */
const at = (n: JsonRpcNotification | undefined, ...path: ReadonlyArray<string>): unknown => {
  let value: unknown = n?.params
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

describe("codex app-server (stdio) against the mock", () => {
  it("runs a turn, compacts the thread, and continues from the summary", async () => {
    const mock = await startMockResponses({
      replies: [
        textReply("first answer", {
          usage: { inputTokens: 5000, outputTokens: 100 },
          rateLimits: {
            primary: { usedPercent: 12.5, windowMinutes: 300, resetAt: 1_900_000_000 },
            secondary: { usedPercent: 40, windowMinutes: 10_080, resetAt: 1_900_500_000 },
          },
        }),
        // Answer the summarization request only if it really is one.
        handlerReply((request) =>
          isCompactionRequest(request)
            ? textReply("SUMMARY-OF-CONVERSATION", {
                usage: { inputTokens: 6000, outputTokens: 50 },
              })
            : textReply("not a compaction request"),
        ),
        textReply("after compaction", { usage: { inputTokens: 700, outputTokens: 20 } }),
      ],
    })
    cleanups.push(() => mock.close())
    const home = await createCodexHome({ mock })
    cleanups.push(() => home.dispose())
    const app = await startCodexAppServer({ home })
    cleanups.push(() => app.dispose())

    const { threadId } = await app.startThread({ cwd: home.workdir })
    const turn = await app.runTurn(threadId, "hello app server")
    expect(turn.status).toBe("completed")

    const turnNotifications = app.notifications().slice(turn.since)
    expect(methods(turnNotifications)).toEqual([
      "warning", // Model metadata for `mock-model` not found
      "thread/status/changed",
      "turn/started",
      "item/started",
      "item/completed",
      "item/started",
      "item/completed",
      "thread/tokenUsage/updated",
      "account/rateLimits/updated",
      "thread/status/changed",
      "turn/completed",
    ])
    expect(turnNotifications.map((n) => at(n, "item", "type")).filter(Boolean)).toEqual([
      "userMessage",
      "userMessage",
      "agentMessage",
      "agentMessage",
    ])
    expect(at(turnNotifications[1], "status")).toEqual({ type: "active", activeFlags: [] })
    expect(at(turnNotifications[9], "status")).toEqual({ type: "idle" })
    expect(at(turnNotifications[6], "item")).toMatchObject({ text: "first answer" })
    expect(at(turnNotifications[7], "tokenUsage")).toEqual({
      total: {
        totalTokens: 5100,
        inputTokens: 5000,
        cachedInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 100,
        reasoningOutputTokens: 0,
      },
      last: {
        totalTokens: 5100,
        inputTokens: 5000,
        cachedInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 100,
        reasoningOutputTokens: 0,
      },
      modelContextWindow: 258_400,
    })
    expect(at(turnNotifications[8], "rateLimits")).toEqual({
      limitId: "codex",
      limitName: null,
      normalModelSlug: null,
      primary: { usedPercent: 13, windowDurationMins: 300, resetsAt: 1_900_000_000 },
      secondary: { usedPercent: 40, windowDurationMins: 10_080, resetsAt: 1_900_500_000 },
      credits: null,
      individualLimit: null,
      spendControlReached: null,
      planType: null,
      rateLimitReachedType: null,
    })

    const compaction = await app.compact(threadId)
    expect(compaction.status).toBe("completed")
    const compactionNotifications = app.notifications().slice(compaction.since)
    expect(methods(compactionNotifications)).toEqual([
      "thread/status/changed",
      "turn/started",
      "item/started",
      "thread/tokenUsage/updated",
      "account/rateLimits/updated",
      "thread/tokenUsage/updated",
      "account/rateLimits/updated",
      "thread/tokenUsage/updated",
      "account/rateLimits/updated",
      "item/completed",
      "thread/status/changed",
      "turn/completed",
    ])
    expect(at(compaction.compactionItem, "item", "type")).toBe("contextCompaction")
    expect(at(compactionNotifications[2], "item", "id")).toBe(
      at(compaction.compactionItem, "item", "id"),
    )
    const usages = compactionNotifications
      .filter((n) => n.method === "thread/tokenUsage/updated")
      .map((n) => at(n, "tokenUsage"))
    const breakdown = (input: number, output: number) => ({
      totalTokens: input + output,
      inputTokens: input,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: output,
      reasoningOutputTokens: 0,
    })
    // First the previous turn's usage, then the summarization request's usage is added…
    expect(usages.slice(0, 2)).toEqual([
      { total: breakdown(5000, 100), last: breakdown(5000, 100), modelContextWindow: 258_400 },
      { total: breakdown(11_000, 150), last: breakdown(6000, 50), modelContextWindow: 258_400 },
    ])
    // …then `last` becomes Codex's own estimate of the compacted context (no input/output split).
    expect(usages[2]).toMatchObject({
      total: breakdown(11_000, 150),
      last: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 },
      modelContextWindow: 258_400,
    })
    const estimate = at(
      compactionNotifications.filter((n) => n.method === "thread/tokenUsage/updated")[2],
      "tokenUsage",
      "last",
      "totalTokens",
    )
    expect(estimate).toBeGreaterThan(1000)
    expect(estimate).toBeLessThan(20_000)
    // Rate-limit updates without headers carry null windows (a sparse update).
    expect(
      compactionNotifications
        .filter((n) => n.method === "account/rateLimits/updated")
        .map((n) => at(n, "rateLimits", "primary")),
    ).toEqual([null, null, null])

    expect(mock.requests()).toHaveLength(2)
    const compactionRequest = mock.requests()[1]!
    expect(turnMetadata(compactionRequest)).toMatchObject({
      request_kind: "compaction",
      compaction: { trigger: "manual", reason: "user_requested", implementation: "responses" },
    })
    expect(userTexts(compactionRequest.body).at(-1)).toMatch(
      /^You are performing a CONTEXT CHECKPOINT COMPACTION\./,
    )

    const next = await app.runTurn(threadId, "continue please")
    expect(next.status).toBe("completed")
    const texts = userTexts(mock.lastRequest().body)
    expect(texts.slice(-3)).toEqual([
      "hello app server",
      expect.stringMatching(
        /Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\nSUMMARY-OF-CONVERSATION$/,
      ),
      "continue please",
    ])
    expect(mock.unscriptedRequests()).toHaveLength(0)
    expect(mock.outboundAttempts()).toEqual([])
    expect(app.garbage()).toEqual([])

    const rolloutPath = await findRolloutForThread(home.codexHome, threadId)
    expect(rolloutPath).toBeDefined()
    const lines = await readRollout(rolloutPath!)
    const compacted = lines.filter((l) => l.type === "compacted")
    expect(compacted).toHaveLength(1)
    // The stored message is the whole bridge text the next turn sees, not the bare summary.
    expect(compacted[0]?.payload["message"]).toBe(texts.at(-2))
    // 0.169 writes no `context_compacted` event; the compaction shows as an item_completed.
    expect(rolloutEvents(lines, "context_compacted")).toEqual([])
    expect(
      rolloutEvents(lines, "item_completed").map((p) => (p["item"] as { type: string }).type),
    ).toEqual(["UserMessage", "AgentMessage", "ContextCompaction", "UserMessage", "AgentMessage"])
    expect(lines[0]?.payload).toMatchObject({ originator: "baton-testkit", source: "vscode" })
  })

  it("reports a 429 usage limit as an error notification and a failed turn", async () => {
    const mock = await startMockResponses({
      replies: [usageLimitReply({ resetsAt: 1_900_000_000 })],
    })
    cleanups.push(() => mock.close())
    const home = await createCodexHome({ mock })
    cleanups.push(() => home.dispose())
    const app = await startCodexAppServer({ home })
    cleanups.push(() => app.dispose())

    const { threadId } = await app.startThread({ cwd: home.workdir })
    const turn = await app.runTurn(threadId, "over the limit")
    expect(turn.status).toBe("failed")
    expect(mock.requests()).toHaveLength(1)

    const notifications = app.notifications().slice(turn.since)
    expect(methods(notifications)).toEqual([
      "warning",
      "thread/status/changed",
      "turn/started",
      "item/started",
      "item/completed",
      "account/rateLimits/updated",
      "thread/status/changed",
      "error",
      "turn/completed",
    ])
    expect(at(notifications[6], "status")).toEqual({ type: "systemError" })
    expect(at(notifications[5], "rateLimits", "primary")).toEqual({
      usedPercent: 100,
      windowDurationMins: 300,
      resetsAt: 1_900_000_000,
    })
    const error = at(notifications[7])
    const expectedError = {
      message: expect.stringMatching(/^You’ve hit your usage limit\..*try again at Mar 17th, 2030/),
      codexErrorInfo: "usageLimitExceeded",
      additionalDetails: null,
      misalignment: null,
    }
    expect(error).toEqual({
      error: expectedError,
      willRetry: false,
      threadId,
      turnId: turn.turnId,
    })
    expect(at(turn.completed, "turn")).toMatchObject({
      status: "failed",
      error: expectedError,
    })

    // Without a ChatGPT login the rate-limit read fails (§10(c)).
    const read = app.request("account/rateLimits/read")
    await expect(read).rejects.toBeInstanceOf(JsonRpcError)
    await expect(read).rejects.toMatchObject({
      code: -32600,
      message:
        "account/rateLimits/read failed: -32600 codex account authentication required to read rate limits",
    })
  })

  it("reads rate limits from the mock /wham/usage with a simulated ChatGPT sign-in", async () => {
    const mock = await startMockResponses({
      whamUsage: {
        status: 200,
        body: {
          plan_type: "pro",
          rate_limit: {
            allowed: true,
            limit_reached: false,
            // `reset_after_seconds` is required: without it 0.169 fails the read (-32603 decode error).
            primary_window: {
              used_percent: 42,
              limit_window_seconds: 18_000,
              reset_after_seconds: 600,
              reset_at: 1_900_000_000,
            },
            secondary_window: {
              used_percent: 7,
              limit_window_seconds: 604_800,
              reset_after_seconds: 6000,
              reset_at: 1_900_500_000,
            },
          },
          credits: { has_credits: false, unlimited: false, balance: "0" },
        },
      },
    })
    cleanups.push(() => mock.close())
    const home = await createCodexHome({ mock, chatgptAuth: { accountId: "acct-e2e" } })
    cleanups.push(() => home.dispose())
    const app = await startCodexAppServer({ home })
    cleanups.push(() => app.dispose())

    const result = await app.request<Record<string, unknown>>("account/rateLimits/read")
    expect(result["ordinaryUsageAllowed"]).toBeNull()
    expect(result["rateLimits"]).toMatchObject({
      limitId: "codex",
      planType: "pro",
      primary: { usedPercent: 42, windowDurationMins: 300, resetsAt: 1_900_000_000 },
      secondary: { usedPercent: 7, windowDurationMins: 10_080, resetsAt: 1_900_500_000 },
      credits: { hasCredits: false, unlimited: false, balance: "0" },
    })
    expect(result["rateLimitResetCredits"]).toEqual({ availableCount: 0, credits: [] })
    // The two reads run concurrently, so their arrival order varies.
    expect(
      mock
        .backendRequests()
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    ).toEqual(["GET /backend-api/wham/rate-limit-reset-credits", "GET /backend-api/wham/usage"])
    const usageRequest = mock.backendRequests().find((r) => r.path.endsWith("/wham/usage"))
    expect(usageRequest?.headers).toMatchObject({
      authorization: "Bearer baton-fake-access-token",
      "chatgpt-account-id": "acct-e2e",
    })
    expect(mock.outboundAttempts()).toEqual([])
  })
})

// Drives the real Claude Code 2.1.328 binary (`claude -p`) against the loopback mock Messages
// server and checks what it sends and what it writes to disk. Observed facts: OBSERVED-claude.md.
import { readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import {
  claudeProjectDirName,
  claudeTranscriptPrompts,
  findClaudeTranscripts,
  messagesBashReply,
  messagesErrorReply,
  messagesTextReply,
  messagesToolResults,
  messagesToolUseReply,
  messagesUserTexts,
  readClaudeTranscript,
  resolveClaudeBinary,
  runClaudePrint,
  startMockMessages,
} from "@baton/testkit"
import type {
  ClaudePrintOptions,
  ClaudeTranscriptRecord,
  MockMessagesOptions,
} from "@baton/testkit"

const launch = async (mock: MockMessagesOptions, options: Omit<ClaudePrintOptions, "server">) => {
  const server = await startMockMessages(mock)
  onTestFinished(() => server.close())
  const run = await runClaudePrint({ ...options, server })
  onTestFinished(() => run.dispose())
  return { server, run }
}

const ofType = (records: ReadonlyArray<ClaudeTranscriptRecord>, type: string) =>
  records.filter((record) => record.type === type)
const contentOf = (record: ClaudeTranscriptRecord | undefined): unknown =>
  (record?.["message"] as { content?: unknown } | undefined)?.content

describe("claude -p against the mock model", () => {
  it("uses the pinned binary", () => {
    expect(resolveClaudeBinary().version).toBe("2.1.328")
  })

  it("writes a transcript with the prompt and the scripted reply, and stays offline", async () => {
    const { server, run } = await launch(
      { script: [messagesTextReply("Hello from the mock model")] },
      { prompt: "say hello to baton" },
    )
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.result).toMatchObject({
      type: "result",
      is_error: false,
      result: "Hello from the mock model",
      session_id: run.sessionId,
      num_turns: 1,
    })
    expect(run.transcriptPath).toBe(
      join(run.home.projectsDir, claudeProjectDirName(run.cwd), `${run.sessionId}.jsonl`),
    )
    expect(await findClaudeTranscripts(run.home.projectsDir)).toEqual([
      {
        path: run.transcriptPath,
        sessionId: run.sessionId,
        projectDir: claudeProjectDirName(run.cwd),
        kind: "session",
        agentId: undefined,
      },
    ])

    const records = await readClaudeTranscript(run.transcriptPath)
    expect(claudeTranscriptPrompts(records)).toEqual(["say hello to baton"])
    const user = ofType(records, "user")[0]
    expect(user).toMatchObject({
      sessionId: run.sessionId,
      cwd: run.cwd,
      version: "2.1.328",
      parentUuid: null,
      isSidechain: false,
    })
    const assistants = ofType(records, "assistant")
    expect(assistants.map(contentOf)).toEqual([
      [{ type: "text", text: "Hello from the mock model" }],
    ])
    expect(assistants[0]).toMatchObject({
      message: { id: "msg_mock_1", stop_reason: "end_turn" },
      requestId: "req_mock_1",
    })

    // Exactly one model call, carrying the prompt; nothing else (no side calls, no egress).
    expect(server.requests().map((request) => [request.kind, request.method, request.url])).toEqual(
      [["main", "POST", "/v1/messages?beta=true"]],
    )
    const [main] = server.requests()
    expect(messagesUserTexts(main!.body)).toEqual(["say hello to baton"])
    expect(main!.sessionId).toBe(run.sessionId)
    expect(main!.headers["x-api-key"]).toBe("sk-ant-api03-baton-testkit-dummy")
    expect(main!.body).toMatchObject({ stream: true })
  })

  it("really runs a scripted Bash tool_use in the work dir and sends back its tool_result", async () => {
    const { server, run } = await launch(
      {
        script: [
          messagesBashReply("echo baton-$((6*7)) | tee bash-output.txt", { id: "toolu_baton_1" }),
          messagesTextReply("The command printed baton-42."),
        ],
      },
      { prompt: "run the command" },
    )
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.result?.result).toBe("The command printed baton-42.")
    expect(await readFile(join(run.cwd, "bash-output.txt"), "utf8")).toBe("baton-42\n")

    const main = server.requests("main")
    expect(server.requests().map((request) => request.kind)).toEqual(["main", "main"])
    expect(messagesToolResults(main[0]!.body)).toEqual([])
    expect(messagesToolResults(main[1]!.body)).toEqual([
      { toolUseId: "toolu_baton_1", content: "baton-42", isError: false },
    ])

    const records = await readClaudeTranscript(run.transcriptPath)
    const toolUses = ofType(records, "assistant").flatMap(
      (record) => contentOf(record) as ReadonlyArray<Record<string, unknown>>,
    )
    expect(toolUses[0]).toEqual({
      type: "tool_use",
      id: "toolu_baton_1",
      name: "Bash",
      input: {
        command: "echo baton-$((6*7)) | tee bash-output.txt",
        description: "Run a scripted command",
      },
    })
    const resultRecord = ofType(records, "user").find((record) => Array.isArray(contentOf(record)))
    expect(contentOf(resultRecord)).toEqual([
      { tool_use_id: "toolu_baton_1", type: "tool_result", content: "baton-42", is_error: false },
    ])
    expect(resultRecord?.["toolUseResult"]).toMatchObject({
      stdout: "baton-42",
      stderr: "",
      interrupted: false,
    })
    expect(claudeTranscriptPrompts(records)).toEqual(["run the command"])
  })

  it("copies the mock's usage numbers into the assistant record", async () => {
    const usage = {
      inputTokens: 1234,
      outputTokens: 56,
      cacheCreationInputTokens: 78,
      cacheReadInputTokens: 910,
    }
    const { run } = await launch(
      { script: [messagesTextReply("counted", { usage })] },
      { prompt: "count" },
    )
    expect(run.exitCode, run.stderr).toBe(0)
    const [assistant] = ofType(await readClaudeTranscript(run.transcriptPath), "assistant")
    expect(assistant?.["message"]).toMatchObject({
      usage: {
        input_tokens: 1234,
        output_tokens: 56,
        cache_creation_input_tokens: 78,
        cache_read_input_tokens: 910,
      },
    })
    expect(run.result?.["usage"]).toMatchObject({
      input_tokens: 1234,
      output_tokens: 56,
      cache_creation_input_tokens: 78,
      cache_read_input_tokens: 910,
    })
  })
})

describe("claude -p with a subagent", () => {
  it("writes the subagent transcript under <session>/subagents/ and answers it outside the script", async () => {
    const agentInput = {
      description: "probe",
      prompt: "say hi, subagent",
      subagent_type: "general-purpose",
      run_in_background: false,
    }
    const { server, run } = await launch(
      {
        script: [
          messagesToolUseReply("Agent", agentInput, { id: "toolu_agent_1" }),
          messagesTextReply("main done"),
        ],
        handler: (request) =>
          request.kind === "subagent" ? messagesTextReply("subagent report") : undefined,
      },
      { prompt: "delegate please", allowedTools: ["Bash", "Agent"] },
    )
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.result?.result).toBe("main done")
    expect(server.requests().map((request) => [request.kind, request.source])).toEqual([
      ["main", "script"],
      ["subagent", "handler"],
      ["main", "script"],
    ])
    expect(messagesUserTexts(server.requests("subagent")[0]!.body)).toEqual(["say hi, subagent"])

    const files = await findClaudeTranscripts(run.home.projectsDir)
    expect(files.map((file) => [file.kind, file.sessionId])).toEqual([
      ["session", run.sessionId],
      ["subagent", run.sessionId],
    ])
    const subagent = files[1]!
    expect(subagent.path).toBe(
      join(
        dirname(run.transcriptPath),
        run.sessionId,
        "subagents",
        `agent-${subagent.agentId}.jsonl`,
      ),
    )
    const meta = JSON.parse(
      await readFile(subagent.path.replace(/\.jsonl$/, ".meta.json"), "utf8"),
    ) as Record<string, unknown>
    expect(meta).toMatchObject({
      agentType: "general-purpose",
      description: "probe",
      toolUseId: "toolu_agent_1",
    })

    const subRecords = await readClaudeTranscript(subagent.path)
    const conversation = subRecords.filter(
      (record) => record.type === "user" || record.type === "assistant",
    )
    expect(
      conversation.map((record) => [
        record.type,
        record["isSidechain"],
        record["agentId"],
        contentOf(record),
      ]),
    ).toEqual([
      ["user", true, subagent.agentId, "say hi, subagent"],
      ["assistant", true, subagent.agentId, [{ type: "text", text: "subagent report" }]],
    ])
    const mainRecords = await readClaudeTranscript(run.transcriptPath)
    const handBack = ofType(mainRecords, "user").find((record) => Array.isArray(contentOf(record)))
    expect(handBack?.["toolUseResult"]).toMatchObject({
      status: "completed",
      agentId: subagent.agentId,
      agentType: "general-purpose",
    })
  })
})

describe("claude -p and API errors", () => {
  it("retries a 500 after a backoff and succeeds with the next reply", async () => {
    const { server, run } = await launch(
      { script: [messagesErrorReply(500), messagesTextReply("after retry")] },
      { prompt: "flaky" },
    )
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.result).toMatchObject({ is_error: false, result: "after retry" })
    const [first, second] = server.requests("main")
    expect(server.requests("main")).toHaveLength(2)
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(300)
    expect(second!.headers["x-stainless-retry-count"]).toBe("0")
    const errors = ofType(await readClaudeTranscript(run.transcriptPath), "system").filter(
      (record) => record["subtype"] === "api_error",
    )
    expect(
      errors.map((record) => [record["retryAttempt"], record["maxRetries"], record["level"]]),
    ).toEqual([[1, 10, "error"]])
    expect(errors[0]?.["error"]).toMatchObject({ status: 500, requestId: "req_mock_1" })
  })

  it.each([
    [500, "API Error: 500 mock error 500"],
    [429, "API Error: Request rejected (429) · mock error 429"],
  ])(
    "gives up on a persistent %i after CLAUDE_CODE_MAX_RETRIES=2 retries with exit code 1",
    async (status, text) => {
      const { server, run } = await launch(
        { handler: () => messagesErrorReply(status) },
        { prompt: "doomed", maxRetries: 2 },
      )
      expect(run.exitCode).toBe(1)
      expect(run.result).toMatchObject({
        is_error: true,
        api_error_status: status,
        terminal_reason: "api_error",
      })
      expect(run.result?.result?.startsWith(text)).toBe(true)
      expect(server.requests("main")).toHaveLength(3)
      const records = await readClaudeTranscript(run.transcriptPath)
      const errors = ofType(records, "system").filter((record) => record["subtype"] === "api_error")
      expect(errors.map((record) => [record["retryAttempt"], record["maxRetries"]])).toEqual([
        [1, 2],
        [2, 2],
      ])
      const assistants = ofType(records, "assistant")
      expect(assistants).toHaveLength(1)
      expect(assistants[0]).toMatchObject({
        isApiErrorMessage: true,
        message: { model: "<synthetic>" },
      })
      expect(contentOf(assistants[0])).toEqual([{ type: "text", text: run.result?.result }])
    },
  )

  it("stops after 3 attempts on repeated 529 overloaded errors by default", async () => {
    const { server, run } = await launch(
      { handler: () => messagesErrorReply(529) },
      { prompt: "overloaded" },
    )
    expect(run.exitCode).toBe(1)
    expect(run.result).toMatchObject({ is_error: true, api_error_status: 529 })
    expect(run.result?.result?.startsWith("API Error: Repeated 529 Overloaded errors.")).toBe(true)
    expect(server.requests("main")).toHaveLength(3)
    expect(server.requests().every((request) => request.kind === "main")).toBe(true)
  })
})

// Drives one real Claude Code 2.1.328 process through several turns over stream-json
// (transcripts.md §4.3) against the loopback mock Messages server.
import { describe, expect, it, onTestFinished } from "vitest"
import {
  claudeTranscriptPrompts,
  findClaudeTranscripts,
  messagesTextReply,
  messagesUserTexts,
  readClaudeTranscript,
  startClaudeSession,
  startMockMessages,
} from "@baton/testkit"

describe("claude stream-json session against the mock model", () => {
  it("holds three turns in one process and writes one transcript with the prompts in order", async () => {
    const server = await startMockMessages({
      script: [
        messagesTextReply("reply one"),
        messagesTextReply("reply two"),
        messagesTextReply("reply three"),
      ],
    })
    onTestFinished(() => server.close())
    const session = await startClaudeSession({ server })
    onTestFinished(() => session.dispose())

    const prompts = ["first prompt", "second prompt", "third prompt"]
    const results = []
    for (const prompt of prompts) results.push(await session.send(prompt))
    expect(results.map((result) => [result.is_error, result.result, result.session_id])).toEqual([
      [false, "reply one", session.sessionId],
      [false, "reply two", session.sessionId],
      [false, "reply three", session.sessionId],
    ])
    expect(await session.close()).toEqual({ exitCode: 0, signal: null })

    // One process: every request carries the same session header; each turn re-sends the history.
    const main = server.requests("main")
    expect(server.requests().map((request) => request.kind)).toEqual(["main", "main", "main"])
    expect(main.map((request) => request.sessionId)).toEqual([
      session.sessionId,
      session.sessionId,
      session.sessionId,
    ])
    expect(main.map((request) => messagesUserTexts(request.body))).toEqual([
      prompts.slice(0, 1),
      prompts.slice(0, 2),
      prompts,
    ])
    const inits = session
      .messages()
      .filter((message) => message.type === "system" && message.subtype === "init")
    expect(inits.length).toBeGreaterThanOrEqual(1)
    expect(inits.every((init) => init["session_id"] === session.sessionId)).toBe(true)

    const files = await findClaudeTranscripts(session.home.projectsDir)
    expect(files.map((file) => [file.path, file.kind])).toEqual([
      [session.transcriptPath, "session"],
    ])
    const records = await readClaudeTranscript(session.transcriptPath)
    expect(claudeTranscriptPrompts(records)).toEqual(prompts)
    const texts = records
      .filter((record) => record.type === "assistant")
      .flatMap((record) =>
        (record["message"] as { content: ReadonlyArray<{ text?: string }> }).content.map(
          (block) => block.text,
        ),
      )
    expect(texts).toEqual(["reply one", "reply two", "reply three"])
    expect(
      new Set(
        records.flatMap((record) =>
          typeof record["sessionId"] === "string" ? [record["sessionId"]] : [],
        ),
      ),
    ).toEqual(new Set([session.sessionId]))
  })

  it("rejects a send with the stderr tail when the process has died", async () => {
    const server = await startMockMessages()
    onTestFinished(() => server.close())
    const session = await startClaudeSession({ server, args: ["--no-such-flag"] })
    onTestFinished(() => session.dispose())
    await expect(session.send("hello")).rejects.toThrow(
      /exited[\s\S]*--- stderr tail ---\n[^]*no-such-flag[^]*--- stdout tail ---/,
    )
    expect(server.requests()).toEqual([])
  })
})

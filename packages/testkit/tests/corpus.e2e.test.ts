import { readFile } from "node:fs/promises"
import { relative } from "node:path"
import { buildCorpus, CORPUS_COMPACTION_SUMMARY, defaultCorpusSessions } from "@baton/testkit"
import { describe, expect, it } from "vitest"

const jsonl = async (path: string): Promise<Array<Record<string, unknown>>> =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe("buildCorpus", () => {
  it("records real Codex and Claude Code sessions with tool calls and a compaction", async () => {
    await using corpus = await buildCorpus()
    expect(
      corpus.sessions.map((s) => [s.spec.agent, s.spec.project, s.spec.headless ?? false]),
    ).toEqual(defaultCorpusSessions.map((s) => [s.agent, s.project, s.headless ?? false]))

    const [codexChat, codexExec, claudeChat, claudePrint] = corpus.sessions
    for (const session of [codexChat!, codexExec!]) {
      expect(relative(corpus.codexHome, session.path)).toMatch(
        /^sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-.*\.jsonl$/,
      )
      expect(session.path).toContain(session.sessionId)
    }
    for (const session of [claudeChat!, claudePrint!]) {
      expect(relative(corpus.claudeConfigDir, session.path)).toBe(
        `projects/${session.cwd.replace(/[^A-Za-z0-9]/g, "-")}/${session.sessionId}.jsonl`,
      )
    }

    // Codex interactive: every user text, the real command output, and the compaction record.
    const rollout = await jsonl(codexChat!.path)
    const text = JSON.stringify(rollout)
    for (const turn of codexChat!.spec.turns) expect(text).toContain(turn.user)
    expect(text).toContain("handlers=7")
    const compacted = rollout.filter((line) => line["type"] === "compacted")
    expect(compacted).toHaveLength(1)
    expect(JSON.stringify(compacted[0])).toContain(CORPUS_COMPACTION_SUMMARY)
    const meta = rollout.find((line) => line["type"] === "session_meta")?.["payload"] as Record<
      string,
      unknown
    >
    expect(meta["cwd"]).toBe(codexChat!.cwd)

    // Codex headless: marked as an exec run.
    const execMeta = (await jsonl(codexExec!.path)).find((line) => line["type"] === "session_meta")
    expect((execMeta?.["payload"] as Record<string, unknown>)["originator"]).toBe("codex_exec")

    // Claude interactive: three prompts in order, the Bash result, and the answers.
    const transcript = await jsonl(claudeChat!.path)
    const prompts = transcript
      .filter(
        (r) =>
          r["type"] === "user" &&
          typeof (r["message"] as { content: unknown }).content === "string",
      )
      .map((r) => (r["message"] as { content: string }).content)
    expect(prompts).toEqual(claudeChat!.spec.turns.map((t) => t.user))
    expect(JSON.stringify(transcript)).toContain("migrations=12")
    expect(JSON.stringify(transcript)).toContain(claudeChat!.spec.turns[2]!.assistant)

    const printed = JSON.stringify(await jsonl(claudePrint!.path))
    expect(printed).toContain(claudePrint!.spec.turns[0]!.user)
    expect(printed).toContain(claudePrint!.spec.turns[0]!.assistant)
  })
})

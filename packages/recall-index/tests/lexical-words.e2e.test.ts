// Words the lexical index finds inside other text, in sessions written by the REAL pinned agents
// (Claude Code 2.1.328 `-p`, codex 0.169.0 `exec`) against the loopback mocks, indexed and
// embedded the product's way (`auto`: USE-lite at this size, an English model):
// - Chinese, Japanese and Korean words inside an unbroken sentence: the index holds CJK text as
//   bigrams, and the search ranks such a query by its words instead of the English model's noise;
// - the words of a camelCase identifier in an agent's reply (`maxAttempts`), asked for in plain
//   words, and an identifier asked for where the reply used plain words.
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createClaudeHome,
  createCodexHome,
  messagesTextReply,
  runClaudePrint,
  runCodexExec,
  startMockMessages,
  startMockResponses,
  textReply,
} from "@baton/testkit"
import type { ClaudeHome, CodexHome, MockMessagesServer, MockResponsesServer } from "@baton/testkit"
import { grepRecords, searchRecall } from "@baton/recall-index"
import type { RecallHit, RecallSearchProviders } from "@baton/recall-index"
import { embedLikeTheProduct, runIndex, withIndex } from "./index-harness.js"

let claudeServer: MockMessagesServer
let claude: ClaudeHome
let codexServer: MockResponsesServer
let codex: CodexHome
let data: string
const ids = { chinese: "", korean: "", japanese: "", identifiers: "", plain: "" }
let providers: RecallSearchProviders = {}

const dataDir = () => join(data, "baton")

beforeAll(async () => {
  data = mkdtempSync(join(tmpdir(), "baton-cjk-e2e-"))
  claudeServer = await startMockMessages({
    script: [
      messagesTextReply("好的，我已经把上传服务的重试策略改为指数退避。"),
      messagesTextReply("네, 타임아웃 정책을 업데이트했습니다."),
      messagesTextReply(
        "Done: `createRetryPolicy()` in HTTPClient.ts now reads `maxAttempts` from the config, default 5.",
      ),
    ],
  })
  claude = await createClaudeHome()
  // One `claude -p` session per prompt, answered by the script above in order.
  const claudeSession = async (prompt: string) => {
    const run = await runClaudePrint({ server: claudeServer, home: claude, prompt })
    expect(run.exitCode, run.stderr).toBe(0)
    return run.sessionId
  }
  ids.chinese = await claudeSession("我们决定把上传的重试策略改成指数退避，最多重试五次。")
  ids.korean = await claudeSession("결제 서비스의 타임아웃 정책을 30초로 변경했어요.")
  ids.identifiers = await claudeSession(
    "Make the upload client read its attempt limit from the config file.",
  )

  codexServer = await startMockResponses({
    replies: [
      textReply("了解しました。マイグレーションの手順を準備します。"),
      textReply("The session cache now expires after ten minutes of inactivity."),
    ],
  })
  codex = await createCodexHome({ mock: codexServer })
  const codexSession = async (prompt: string) => {
    const run = await runCodexExec({ home: codex, prompt })
    expect(run.exitCode, run.stderr).toBe(0)
    return run.threadId!
  }
  ids.japanese = await codexSession("データベースのマイグレーションは月曜日に実行します。")
  ids.plain = await codexSession("How long does the session cache keep an idle entry?")

  const report = await runIndex(dataDir(), {
    environment: {
      env: { CLAUDE_CONFIG_DIR: dirname(claude.projectsDir), CODEX_HOME: codex.codexHome },
      homeDir: claude.root,
    },
  })
  expect(report).toMatchObject({ indexedNew: 5, failed: [] })
  const product = await embedLikeTheProduct((effect) => withIndex(dataDir(), effect))
  expect(product.forIndex.embedder?.info.model).toBe("use-lite")
  providers = product.providers
}, 300_000)

afterAll(async () => {
  if (providers.embedder?.close !== undefined) await Effect.runPromise(providers.embedder.close())
  await claude?.dispose()
  await claudeServer?.close()
  await codex?.dispose()
  await codexServer?.close()
  if (data !== undefined) rmSync(data, { recursive: true, force: true })
})

const search = (query: string) => withIndex(dataDir(), searchRecall({ query, k: 5 }, providers))

describe("CJK sessions of the real agents", () => {
  it("finds a word inside an unbroken sentence, by its words", async () => {
    const result = await search("重试策略")
    expect(result.arms.vector).toMatchObject({
      ran: false,
      skipped: "use-lite does not read Chinese, Japanese or Korean",
    })
    // The prompt and the mock's answer, both from that session (the answer rises with the
    // question it follows: conversation context).
    expect(
      result.hits
        .slice(0, 2)
        .map((h) => [h.sessionId, h.source, h.text])
        .sort(),
    ).toEqual(
      [
        [ids.chinese, "claude", "好的，我已经把上传服务的重试策略改为指数退避。"],
        [ids.chinese, "claude", "我们决定把上传的重试策略改成指数退避，最多重试五次。"],
      ].sort(),
    )
  })

  it("finds Japanese in a Codex rollout and Korean with a particle attached", async () => {
    const japanese = await search("マイグレーション")
    expect(japanese.hits[0]).toMatchObject({ sessionId: ids.japanese, source: "codex" })
    expect(new Set(japanese.hits.map((h) => h.sessionId))).toEqual(new Set([ids.japanese]))
    const korean = await search("정책")
    expect(
      korean.hits
        .slice(0, 2)
        .map((h) => [h.sessionId, h.role])
        .sort(),
    ).toEqual([
      [ids.korean, "assistant"],
      [ids.korean, "user"],
    ])
  })

  it("ranks a whole question written without spaces by the words it shares", async () => {
    const result = await search("上传的重试策略是什么？")
    expect(result.hits[0]?.sessionId).toBe(ids.chinese)
    expect(result.hits.map((h) => h.sessionId)).not.toContain(ids.korean)
  })
})

describe("identifiers in the real agents' sessions", () => {
  // Five sessions: the vector arm ranks every turn, so the fused order of the few turns that
  // share the query's words is partly noise; the lexical arm's first is what these words decide.
  const lexicalFirst = (hits: ReadonlyArray<RecallHit>) =>
    hits.find((h) => h.scores.lexicalRank === 1)

  it("finds an identifier in a reply by the words it is made of", async () => {
    const result = await search("max attempts")
    // Without the identifier's words, only the prompt's "attempt" would match.
    expect(lexicalFirst(result.hits)).toMatchObject({
      sessionId: ids.identifiers,
      role: "assistant",
    })
    expect(lexicalFirst(result.hits)?.snippet).toContain("maxAttempts")
    expect(result.hits.slice(0, 3).map((h) => h.sessionId)).toContain(ids.identifiers)
  })

  it("finds plain words in a Codex rollout by an identifier in the query", async () => {
    const result = await search("sessionCache")
    expect(lexicalFirst(result.hits)).toMatchObject({ sessionId: ids.plain, source: "codex" })
    expect(result.hits[0]?.sessionId).toBe(ids.plain)
  })

  it("greps a Codex reply once, though codex writes it as an event and a response item", async () => {
    const grep = (includeDuplicates: boolean) =>
      withIndex(
        dataDir(),
        grepRecords({ pattern: "expires after \\w+ minutes", regex: true, includeDuplicates }),
      )
    expect((await grep(false)).hits.map((h) => [h.sessionId, h.kind])).toEqual([
      [ids.plain, "message"],
    ])
    expect(new Set((await grep(true)).hits.map((h) => h.recordType)).size).toBeGreaterThan(1)
  })
})

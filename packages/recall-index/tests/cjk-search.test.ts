// Chinese, Japanese and Korean in the lexical index: a word inside an unbroken sentence is found
// (the index holds each CJK run as its character bigrams, `cjk-text.ts`), a whole question
// written without spaces ranks the turn that shares its words, deleting a session takes its
// bigrams out of the index, and an index built before CJK bigrams (schema 3) is re-indexed by
// the migration. Real temp-file databases; synthetic sessions.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { forgetSessions, ftsText, RecallDatabase, searchRecall } from "@baton/recall-index"
import { rewindLexicalIndex } from "./index-harness.js"
import type { RecallSearchInput, Reranker } from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { indexedHistory, lexicalHits, lexicalIndexIntegrity } from "./recall-fixtures.js"
import type { SessionSpec } from "./recall-fixtures.js"

const CHINESE = "c1c1c1c1-1111-4111-8111-000000000001"
const WEATHER = "c2c2c2c2-2222-4222-8222-000000000002"
const JAPANESE = "019c0000-3333-7333-8333-000000000003"
const KOREAN = "c4c4c4c4-4444-4444-8444-000000000004"
const ENGLISH = "c5c5c5c5-5555-4555-8555-000000000005"

const specs: ReadonlyArray<SessionSpec> = [
  {
    source: "claude",
    id: CHINESE,
    cwd: "/work/uploads",
    at: "2026-03-10T10:00:00.000Z",
    exchanges: [
      {
        user: "我们决定把上传的重试策略改成指数退避，最多重试五次。",
        assistant: "好的，我已经把上传服务的重试策略改为指数退避。",
      },
    ],
  },
  {
    source: "claude",
    id: WEATHER,
    cwd: "/work/notes",
    at: "2026-03-11T10:00:00.000Z",
    exchanges: [
      {
        user: "今天的天气很好，我们去公园散步吧。",
        assistant: "好主意，公园里的樱花开了。",
      },
    ],
  },
  {
    source: "codex",
    id: JAPANESE,
    cwd: "/work/db",
    at: "2026-03-12T10:00:00.000Z",
    exchanges: [
      {
        user: "データベースのマイグレーションは月曜日に実行します。",
        assistant: "了解しました。マイグレーションの手順を準備します。",
      },
    ],
  },
  {
    source: "claude",
    id: KOREAN,
    cwd: "/work/payments",
    at: "2026-03-13T10:00:00.000Z",
    exchanges: [
      {
        user: "결제 서비스의 타임아웃 정책을 30초로 변경했어요.",
        assistant: "네, 타임아웃 정책을 업데이트했습니다.",
      },
    ],
  },
  {
    source: "claude",
    id: ENGLISH,
    cwd: "/work/uploads",
    at: "2026-03-14T10:00:00.000Z",
    exchanges: [
      {
        user: "Does the upload retry policy use exponential backoff?",
        assistant: "Yes: five retries, doubling the delay each time.",
      },
    ],
  },
]

const embedder = makeDeterministicEmbedder({ dim: 64 })
let history: Awaited<ReturnType<typeof indexedHistory>>
beforeAll(async () => {
  history = await indexedHistory(specs, embedder)
})
afterAll(() => history?.dispose())

const lexical = (query: string, extra: Partial<RecallSearchInput> = {}) =>
  lexicalHits(history, embedder, query, extra)

describe("ftsText", () => {
  it("turns each CJK run into its bigrams and leaves other text as it is", () => {
    expect(ftsText("重试策略")).toBe(" 重试 试策 策略 ")
    expect(ftsText("retry 策略, policy")).toBe("retry  策略 , policy")
    expect(ftsText("猫")).toBe(" 猫 ")
    const english = "No CJK here: retry policy"
    expect(ftsText(english)).toBe(english)
  })
})

describe("CJK search", () => {
  it("finds a word inside an unbroken Chinese, Japanese or Korean sentence", async () => {
    expect((await lexical("重试策略"))[0]?.sessionId).toBe(CHINESE)
    expect((await lexical("指数退避"))[0]?.sessionId).toBe(CHINESE)
    expect((await lexical("マイグレーション"))[0]?.sessionId).toBe(JAPANESE)
    expect((await lexical("月曜日"))[0]?.sessionId).toBe(JAPANESE)
    expect((await lexical("타임아웃 정책"))[0]?.sessionId).toBe(KOREAN)
    // A two-syllable Korean word with its particle attached in the text (정책을).
    expect((await lexical("정책"))[0]?.sessionId).toBe(KOREAN)
    // Not found where no turn shares the word.
    expect(await lexical("数据库迁移")).toEqual([])
  })

  it("ranks the turn sharing a question's words when the question has no spaces", async () => {
    const hits = await lexical("上传的重试策略是什么？")
    expect(hits[0]?.sessionId).toBe(CHINESE)
    expect(hits.map((h) => h.sessionId)).not.toContain(KOREAN)
    // The fused search too (the deterministic embedder's vector arm is noise here).
    const fused = await history.run(searchRecall({ query: "上传的重试策略是什么？" }, { embedder }))
    expect(fused.hits[0]?.sessionId).toBe(CHINESE)
  })

  it("finds mixed text and leaves English search as it was", async () => {
    const mixed = await lexical("upload 重试")
    expect(new Set(mixed.map((h) => h.sessionId))).toEqual(new Set([CHINESE, ENGLISH]))
    const english = await lexical("exponential backoff")
    expect(english.map((h) => h.sessionId)).toEqual([ENGLISH])
  })
})

describe("CJK queries and English-only models", () => {
  const englishOnly = { ...embedder, info: { ...embedder.info, readsCjk: false } }
  const reranker: Reranker = {
    provider: "test",
    model: "english-reranker",
    readsCjk: false,
    rerank: (_query, documents) =>
      Effect.succeed(documents.map((_, index) => ({ index, score: 1 / (index + 1) }))),
  }

  it("skip a vector arm and reranker that cannot read the query, and say why", async () => {
    const result = await history.run(
      searchRecall({ query: "重试策略" }, { embedder: englishOnly, reranker }),
    )
    expect(result.arms.vector).toMatchObject({
      ran: false,
      skipped: `${embedder.info.model} does not read Chinese, Japanese or Korean`,
    })
    expect(result.arms.rerank.ran).toBe(false)
    expect(result.hits[0]?.sessionId).toBe(CHINESE)
    expect(result.hits.every((h) => h.scores.vectorRank === null)).toBe(true)
  })

  it("keep them for a query mostly in other scripts, and for models that read CJK", async () => {
    const mixed = await history.run(
      searchRecall({ query: "upload retry 重试" }, { embedder: englishOnly, reranker }),
    )
    expect(mixed.arms.vector.ran).toBe(true)
    expect(mixed.arms.rerank.ran).toBe(true)
    const multilingual = await history.run(searchRecall({ query: "重试策略" }, { embedder }))
    expect(multilingual.arms.vector.ran).toBe(true)
  })
})

describe("CJK index upkeep", () => {
  const ftsDocs = (term: string) =>
    history.run(
      RecallDatabase.use((db) =>
        Effect.sync(() => {
          db.sqlite.exec(
            "create virtual table if not exists temp.cjk_terms using fts5vocab(main, chunks_fts, 'row')",
          )
          return (
            (db.sqlite
              .prepare("select doc from temp.cjk_terms where term = ?")
              .pluck()
              .get(term) as number | undefined) ?? 0
          )
        }),
      ),
    )
  const integrity = () => lexicalIndexIntegrity(history)

  it("takes a forgotten session's bigrams out of the index", async () => {
    expect(await ftsDocs("公园")).toBeGreaterThan(0)
    await history.run(forgetSessions({ _tag: "Session", sessionId: WEATHER }))
    expect(await ftsDocs("公园")).toBe(0)
    expect(await integrity()).toBe("ok")
    expect(await lexical("公园散步")).toEqual([])
  })

  it("re-indexes CJK chunks of an index built before bigrams (schema 3)", async () => {
    // Put the index back as schema 3 left it: plain triggers, CJK chunks indexed whole.
    await history.run(
      RecallDatabase.use((db) =>
        Effect.sync(() => {
          const sqlite = db.sqlite
          expect(
            sqlite
              .prepare("select count(*) from chunks where baton_fts_text_5(text) != text")
              .pluck()
              .get(),
          ).toBeGreaterThan(0)
          rewindLexicalIndex(sqlite, 3)
          // As schema 3 indexed it: the sentence is one token, so its words are not in the index.
          sqlite.exec(
            "create virtual table temp.old_terms using fts5vocab(main, chunks_fts, 'row')",
          )
          expect(
            sqlite.prepare("select count(*) from temp.old_terms where term = '重试'").pluck().get(),
          ).toBe(0)
        }),
      ),
    )
    // The next connection (a later CLI call) migrates the file.
    const version = await history.run(
      RecallDatabase.use((db) =>
        Effect.sync(() =>
          db.sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
        ),
      ),
    )
    expect(version).toBe("14")
    expect(await ftsDocs("重试")).toBeGreaterThan(0)
    expect((await lexical("重试策略"))[0]?.sessionId).toBe(CHINESE)
    expect(await integrity()).toBe("ok")
    // And the triggers it left index new text as bigrams and delete it cleanly.
    await history.run(forgetSessions({ _tag: "Session", sessionId: CHINESE }))
    expect(await ftsDocs("重试")).toBe(0)
    expect(await integrity()).toBe("ok")
  })
})

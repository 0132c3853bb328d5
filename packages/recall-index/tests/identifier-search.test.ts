// Identifiers in the lexical index: the words inside a camelCase or PascalCase identifier are
// found by a question written in plain words ("max attempts" → `maxAttempts`), an identifier in
// the query finds the plain words, forgetting a session takes those words out of the index, and
// an index built before them (schema 4) is re-indexed by the migration. Real temp-file
// databases; synthetic sessions.
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { forgetSessions, ftsText, identifierWords, RecallDatabase } from "@baton/recall-index"
import type { RecallDatabaseShape, RecallSearchInput } from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { rewindLexicalIndex } from "./index-harness.js"
import { indexedHistory, lexicalHits, lexicalIndexIntegrity } from "./recall-fixtures.js"
import type { SessionSpec } from "./recall-fixtures.js"

const HTTP = "d1d1d1d1-1111-4111-8111-000000000001"
const UI = "019d0000-2222-7222-8222-000000000002"
const UPLOADS = "d3d3d3d3-3333-4333-8333-000000000003"
const PRIVACY = "d4d4d4d4-4444-4444-8444-000000000004"

const specs: ReadonlyArray<SessionSpec> = [
  {
    source: "claude",
    id: HTTP,
    cwd: "/work/http",
    at: "2026-04-01T10:00:00.000Z",
    exchanges: [
      {
        user: "Where is the backoff configured?",
        assistant:
          "In `createRetryPolicy()` inside HTTPClient.ts: `maxAttempts` is 5 and the delay doubles after each failure.",
      },
    ],
  },
  {
    source: "codex",
    id: UI,
    cwd: "/work/ui",
    at: "2026-04-02T10:00:00.000Z",
    exchanges: [
      {
        user: "Rename the card component.",
        assistant:
          "Renamed `UserProfileCard` to `ProfileCard`; the `useProfileQuery` hook is unchanged.",
      },
    ],
  },
  {
    source: "claude",
    id: UPLOADS,
    cwd: "/work/uploads",
    at: "2026-04-03T10:00:00.000Z",
    exchanges: [
      {
        user: "What is our retry policy for uploads?",
        assistant: "Uploads retry three times with a fixed delay of two seconds.",
      },
    ],
  },
  {
    source: "claude",
    id: PRIVACY,
    cwd: "/work/site",
    at: "2026-04-04T10:00:00.000Z",
    exchanges: [
      {
        user: "Move the privacy policy page under /legal.",
        assistant: "Done: the page now lives at /legal/privacy.",
      },
    ],
  },
]

// Unrelated sessions, so the words above are as selective as in a real history (the lexical
// arm drops a word held by more than a quarter of the chunks).
const topics = [
  ["Plan the sprint demo for Friday.", "The demo covers onboarding and the new dashboard."],
  ["Why is the build slow?", "The linker step takes most of the time; caching helps."],
  ["Draft the release notes.", "Drafted: three fixes and one new command."],
  ["Check the database backups.", "Backups ran nightly; the last one finished at 02:00."],
  ["Which fonts does the site use?", "Inter for text and a monospace face for code."],
  ["Summarise the incident from Tuesday.", "A certificate expired; renewal is now automated."],
] as const
const fillers: ReadonlyArray<SessionSpec> = topics.map(([user, assistant], i) => ({
  source: "claude",
  id: `e${i}e${i}e${i}e${i}-5555-4555-8555-00000000000${i}`,
  cwd: "/work/misc",
  at: `2026-04-1${i}T10:00:00.000Z`,
  exchanges: [{ user, assistant }],
}))

const embedder = makeDeterministicEmbedder({ dim: 64 })
let history: Awaited<ReturnType<typeof indexedHistory>>
beforeAll(async () => {
  history = await indexedHistory([...specs, ...fillers], embedder)
})
afterAll(() => history?.dispose())

const lexical = (query: string, extra: Partial<RecallSearchInput> = {}) =>
  lexicalHits(history, embedder, query, extra)
/** The sessions of the hits for `query`, each once, best first. */
const sessionsOf = async (query: string) => [
  ...new Set((await lexical(query)).map((h) => h.sessionId)),
]

/** Chunks the lexical index holds `word` for (a quoted FTS5 string, stemmed like the index). */
const chunksHoldingIn = (sqlite: RecallDatabaseShape["sqlite"], word: string) =>
  sqlite
    .prepare("select count(*) from chunks_fts where chunks_fts match ?")
    .pluck()
    .get(`"${word}"`)
const chunksHolding = (word: string) =>
  history.run(RecallDatabase.use((db) => Effect.sync(() => chunksHoldingIn(db.sqlite, word))))

const integrity = () => lexicalIndexIntegrity(history)

describe("identifierWords and ftsText", () => {
  it("split camelCase, PascalCase and acronyms, and leave other text as it is", () => {
    expect(
      identifierWords("useRetryPolicy(HTTPClient), base64Encode; HTTP snake_case iOS"),
    ).toEqual(["use", "retry", "policy", "http", "client", "base64", "encode", "os"])
    expect(identifierWords("Plain prose, an ACRONYM and kebab-case words.")).toEqual([])
    expect(ftsText("call retryPolicy, then retryPolicy again")).toBe(
      "call retryPolicy, then retryPolicy again\nretry policy",
    )
    const prose = "No identifiers here: the retry policy"
    expect(ftsText(prose)).toBe(prose)
    // CJK bigrams and identifier words together.
    expect(ftsText("重试 retryPolicy")).toBe(" 重试  retryPolicy\nretry policy")
  })
})

describe("identifier search", () => {
  it("finds an identifier by the words it is made of", async () => {
    expect((await sessionsOf("max attempts"))[0]).toBe(HTTP)
    expect((await sessionsOf("http client"))[0]).toBe(HTTP)
    expect(await sessionsOf("profile card")).toEqual([UI])
    // The whole identifier still matches as one word.
    expect(await sessionsOf("maxAttempts")).toEqual([HTTP])
  })

  it("finds the plain words of an identifier in the query", async () => {
    const found = await sessionsOf("retryPolicy")
    expect(found).toContain(UPLOADS)
    expect(found).toContain(HTTP)
    // Both words rank above one: the privacy policy shares only "policy".
    expect(found.indexOf(PRIVACY)).toBeGreaterThan(
      Math.max(found.indexOf(UPLOADS), found.indexOf(HTTP)),
    )
  })

  it("centres the snippet on the identifier", async () => {
    const [hit] = await lexical("max attempts", { snippetChars: 40 })
    expect(hit?.snippet).toContain("maxAttempts")
  })

  it("re-indexes the chunks of an index built before identifier words (schema 4)", async () => {
    const before = await history.run(
      RecallDatabase.use((db) =>
        Effect.sync(() => {
          rewindLexicalIndex(db.sqlite, 4)
          // As schema 4 indexed it: `maxAttempts` is one word.
          return chunksHoldingIn(db.sqlite, "attempts")
        }),
      ),
    )
    expect(before).toBe(0)
    // The next connection (a later CLI call) migrates the file.
    const version = await history.run(
      RecallDatabase.use((db) =>
        Effect.sync(() =>
          db.sqlite.prepare("select value from meta where key = 'schema_version'").pluck().get(),
        ),
      ),
    )
    expect(version).toBe("14")
    expect(await chunksHolding("attempts")).toBe(1)
    expect((await sessionsOf("max attempts"))[0]).toBe(HTTP)
    expect(await integrity()).toBe("ok")
  })

  it("refuses chunk writes from a connection of the schema 4 version", async () => {
    // A process of the previous version still open on the upgraded file (a `--watch` indexer)
    // has only the schema 4 function: its writes fail instead of indexing other text.
    const path = await history.run(RecallDatabase.use((db) => Effect.succeed(db.path)))
    const old = new Database(path)
    try {
      old.function("baton_fts_text", { deterministic: true }, (text: unknown) => text)
      const turn = old.prepare("select id from turns limit 1").pluck().get() as number
      expect(() =>
        old
          .prepare(
            `insert into chunks (turn_row, surface_index, chunk_index, role, char_start, char_end,
              text, content_hash) values (?, 0, 0, 'user', 0, 11, 'retryPolicy', 'x')`,
          )
          .run(turn),
      ).toThrow(/no such function: baton_fts_text_5/)
    } finally {
      old.close()
    }
    expect(await integrity()).toBe("ok")
  })

  it("takes a forgotten session's identifier words out of the index", async () => {
    expect(await chunksHolding("profile")).toBeGreaterThan(0)
    await history.run(forgetSessions({ _tag: "Session", sessionId: UI }))
    expect(await chunksHolding("profile")).toBe(0)
    expect(await chunksHolding("userprofilecard")).toBe(0)
    expect(await integrity()).toBe("ok")
    expect(await sessionsOf("profile card")).toEqual([])
  })
})

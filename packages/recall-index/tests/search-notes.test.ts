// What searchRecall's `degraded` tells a user when meaning search is missing or partial: the
// index's vectors made by another environment's embedder (what to set to search them, what an
// index run here would embed with), an index run in progress, a partly embedded active space,
// the vector arm alone unavailable, and a failing embedder said once. Each case edits its own
// copy of the hand-written history (meta, backlog flags, the indexer lock) as an index run or
// another environment would have left it.
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import {
  EmbedderError,
  embedderFromEnvironment,
  RecallDatabase,
  searchRecall,
} from "@baton/recall-index"
import type { Embedder, RecallSearchInput, RecallSearchProviders } from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { defaultHistory, indexedHistory } from "./recall-fixtures.js"
import type { IndexedHistory } from "./recall-fixtures.js"

const embedder = makeDeterministicEmbedder({ dim: 64 })
const other = makeDeterministicEmbedder({ dim: 32, model: "other" })
const histories: Array<IndexedHistory> = []
afterEach(() => {
  for (const h of histories.splice(0)) h.dispose()
})

/** Runs `sql` on the history's database. */
const execute = (history: IndexedHistory, sql: string) =>
  history.run(
    Effect.gen(function* () {
      ;(yield* RecallDatabase).sqlite.exec(sql)
    }),
  )

/** A fresh history embedded with `embedder`, with `sql` run on its database. */
const historyWith = async (sql = ""): Promise<IndexedHistory> => {
  const history = await indexedHistory(defaultHistory, embedder)
  histories.push(history)
  if (sql !== "") await execute(history, sql)
  return history
}

const search = (
  history: IndexedHistory,
  input: Partial<RecallSearchInput> = {},
  providers: RecallSearchProviders = { embedder },
) => history.run(searchRecall({ query: "garden planner database", ...input }, providers))

const activeSpace = (fingerprint: string) =>
  `update meta set value = '${fingerprint}' where key = 'embedder_fingerprint';`
// The lock row a running index run holds (this process: alive), or one a killed run left.
const lockHeldBy = (pid: number) =>
  `insert or replace into index_lock (id, pid, run_token, acquired_at, lease_until)
   values (1, ${pid}, 'test', 0, ${Date.now() + 600_000});`

describe("searchRecall notes when meaning search is missing or partial", () => {
  it("names the settings that search another environment's vectors, and what indexing here uses", async () => {
    const history = await historyWith(activeSpace("voyage/voyage-4-large/1024"))
    // The default (`auto`) configuration: an index run here would pick USE-lite at this size.
    const auto = await Effect.runPromise(embedderFromEnvironment({}))
    const result = await search(history, {}, { embedder: other, configured: auto })
    expect(result.arms.vector.ran).toBe(false)
    expect(result.degraded).toBe(
      "lexical only: the index's vectors were made by voyage/voyage-4-large: set " +
        "BATON_EMBEDDER=voyage (and VOYAGE_API_KEY) to search them by meaning, or run " +
        "'baton recall index' to embed with use-lite instead (re-embeds the whole history)",
    )
    expect(result.degraded).not.toMatch(/in code|embeddingForSearch/)
    expect(result.hits.length).toBeGreaterThan(0)
    // A named embedder is what indexing here would use.
    const named = await Effect.runPromise(embedderFromEnvironment({ BATON_EMBEDDER: "use-static" }))
    const withNamed = await search(history, {}, { embedder: other, configured: named })
    expect(withNamed.degraded).toContain("to embed with use-static instead")
  })

  it("names the model and variables of an OpenAI-compatible space", async () => {
    const history = await historyWith(activeSpace("openai-compatible/BAAI/bge-small-en-v1.5/384"))
    const result = await search(history, {}, { embedder: other })
    expect(result.degraded).toBe(
      "lexical only: the index's vectors were made by openai-compatible/BAAI/bge-small-en-v1.5: " +
        "set BATON_EMBEDDER=openai (with BATON_EMBEDDINGS_URL of its endpoint and " +
        "BATON_EMBEDDINGS_MODEL=BAAI/bge-small-en-v1.5) to search them by meaning, or run " +
        "'baton recall index' to embed with deterministic:other:32 instead (re-embeds the whole history)",
    )
  })

  it("says an index run is in progress instead of advising one", async () => {
    // No vectors at all yet (a first run still indexing words), its lock held by a live process.
    const history = await historyWith(
      `delete from meta where key = 'embedder_fingerprint'; ${lockHeldBy(process.pid)}`,
    )
    const running = await search(history, {}, { embedder: other })
    expect(running.degraded).toBe(
      "lexical only: no vectors yet: an index run is in progress, " +
        "and its vectors become searchable as it stores them",
    )
    expect(running.degraded).not.toContain("run 'baton recall index'")
    // A lock left by a run that is gone is no run: the advice is to index.
    await execute(history, lockHeldBy(2 ** 22 + 4321))
    const stopped = await search(history, {}, { embedder: other })
    expect(stopped.degraded).toBe("lexical only: no vectors yet (run 'baton recall index')")
  })

  it("says how much of the active space meaning search covers while it has a backlog", async () => {
    const complete = await historyWith()
    expect((await search(complete)).degraded).toBeNull()
    const history = await historyWith(
      "update chunks set needs_embedding = 1 where id in (select id from chunks order by id limit 3);",
    )
    const chunks = await history.run(
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        return (db.sqlite.prepare("select count(*) as n from chunks").get() as { n: number }).n
      }),
    )
    const partial = await search(history)
    expect(partial.arms.vector.ran).toBe(true)
    expect(partial.degraded).toBe(
      `meaning search covers ${chunks - 3} of ${chunks} chunks (backlog 3; 'baton recall index' embeds the rest)`,
    )
    await execute(history, lockHeldBy(process.pid))
    expect((await search(history)).degraded).toBe(
      `meaning search covers ${chunks - 3} of ${chunks} chunks (backlog 3; the index run in progress embeds the rest)`,
    )
    // Words alone asked for: nothing of meaning search to say.
    expect((await search(history, { arms: ["lexical"] })).degraded).toBeNull()
  })

  it("says a failing embedder once, and never 'lexical only' when only the vector arm was asked for", async () => {
    const history = await historyWith()
    const broken: Embedder = {
      ...embedder,
      embedQuery: () =>
        Effect.fail(
          new EmbedderError({
            provider: "deterministic",
            failure: "unavailable",
            retryable: true,
            reason: "HTTP 500",
          }),
        ),
    }
    const both = await search(history, {}, { embedder: broken })
    expect(both.degraded).toBe("lexical only: the embedder failed: HTTP 500")
    // The skip is the note's own words: a renderer showing both says it once.
    expect(both.degraded).toContain(both.arms.vector.skipped!)
    const vectorOnly = await search(history, { arms: ["vector"] }, { embedder: broken })
    expect(vectorOnly.hits).toEqual([])
    expect(vectorOnly.degraded).toBe("vector search unavailable: the embedder failed: HTTP 500")
    const elsewhere = await search(history, { arms: ["vector"] }, { embedder: other })
    expect(elsewhere.degraded).toMatch(/^vector search unavailable: /)
  })
})

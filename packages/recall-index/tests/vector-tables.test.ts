// Per-embedder vec0 tables and the embedding backlog, on a real temp-file database.
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { activateEmbedder, embedBacklog, forgetSessions, RecallDatabase } from "@baton/recall-index"
import type { Embedder } from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { indexedFixture, withIndex } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterAll(() => {
  for (const c of cleanups.splice(0)) c()
})

describe("activateEmbedder", () => {
  it("creates one vec0 table per fingerprint and recomputes the backlog when the embedder changes", async () => {
    const { dataDir, dispose } = await indexedFixture(4)
    cleanups.push(dispose)
    const first = await withIndex(dataDir, activateEmbedder("fake/model-a/4", 4))
    expect(first.vecTable).toBe("vec_1")
    const chunks = await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() => {
          // Pretend one distinct text was embedded: store its vector (BigInt rowid for vec0).
          const hash = (
            db.sqlite.prepare("select content_hash from chunks limit 1").get() as {
              content_hash: string
            }
          ).content_hash
          const key = db.sqlite
            .prepare(
              "insert into vector_keys (fingerprint, content_hash) values (?, ?) returning id",
            )
            .get("fake/model-a/4", hash) as { id: number }
          db.sqlite
            .prepare("insert into vec_1 (rowid, embedding) values (?, vec_int8(?))")
            .run(BigInt(key.id), "[127, 0, 0, 0]")
          return {
            total: (db.sqlite.prepare("select count(*) as n from chunks").get() as { n: number }).n,
            sharing: (
              db.sqlite
                .prepare("select count(*) as n from chunks where content_hash = ?")
                .get(hash) as { n: number }
            ).n,
          }
        }),
      ),
    )
    expect(first.backlog).toBe(chunks.total)
    // Same embedder again: the flags are kept as they are (no full recompute per run; the backlog
    // marks a chunk whose text already has a vector done without embedding it).
    const again = await withIndex(dataDir, activateEmbedder("fake/model-a/4", 4))
    expect(again).toMatchObject({ vecTable: "vec_1", backlog: chunks.total })
    const other = await withIndex(dataDir, activateEmbedder("fake/model-b/8", 8))
    expect(other).toMatchObject({ vecTable: "vec_2", backlog: chunks.total })
    // Switching back recomputes against model-a's vectors.
    const back = await withIndex(dataDir, activateEmbedder("fake/model-a/4", 4))
    expect(back).toMatchObject({ vecTable: "vec_1", backlog: chunks.total - chunks.sharing })
    const mismatch = await withIndex(dataDir, Effect.flip(activateEmbedder("fake/model-a/4", 5)))
    expect(mismatch.reason).toContain("dimension 4")
    const nearest = await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() =>
          db.sqlite
            .prepare("select rowid from vec_1 where embedding match vec_int8(?) and k = 1")
            .all("[114, 13, 0, 0]"),
        ),
      ),
    )
    expect(nearest).toHaveLength(1)
    // Forgetting everything also drops the vectors of the forgotten text.
    await withIndex(dataDir, forgetSessions({ _tag: "All" }))
    const left = await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() => ({
          keys: db.sqlite.prepare("select count(*) as n from vector_keys").get(),
          vectors: db.sqlite.prepare("select count(*) as n from vec_1").get(),
        })),
      ),
    )
    expect(left).toEqual({ keys: { n: 0 }, vectors: { n: 0 } })
  })

  it("stores a space's endpoint, refuses another one, and a space stored without one adopts it", async () => {
    const { dataDir, dispose } = await indexedFixture(2)
    cleanups.push(dispose)
    const a = "http://127.0.0.1:8080/v1"
    const b = "http://10.0.0.2:8080/v1"
    await withIndex(dataDir, activateEmbedder("openai-compatible/m/4", 4, a))
    const endpointOf = (fingerprint: string) =>
      withIndex(
        dataDir,
        RecallDatabase.use((db) =>
          Effect.sync(() =>
            db.sqlite
              .prepare("select endpoint from embedders where fingerprint = ?")
              .pluck()
              .get(fingerprint),
          ),
        ),
      )
    expect(await endpointOf("openai-compatible/m/4")).toBe(a)
    const other = await withIndex(dataDir, activateEmbedder("openai-compatible/m2/4", 4))
    expect(other.switchedFrom).toBe("openai-compatible/m/4")
    const refused = await withIndex(
      dataDir,
      Effect.flip(activateEmbedder("openai-compatible/m/4", 4, b)),
    )
    expect(refused).toMatchObject({
      _tag: "EmbedderError",
      failure: "bad_request",
      retryable: false,
    })
    expect(refused.message).toContain(
      `the space openai-compatible/m/4 holds vectors from ${a}, but BATON_EMBEDDINGS_URL now names ${b}`,
    )
    // Refused before anything changed: the other space is still the active one.
    const still = await withIndex(dataDir, activateEmbedder("openai-compatible/m2/4", 4))
    expect(still.switchedFrom).toBeNull()
    // A space of an earlier version (no endpoint stored) adopts the next one, with no note.
    await withIndex(
      dataDir,
      RecallDatabase.use((db) =>
        Effect.sync(() => db.sqlite.prepare("update embedders set endpoint = null").run()),
      ),
    )
    await withIndex(dataDir, activateEmbedder("openai-compatible/m/4", 4, b))
    expect(await endpointOf("openai-compatible/m/4")).toBe(b)
    // An embedder naming no endpoint (Voyage, the embedded ones) leaves it as it is.
    await withIndex(dataDir, activateEmbedder("openai-compatible/m/4", 4))
    expect(await endpointOf("openai-compatible/m/4")).toBe(b)
  })

  it("adopts the endpoint of a server that moved (the same vectors of stored texts), refuses one that gives others", async () => {
    const { dataDir, dispose } = await indexedFixture(3)
    cleanups.push(dispose)
    const at = (endpoint: string, flip = false) => {
      const inner = makeDeterministicEmbedder({ dim: 64 })
      const embedder: Embedder = {
        ...inner,
        info: { ...inner.info, endpoint },
        // Another model behind the same name: the same texts, other directions.
        embedDocuments: (texts) =>
          flip
            ? inner.embedDocuments(texts).pipe(Effect.map((vs) => vs.map((v) => v.reverse())))
            : inner.embedDocuments(texts),
      }
      return { inner, embedder }
    }
    const a = "http://127.0.0.1:8080/v1"
    const b = "http://127.0.0.1:9090/v1"
    const c = "http://10.0.0.2:8080/v1"
    // A space that holds no vector yet takes a new endpoint without comparing.
    const empty = "http://127.0.0.1:7070/v1"
    await withIndex(dataDir, activateEmbedder(at(a).inner.info.fingerprint, 64, empty))
    const start = at(a)
    const first = await withIndex(dataDir, embedBacklog(start.embedder))
    expect(first.endpointMoved).toEqual({ from: empty, to: a, vectors: 0, cosine: null })
    expect(start.inner.embeddedTexts()).toBe(first.embedded)
    const vectors = first.embedded
    const state = () =>
      withIndex(
        dataDir,
        RecallDatabase.use((db) =>
          Effect.sync(() =>
            db.sqlite.prepare("select endpoint, vector_count as vectors from embedders").get(),
          ),
        ),
      )
    // Moved: only the compared texts are sent, the space keeps its vectors and takes the endpoint.
    const moved = at(b)
    const adopted = await withIndex(dataDir, embedBacklog(moved.embedder))
    expect(adopted.endpointMoved).toMatchObject({ from: a, to: b, vectors })
    expect(adopted.endpointMoved?.cosine).toBeGreaterThanOrEqual(0.99)
    expect(adopted.embedded).toBe(0)
    expect(moved.inner.embeddedTexts()).toBe(3)
    expect(await state()).toEqual({ endpoint: b, vectors })
    // Once adopted, nothing more is compared.
    const again = await withIndex(dataDir, embedBacklog(moved.embedder))
    expect(again.endpointMoved).toBeNull()
    expect(moved.inner.embeddedTexts()).toBe(3)
    // Other vectors: refused as before, with the cosine; nothing changed.
    const other = at(c, true)
    const refused = await withIndex(dataDir, Effect.flip(embedBacklog(other.embedder)))
    expect(refused).toMatchObject({ _tag: "EmbedderError", failure: "bad_request" })
    expect(refused.message).toContain(
      `holds vectors from ${b}, but BATON_EMBEDDINGS_URL now names ${c}`,
    )
    expect(refused.message).toMatch(/differ from the stored ones: cosine -?0\.\d\d, where/)
    expect(other.inner.embeddedTexts()).toBe(3)
    expect(await state()).toEqual({ endpoint: b, vectors })
  })
})

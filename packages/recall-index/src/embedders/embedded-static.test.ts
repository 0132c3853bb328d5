import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeStaticTableEmbedder } from "./embedded-static.js"
import { decodeStaticTable, encodeStaticTable, staticTokens } from "./static-word-table.js"

const dir = mkdtempSync(join(tmpdir(), "baton-static-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)

/** A 4-d toy table: two "topics" and one frequent word. */
const toyTable = () =>
  encodeStaticTable(
    {
      name: "toy-3",
      dim: 4,
      words: ["cache", "redis", "the"],
      logProb: [-9, -10, -2],
      mean: [0, 0, 0, 0],
      source: "test",
    },
    Float32Array.of(1 / 127, 1 / 127, 1 / 127),
    Int8Array.of(127, 0, 0, 0, 120, 40, 0, 0, 0, 0, 127, 0),
  )

describe("static word table", () => {
  it("tokenises words and splits code identifiers", () => {
    expect(staticTokens("Fix retryBackoff in HTTPServer, snake_case & kebab-case!")).toEqual([
      "fix",
      "retry",
      "backoff",
      "in",
      "http",
      "server",
      "snake",
      "case",
      "kebab",
      "case",
    ])
  })

  it("round-trips through its binary format and rejects damaged files with a reason", () => {
    const bytes = toyTable()
    const table = decodeStaticTable(bytes)
    expect(typeof table).not.toBe("string")
    if (typeof table === "string") return
    expect(table.header.words).toEqual(["cache", "redis", "the"])
    expect(table.index.get("redis")).toBe(1)
    expect([...table.vectors.subarray(4, 8)]).toEqual([120, 40, 0, 0])
    expect(decodeStaticTable(bytes.subarray(0, bytes.length - 1))).toMatch(/size/)
    expect(decodeStaticTable(new Uint8Array(16))).toMatch(/not a static word table/)
  })

  it("embeds by SIF-weighted mean: frequent words count little, unknown words not at all", async () => {
    const path = join(dir, "toy.bin")
    writeFileSync(path, toyTable())
    const embedder = await Effect.runPromise(makeStaticTableEmbedder({ tablePath: path }))
    expect(embedder.info).toMatchObject({
      provider: "embedded",
      dim: 4,
      remote: false,
      paid: false,
    })
    const [cache, cacheThe, redis, none] = await Effect.runPromise(
      embedder.embedDocuments(["cache", "the cache", "Redis", "zzz qqq"]),
    )
    expect(Math.hypot(...cache!)).toBeCloseTo(1, 5)
    expect(dot(cache!, cacheThe!)).toBeGreaterThan(0.99) // "the" barely moves it
    expect(dot(cache!, redis!)).toBeGreaterThan(0.9)
    expect([...none!]).toEqual([0, 0, 0, 0])
    const again = await Effect.runPromise(embedder.embedQuery("the cache"))
    expect([...again]).toEqual([...cacheThe!])
  })

  it("a missing table fails with unavailable naming the path", async () => {
    const error = await Effect.runPromise(
      Effect.flip(makeStaticTableEmbedder({ tablePath: join(dir, "missing.bin") })),
    )
    expect(error).toMatchObject({ _tag: "EmbedderError", failure: "unavailable" })
    expect(error.reason).toContain("missing.bin")
  })

  it("the shipped table places paraphrases nearer than unrelated text", async () => {
    const embedder = await Effect.runPromise(makeStaticTableEmbedder())
    expect(embedder.info.dim).toBe(512)
    const [a, b, c] = await Effect.runPromise(
      embedder.embedDocuments([
        "the database migration failed on the production server",
        "schema upgrade broke in prod",
        "we picked a blue colour for the login button",
      ]),
    )
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!))
  })
})

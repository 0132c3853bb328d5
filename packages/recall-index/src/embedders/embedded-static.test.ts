import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import type { Embedder } from "../embedder.js"
import { normalizeVector } from "../embedder.js"
import { sentenceCutProbes } from "../testing/sentence-probes.js"
import {
  DEFAULT_STATIC_TABLE_PATH,
  loadStaticTable,
  makeStaticTableEmbedder,
} from "./embedded-static.js"
import { sentencesOf } from "./sentence-reranker.js"
import {
  decodeStaticTable,
  encodeStaticTable,
  lookupWord,
  staticTokens,
} from "./static-word-table.js"
import type { StaticWordTable } from "./static-word-table.js"

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

/** Largest componentwise difference. */
const maxDiff = (a: Float32Array, b: Float32Array) => {
  expect(a.length).toBe(b.length)
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0)
}

/** The embedder's formula written out plainly, word by word, rounding as it does (float32). */
const referenceVector = (
  table: StaticWordTable,
  text: string,
  sifA: number,
  removeCommon: boolean,
): Float32Array => {
  const { dim, logProb, mean } = table.header
  const v = new Float32Array(dim)
  let weightSum = 0
  for (const word of staticTokens(text)) {
    const row = lookupWord(table.index, word)
    if (row === undefined) continue
    const weight = sifA / (sifA + Math.exp(logProb[row]!))
    const scale = table.scales[row]! * weight
    for (let i = 0; i < dim; i++) v[i] = v[i]! + table.vectors[row * dim + i]! * scale
    weightSum += weight
  }
  if (weightSum === 0) return v
  if (removeCommon) for (let i = 0; i < dim; i++) v[i] = v[i]! - mean[i]! * weightSum
  return normalizeVector(v)
}

describe("embedParts", () => {
  const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)
  const partsOf = (embedder: Embedder) => {
    const embedParts = embedder.embedParts
    if (embedParts === undefined) throw new Error("the static embedder offers embedParts")
    return embedParts
  }

  it("gives the parts' vectors exactly and the whole text's within rounding", async () => {
    for (const removeCommon of [false, true]) {
      const embedder = await run(makeStaticTableEmbedder({ removeCommon }))
      for (const text of sentenceCutProbes) {
        const parts = sentencesOf(text, Infinity)
        const got = await run(partsOf(embedder)(text, parts))
        const expected = await run(embedder.embedDocuments(parts))
        expect(got.parts.map((v) => [...v])).toEqual(expected.map((v) => [...v]))
        const [whole] = await run(embedder.embedDocuments([text]))
        expect(maxDiff(got.whole, whole!), JSON.stringify(text)).toBeLessThan(1e-6)
      }
    }
  })

  it("computes the whole text on its own when a cut could change a word (U+FEFF and final sigma)", async () => {
    // "Σ" lower-cases to "ς" at a word's end and to "σ" elsewhere, looking through U+FEFF, which
    // the sentence cut treats as whitespace: "ΑΣ.\uFEFFΒ" is "ασ β" whole but "ας" + "β" in parts.
    const path = join(dir, "sigma.bin")
    writeFileSync(
      path,
      encodeStaticTable(
        {
          name: "sigma-6",
          dim: 6,
          words: ["ας", "ασ", "β"],
          logProb: [-9, -9, -9],
          mean: [0.1, 0, 0, 0, 0, 0.2],
          source: "test",
        },
        Float32Array.of(1 / 127, 1 / 127, 1 / 127),
        Int8Array.of(127, 0, 0, 0, 0, 5, 0, 127, 0, 0, 0, 9, 0, 0, 127, 0, 3, 0),
      ),
    )
    for (const removeCommon of [false, true]) {
      const embedder = await run(makeStaticTableEmbedder({ tablePath: path, removeCommon }))
      for (const text of ["ΑΣ.\uFEFFΒ", "Β.\uFEFFΣ", "ΑΣ. Β", "ΑΣ.\uFEFF.Β ΑΣ"]) {
        const parts = sentencesOf(text, Infinity)
        const got = await run(partsOf(embedder)(text, parts))
        const [whole] = await run(embedder.embedDocuments([text]))
        expect(maxDiff(got.whole, whole!), JSON.stringify(text)).toBeLessThan(1e-6)
      }
    }
  })

  it("embeds exactly by the plain per-word formula (any dimension, centred or not)", async () => {
    const shipped = await run(loadStaticTable(DEFAULT_STATIC_TABLE_PATH))
    const path = join(dir, "odd.bin")
    writeFileSync(
      path,
      encodeStaticTable(
        {
          name: "odd-7",
          dim: 7,
          words: ["cache", "redis", "the"],
          logProb: [-9, -10, -2],
          mean: [0.1, 0, 0, 0, 0, 0.2, -0.1],
          source: "test",
        },
        Float32Array.of(1 / 127, 1 / 100, 1 / 127),
        Int8Array.of(127, 0, 0, 0, 3, 0, 9, 120, 40, 0, 0, 0, -7, 1, 0, 0, 127, 0, 5, 0, 2),
      ),
    )
    const odd = await run(loadStaticTable(path))
    for (const [table, tablePath] of [
      [shipped, undefined],
      [odd, path],
    ] as const) {
      for (const removeCommon of [false, true]) {
        const embedder = await run(
          makeStaticTableEmbedder({
            ...(tablePath === undefined ? {} : { tablePath }),
            removeCommon,
          }),
        )
        const texts = [...sentenceCutProbes, "the cache", "Redis caches the cache"]
        const got = await run(embedder.embedDocuments(texts))
        texts.forEach((text, i) => {
          const expected = referenceVector(table, text, 0.0003, removeCommon)
          expect([...got[i]!], JSON.stringify(text)).toEqual([...expected])
        })
      }
    }
  })
})

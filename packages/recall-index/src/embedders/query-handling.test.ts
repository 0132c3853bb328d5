import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { makeDeterministicEmbedder } from "../testing/deterministic-embedder.js"
import { lexicalQuery, speakerWords } from "../lexical-query.js"
import { makeSentenceReranker, sentencesOf } from "./sentence-reranker.js"
import { makeStaticQueryExpander } from "./static-query-expansion.js"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DEFAULT_STATIC_TABLE_PATH } from "./embedded-static.js"
import { decodeNeighbourTable, encodeNeighbourTable } from "./static-word-table.js"

describe("lexicalQuery", () => {
  it("drops function and question words, keeps content words in order", () => {
    expect(lexicalQuery("Why did we switch the webhook to express.raw()?")).toBe(
      "switch webhook express.raw()?",
    )
    expect(lexicalQuery("how did we fix the one cent difference on invoices")).toBe(
      "fix one cent difference invoices",
    )
  })

  it("never empties a query", () => {
    expect(lexicalQuery("what was it")).toBe("what was it")
    expect(lexicalQuery("")).toBe("")
  })
})

describe("speakerWords", () => {
  it("keeps the personal pronouns lexicalQuery drops, lower case, each once, in order", () => {
    const question = "What did I tell you about MY dog? My dog's vet said we should wait."
    expect(lexicalQuery(question)).not.toMatch(/\b(i|you|my|we)\b/i)
    expect(speakerWords(question)).toBe("i you my we")
    expect(speakerWords("stripe webhook signature")).toBe("")
  })
})

describe("static query expansion", () => {
  it("keeps the original terms first and adds distinct neighbours of content words", async () => {
    const expand = await Effect.runPromise(
      makeStaticQueryExpander({ perWord: 3, minSimilarity: 0.6 }),
    )
    const out = expand("why was the warning shown")
    expect(out.startsWith("warning shown")).toBe(true)
    const added = out.split(" ").slice(2)
    expect(added.length).toBeGreaterThan(0)
    expect(added).toContain("warnings")
    expect(new Set(added).size).toBe(added.length)
    expect(expand("why was the warning shown")).toBe(out)
  })

  it("reads the shipped neighbour file and expands exactly as scanning the table would", async () => {
    const stored = await Effect.runPromise(makeStaticQueryExpander())
    const scanned = await Effect.runPromise(
      makeStaticQueryExpander({ neighboursPath: "/nonexistent/neighbours.bin" }),
    )
    for (const q of [
      "what did we decide about the retry policy last week",
      "why was the payment declined",
      "kubernetes deployment rollback canary",
      "which database did we choose for caching sessions",
    ]) {
      expect(stored(q)).toBe(scanned(q))
    }
    // Options the file does not cover (more neighbours than it holds) scan the table.
    const wide = await Effect.runPromise(makeStaticQueryExpander({ perWord: 12 }))
    expect(wide("payment declined").split(" ").length).toBeGreaterThan(
      stored("payment declined").split(" ").length,
    )
  })

  it("ignores a neighbour file built for another table (digest) and a damaged one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "baton-neighbours-"))
    const shipped = decodeNeighbourTable(
      readFileSync(DEFAULT_STATIC_TABLE_PATH.replace(/\.bin$/, ".neighbours.bin")),
      15_000,
    )
    if (typeof shipped === "string") throw new Error(shipped)
    // Same shape, wrong digest, every neighbour pointing at word 0: must not be used.
    const foreign = join(dir, "foreign.bin")
    writeFileSync(
      foreign,
      encodeNeighbourTable({
        ...shipped,
        tableDigest: "000000000000",
        indices: new Uint16Array(shipped.indices.length),
      }),
    )
    const damaged = join(dir, "damaged.bin")
    writeFileSync(damaged, Buffer.from("not a neighbour file at all, just text"))
    const scanned = await Effect.runPromise(
      makeStaticQueryExpander({ neighboursPath: "/nonexistent/neighbours.bin" }),
    )
    for (const path of [foreign, damaged]) {
      const expand = await Effect.runPromise(makeStaticQueryExpander({ neighboursPath: path }))
      expect(expand("why was the payment declined")).toBe(scanned("why was the payment declined"))
    }
    expect(decodeNeighbourTable(readFileSync(damaged), 15_000)).toBe("not a neighbour file")
  })

  it("adds nothing when no neighbour is similar enough", async () => {
    const expand = await Effect.runPromise(makeStaticQueryExpander({ minSimilarity: 1.01 }))
    expect(expand("the deploy failed")).toBe("deploy failed")
  })
})

describe("sentence reranker", () => {
  it("splits sentences", () => {
    expect(sentencesOf("One. Two!\nThree? four")).toEqual(["One.", "Two!", "Three?", "four"])
    expect(sentencesOf("...")).toEqual(["..."])
  })

  it("ranks a long candidate with one matching sentence above a uniformly vague one", async () => {
    const reranker = makeSentenceReranker(makeDeterministicEmbedder({ dim: 256 }))
    const filler = "We looked at the build. The tests pass. Nothing else changed in the module."
    const documents = [
      `${filler} The linter is happy. ${filler}`,
      `${filler} The stripe webhook signature check needs the raw body. ${filler}`,
      "Webhook tests were added.",
    ]
    const results = await Effect.runPromise(
      reranker.rerank("stripe webhook signature raw body", documents, 2),
    )
    expect(results).toHaveLength(2)
    expect(results[0]!.index).toBe(1)
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score)
    expect(await Effect.runPromise(reranker.rerank("q", [], 3))).toEqual([])
  })
})

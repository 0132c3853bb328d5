/**
 * A local second-stage reranker for the embedded default: scores each candidate by its best
 * matching sentence (max cosine similarity between the query and the candidate's sentences,
 * blended with the whole-candidate similarity), so one relevant sentence inside a long reply is
 * not drowned by the rest of it — the failure a single chunk vector has. Runs at query time
 * over a few dozen candidates with a fast embedder (the static word table), stores nothing,
 * sends nothing anywhere. Implements the `Reranker` port; results best first, ties by index.
 * When the embedder offers `embedParts` (the static table does), a candidate whose sentences
 * are all considered gets its whole-candidate vector from the same pass as its sentences
 * instead of a second embedding; the scores are the same up to float rounding.
 */
import * as Effect from "effect/Effect"
import type { Embedder, Reranker, RerankResult } from "../embedder.js"

/** Options of {@link makeSentenceReranker}. */
export interface SentenceRerankerOptions {
  /** Weight of the whole-candidate similarity next to the best sentence's; default 0.3. */
  readonly wholeWeight?: number
  /** Sentences per candidate considered (the first ones); default 40. */
  readonly maxSentences?: number
}

/**
 * All sentences of `text`, at least one: pieces cut at whitespace (after . ! ? ; and at line
 * breaks), trimmed, those with no letter or digit dropped; `[text]` when none is left.
 */
const allSentencesOf = (text: string): string[] => {
  const parts = text
    .split(/(?<=[.!?;])\s+|\n+/u)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s))
  return parts.length > 0 ? parts : [text]
}

/** Sentences of `text` (at . ! ? ; and line breaks), at least one. */
export const sentencesOf = (text: string, max = 40): string[] => allSentencesOf(text).slice(0, max)

/** The dot product, summed in index order (unrolled by four: faster on V8, the same sums). */
const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0
  let i = 0
  for (; i + 4 <= a.length; i += 4) {
    s += (a[i] ?? 0) * (b[i] ?? 0)
    s += (a[i + 1] ?? 0) * (b[i + 1] ?? 0)
    s += (a[i + 2] ?? 0) * (b[i + 2] ?? 0)
    s += (a[i + 3] ?? 0) * (b[i + 3] ?? 0)
  }
  for (; i < a.length; i++) s += (a[i] ?? 0) * (b[i] ?? 0)
  return s
}

/** A candidate's sentence vectors and whole vector (undefined when the embedder returned none). */
interface Embedded {
  readonly sentences: ReadonlyArray<Float32Array>
  readonly whole: Float32Array | undefined
}

/** A reranker scoring candidates by their best sentence under `embedder`. */
export const makeSentenceReranker = (
  embedder: Embedder,
  options: SentenceRerankerOptions = {},
): Reranker => {
  const wholeWeight = options.wholeWeight ?? 0.3
  const maxSentences = options.maxSentences ?? 40
  const embedParts = embedder.embedParts
  return {
    provider: embedder.info.provider,
    model: `sentence-max/${embedder.info.model}`,
    rerank: (query, documents, topK) =>
      Effect.gen(function* () {
        if (documents.length === 0) return []
        const q = yield* embedder.embedQuery(query)
        const sentences = documents.map(allSentencesOf)
        const embedded: Array<Embedded | undefined> = documents.map(() => undefined)
        // One pass per candidate when every sentence counts (`sentencesOf`'s cut keeps the
        // `embedParts` precondition); the rest batched as before: sentences, then whole texts.
        const rest: number[] = []
        for (let index = 0; index < documents.length; index++) {
          const all = sentences[index] ?? []
          if (embedParts !== undefined && all.length <= maxSentences) {
            const { parts, whole } = yield* embedParts(documents[index] ?? "", all)
            embedded[index] = { sentences: parts, whole }
          } else {
            rest.push(index)
          }
        }
        if (rest.length > 0) {
          const cut = rest.map((index) => (sentences[index] ?? []).slice(0, maxSentences))
          const flat = yield* embedder.embedDocuments(cut.flat())
          const whole = yield* embedder.embedDocuments(rest.map((index) => documents[index] ?? ""))
          let at = 0
          rest.forEach((index, k) => {
            const count = cut[k]?.length ?? 0
            embedded[index] = { sentences: flat.slice(at, at + count), whole: whole[k] }
            at += count
          })
        }
        const results: RerankResult[] = documents.map((_, index) => {
          let best = -1
          for (const v of embedded[index]?.sentences ?? []) best = Math.max(best, dot(q, v))
          const w = embedded[index]?.whole
          const score = (1 - wholeWeight) * best + wholeWeight * (w === undefined ? 0 : dot(q, w))
          return { index, score }
        })
        results.sort((a, b) => b.score - a.score || a.index - b.index)
        return results.slice(0, Math.max(0, topK))
      }),
  }
}

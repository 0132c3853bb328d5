/**
 * A local second-stage reranker for the embedded default: scores each candidate by its best
 * matching sentence (max cosine similarity between the query and the candidate's sentences,
 * blended with the whole-candidate similarity), so one relevant sentence inside a long reply is
 * not drowned by the rest of it — the failure a single chunk vector has. Runs at query time
 * over a few dozen candidates with a fast embedder (the static word table), stores nothing,
 * sends nothing anywhere. Implements the `Reranker` port; results best first, ties by index.
 */
import { Effect } from "effect"
import type { Embedder, Reranker, RerankResult } from "../embedder.js"

/** Options of {@link makeSentenceReranker}. */
export interface SentenceRerankerOptions {
  /** Weight of the whole-candidate similarity next to the best sentence's; default 0.3. */
  readonly wholeWeight?: number
  /** Sentences per candidate considered (the first ones); default 40. */
  readonly maxSentences?: number
}

/** Sentences of `text` (at . ! ? ; and line breaks), at least one. */
export const sentencesOf = (text: string, max = 40): string[] => {
  const parts = text
    .split(/(?<=[.!?;])\s+|\n+/u)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s))
  return (parts.length > 0 ? parts : [text]).slice(0, max)
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += (a[i] ?? 0) * (b[i] ?? 0)
  return s
}

/** A reranker scoring candidates by their best sentence under `embedder`. */
export const makeSentenceReranker = (
  embedder: Embedder,
  options: SentenceRerankerOptions = {},
): Reranker => {
  const wholeWeight = options.wholeWeight ?? 0.3
  const maxSentences = options.maxSentences ?? 40
  return {
    provider: embedder.info.provider,
    model: `sentence-max/${embedder.info.model}`,
    rerank: (query, documents, topK) =>
      Effect.gen(function* () {
        if (documents.length === 0) return []
        const q = yield* embedder.embedQuery(query)
        const sentences = documents.map((d) => sentencesOf(d, maxSentences))
        const flat = yield* embedder.embedDocuments(sentences.flat())
        const whole = yield* embedder.embedDocuments(documents)
        let at = 0
        const results: RerankResult[] = documents.map((_, index) => {
          let best = -1
          for (let i = 0; i < (sentences[index]?.length ?? 0); i++) {
            const v = flat[at++]
            if (v !== undefined) best = Math.max(best, dot(q, v))
          }
          const w = whole[index]
          const score = (1 - wholeWeight) * best + wholeWeight * (w === undefined ? 0 : dot(q, w))
          return { index, score }
        })
        results.sort((a, b) => b.score - a.score || a.index - b.index)
        return results.slice(0, Math.max(0, topK))
      }),
  }
}

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
 * A sentence also scores the share of the query's content words it holds (weighted by their
 * rarity among the candidates), so a name or identifier the embedder does not know still counts
 * where it occurs: a word missing from the static table adds nothing to any vector.
 */
import * as Effect from "effect/Effect"
import type { Embedder, Reranker, RerankResult } from "../embedder.js"
import { lexicalQuery, speakerWords } from "../lexical-query.js"
import { staticTokens } from "./static-word-table.js"

/** Options of {@link makeSentenceReranker}. */
export interface SentenceRerankerOptions {
  /** Weight of the whole-candidate similarity next to the best sentence's; default 0.3. */
  readonly wholeWeight?: number
  /** Sentences per candidate considered (the first ones); default 40. */
  readonly maxSentences?: number
  /**
   * Weight of a sentence's query-word share next to its similarity; default 0.3 (measured on
   * the retrieval eval: MRR up on both corpora and seeds, README); 0 scores by similarity only.
   */
  readonly termWeight?: number
}

/** A word's crude stem, the same for the query and the sentences ("retries" ~ "retried"). */
const stemOf = (word: string): string =>
  word.length < 5 ? word : word.replace(/(?:ies|ied|ing|es|ed|s)$/u, "")

/** The distinct stems of `text`'s words. */
const stemsOf = (text: string): Set<string> => new Set(staticTokens(text).map(stemOf))

/**
 * Scores a sentence's share of the query's content words: each word weighted by
 * ln(1 + n / (1 + df)) over the n candidates (df: candidates holding it), so a word every
 * candidate has counts least. 0 for every sentence when the query has no content word.
 */
const termShare = (
  query: string,
  sentenceStems: ReadonlyArray<ReadonlyArray<Set<string>>>,
): ((stems: Set<string>) => number) => {
  // The personal pronouns count too ("my dog": the sentence where the user wrote "my"), weighted
  // like every word by how few candidates hold them.
  const terms = [...stemsOf(`${lexicalQuery(query)} ${speakerWords(query)}`)]
  if (terms.length === 0) return () => 0
  const candidates = sentenceStems.map((sentences) => {
    const all = new Set<string>()
    for (const stems of sentences) for (const stem of stems) all.add(stem)
    return all
  })
  const weights = terms.map((term) => {
    const df = candidates.filter((all) => all.has(term)).length
    return Math.log(1 + candidates.length / (1 + df))
  })
  const total = weights.reduce((a, b) => a + b, 0)
  return (stems) => {
    let held = 0
    terms.forEach((term, i) => {
      if (stems.has(term)) held += weights[i]!
    })
    return held / total
  }
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
  const termWeight = options.termWeight ?? 0.3
  const embedParts = embedder.embedParts
  return {
    provider: embedder.info.provider,
    model: `sentence-max/${embedder.info.model}`,
    ...(embedder.info.inProcess === true ? { inProcess: true } : {}),
    ...(embedder.info.readsCjk === false ? { readsCjk: false } : {}),
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
        // The sentences scored are those embedded: all of them, or the first `maxSentences`.
        const scoredStems =
          termWeight === 0
            ? []
            : sentences.map((all, index) =>
                all.slice(0, embedded[index]?.sentences.length ?? 0).map(stemsOf),
              )
        const share = termWeight === 0 ? () => 0 : termShare(query, scoredStems)
        const results: RerankResult[] = documents.map((_, index) => {
          let best = -1
          embedded[index]?.sentences.forEach((v, i) => {
            const stems = scoredStems[index]?.[i]
            const held = stems === undefined ? 0 : termWeight * share(stems)
            best = Math.max(best, dot(q, v) + held)
          })
          const w = embedded[index]?.whole
          const score = (1 - wholeWeight) * best + wholeWeight * (w === undefined ? 0 : dot(q, w))
          return { index, score }
        })
        results.sort((a, b) => b.score - a.score || a.index - b.index)
        return results.slice(0, Math.max(0, topK))
      }),
  }
}

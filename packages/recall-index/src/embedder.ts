/**
 * The embedding provider port. The index, the search and the CLI depend on this interface only;
 * providers (the embedded default, Voyage, any OpenAI-compatible endpoint, the deterministic test
 * embedder) implement it.
 *
 * Guarantees every provider keeps:
 * - `info.fingerprint` identifies the vector space (provider, model, dimension, and anything else
 *   that changes vectors); two embedders with the same fingerprint produce comparable vectors;
 * - `embedDocuments` returns one vector per input, in input order, each of length `info.dim`;
 * - vectors are L2-normalised (cosine similarity = dot product), so distances from sqlite-vec
 *   are comparable across queries;
 * - errors are `EmbedderError` values that say whether retrying can help; no text in them.
 */
import * as Data from "effect/Data"
import type { Effect } from "effect"

/** What a provider is and how to call it efficiently. */
export interface EmbedderInfo {
  /** Provider family: "embedded", "voyage", "openai-compatible", "deterministic". */
  readonly provider: string
  /** Model name within the provider. */
  readonly model: string
  /** Vector length. */
  readonly dim: number
  /** Identifies the vector space; changing it triggers a clean re-embed. */
  readonly fingerprint: string
  /**
   * The server the vectors come from, for a provider whose server the user chooses (an
   * OpenAI-compatible endpoint): origin and path, never a key, query or user name. A space is
   * stored with it, and an index run refuses to add vectors from another server to it (such
   * servers often ignore the model name). Absent: the provider names its model exactly.
   */
  readonly endpoint?: string
  /** True when calls cost money (the cost guard applies). */
  readonly paid: boolean
  /**
   * Estimated tokens (⌈characters / 4⌉) the cost guard lets one run send, for a paid provider:
   * `embedBacklog` refuses a backlog estimated past it before sending anything. Absent: no cap.
   */
  readonly tokenBudget?: number
  /** Most texts one `embedDocuments` call should carry. */
  readonly maxBatch: number
  /** True when the provider sends text off this machine. */
  readonly remote: boolean
  /**
   * True for a model running in this process (the embedded ones): no service to wait for or to
   * distrust — its first call may load the model, and a text of no word it knows may get a zero
   * vector. Absent: a service (Voyage, an OpenAI-compatible endpoint, loopback or not).
   */
  readonly inProcess?: boolean
  /**
   * False when the model cannot represent Chinese, Japanese or Korean text (an English-only
   * vocabulary: such text embeds as unknown words, so every CJK chunk looks alike). A query
   * mostly in those scripts then skips the vector arm. Absent: it can.
   */
  readonly readsCjk?: boolean
}

/** Why an embedding call failed. */
export type EmbedderFailure =
  | "unavailable" // the model or endpoint cannot be reached / loaded
  | "rate_limited" // 429
  | "server_error" // 5xx
  | "bad_request" // 4xx other than 429: input or configuration problem
  | "unauthorized" // 401/403: missing or wrong key
  | "bad_response" // the answer could not be decoded or had the wrong shape
  | "cost_guard" // the cost guard refused the call

/** An embedding or rerank call failed; `retryable` says whether backing off can help. */
export class EmbedderError extends Data.TaggedError("EmbedderError")<{
  readonly provider: string
  readonly failure: EmbedderFailure
  readonly retryable: boolean
  /** A short human sentence; never contains input text or keys. */
  readonly reason: string
}> {
  override get message(): string {
    return `the ${this.provider} embedder failed (${this.failure}): ${this.reason}`
  }
}

/** A text embedder. */
export interface Embedder {
  readonly info: EmbedderInfo
  /** Embeds documents (chunks) for storage, in input order. */
  readonly embedDocuments: (
    texts: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<Float32Array>, EmbedderError>
  /** Embeds a search query (some providers use a different input type for queries). */
  readonly embedQuery: (text: string) => Effect.Effect<Float32Array, EmbedderError>
  /**
   * Optional (the static word table offers it): embeds `parts` and `text` in one pass over the
   * parts, returning what `embedDocuments(parts)` and `embedDocuments([text])` would, within float
   * rounding. Precondition: `parts` are pieces of `text` in order, cut at whitespace, with no
   * letter or digit between or around them (`sentencesOf` keeping every sentence); otherwise
   * `whole` is unspecified. A wrapper that changes `embedDocuments` must drop or wrap it too.
   */
  readonly embedParts?: (
    text: string,
    parts: ReadonlyArray<string>,
  ) => Effect.Effect<EmbeddedParts, EmbedderError>
  /** Releases worker threads or sockets; idempotent. */
  readonly close?: () => Effect.Effect<void>
}

/** What {@link Embedder.embedParts} returns. */
export interface EmbeddedParts {
  /** One L2-normalised vector per part, in input order. */
  readonly parts: ReadonlyArray<Float32Array>
  /** The L2-normalised vector of the whole text. */
  readonly whole: Float32Array
}

/** One reranked document: its index in the input and its relevance score (higher is better). */
export interface RerankResult {
  readonly index: number
  readonly score: number
}

/** An optional second-stage reranker (Voyage `rerank-2.5`). */
export interface Reranker {
  readonly provider: string
  readonly model: string
  /** As {@link EmbedderInfo} `inProcess`. */
  readonly inProcess?: boolean
  /** As {@link EmbedderInfo} `readsCjk`: false skips the reranker for a mostly CJK query. */
  readonly readsCjk?: boolean
  readonly rerank: (
    query: string,
    documents: ReadonlyArray<string>,
    topK: number,
  ) => Effect.Effect<ReadonlyArray<RerankResult>, EmbedderError>
}

/** Scales `v` to unit length in place (a zero vector stays zero) and returns it. */
export const normalizeVector = (v: Float32Array): Float32Array => {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += (v[i] ?? 0) * (v[i] ?? 0)
  const norm = Math.sqrt(sum)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / norm
  return v
}

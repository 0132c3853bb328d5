/**
 * Voyage AI through the official `voyageai` client: `voyage-4-large` embeddings (documents with
 * `input_type: "document"`, queries with `"query"`) and the `rerank-2.5` reranker. Guarantees:
 * the client's own retries are off and ours apply (`call-policy.ts`: backoff + jitter on 429 /
 * 5xx / transport errors, `Retry-After` honoured, time from Effect's Clock); every call passes
 * the per-run cost guard first; vectors come back in input order (by `index`) and L2-normalised;
 * the key never appears in an error. Always remote and paid.
 */
import * as Effect from "effect/Effect"
import type * as Voyage from "voyageai"
import type { VoyageAIClient } from "voyageai"
import type { Embedder, Reranker, RerankResult } from "../embedder.js"
import { EmbedderError, normalizeVector } from "../embedder.js"
import {
  DEFAULT_RETRY_POLICY,
  DEFAULT_TOKEN_BUDGET,
  embedInBatches,
  makeCostGuard,
  nowMs,
  parseRetryAfter,
  serverDetail,
  statusFailure,
  withRetry,
} from "./call-policy.js"
import type { CallFailure, CostGuard, RetryPolicy } from "./call-policy.js"

/** Voyage's embedding model used by default. */
export const VOYAGE_DEFAULT_MODEL = "voyage-4-large"
/** Voyage's reranker used by default. */
export const VOYAGE_DEFAULT_RERANK_MODEL = "rerank-2.5"

/**
 * Voyage models with one vector length, from Voyage's model list: they take no
 * `output_dimension` (Voyage refuses the request), so it is never sent to them. Every other model
 * is sent its length — 1024 unless `BATON_VOYAGE_DIM` says otherwise — as the 4 series,
 * voyage-3-large, voyage-3.5(-lite) and voyage-code-3 take it.
 */
export const VOYAGE_FIXED_LENGTHS: Readonly<Record<string, number>> = {
  "voyage-3": 1024,
  "voyage-3-lite": 512,
  "voyage-code-2": 1536,
  "voyage-finance-2": 1024,
  "voyage-law-2": 1024,
  "voyage-multilingual-2": 1024,
  "voyage-large-2": 1536,
  "voyage-large-2-instruct": 1024,
  "voyage-2": 1024,
  "voyage-lite-02-instruct": 1024,
}

/**
 * Models the `voyageai` client (0.4) runs on this machine instead of calling Voyage: through
 * Transformers.js and ONNX Runtime, which Baton does not install, so they are refused up front.
 */
export const VOYAGE_LOCAL_MODELS: ReadonlyArray<string> = ["voyage-4-nano"]

/**
 * The vector length `model` gives when asked for `requested` (`BATON_VOYAGE_DIM`, undefined: the
 * model's default) and whether the request carries `output_dimension`; or the setting that cannot
 * work and why (a local model, a fixed-length model asked for another length).
 */
export const voyageLength = (
  model: string,
  requested: number | undefined,
):
  | { readonly _tag: "Length"; readonly dim: number; readonly sendDimension: boolean }
  | {
      readonly _tag: "Refused"
      readonly variable: "BATON_VOYAGE_MODEL" | "BATON_VOYAGE_DIM"
      readonly message: string
    } => {
  if (VOYAGE_LOCAL_MODELS.includes(model)) {
    return {
      _tag: "Refused",
      variable: "BATON_VOYAGE_MODEL",
      message: `${model} runs on this machine through the voyageai client's Transformers.js path, which Baton does not install: set BATON_VOYAGE_MODEL to a Voyage API model (default ${VOYAGE_DEFAULT_MODEL}), or use BATON_EMBEDDER=use-lite for an embedded one`,
    }
  }
  const fixed = VOYAGE_FIXED_LENGTHS[model]
  if (fixed === undefined) return { _tag: "Length", dim: requested ?? 1024, sendDimension: true }
  return requested === undefined || requested === fixed
    ? { _tag: "Length", dim: fixed, sendDimension: false }
    : {
        _tag: "Refused",
        variable: "BATON_VOYAGE_DIM",
        message: `${model} gives ${fixed}-dimensional vectors only (it takes no output_dimension): unset BATON_VOYAGE_DIM or set it to ${fixed}`,
      }
}

/** Options of {@link makeVoyageEmbedder} and {@link makeVoyageReranker}. */
export interface VoyageOptions {
  readonly apiKey: string
  /** API base URL ending in `/v1`; default Voyage's own. Tests point it at a loopback fake. */
  readonly baseUrl?: string | undefined
  /** Embedding (or rerank) model; defaults `voyage-4-large` / `rerank-2.5`. */
  readonly model?: string
  /**
   * Output dimension (sent as `output_dimension`; `BATON_VOYAGE_DIM`); default 1024, or a
   * fixed-length model's own ({@link VOYAGE_FIXED_LENGTHS}), which is never sent one.
   */
  readonly dimensions?: number
  /** Texts per request; default 128 (Voyage's list limit). */
  readonly maxBatch?: number
  /** Requests in flight; default 2. */
  readonly concurrency?: number
  /** Estimated-token budget per run; default 2 000 000. */
  readonly tokenBudget?: number
  /** Shared with another Voyage client of the same run (embedder + reranker). */
  readonly costGuard?: CostGuard
  readonly retry?: RetryPolicy
  /** Per-request timeout; default 60 000 ms. */
  readonly timeoutMs?: number
}

const PROVIDER = "voyage"

type VoyageModule = typeof Voyage

/** The `voyageai` module, imported on first use: a search that never calls Voyage never loads it. */
let voyageModule: VoyageModule | undefined
const loadVoyage = async (): Promise<VoyageModule> => (voyageModule ??= await import("voyageai"))

/** A client made on the first call (after the module is loaded), then reused. */
const clientOf = (options: VoyageOptions): (() => Promise<VoyageAIClient>) => {
  let client: VoyageAIClient | undefined
  return async () => {
    const { VoyageAIClient } = await loadVoyage()
    client ??= new VoyageAIClient({
      apiKey: options.apiKey,
      maxRetries: 0,
      // Our timeout (Effect's clock) governs; the client's only backstops a stuck socket.
      timeoutInSeconds: Math.ceil((options.timeoutMs ?? 60_000) / 1000) + 30,
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl.replace(/\/+$/, "") }),
    })
    return client
  }
}

/**
 * Runs a call of the client with its schema warnings muted. The client validates answers but lets
 * a bad one through, printing "Failed to validate." and one line per bad value to the console (a
 * batch of vectors holding nulls printed 36 866 lines); this module checks what it uses and fails
 * the call itself (`bad_response`). Other console output passes; the console is restored when the
 * last call in flight ends.
 */
let muted = 0
let consoleWarn: typeof console.warn | undefined
const withSchemaWarningsMuted = async <A>(call: () => Promise<A>): Promise<A> => {
  if (muted++ === 0) {
    const original = console.warn
    consoleWarn = original
    console.warn = (...args: Array<unknown>) => {
      if (typeof args[0] === "string" && args[0].startsWith("Failed to validate.")) return
      original.apply(console, args)
    }
  }
  try {
    return await call()
  } finally {
    if (--muted === 0 && consoleWarn !== undefined) {
      console.warn = consoleWarn
      consoleWarn = undefined
    }
  }
}

const bodyDetail = (body: unknown, secrets: ReadonlyArray<string>): string => {
  if (body === undefined || body === null) return ""
  return serverDetail(typeof body === "string" ? body : JSON.stringify(body), secrets)
}

/** Turns whatever the client threw into a classified, retry-aware failure. */
const classify = (cause: unknown, now: number, secrets: ReadonlyArray<string>): CallFailure => {
  if (voyageModule !== undefined && cause instanceof voyageModule.VoyageAITimeoutError) {
    return {
      error: new EmbedderError({
        provider: PROVIDER,
        failure: "unavailable",
        retryable: true,
        reason: "Voyage did not answer in time",
      }),
    }
  }
  if (
    voyageModule !== undefined &&
    cause instanceof voyageModule.VoyageAIError &&
    cause.statusCode !== undefined
  ) {
    const headers = cause.rawResponse?.headers
    return {
      error: statusFailure(PROVIDER, cause.statusCode, bodyDetail(cause.body, secrets)),
      retryAfterMs: parseRetryAfter(headers?.get("retry-after"), now),
    }
  }
  return {
    error: new EmbedderError({
      provider: PROVIDER,
      failure: "unavailable",
      retryable: true,
      reason: "Voyage could not be reached",
    }),
  }
}

const attempt = <A>(
  run: (signal: AbortSignal) => Promise<A>,
  timeoutMs: number,
  secrets: ReadonlyArray<string>,
): Effect.Effect<A, CallFailure> =>
  nowMs.pipe(
    Effect.flatMap((now) =>
      Effect.tryPromise({ try: run, catch: (cause) => classify(cause, now, secrets) }),
    ),
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () =>
        Effect.fail<CallFailure>({
          error: new EmbedderError({
            provider: PROVIDER,
            failure: "unavailable",
            retryable: true,
            reason: `no answer within ${timeoutMs} ms`,
          }),
          timedOutMs: timeoutMs,
        }),
    }),
  )

const badResponse = (reason: string) =>
  new EmbedderError({ provider: PROVIDER, failure: "bad_response", retryable: false, reason })

/**
 * A Voyage embedder (`voyage-4-large`, 1024 dimensions by default). A model {@link voyageLength}
 * refuses (a local one, a fixed-length one asked for another length) fails every call with its
 * message, before sending.
 */
export const makeVoyageEmbedder = (options: VoyageOptions): Embedder => {
  const client = clientOf(options)
  const model = options.model ?? VOYAGE_DEFAULT_MODEL
  const length = voyageLength(model, options.dimensions)
  const dim = length._tag === "Length" ? length.dim : (options.dimensions ?? 1024)
  const outputDimension =
    length._tag === "Refused" || length.sendDimension ? { outputDimension: dim } : {}
  const maxBatch = Math.max(1, Math.min(128, options.maxBatch ?? 128))
  const timeoutMs = options.timeoutMs ?? 60_000
  const policy = options.retry ?? DEFAULT_RETRY_POLICY
  const guard =
    options.costGuard ?? makeCostGuard(PROVIDER, options.tokenBudget ?? DEFAULT_TOKEN_BUDGET)
  const embed = (inputType: "document" | "query") => (batch: ReadonlyArray<string>) =>
    (length._tag === "Refused"
      ? Effect.fail(
          new EmbedderError({
            provider: PROVIDER,
            failure: "bad_request",
            retryable: false,
            reason: length.message,
          }),
        )
      : guard.reserve(batch)
    ).pipe(
      Effect.andThen(
        withRetry(
          policy,
          attempt(
            (signal) =>
              client().then((c) =>
                withSchemaWarningsMuted(() =>
                  c.embed(
                    { input: [...batch], model, inputType, ...outputDimension },
                    { abortSignal: signal },
                  ),
                ),
              ),
            timeoutMs,
            [options.apiKey],
          ),
        ),
      ),
      Effect.flatMap((response) => {
        // Dense, not `new Array(n)`: `some` skips the holes a duplicate index leaves.
        const out = Array.from<Float32Array | undefined>({ length: batch.length })
        const data = response.data ?? []
        let notNumbers = false
        let duplicate: number | undefined
        data.forEach((item, position) => {
          const index = item.index ?? position
          if (item.embedding !== undefined && index >= 0 && index < batch.length) {
            if (out[index] !== undefined) duplicate ??= index
            // The client lets nulls and strings through (see withSchemaWarningsMuted).
            if (!item.embedding.every((x) => typeof x === "number")) notNumbers = true
            out[index] = normalizeVector(Float32Array.from(item.embedding))
          }
        })
        if (notNumbers) {
          return Effect.fail(
            badResponse("Voyage returned a vector holding values that are not numbers"),
          )
        }
        if (data.length !== batch.length || out.some((v) => v === undefined)) {
          return Effect.fail(
            badResponse(
              `asked for ${batch.length} vectors, got ${data.length}${duplicate === undefined ? "" : ` holding index ${duplicate} more than once`}`,
            ),
          )
        }
        const other = out.find((v) => v !== undefined && v.length !== dim)
        if (other !== undefined) {
          return Effect.fail(
            badResponse(
              `Voyage returned ${other.length}-dimensional vectors, not the ${dim} asked for (output_dimension, BATON_VOYAGE_DIM): set BATON_VOYAGE_DIM to a length ${model} gives, or use a model that supports output_dimension`,
            ),
          )
        }
        return Effect.succeed(out as Float32Array[])
      }),
    )
  return {
    info: {
      provider: PROVIDER,
      model,
      dim,
      fingerprint: `${PROVIDER}/${model}/${dim}`,
      paid: true,
      tokenBudget: guard.budget,
      maxBatch,
      remote: true,
    },
    embedDocuments: (texts) =>
      embedInBatches(texts, maxBatch, options.concurrency ?? 2, embed("document")),
    embedQuery: (text) =>
      embed("query")([text]).pipe(Effect.map((v) => v[0] ?? new Float32Array(dim))),
  }
}

/** A Voyage reranker (`rerank-2.5` by default); results best first. */
export const makeVoyageReranker = (options: VoyageOptions): Reranker => {
  const client = clientOf(options)
  const model = options.model ?? VOYAGE_DEFAULT_RERANK_MODEL
  const timeoutMs = options.timeoutMs ?? 60_000
  const policy = options.retry ?? DEFAULT_RETRY_POLICY
  const guard =
    options.costGuard ?? makeCostGuard(PROVIDER, options.tokenBudget ?? DEFAULT_TOKEN_BUDGET)
  return {
    provider: PROVIDER,
    model,
    rerank: (query, documents, topK) =>
      documents.length === 0
        ? Effect.succeed([])
        : guard.reserve([...documents.map((d) => query + d)]).pipe(
            Effect.andThen(
              withRetry(
                policy,
                attempt(
                  (signal) =>
                    client().then((c) =>
                      withSchemaWarningsMuted(() =>
                        c.rerank(
                          {
                            query,
                            documents: [...documents],
                            model,
                            topK: Math.max(1, Math.min(documents.length, topK)),
                          },
                          { abortSignal: signal },
                        ),
                      ),
                    ),
                  timeoutMs,
                  [options.apiKey],
                ),
              ),
            ),
            Effect.flatMap((response) => {
              const results: RerankResult[] = []
              for (const item of response.data ?? []) {
                if (
                  item.index === undefined ||
                  typeof item.relevanceScore !== "number" ||
                  !Number.isFinite(item.relevanceScore) ||
                  item.index < 0 ||
                  item.index >= documents.length
                ) {
                  return Effect.fail(badResponse("a rerank result lacks a valid index or score"))
                }
                results.push({ index: item.index, score: item.relevanceScore })
              }
              results.sort((a, b) => b.score - a.score || a.index - b.index)
              return Effect.succeed(results)
            }),
          ),
  }
}

/**
 * Any OpenAI-compatible embeddings endpoint (OpenAI, a local llama.cpp / Ollama / LM Studio /
 * vLLM server, a gateway): `POST {baseUrl}/embeddings` with `{ model, input }` and an optional
 * bearer key, through the global `fetch`. Guarantees: the answer is decoded (Schema) and put back
 * in input order by `index`; vectors are L2-normalised; inputs are cut to `maxInputChars`; a
 * non-loopback endpoint counts as remote and paid, so the cost guard applies; retries follow
 * `call-policy.ts` (a search's query is not retried on a refused connection). The key never
 * appears in errors; a 401 / 403 sent without a key says that `BATON_EMBEDDINGS_KEY` is not set.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Embedder } from "../embedder.js"
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
import type { CallFailure, RetryOptions, RetryPolicy } from "./call-policy.js"

/** Options of {@link makeOpenAiCompatibleEmbedder}. */
export interface OpenAiCompatibleOptions {
  /** Base URL up to and excluding `/embeddings`, e.g. `http://127.0.0.1:8080/v1`. */
  readonly baseUrl: string
  readonly model: string
  /** Bearer key, when the endpoint wants one. */
  readonly apiKey?: string | undefined
  /**
   * Vector length. When set it is also sent as `dimensions` (OpenAI `text-embedding-3-*`
   * shorten on request); when absent one probe call learns it.
   */
  readonly dimensions?: number | undefined
  /**
   * The vector length this model is known to give (the index holds its vectors): used instead of
   * the probe call, never sent; an endpoint that answers another length fails its first call.
   */
  readonly knownDimensions?: number | undefined
  /** Texts per request; default 64. */
  readonly maxBatch?: number
  /** Requests in flight at once; default 2. */
  readonly concurrency?: number
  /** Longest input sent, in characters (longer ones are cut); default 8 000. */
  readonly maxInputChars?: number
  /** Token budget per run for a paid endpoint; default 2 000 000. */
  readonly tokenBudget?: number
  /** Whether calls cost money; default: true unless the host is loopback. */
  readonly paid?: boolean
  readonly retry?: RetryPolicy
  /** Per-request timeout; default 60 000 ms. */
  readonly timeoutMs?: number
}

const EmbeddingsResponse = Schema.Struct({
  data: Schema.Array(
    Schema.Struct({
      embedding: Schema.Array(Schema.Number),
      index: Schema.optional(Schema.Number),
    }),
  ),
})

const PROVIDER = "openai-compatible"

/** True when `url` names this machine (127.0.0.0/8, ::1, localhost). */
export const isLoopbackUrl = (url: string): boolean => {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
    return host === "localhost" || host === "::1" || /^127\./.test(host)
  } catch {
    return false
  }
}

/**
 * `url` as a space records it: origin and path without a trailing slash — never the user name,
 * password, query or fragment (a key can sit in any of them). An unreadable URL gives "".
 */
export const endpointOf = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`
  } catch {
    return ""
  }
}

/** The system error code under fetch's "fetch failed" (`ECONNREFUSED`, …), if any. */
const transportCode = (cause: unknown): string | undefined => {
  const code = (cause as { cause?: { code?: unknown } } | null)?.cause?.code
  return typeof code === "string" ? code : undefined
}

/** One POST of JSON to `url`; decodes the JSON answer or classifies the failure. */
const postJson = (
  provider: string,
  url: string,
  body: unknown,
  headers: Readonly<Record<string, string>>,
  timeoutMs: number,
  secrets: ReadonlyArray<string | undefined>,
): Effect.Effect<unknown, CallFailure> =>
  Effect.gen(function* () {
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
          signal,
        }),
      catch: (cause): CallFailure => {
        const code = transportCode(cause)
        return {
          error: new EmbedderError({
            provider,
            failure: "unavailable",
            retryable: true,
            reason: `transport error${code === undefined ? "" : ` ${code}`} reaching ${new URL(url).host}`,
          }),
          refused: code === "ECONNREFUSED",
        }
      },
    })
    if (!response.ok) {
      const now = yield* nowMs
      const detail = yield* Effect.promise(() =>
        response.text().then(
          (t) => serverDetail(t, secrets),
          () => "",
        ),
      )
      return yield* Effect.fail<CallFailure>({
        error: statusFailure(provider, response.status, detail),
        retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), now),
      })
    }
    return yield* Effect.tryPromise({
      try: () => response.json(),
      catch: (): CallFailure => ({
        error: new EmbedderError({
          provider,
          failure: "bad_response",
          retryable: false,
          reason: "the answer is not JSON",
        }),
      }),
    })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () =>
        Effect.fail<CallFailure>({
          error: new EmbedderError({
            provider,
            failure: "unavailable",
            retryable: true,
            reason: `no answer within ${timeoutMs} ms`,
          }),
          timedOutMs: timeoutMs,
        }),
    }),
  )

/** Decodes an OpenAI-style embeddings answer into `count` vectors in input order. */
const decodeEmbeddings = (
  provider: string,
  json: unknown,
  count: number,
): Effect.Effect<ReadonlyArray<Float32Array>, EmbedderError> =>
  Schema.decodeUnknownEffect(EmbeddingsResponse)(json).pipe(
    Effect.mapError(
      () =>
        new EmbedderError({
          provider,
          failure: "bad_response",
          retryable: false,
          reason: "the answer does not have the embeddings shape",
        }),
    ),
    Effect.flatMap((decoded) => {
      // Dense, not `new Array(count)`: `every` / `some` skip the holes a duplicate index leaves.
      const out = Array.from<Float32Array | undefined>({ length: count })
      let duplicate: number | undefined
      decoded.data.forEach((item, position) => {
        const index = item.index ?? position
        if (index >= 0 && index < count) {
          if (out[index] !== undefined) duplicate ??= index
          out[index] = normalizeVector(Float32Array.from(item.embedding))
        }
      })
      const complete = out.every((v) => v !== undefined) && decoded.data.length === count
      return complete
        ? Effect.succeed(out)
        : Effect.fail(
            new EmbedderError({
              provider,
              failure: "bad_response",
              retryable: false,
              reason:
                duplicate === undefined
                  ? `asked for ${count} vectors, got ${decoded.data.length}`
                  : `asked for ${count} vectors, got ${decoded.data.length} holding index ${duplicate} more than once`,
            }),
          )
    }),
  )

/**
 * An embedder for an OpenAI-compatible endpoint. Without `dimensions` or `knownDimensions`, one
 * probe call learns the vector length (so the effect can fail like any embedding call).
 */
export const makeOpenAiCompatibleEmbedder = (
  options: OpenAiCompatibleOptions,
): Effect.Effect<Embedder, EmbedderError> =>
  Effect.gen(function* () {
    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const url = `${baseUrl}/embeddings`
    // How retry notices name the server (never the user name or key a URL may carry).
    const host = new URL(url).host
    const loopback = isLoopbackUrl(baseUrl)
    const paid = options.paid ?? !loopback
    const maxBatch = Math.max(1, options.maxBatch ?? 64)
    const maxChars = Math.max(1, options.maxInputChars ?? 8000)
    const timeoutMs = options.timeoutMs ?? 60_000
    const policy = options.retry ?? DEFAULT_RETRY_POLICY
    const guard = makeCostGuard(PROVIDER, options.tokenBudget ?? DEFAULT_TOKEN_BUDGET)
    const headers: Record<string, string> =
      options.apiKey === undefined || options.apiKey === ""
        ? {}
        : { authorization: `Bearer ${options.apiKey}` }
    const keyless = headers["authorization"] === undefined
    const call = (batch: ReadonlyArray<string>, retry: RetryOptions = {}) => {
      const input = batch.map((t) => (t.length > maxChars ? t.slice(0, maxChars) : t))
      const body: Record<string, unknown> = { model: options.model, input }
      if (options.dimensions !== undefined) body["dimensions"] = options.dimensions
      return (paid ? guard.reserve(input) : Effect.void).pipe(
        Effect.andThen(
          withRetry(policy, postJson(PROVIDER, url, body, headers, timeoutMs, [options.apiKey]), {
            ...retry,
            server: host,
          }).pipe(
            Effect.mapError((error) =>
              keyless && error.failure === "unauthorized"
                ? new EmbedderError({
                    provider: PROVIDER,
                    failure: "unauthorized",
                    retryable: false,
                    reason: `no key was sent: BATON_EMBEDDINGS_KEY is not set (${error.reason})`,
                  })
                : error,
            ),
          ),
        ),
        Effect.flatMap((json) => decodeEmbeddings(PROVIDER, json, input.length)),
      )
    }
    const dim =
      options.dimensions ??
      options.knownDimensions ??
      (yield* call(["dimension probe"]))[0]?.length ??
      0
    if (dim <= 0) {
      return yield* Effect.fail(
        new EmbedderError({
          provider: PROVIDER,
          failure: "bad_response",
          retryable: false,
          reason: "the endpoint returned an empty vector",
        }),
      )
    }
    // Where `dim` came from decides what a vector of another length means, and what to do.
    const lengthMismatch = (got: number): string =>
      options.dimensions !== undefined
        ? `asked for ${dim}-dimensional vectors (BATON_EMBEDDINGS_DIM, sent as \`dimensions\`) but the endpoint answered ${got}-dimensional ones: the model ignores \`dimensions\`; unset BATON_EMBEDDINGS_DIM or use a model that supports it`
        : options.knownDimensions !== undefined
          ? `the index holds ${dim}-dimensional vectors of ${options.model} but the endpoint now answers ${got}-dimensional ones (another model behind the name?): \`baton recall index\` re-embeds the history into the new length`
          : `the endpoint answered ${dim}-dimensional vectors, then ${got}-dimensional ones: its model changed during the run`
    const checked = (batch: ReadonlyArray<string>, retry: RetryOptions = {}) =>
      call(batch, retry).pipe(
        Effect.flatMap((vectors) => {
          const other = vectors.find((v) => v.length !== dim)
          return other === undefined
            ? Effect.succeed(vectors)
            : Effect.fail(
                new EmbedderError({
                  provider: PROVIDER,
                  failure: "bad_response",
                  retryable: false,
                  reason: lengthMismatch(other.length),
                }),
              )
        }),
      )
    const embedder: Embedder = {
      info: {
        provider: PROVIDER,
        model: options.model,
        dim,
        fingerprint: `${PROVIDER}/${options.model}/${dim}`,
        endpoint: endpointOf(baseUrl),
        paid,
        ...(paid ? { tokenBudget: guard.budget } : {}),
        maxBatch,
        remote: !loopback,
      },
      embedDocuments: (texts) => embedInBatches(texts, maxBatch, options.concurrency ?? 2, checked),
      embedQuery: (text) =>
        checked([text], { retryRefused: false }).pipe(
          Effect.map((vectors) => vectors[0] ?? new Float32Array(dim)),
        ),
    }
    return embedder
  })

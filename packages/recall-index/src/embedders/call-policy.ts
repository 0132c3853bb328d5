/**
 * How embedders call their model: batching by `maxBatch` with bounded concurrency (results kept
 * in input order), retry with exponential backoff and full jitter on retryable failures (429,
 * 5xx, transport errors) honouring `Retry-After` — a server asking for a longer wait than one
 * backoff may last is not retried at all: the error says how long it asked for — and a per-run
 * cost guard for paid providers
 * (tokens estimated as ⌈chars / 4⌉; a call that would pass the budget is refused before it is
 * sent, with `EmbedderError` failure `cost_guard`). Time is Effect's `Clock` and jitter Effect's
 * `Random`, so tests drive backoff with `TestClock`. Never logs or carries input text.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import { EmbedderError } from "../embedder.js"
import type { EmbedderFailure } from "../embedder.js"
import { maskTranscriptText } from "../secret-masking.js"

/** A failed attempt: the error, and the server's `Retry-After` when it sent one. */
export interface CallFailure {
  readonly error: EmbedderError
  readonly retryAfterMs?: number | undefined
  /** Nothing listens at the endpoint (ECONNREFUSED): see {@link RetryOptions.retryRefused}. */
  readonly refused?: boolean | undefined
  /** The attempt was given up after this many ms without an answer (the per-request timeout). */
  readonly timedOutMs?: number | undefined
}

/**
 * Where a retry is announced: one line per retry ("the embedding server at host did not answer
 * in 60 s; retrying in 1 s (attempt 2 of 5)"), so a run waiting on a silent or failing server
 * says so instead of minutes of silence. Default: nowhere (a search, a library caller); the CLI's
 * index run provides one that writes to stderr.
 */
export const EmbedderRetryNotices = Context.Reference<(line: string) => void>(
  "@baton/recall-index/EmbedderRetryNotices",
  { defaultValue: () => () => undefined },
)

/** Per-call retry choices. */
export interface RetryOptions {
  /**
   * Whether a refused connection is retried; default true (a server restarting during an index
   * run). A search's query embedding passes false: its caller answers by words at once instead
   * of spending the whole backoff on a server that is down.
   */
  readonly retryRefused?: boolean
  /** The server as retry notices name it (`the embedding server at <server>`); default the provider. */
  readonly server?: string
}

/** Retry schedule of a provider. */
export interface RetryPolicy {
  /** Attempts in total, first included; default 5. */
  readonly maxAttempts: number
  /** Backoff before the second attempt; doubles each time; default 500 ms. */
  readonly baseDelayMs: number
  /**
   * Ceiling of one backoff, and the longest `Retry-After` honoured (a longer one ends the
   * retries); default 30 000 ms.
   */
  readonly maxDelayMs: number
}

/** The default retry schedule. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
}

/**
 * What a server said, fit to show and store: whitespace collapsed, every `secrets` value (the key
 * sent; some servers echo it in a 401 body) replaced, other secret shapes masked as in
 * transcripts, then cut to `maxChars` (never inside a surrogate pair). Redacting before the cut
 * leaves no half key behind.
 */
export const serverDetail = (
  body: string,
  secrets: ReadonlyArray<string | undefined>,
  maxChars = 200,
): string => {
  let text = body.replace(/\s+/g, " ").trim()
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 4)
      text = text.split(secret).join("[redacted api-key]")
  }
  text = maskTranscriptText(text).text
  if (text.length <= maxChars) return text
  const last = text.charCodeAt(maxChars - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars)
}

/**
 * Classifies an HTTP status into an {@link EmbedderError}; `detail` is the server's body, already
 * passed through {@link serverDetail}.
 */
export const statusFailure = (provider: string, status: number, detail: string): EmbedderError => {
  const failure: EmbedderFailure =
    status === 429
      ? "rate_limited"
      : status >= 500
        ? "server_error"
        : status === 401 || status === 403
          ? "unauthorized"
          : "bad_request"
  return new EmbedderError({
    provider,
    failure,
    retryable: failure === "rate_limited" || failure === "server_error",
    reason: `HTTP ${status}${detail === "" ? "" : `: ${detail}`}`,
  })
}

/**
 * Milliseconds to wait from a `Retry-After` header value (delta-seconds or an HTTP date), or
 * undefined when absent or unreadable. `nowMs` is the current time (for dates).
 */
export const parseRetryAfter = (
  value: string | null | undefined,
  nowMs: number,
): number | undefined => {
  if (value === null || value === undefined || value.trim() === "") return undefined
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}

/** Backoff before attempt `attempt + 1` (attempt ≥ 1): full jitter over the doubled delay. */
const backoffMs = (policy: RetryPolicy, attempt: number, random: number): number => {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  // Half fixed, half random: never a zero wait, never a thundering herd.
  return Math.round(ceiling / 2 + (ceiling / 2) * random)
}

/** A wait in words: "45 s", "20 min", "1 h", "1.5 h", "2 d". */
export const describeWait = (ms: number): string => {
  const seconds = Math.ceil(ms / 1000)
  if (seconds < 120) return `${seconds} s`
  const minutes = seconds / 60
  if (minutes < 60) return `${Math.round(minutes)} min`
  const hours = minutes / 60
  if (hours < 48) return `${Math.round(hours * 10) / 10} h`
  return `${Math.round((hours / 24) * 10) / 10} d`
}

/** `ms` since the epoch as "2026-12-04 05:00 UTC", rounded up to the minute. */
const utcMinute = (ms: number): string =>
  new Date(Math.ceil(ms / 60_000) * 60_000).toISOString().slice(0, 16).replace("T", " ") + " UTC"

/**
 * The error of a server that asked (`Retry-After`) for a longer wait than a retry may take: not
 * retryable now, its reason saying how long and until when (UTC), then what the server said.
 */
const waitTooLong = (error: EmbedderError, waitMs: number, now: number): EmbedderError =>
  new EmbedderError({
    provider: error.provider,
    failure: error.failure,
    retryable: false,
    reason: `the service asks to wait ${describeWait(waitMs)} (until ${utcMinute(now + waitMs)}); try again after that (${error.reason})`,
  })

/** What went wrong in an attempt, as a retry notice says it. */
const whatFailed = (failure: CallFailure): string => {
  if (failure.timedOutMs !== undefined)
    return `did not answer in ${describeWait(failure.timedOutMs)}`
  const status = /^HTTP \d+/.exec(failure.error.reason)?.[0]
  if (status !== undefined) return `answered ${status}`
  return `could not be reached (${failure.error.reason})`
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or `maxAttempts` is spent.
 * Waits the larger of the backoff and `Retry-After` between attempts; a `Retry-After` beyond
 * `maxDelayMs` stops at once with {@link waitTooLong}'s error (waiting it out in silence, or
 * asking again sooner than the server said, helps nobody). A refused connection is retried only
 * when `options.retryRefused` is not false. Each retry is announced to {@link EmbedderRetryNotices}.
 */
export const withRetry = <A>(
  policy: RetryPolicy,
  attempt: Effect.Effect<A, CallFailure>,
  options: RetryOptions = {},
): Effect.Effect<A, EmbedderError> => {
  const loop = (n: number): Effect.Effect<A, EmbedderError> =>
    attempt.pipe(
      Effect.catch((failure: CallFailure) => {
        if (!failure.error.retryable) return Effect.fail(failure.error)
        if (failure.refused === true && options.retryRefused === false)
          return Effect.fail(failure.error)
        const asked = failure.retryAfterMs ?? 0
        if (asked > policy.maxDelayMs)
          return nowMs.pipe(
            Effect.flatMap((now) => Effect.fail(waitTooLong(failure.error, asked, now))),
          )
        if (n >= policy.maxAttempts) return Effect.fail(failure.error)
        return Random.next.pipe(
          Effect.flatMap((random) => {
            const wait = Math.min(policy.maxDelayMs, Math.max(backoffMs(policy, n, random), asked))
            return Effect.flatMap(Effect.service(EmbedderRetryNotices), (notify) => {
              const who =
                options.server === undefined
                  ? `the ${failure.error.provider} embedder`
                  : `the embedding server at ${options.server}`
              notify(
                `${who} ${whatFailed(failure)}; retrying in ${describeWait(wait)} (attempt ${n + 1} of ${policy.maxAttempts})`,
              )
              return Effect.sleep(wait)
            })
          }),
          Effect.andThen(Effect.suspend(() => loop(n + 1))),
        )
      }),
    )
  return Effect.suspend(() => loop(1))
}

/** Estimated tokens of a text: ⌈chars / 4⌉ (a conservative rule of thumb for English). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/** A per-run token budget for a paid provider. */
export interface CostGuard {
  /** Reserves the tokens of `texts`, or fails with `cost_guard` when the budget would pass. */
  readonly reserve: (texts: ReadonlyArray<string>) => Effect.Effect<void, EmbedderError>
  /** Tokens reserved so far. */
  readonly spent: () => number
  readonly budget: number
}

/** Default budget of a paid provider per run (embedder instance): 2 million tokens. */
export const DEFAULT_TOKEN_BUDGET = 2_000_000

/** A cost guard with `budget` estimated tokens for this run. */
export const makeCostGuard = (provider: string, budget: number): CostGuard => {
  let spent = 0
  return {
    budget,
    spent: () => spent,
    reserve: (texts) =>
      Effect.suspend(() => {
        let tokens = 0
        for (const t of texts) tokens += estimateTokens(t)
        if (spent + tokens > budget) {
          return Effect.fail(
            new EmbedderError({
              provider,
              failure: "cost_guard",
              retryable: false,
              reason: `the run would exceed its budget of ${budget} estimated tokens (${spent} used, ${tokens} more asked); raise BATON_EMBED_MAX_TOKENS to allow it`,
            }),
          )
        }
        spent += tokens
        return Effect.void
      }),
  }
}

/**
 * Embeds `texts` in batches of at most `maxBatch`, `concurrency` batches in flight, and returns
 * the vectors in input order. `embedBatch` must return one vector per input.
 */
export const embedInBatches = (
  texts: ReadonlyArray<string>,
  maxBatch: number,
  concurrency: number,
  embedBatch: (
    batch: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<Float32Array>, EmbedderError>,
): Effect.Effect<ReadonlyArray<Float32Array>, EmbedderError> => {
  const size = Math.max(1, Math.floor(maxBatch))
  const batches: Array<ReadonlyArray<string>> = []
  for (let at = 0; at < texts.length; at += size) batches.push(texts.slice(at, at + size))
  return Effect.forEach(batches, embedBatch, {
    concurrency: Math.max(1, Math.floor(concurrency)),
  }).pipe(Effect.map((parts) => parts.flat()))
}

/** Current time in ms from Effect's clock (for `Retry-After` dates). */
export const nowMs: Effect.Effect<number> = Clock.currentTimeMillis

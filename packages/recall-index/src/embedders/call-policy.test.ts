import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { EmbedderError } from "../embedder.js"
import {
  describeWait,
  embedInBatches,
  estimateTokens,
  makeCostGuard,
  parseRetryAfter,
  statusFailure,
  withRetry,
} from "./call-policy.js"
import type { CallFailure } from "./call-policy.js"

const policy = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 20_000 }

/** An attempt that fails with the scripted failures, then succeeds; records attempt times. */
const scripted = (failures: ReadonlyArray<CallFailure>) => {
  const times: number[] = []
  let n = 0
  const attempt = Effect.gen(function* () {
    times.push(yield* Effect.clockWith((c) => c.currentTimeMillis))
    const failure = failures[n++]
    return failure === undefined ? "ok" : yield* Effect.fail(failure)
  })
  return { attempt, times }
}

const status = (code: number, retryAfterMs?: number): CallFailure => ({
  error: statusFailure("fake", code, ""),
  retryAfterMs,
})

const runOnTestClock = <A, E>(effect: Effect.Effect<A, E>, advanceMs: number) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(Effect.exit(effect))
      for (let t = 0; t < advanceMs; t += 250) yield* TestClock.adjust(250)
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(TestClock.layer())),
  )

describe("withRetry (TestClock)", () => {
  it("backs off exponentially with jitter on 429 / 5xx and then succeeds", async () => {
    const s = scripted([status(503), status(429), status(500)])
    const exit = await runOnTestClock(withRetry(policy, s.attempt), 60_000)
    expect(exit).toEqual(Exit.succeed("ok"))
    const gaps = s.times.slice(1).map((t, i) => t - s.times[i]!)
    // Attempt n waits in [base·2^(n-1) / 2, base·2^(n-1)].
    expect(gaps[0]).toBeGreaterThanOrEqual(500)
    expect(gaps[0]).toBeLessThanOrEqual(1000)
    expect(gaps[1]).toBeGreaterThanOrEqual(1000)
    expect(gaps[1]).toBeLessThanOrEqual(2000)
    expect(gaps[2]).toBeGreaterThanOrEqual(2000)
    expect(gaps[2]).toBeLessThanOrEqual(4000)
  })

  it("honours Retry-After when it is longer than the backoff, up to maxDelayMs", async () => {
    const s = scripted([status(429, 12_000), status(429, 20_000)])
    const exit = await runOnTestClock(withRetry(policy, s.attempt), 60_000)
    expect(exit).toEqual(Exit.succeed("ok"))
    expect(s.times[1]! - s.times[0]!).toBeGreaterThanOrEqual(12_000)
    expect(s.times[1]! - s.times[0]!).toBeLessThan(13_000)
    expect(s.times[2]! - s.times[1]!).toBe(20_000)
  })

  it("stops at once when Retry-After asks for more than maxDelayMs, saying how long", async () => {
    const s = scripted([status(429, 3_600_000)])
    const exit = await runOnTestClock(withRetry(policy, s.attempt), 60_000)
    expect(s.times).toHaveLength(1)
    // TestClock starts at the epoch: an hour later, to the minute.
    expect(exit).toEqual(
      Exit.fail(
        new EmbedderError({
          provider: "fake",
          failure: "rate_limited",
          retryable: false,
          reason:
            "the service asks to wait 1 h (until 1970-01-01 01:00 UTC); try again after that (HTTP 429)",
        }),
      ),
    )
  })

  it("retries a refused connection unless told not to (a search's query)", async () => {
    const refused: CallFailure = {
      error: new EmbedderError({
        provider: "fake",
        failure: "unavailable",
        retryable: true,
        reason: "transport error ECONNREFUSED reaching 127.0.0.1:9",
      }),
      refused: true,
    }
    const indexRun = scripted([refused, refused])
    expect(await runOnTestClock(withRetry(policy, indexRun.attempt), 60_000)).toEqual(
      Exit.succeed("ok"),
    )
    expect(indexRun.times).toHaveLength(3)
    const search = scripted([refused])
    const exit = await runOnTestClock(
      withRetry(policy, search.attempt, { retryRefused: false }),
      60_000,
    )
    expect(exit).toEqual(Exit.fail(refused.error))
    expect(search.times).toHaveLength(1)
    // Other transport failures of a query are still retried.
    const reset = scripted([{ error: refused.error }])
    await runOnTestClock(withRetry(policy, reset.attempt, { retryRefused: false }), 60_000)
    expect(reset.times).toHaveLength(2)
  })

  it("does not retry a non-retryable failure", async () => {
    const s = scripted([status(401), status(500)])
    const exit = await runOnTestClock(withRetry(policy, s.attempt), 10_000)
    expect(s.times).toHaveLength(1)
    expect(Exit.isFailure(exit)).toBe(true)
    const error = await Effect.runPromise(
      Effect.flip(withRetry(policy, scripted([status(401)]).attempt)),
    )
    expect(error).toMatchObject({
      _tag: "EmbedderError",
      failure: "unauthorized",
      retryable: false,
    })
  })

  it("gives up after maxAttempts with the last error", async () => {
    const s = scripted([status(500), status(500), status(500), status(502), status(500)])
    const exit = await runOnTestClock(withRetry(policy, s.attempt), 60_000)
    expect(s.times).toHaveLength(4)
    expect(exit).toEqual(Exit.fail(statusFailure("fake", 502, "")))
  })

  it("waits on the clock, not in real time", async () => {
    const s = scripted([status(503)])
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(withRetry(policy, s.attempt))
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow
        // Without advancing the TestClock the retry has not happened.
        const before = s.times.length
        yield* TestClock.adjust(1000)
        return { before, value: yield* Fiber.join(fiber) }
      }).pipe(Effect.provide(TestClock.layer())),
    )
    expect(result).toEqual({ before: 1, value: "ok" })
    expect(s.times).toHaveLength(2)
  })
})

describe("call policy helpers", () => {
  it("classifies HTTP statuses", () => {
    expect(statusFailure("p", 429, "")).toMatchObject({ failure: "rate_limited", retryable: true })
    expect(statusFailure("p", 503, "x")).toMatchObject({
      failure: "server_error",
      retryable: true,
      reason: "HTTP 503: x",
    })
    expect(statusFailure("p", 403, "")).toMatchObject({ failure: "unauthorized", retryable: false })
    expect(statusFailure("p", 400, "")).toMatchObject({ failure: "bad_request", retryable: false })
  })

  it("describes a wait in words", () => {
    expect(
      [45_000, 119_000, 20 * 60_000, 3_600_000, 5_400_000, 30 * 3_600_000, 72 * 3_600_000].map(
        describeWait,
      ),
    ).toEqual(["45 s", "119 s", "20 min", "1 h", "1.5 h", "30 h", "3 d"])
  })

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0)
    expect(parseRetryAfter("7", now)).toBe(7000)
    expect(parseRetryAfter("0.5", now)).toBe(500)
    expect(parseRetryAfter(new Date(now + 3000).toUTCString(), now)).toBe(3000)
    expect(parseRetryAfter("soon", now)).toBeUndefined()
    expect(parseRetryAfter(null, now)).toBeUndefined()
  })

  it("the cost guard refuses the call that would pass the budget, and keeps the rest", async () => {
    const guard = makeCostGuard("voyage", 10)
    expect(estimateTokens("abcdefgh")).toBe(2)
    await Effect.runPromise(guard.reserve(["abcdefgh", "abcd"])) // 3 tokens
    const refused = await Effect.runPromise(Effect.flip(guard.reserve(["x".repeat(32)])))
    expect(refused).toBeInstanceOf(EmbedderError)
    expect(refused).toMatchObject({ failure: "cost_guard", retryable: false, provider: "voyage" })
    expect(refused.reason).not.toContain("xxxx")
    expect(guard.spent()).toBe(3)
    await Effect.runPromise(guard.reserve(["x".repeat(28)])) // exactly 10
    expect(guard.spent()).toBe(10)
  })

  it("embedInBatches keeps input order across concurrent batches", async () => {
    const seen: number[] = []
    const out = await Effect.runPromise(
      embedInBatches(
        Array.from({ length: 10 }, (_, i) => String(i)),
        3,
        2,
        (batch) =>
          Effect.sleep(batch[0] === "0" ? 20 : 1).pipe(
            Effect.andThen(
              Effect.sync(() => {
                seen.push(batch.length)
                return batch.map((t) => Float32Array.of(Number(t)))
              }),
            ),
          ),
      ),
    )
    expect(out.map((v) => v[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(seen.sort()).toEqual([1, 3, 3, 3])
  })
})

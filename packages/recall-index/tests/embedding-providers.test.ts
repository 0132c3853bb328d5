// The remote providers against loopback fakes speaking the real wire formats.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Fiber } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  EmbedderRetryNotices,
  embedderFromEnvironment,
  VOYAGE_FUSION_PLAN,
  makeCostGuard,
  makeOpenAiCompatibleEmbedder,
  makeVoyageEmbedder,
  makeVoyageReranker,
  withIndexedDimensions,
} from "@baton/recall-index"
import { deterministicVector } from "@baton/recall-index/testing"
import { startEmbeddingFake } from "./embedding-fakes.js"
import type { EmbeddingFake } from "./embedding-fakes.js"

const fastRetry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 }
const norm = (v: Float32Array) => Math.hypot(...v)
const cosine = (a: Float32Array, b: ReadonlyArray<number> | Float32Array) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s / (norm(a) * Math.hypot(...b))
}

let fake: EmbeddingFake
beforeEach(async () => {
  fake = await startEmbeddingFake({ dim: 16, shuffle: true })
})
afterEach(async () => {
  await fake.close()
})

describe("Voyage (voyageai client against a loopback /v1)", () => {
  const voyage = (extra: Record<string, unknown> = {}) =>
    makeVoyageEmbedder({
      apiKey: "vk-test",
      baseUrl: `${fake.baseUrl}/v1`,
      dimensions: 16,
      retry: fastRetry,
      ...extra,
    })

  it("embeds documents and queries with the right input_type, in input order, normalised", async () => {
    const embedder = voyage({ maxBatch: 2 })
    const texts = ["alpha retry", "beta cache", "gamma schema"]
    const vectors = await Effect.runPromise(embedder.embedDocuments(texts))
    const query = await Effect.runPromise(embedder.embedQuery("alpha retry"))
    expect(vectors).toHaveLength(3)
    vectors.forEach((v, i) => {
      expect(norm(v)).toBeCloseTo(1, 5)
      expect(cosine(v, Array.from(deterministicVector(texts[i]!, 16)))).toBeCloseTo(1, 5)
    })
    expect(cosine(query, vectors[0]!)).toBeCloseTo(1, 5)
    expect(
      fake.requests.map((r) => [
        r.path,
        r.body["input_type"],
        (r.body["input"] as string[]).length,
      ]),
    ).toEqual([
      ["/v1/embeddings", "document", 2],
      ["/v1/embeddings", "document", 1],
      ["/v1/embeddings", "query", 1],
    ])
    expect(fake.requests[0]!.body).toMatchObject({ model: "voyage-4-large", output_dimension: 16 })
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer vk-test")
    expect(embedder.info).toMatchObject({
      provider: "voyage",
      fingerprint: "voyage/voyage-4-large/16",
      paid: true,
      remote: true,
    })
  })

  it("retries 429 and 5xx, then succeeds; 401 fails at once as unauthorized", async () => {
    fake.script.push(
      { status: 429, headers: { "retry-after": "0" }, body: { detail: "slow down" } },
      { status: 503, body: { detail: "busy" } },
    )
    const vectors = await Effect.runPromise(voyage().embedDocuments(["one"]))
    expect(vectors).toHaveLength(1)
    expect(fake.requests).toHaveLength(3)
    fake.script.push({ status: 401, body: { detail: "bad key" } })
    const error = await Effect.runPromise(Effect.flip(voyage().embedDocuments(["two"])))
    expect(error).toMatchObject({
      _tag: "EmbedderError",
      failure: "unauthorized",
      retryable: false,
    })
    expect(error.reason).not.toContain("vk-test")
    expect(fake.requests).toHaveLength(4)
  })

  it("gives up after the retry budget with server_error", async () => {
    for (let i = 0; i < 3; i++) fake.script.push({ status: 500, body: { detail: "boom" } })
    const error = await Effect.runPromise(Effect.flip(voyage().embedDocuments(["x"])))
    expect(error).toMatchObject({ failure: "server_error", retryable: true })
    expect(fake.requests).toHaveLength(3)
  })

  it("refuses a wrong-shaped answer as bad_response", async () => {
    fake.script.push({ status: 200, body: { object: "list", data: [] } })
    const error = await Effect.runPromise(Effect.flip(voyage().embedDocuments(["a", "b"])))
    expect(error).toMatchObject({ failure: "bad_response" })
  })

  it("refuses vectors holding nulls, quietly: the client's schema warnings are muted", async () => {
    const warned: Array<unknown> = []
    const warn = console.warn
    console.warn = (...args: Array<unknown>) => void warned.push(args[0])
    try {
      const withNulls = [null, ...Array.from({ length: 15 }, () => 0.25)]
      fake.script.push({
        status: 200,
        body: { object: "list", data: [{ object: "embedding", embedding: withNulls, index: 0 }] },
      })
      const error = await Effect.runPromise(Effect.flip(voyage().embedDocuments(["a"])))
      expect(error).toMatchObject({
        failure: "bad_response",
        reason: "Voyage returned a vector holding values that are not numbers",
      })
      // Other warnings still pass, and the console is itself again after the call.
      console.warn("unrelated")
    } finally {
      console.warn = warn
    }
    expect(warned).toEqual(["unrelated"])
  })

  it("a Retry-After beyond the retry cap stops at once and says how long to wait", async () => {
    fake.script.push({ status: 429, headers: { "retry-after": "7200" }, body: { detail: "quota" } })
    const error = await Effect.runPromise(Effect.flip(voyage().embedDocuments(["x"])))
    expect(error).toMatchObject({ failure: "rate_limited", retryable: false })
    expect(error.reason).toMatch(/^the service asks to wait 2 h \(until .* UTC\); try again after/)
    expect(fake.requests).toHaveLength(1)
  })

  it("vectors of another length name the length asked for and BATON_VOYAGE_DIM", async () => {
    fake.script.push({
      status: 200,
      body: { object: "list", data: [{ object: "embedding", embedding: [1, 0, 0, 0], index: 0 }] },
    })
    const error = await Effect.runPromise(Effect.flip(voyage().embedDocuments(["a"])))
    expect(error).toMatchObject({
      failure: "bad_response",
      reason:
        "Voyage returned 4-dimensional vectors, not the 16 asked for (output_dimension, BATON_VOYAGE_DIM): set BATON_VOYAGE_DIM to a length voyage-4-large gives, or use a model that supports output_dimension",
    })
  })

  it("a duplicate index says so instead of miscounting", async () => {
    const item = (index: number) => ({ object: "embedding", embedding: [1, 0], index })
    fake.script.push({ status: 200, body: { object: "list", data: [item(0), item(0)] } })
    const error = await Effect.runPromise(Effect.flip(voyage().embedDocuments(["a", "b"])))
    expect(error).toMatchObject({
      reason: "asked for 2 vectors, got 2 holding index 0 more than once",
    })
  })

  it("the cost guard refuses before anything is sent", async () => {
    const embedder = voyage({ tokenBudget: 5 })
    const error = await Effect.runPromise(Effect.flip(embedder.embedDocuments(["x".repeat(100)])))
    expect(error).toMatchObject({ failure: "cost_guard", retryable: false })
    expect(fake.requests).toHaveLength(0)
  })

  it("reranks with rerank-2.5 and top_k, best first", async () => {
    const reranker = makeVoyageReranker({
      apiKey: "vk-test",
      baseUrl: `${fake.baseUrl}/v1`,
      retry: fastRetry,
    })
    const results = await Effect.runPromise(
      reranker.rerank("retry backoff", ["cache keys", "retry with backoff", "retry"], 2),
    )
    expect(results.map((r) => r.index)).toEqual([1, 2])
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score)
    expect(fake.requests[0]).toMatchObject({
      path: "/v1/rerank",
      body: { model: "rerank-2.5", top_k: 2, query: "retry backoff" },
    })
  })

  it("shares one cost guard between embedder and reranker", async () => {
    const costGuard = makeCostGuard("voyage", 10)
    const base = {
      apiKey: "k",
      baseUrl: `${fake.baseUrl}/v1`,
      retry: fastRetry,
      costGuard,
      dimensions: 16,
    }
    await Effect.runPromise(makeVoyageEmbedder(base).embedDocuments(["x".repeat(32)]))
    const error = await Effect.runPromise(
      Effect.flip(makeVoyageReranker(base).rerank("q", ["x".repeat(12)], 1)),
    )
    expect(error).toMatchObject({ failure: "cost_guard" })
  })
})

describe("OpenAI-compatible (global fetch against a loopback /embeddings)", () => {
  it("posts model + input, learns the dimension with a probe, restores input order", async () => {
    const embedder = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({
        baseUrl: `${fake.baseUrl}/v1/`,
        model: "nomic-embed-text",
        apiKey: "sk-local",
      }),
    )
    expect(embedder.info).toMatchObject({
      provider: "openai-compatible",
      dim: 16,
      fingerprint: "openai-compatible/nomic-embed-text/16",
      remote: false,
      paid: false,
    })
    const vectors = await Effect.runPromise(embedder.embedDocuments(["first text", "second text"]))
    expect(cosine(vectors[1]!, Array.from(deterministicVector("second text", 16)))).toBeCloseTo(
      1,
      5,
    )
    expect(norm(vectors[0]!)).toBeCloseTo(1, 5)
    const last = fake.requests.at(-1)!
    expect(last).toMatchObject({
      method: "POST",
      path: "/v1/embeddings",
      body: { model: "nomic-embed-text", input: ["first text", "second text"] },
    })
    expect(last.headers.authorization).toBe("Bearer sk-local")
    expect(last.body).not.toHaveProperty("dimensions")
  })

  it("sends dimensions when configured and retries a 429", async () => {
    fake.script.push({ status: 429, headers: { "retry-after": "0" }, body: { error: "rate" } })
    const embedder = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({
        baseUrl: fake.baseUrl,
        model: "m",
        dimensions: 16,
        retry: fastRetry,
      }),
    )
    const v = await Effect.runPromise(embedder.embedQuery("hello"))
    expect(v).toHaveLength(16)
    expect(fake.requests).toHaveLength(2)
    expect(fake.requests[1]!.body).toMatchObject({ dimensions: 16, input: ["hello"] })
    expect(fake.requests[1]!.headers.authorization).toBeUndefined()
  })

  it("takes a known length instead of the probe, never sends it, and fails on another", async () => {
    const before = fake.requests.length
    const known = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", knownDimensions: 16 }),
    )
    expect(known.info.fingerprint).toBe("openai-compatible/m/16")
    expect(fake.requests).toHaveLength(before)
    expect(await Effect.runPromise(known.embedQuery("hello"))).toHaveLength(16)
    expect(fake.requests).toHaveLength(before + 1)
    expect(fake.requests.at(-1)!.body).not.toHaveProperty("dimensions")
    // The index's length is no longer what the endpoint gives (the model changed behind it).
    const stale = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", knownDimensions: 8 }),
    )
    expect(await Effect.runPromise(Effect.flip(stale.embedQuery("hello")))).toMatchObject({
      failure: "bad_response",
      reason:
        "the index holds 8-dimensional vectors of m but the endpoint now answers 16-dimensional ones (another model behind the name?): `baton recall index` re-embeds the history into the new length",
    })
  })

  it("a length mismatch names the length asked for, the length received and what to do", async () => {
    // BATON_EMBEDDINGS_DIM sent as `dimensions`, which this endpoint ignores (it answers 16).
    const sized = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", dimensions: 32 }),
    )
    expect(await Effect.runPromise(Effect.flip(sized.embedDocuments(["a"])))).toMatchObject({
      failure: "bad_response",
      reason:
        "asked for 32-dimensional vectors (BATON_EMBEDDINGS_DIM, sent as `dimensions`) but the endpoint answered 16-dimensional ones: the model ignores `dimensions`; unset BATON_EMBEDDINGS_DIM or use a model that supports it",
    })
    // Learnt by the probe, then another length: the model changed during the run.
    const probed = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m" }),
    )
    fake.script.push({
      status: 200,
      body: { data: [{ index: 0, embedding: Array.from({ length: 8 }, () => 0.5) }] },
    })
    expect(await Effect.runPromise(Effect.flip(probed.embedDocuments(["a"])))).toMatchObject({
      reason:
        "the endpoint answered 16-dimensional vectors, then 8-dimensional ones: its model changed during the run",
    })
  })

  it("a duplicate index says so instead of miscounting", async () => {
    const embedder = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", knownDimensions: 4 }),
    )
    const item = (index: number) => ({ index, embedding: [1, 0, 0, 0] })
    fake.script.push({ status: 200, body: { data: [item(0), item(1), item(1)] } })
    expect(
      await Effect.runPromise(Effect.flip(embedder.embedDocuments(["a", "b", "c"]))),
    ).toMatchObject({
      failure: "bad_response",
      reason: "asked for 3 vectors, got 3 holding index 1 more than once",
    })
  })

  it("a 401 without a key says BATON_EMBEDDINGS_KEY is not set", async () => {
    const unauthorized = { status: 401, body: { error: { message: "missing bearer" } } }
    fake.script.push(unauthorized)
    const keyless = await Effect.runPromise(
      Effect.flip(makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m" })),
    )
    expect(keyless).toMatchObject({
      failure: "unauthorized",
      retryable: false,
      reason:
        'no key was sent: BATON_EMBEDDINGS_KEY is not set (HTTP 401: {"error":{"message":"missing bearer"}})',
    })
    fake.script.push(unauthorized)
    const keyed = await Effect.runPromise(
      Effect.flip(
        makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", apiKey: "k1" }),
      ),
    )
    expect(keyed.reason).not.toContain("BATON_EMBEDDINGS_KEY")
  })

  it("a Retry-After beyond the retry cap stops at once and says how long to wait", async () => {
    fake.script.push({ status: 429, headers: { "retry-after": "3600" }, body: { error: "quota" } })
    const error = await Effect.runPromise(
      Effect.flip(
        makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", retry: fastRetry }),
      ),
    )
    expect(error).toMatchObject({ failure: "rate_limited", retryable: false })
    expect(error.reason).toMatch(
      /^the service asks to wait 1 h \(until \d{4}-\d\d-\d\d \d\d:\d\d UTC\); try again after that \(HTTP 429: \{"error":"quota"\}\)$/,
    )
    expect(fake.requests).toHaveLength(1)
  })

  it("says, one line per retry, that the server did not answer in time", async () => {
    // Accepts the request and never answers (a hung server).
    const hung = createServer(() => undefined)
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve))
    const { port } = hung.address() as AddressInfo
    const lines: Array<string> = []
    try {
      const error = await Effect.runPromise(
        Effect.flip(
          makeOpenAiCompatibleEmbedder({
            baseUrl: `http://127.0.0.1:${port}/v1`,
            model: "m",
            knownDimensions: 16,
            retry: fastRetry,
            timeoutMs: 50,
          }).pipe(Effect.flatMap((embedder) => embedder.embedDocuments(["d"]))),
        ).pipe(Effect.provideService(EmbedderRetryNotices, (line) => lines.push(line))),
      )
      expect(error).toMatchObject({ failure: "unavailable" })
      expect(lines).toEqual([
        `the embedding server at 127.0.0.1:${port} did not answer in 1 s; retrying in 1 s (attempt 2 of 3)`,
        `the embedding server at 127.0.0.1:${port} did not answer in 1 s; retrying in 1 s (attempt 3 of 3)`,
      ])
    } finally {
      hung.close()
      hung.closeAllConnections?.()
    }
  })

  it("a search's query fails at once on a refused connection; documents are retried", async () => {
    await fake.close()
    const slowRetry = { maxAttempts: 3, baseDelayMs: 400, maxDelayMs: 400 }
    const embedder = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({
        baseUrl: fake.baseUrl,
        model: "m",
        knownDimensions: 16,
        retry: slowRetry,
      }),
    )
    let started = Date.now()
    const query = await Effect.runPromise(Effect.flip(embedder.embedQuery("q")))
    expect(query).toMatchObject({ failure: "unavailable" })
    expect(query.reason).toContain("ECONNREFUSED")
    expect(Date.now() - started).toBeLessThan(300)
    started = Date.now()
    await Effect.runPromise(Effect.flip(embedder.embedDocuments(["d"])))
    expect(Date.now() - started).toBeGreaterThanOrEqual(400)
    fake = await startEmbeddingFake()
  })

  it("withIndexedDimensions takes the length of the same model's indexed vectors only", () => {
    const config = {
      _tag: "OpenAiCompatible",
      baseUrl: "http://127.0.0.1:1",
      model: "BAAI/bge-small",
      tokenBudget: 1,
    } as const
    expect(withIndexedDimensions(config, "openai-compatible/BAAI/bge-small/384")).toEqual({
      ...config,
      knownDimensions: 384,
    })
    for (const other of [
      undefined,
      "openai-compatible/other/384",
      "openai-compatible/BAAI/bge-small/x",
      "voyage/voyage-4-large/1024",
      "embedded/use-lite/512/seg48x8",
    ])
      expect(withIndexedDimensions(config, other)).toBe(config)
    const sized = { ...config, dimensions: 256 }
    expect(withIndexedDimensions(sized, "openai-compatible/BAAI/bge-small/384")).toBe(sized)
  })

  it("an unreachable endpoint is unavailable (retryable) after the retries", async () => {
    await fake.close()
    const error = await Effect.runPromise(
      Effect.flip(
        makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", retry: fastRetry }),
      ),
    )
    expect(error).toMatchObject({ failure: "unavailable", retryable: true })
    fake = await startEmbeddingFake()
  })

  it("a non-loopback endpoint is remote and paid (cost guard applies)", async () => {
    const embedder = await Effect.runPromise(
      makeOpenAiCompatibleEmbedder({
        baseUrl: "https://embeddings.invalid/v1",
        model: "m",
        dimensions: 8,
        tokenBudget: 1,
      }),
    )
    expect(embedder.info).toMatchObject({ remote: true, paid: true })
    const error = await Effect.runPromise(Effect.flip(embedder.embedQuery("a longer text")))
    expect(error).toMatchObject({ failure: "cost_guard" })
  })
})

describe("a server's error text never carries the key", () => {
  // Some servers echo the key they were sent in a 401 body; the reason is shown, stored in the
  // index's last failure and reaches an agent through MCP.
  const key = "sk-proj-Q3xLq9T2pVw8RzK4mN7bY1cH5dF0gJ6e"
  const echo = (k: string) => ({
    status: 401,
    body: {
      error: {
        message: `Incorrect API key provided: ${k}. ${"Find your key at /settings. ".repeat(8)}`,
      },
    },
  })

  it("OpenAI-compatible: the echoed key is redacted, whole, before the cut", async () => {
    fake.script.push(echo(key))
    const error = await Effect.runPromise(
      Effect.flip(makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", apiKey: key })),
    )
    expect(error).toMatchObject({ failure: "unauthorized", retryable: false })
    expect(error.reason).toContain("Incorrect API key provided: [redacted api-key]")
    expect(error.reason).not.toContain(key.slice(0, 12))
    // A key the server cut short is no secret shape of ours: the cut still keeps no tail of it.
    fake.script.push({ status: 401, body: "x".repeat(190) + key })
    const cut = await Effect.runPromise(
      Effect.flip(makeOpenAiCompatibleEmbedder({ baseUrl: fake.baseUrl, model: "m", apiKey: key })),
    )
    expect(cut.reason).not.toContain("sk-proj")
  })

  it("Voyage: the echoed key and other token shapes in the body are masked", async () => {
    const voyageKey = "pa-Vk8sJ2mQ7rT4wX9zB3nC6dF1gH5jK0LpA"
    fake.script.push({
      status: 401,
      body: { detail: `bad key ${voyageKey}; also ghp_${"A1b2C3d4".repeat(5)}` },
    })
    const error = await Effect.runPromise(
      Effect.flip(
        makeVoyageEmbedder({
          apiKey: voyageKey,
          baseUrl: `${fake.baseUrl}/v1`,
          dimensions: 16,
          retry: fastRetry,
        }).embedDocuments(["x"]),
      ),
    )
    expect(error).toMatchObject({ failure: "unauthorized" })
    expect(error.reason).toContain("bad key [redacted api-key]")
    expect(error.reason).not.toContain(voyageKey)
    expect(error.reason).not.toContain("ghp_A1b2")
  })
})

describe("embedderFromEnvironment with the fakes", () => {
  it("BATON_EMBEDDER=voyage uses BATON_VOYAGE_BASE_URL and the reranker", async () => {
    const configured = await Effect.runPromise(
      embedderFromEnvironment({
        BATON_EMBEDDER: "voyage",
        VOYAGE_API_KEY: "vk",
        BATON_VOYAGE_BASE_URL: `${fake.baseUrl}/v1`,
      }),
    )
    expect(configured.embedder?.info.fingerprint).toBe("voyage/voyage-4-large/1024")
    expect(configured.reranker?.model).toBe("rerank-2.5")
    // Its own plan, with conversation context (README "Voyage"); nothing to pick.
    expect(configured.fusion).toBe(VOYAGE_FUSION_PLAN)
    expect(configured.fusion.context).toBeGreaterThan(0)
    expect(configured.pick).toBeUndefined()
    const v = await Effect.runPromise(configured.embedder!.embedQuery("q"))
    expect(v).toHaveLength(1024)
    expect(fake.requests[0]!.body).toMatchObject({ input_type: "query" })
  })

  it("BATON_VOYAGE_DIM sets Voyage's output_dimension and the space's length", async () => {
    const configured = await Effect.runPromise(
      embedderFromEnvironment({
        BATON_EMBEDDER: "voyage",
        VOYAGE_API_KEY: "vk",
        BATON_VOYAGE_BASE_URL: `${fake.baseUrl}/v1`,
        BATON_VOYAGE_MODEL: "voyage-3.5-lite",
        BATON_VOYAGE_DIM: "256",
      }),
    )
    expect(configured.embedder?.info.fingerprint).toBe("voyage/voyage-3.5-lite/256")
    expect(await Effect.runPromise(configured.embedder!.embedQuery("q"))).toHaveLength(256)
    expect(fake.requests[0]!.body).toMatchObject({ output_dimension: 256 })
  })

  it("a fixed-length Voyage model is sent no output_dimension and gets its own length", async () => {
    for (const [model, length] of [
      ["voyage-code-2", 1536],
      ["voyage-3-lite", 512],
    ] as const) {
      fake.requests.length = 0
      const configured = await Effect.runPromise(
        embedderFromEnvironment({
          BATON_EMBEDDER: "voyage",
          VOYAGE_API_KEY: "vk",
          BATON_VOYAGE_BASE_URL: `${fake.baseUrl}/v1`,
          BATON_VOYAGE_MODEL: model,
        }),
      )
      expect(configured.embedder?.info.fingerprint).toBe(`voyage/${model}/${length}`)
      expect(await Effect.runPromise(configured.embedder!.embedDocuments(["d"]))).toMatchObject([
        { length },
      ])
      expect(fake.requests[0]!.body).not.toHaveProperty("output_dimension")
    }
    // Its own length may be named; another one is refused before anything is sent.
    const same = await Effect.runPromise(
      embedderFromEnvironment({
        BATON_EMBEDDER: "voyage",
        VOYAGE_API_KEY: "vk",
        BATON_VOYAGE_BASE_URL: `${fake.baseUrl}/v1`,
        BATON_VOYAGE_MODEL: "voyage-code-2",
        BATON_VOYAGE_DIM: "1536",
      }),
    )
    expect(same.embedder?.info.dim).toBe(1536)
    const refused = await Effect.runPromise(
      Effect.flip(
        embedderFromEnvironment({
          BATON_EMBEDDER: "voyage",
          VOYAGE_API_KEY: "vk",
          BATON_VOYAGE_MODEL: "voyage-code-2",
          BATON_VOYAGE_DIM: "1024",
        }),
      ),
    )
    expect(refused).toMatchObject({
      _tag: "EmbedderConfigError",
      variable: "BATON_VOYAGE_DIM",
      message:
        "voyage-code-2 gives 1536-dimensional vectors only (it takes no output_dimension): unset BATON_VOYAGE_DIM or set it to 1536",
    })
    // voyage-4-nano: the voyageai client would run it locally, through packages not installed.
    fake.requests.length = 0
    expect(
      await Effect.runPromise(
        Effect.flip(
          embedderFromEnvironment({
            BATON_EMBEDDER: "voyage",
            VOYAGE_API_KEY: "vk",
            BATON_VOYAGE_MODEL: "voyage-4-nano",
          }),
        ),
      ),
    ).toMatchObject({
      _tag: "EmbedderConfigError",
      variable: "BATON_VOYAGE_MODEL",
      message: expect.stringMatching(
        /^voyage-4-nano runs on this machine .*BATON_EMBEDDER=use-lite/,
      ),
    })
    expect(fake.requests).toHaveLength(0)
  })

  it("BATON_EMBEDDER=openai builds the endpoint embedder", async () => {
    const configured = await Effect.runPromise(
      embedderFromEnvironment({
        BATON_EMBEDDER: "openai",
        BATON_EMBEDDINGS_URL: fake.baseUrl,
        BATON_EMBEDDINGS_MODEL: "local-model",
        BATON_EMBEDDINGS_DIM: "16",
      }),
    )
    expect(configured.embedder?.info.fingerprint).toBe("openai-compatible/local-model/16")
    expect(configured.reranker).toBeUndefined()
    expect(fake.requests).toHaveLength(0)
  })

  it("BATON_EMBED_TIMEOUT_MS sets how long either provider waits for an answer", async () => {
    // Accepts every request and never answers (a server stuck on a large batch).
    let requests = 0
    const hung = createServer(() => {
      requests += 1
    })
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve))
    const { port } = hung.address() as AddressInfo
    try {
      const environments = [
        {
          BATON_EMBEDDER: "openai",
          BATON_EMBEDDINGS_URL: `http://127.0.0.1:${port}/v1`,
          BATON_EMBEDDINGS_MODEL: "local-model",
          BATON_EMBEDDINGS_DIM: "16",
        },
        {
          BATON_EMBEDDER: "voyage",
          VOYAGE_API_KEY: "vk",
          BATON_VOYAGE_BASE_URL: `http://127.0.0.1:${port}/v1`,
          BATON_VOYAGE_RERANK: "off",
        },
      ]
      for (const env of environments) {
        requests = 0
        const configured = await Effect.runPromise(
          embedderFromEnvironment({ ...env, BATON_EMBED_TIMEOUT_MS: "150" }),
        )
        // The first request is given up after 150 ms and tried again after the 1 s backoff; with
        // the default 60 s the second request would come after a minute.
        const fiber = Effect.runFork(configured.embedder!.embedDocuments(["d"]))
        const deadline = Date.now() + 4_000
        while (requests < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
        await Effect.runPromise(Fiber.interrupt(fiber))
        expect({ provider: env.BATON_EMBEDDER, requests }).toEqual({
          provider: env.BATON_EMBEDDER,
          requests: 2,
        })
      }
    } finally {
      hung.close()
      hung.closeAllConnections?.()
    }
  })
})

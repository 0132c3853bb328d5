import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import {
  DEFAULT_EMBEDDED_EMBEDDER,
  embedderConfigFromEnvironment,
  embedderFromEnvironment,
} from "./embedder-config.js"

const config = (env: Record<string, string>) =>
  Effect.runPromise(embedderConfigFromEnvironment(env))
const configError = (env: Record<string, string>) =>
  Effect.runPromise(Effect.flip(embedderConfigFromEnvironment(env)))

describe("embedderConfigFromEnvironment", () => {
  it("defaults to the embedded embedder: nothing leaves the machine", async () => {
    expect(await config({})).toEqual({ _tag: "Embedded", name: DEFAULT_EMBEDDED_EMBEDDER })
    expect(await config({ BATON_EMBEDDER: " " })).toEqual({
      _tag: "Embedded",
      name: DEFAULT_EMBEDDED_EMBEDDER,
    })
    // A Voyage key alone does not opt in to sending text away.
    expect(await config({ VOYAGE_API_KEY: "vk" })).toMatchObject({ _tag: "Embedded" })
  })

  it("selects each embedded embedder by name, and none", async () => {
    expect(await config({ BATON_EMBEDDER: "use-lite" })).toEqual({
      _tag: "Embedded",
      name: "use-lite",
    })
    expect(await config({ BATON_EMBEDDER: "USE-STATIC" })).toEqual({
      _tag: "Embedded",
      name: "use-static",
    })
    expect(await config({ BATON_EMBEDDER: "none" })).toEqual({ _tag: "None" })
  })

  it("voyage needs VOYAGE_API_KEY; base URL, model, rerank and budget are optional", async () => {
    expect(await configError({ BATON_EMBEDDER: "voyage" })).toMatchObject({
      _tag: "EmbedderConfigError",
      variable: "VOYAGE_API_KEY",
    })
    expect(
      await config({
        BATON_EMBEDDER: "voyage",
        VOYAGE_API_KEY: "vk",
        BATON_EMBED_MAX_TOKENS: "5000",
      }),
    ).toEqual({
      _tag: "Voyage",
      apiKey: "vk",
      baseUrl: undefined,
      model: "voyage-4-large",
      rerankModel: "rerank-2.5",
      tokenBudget: 5000,
      timeoutMs: undefined,
    })
    expect(
      await config({
        BATON_EMBEDDER: "voyage",
        VOYAGE_API_KEY: "vk",
        BATON_VOYAGE_RERANK: "off",
        BATON_VOYAGE_BASE_URL: "http://127.0.0.1:9/v1",
      }),
    ).toMatchObject({ rerankModel: undefined, baseUrl: "http://127.0.0.1:9/v1" })
  })

  it("BATON_EMBED_TIMEOUT_MS is a positive integer of milliseconds for either remote provider", async () => {
    const voyage = { BATON_EMBEDDER: "voyage", VOYAGE_API_KEY: "vk" }
    const openai = {
      BATON_EMBEDDER: "openai",
      BATON_EMBEDDINGS_URL: "http://127.0.0.1:9/v1",
      BATON_EMBEDDINGS_MODEL: "m",
    }
    for (const env of [voyage, openai]) {
      expect(await config({ ...env, BATON_EMBED_TIMEOUT_MS: "300000" })).toMatchObject({
        timeoutMs: 300_000,
      })
      expect(await config(env)).toMatchObject({ timeoutMs: undefined })
      for (const bad of ["0", "-5", "1.5", "soon", "60s"]) {
        expect(await configError({ ...env, BATON_EMBED_TIMEOUT_MS: bad })).toMatchObject({
          variable: "BATON_EMBED_TIMEOUT_MS",
          message: `BATON_EMBED_TIMEOUT_MS must be a positive integer, got "${bad}"`,
        })
      }
    }
  })

  it("BATON_VOYAGE_DIM is a positive integer, checked like BATON_EMBEDDINGS_DIM", async () => {
    const voyage = { BATON_EMBEDDER: "voyage", VOYAGE_API_KEY: "vk" }
    expect(await config({ ...voyage, BATON_VOYAGE_DIM: "512" })).toMatchObject({
      _tag: "Voyage",
      dimensions: 512,
    })
    expect(await config(voyage)).toMatchObject({ dimensions: undefined })
    for (const bad of ["0", "-3", "1.5", "abc"])
      expect(await configError({ ...voyage, BATON_VOYAGE_DIM: bad })).toMatchObject({
        _tag: "EmbedderConfigError",
        variable: "BATON_VOYAGE_DIM",
        message: `BATON_VOYAGE_DIM must be a positive integer, got "${bad}"`,
      })
  })

  it("openai needs a URL and a model, and checks the URL and the dimension", async () => {
    expect(await configError({ BATON_EMBEDDER: "openai" })).toMatchObject({
      variable: "BATON_EMBEDDINGS_URL",
    })
    expect(
      await configError({ BATON_EMBEDDER: "openai", BATON_EMBEDDINGS_URL: "http://127.0.0.1:1" }),
    ).toMatchObject({
      variable: "BATON_EMBEDDINGS_MODEL",
    })
    expect(
      await configError({
        BATON_EMBEDDER: "openai",
        BATON_EMBEDDINGS_URL: "not a url",
        BATON_EMBEDDINGS_MODEL: "m",
      }),
    ).toMatchObject({ variable: "BATON_EMBEDDINGS_URL" })
    expect(
      await configError({
        BATON_EMBEDDER: "openai",
        BATON_EMBEDDINGS_URL: "http://127.0.0.1:1",
        BATON_EMBEDDINGS_MODEL: "m",
        BATON_EMBEDDINGS_DIM: "-3",
      }),
    ).toMatchObject({ variable: "BATON_EMBEDDINGS_DIM" })
    expect(
      await config({
        BATON_EMBEDDER: "openai",
        BATON_EMBEDDINGS_URL: "http://127.0.0.1:1/v1",
        BATON_EMBEDDINGS_MODEL: "m",
        BATON_EMBEDDINGS_KEY: "k",
        BATON_EMBEDDINGS_DIM: "768",
      }),
    ).toMatchObject({ _tag: "OpenAiCompatible", apiKey: "k", dimensions: 768 })
    // Only http(s), as `baton doctor` says; a URL given with /embeddings is cut back to its base.
    expect(
      await configError({
        BATON_EMBEDDER: "openai",
        BATON_EMBEDDINGS_URL: "ftp://127.0.0.1/v1",
        BATON_EMBEDDINGS_MODEL: "m",
      }),
    ).toMatchObject({
      variable: "BATON_EMBEDDINGS_URL",
      message: 'BATON_EMBEDDINGS_URL is not an http(s) URL: "ftp://127.0.0.1/v1"',
    })
    expect(
      await config({
        BATON_EMBEDDER: "openai",
        BATON_EMBEDDINGS_URL: "http://127.0.0.1:1/v1/embeddings/",
        BATON_EMBEDDINGS_MODEL: "m",
      }),
    ).toMatchObject({ baseUrl: "http://127.0.0.1:1/v1" })
    expect(
      await configError({
        BATON_EMBEDDER: "voyage",
        VOYAGE_API_KEY: "k",
        BATON_VOYAGE_BASE_URL: "::::",
      }),
    ).toMatchObject({ variable: "BATON_VOYAGE_BASE_URL" })
  })

  it("rejects unknown names and bad budgets, naming the variable", async () => {
    expect(await configError({ BATON_EMBEDDER: "word2vec" })).toMatchObject({
      variable: "BATON_EMBEDDER",
    })
    expect(await configError({ BATON_EMBED_MAX_TOKENS: "lots" })).toMatchObject({
      variable: "BATON_EMBED_MAX_TOKENS",
    })
  })
})

describe("embedderFromEnvironment", () => {
  it("none gives no embedder (lexical only)", async () => {
    const out = await Effect.runPromise(embedderFromEnvironment({ BATON_EMBEDDER: "none" }))
    expect(out).toMatchObject({ embedder: undefined, reranker: undefined })
    expect(out.expandQuery("why did the deploy fail")).toMatch(/^deploy fail/)
  })

  it("the default is a local, free embedder", async () => {
    const out = await Effect.runPromise(embedderFromEnvironment({}))
    expect(out.embedder?.info).toMatchObject({ provider: "embedded", remote: false, paid: false })
    expect(out.embedder?.info.model).toMatch(/^use-static/)
    expect(out.reranker?.model).toMatch(/^sentence-max\//)
    expect(out.fusion).toEqual({
      lexical: 3,
      vector: 1,
      rerank: 6,
      rerankDepth: 30,
      rrfK: 10,
      context: 0.3,
    })
    await Effect.runPromise(out.embedder?.close?.() ?? Effect.void)
  })

  it("use-lite gets its own measured plan: the vector arm weighs more", async () => {
    const out = await Effect.runPromise(embedderFromEnvironment({ BATON_EMBEDDER: "use-lite" }))
    expect(out.embedder?.info.model).toMatch(/^use-lite/)
    expect(out.fusion).toEqual({
      lexical: 1,
      vector: 2,
      rerank: 3,
      rerankDepth: 30,
      rrfK: 10,
      context: 0.3,
    })
    await Effect.runPromise(out.embedder?.close?.() ?? Effect.void)
  })
})

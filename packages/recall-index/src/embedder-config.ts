/**
 * Which embedder (and reranker) the index uses, from the environment or a config object.
 * Guarantees: nothing leaves the machine unless the user names a remote provider — the default
 * is the embedded one chosen by the retrieval eval (README "Choosing the embedded default");
 * a remote provider without its key or URL is an {@link EmbedderConfigError} naming the variable
 * to set, never a silent fallback; `BATON_EMBEDDER=none` means lexical search only.
 *
 * Variables: `BATON_EMBEDDER` (`auto`, the default | `use-static` | `use-lite` | `voyage` |
 * `openai` | `none`; `embedded` and `default` mean `auto`); Voyage: `VOYAGE_API_KEY`,
 * `BATON_VOYAGE_BASE_URL`, `BATON_VOYAGE_MODEL`, `BATON_VOYAGE_DIM` (sent as `output_dimension`),
 * `BATON_VOYAGE_RERANK` (`off` disables `rerank-2.5`); OpenAI-compatible: `BATON_EMBEDDINGS_URL`,
 * `BATON_EMBEDDINGS_MODEL`, `BATON_EMBEDDINGS_KEY`, `BATON_EMBEDDINGS_DIM`; both remote providers:
 * `BATON_EMBED_TIMEOUT_MS` (how long one request may go unanswered, default 60 000); paid
 * providers: `BATON_EMBED_MAX_TOKENS` (estimated-token budget per run).
 */
import * as Effect from "effect/Effect"
import type { Embedder, EmbedderError, Reranker } from "./embedder.js"
import { EmbedderConfigError } from "./errors.js"
import { DEFAULT_TOKEN_BUDGET, makeCostGuard } from "./embedders/call-policy.js"
import { makeStaticTableEmbedder } from "./embedders/embedded-static.js"
import { makeSentenceReranker } from "./embedders/sentence-reranker.js"
import { makeStaticQueryExpander } from "./embedders/static-query-expansion.js"
import { lexicalQuery } from "./lexical-query.js"
import { makeUseLiteEmbedder } from "./embedders/embedded-use-lite.js"
import { makeOpenAiCompatibleEmbedder } from "./embedders/openai-compatible.js"
import {
  makeVoyageEmbedder,
  makeVoyageReranker,
  VOYAGE_DEFAULT_MODEL,
  VOYAGE_DEFAULT_RERANK_MODEL,
  voyageLength,
} from "./embedders/voyage.js"

/** The embedded embedders, selectable by name. */
export type EmbeddedEmbedderName = "use-static" | "use-lite"

/**
 * An embedded choice: one embedder, or `auto` — USE-lite for an index small enough to embed with
 * it in minutes, the static table beyond (`AUTO_LIMITS`, resolved per index by
 * `embeddingForIndex` / `embeddingForSearch`).
 */
export type EmbeddedChoice = EmbeddedEmbedderName | "auto"

/** The embedded default, chosen on the retrieval eval (see README). */
export const DEFAULT_EMBEDDED_EMBEDDER: EmbeddedChoice = "auto"

/** A resolved embedder choice; build it with {@link embedderFromConfig}. */
export type EmbedderConfig =
  | { readonly _tag: "None" }
  | { readonly _tag: "Embedded"; readonly name: EmbeddedChoice }
  | {
      readonly _tag: "Voyage"
      readonly apiKey: string
      readonly baseUrl?: string | undefined
      readonly model: string
      /** Vector length, sent as `output_dimension` (`BATON_VOYAGE_DIM`); undefined: 1024. */
      readonly dimensions?: number | undefined
      /** Reranker model, or undefined for none. */
      readonly rerankModel?: string | undefined
      readonly tokenBudget: number
      /** Per-request timeout (`BATON_EMBED_TIMEOUT_MS`); undefined: 60 000 ms. */
      readonly timeoutMs?: number | undefined
    }
  | {
      readonly _tag: "OpenAiCompatible"
      readonly baseUrl: string
      readonly model: string
      readonly apiKey?: string | undefined
      readonly dimensions?: number | undefined
      /** The length the index's vectors of this model have (`withIndexedDimensions`); not sent. */
      readonly knownDimensions?: number | undefined
      readonly tokenBudget: number
      /** Per-request timeout (`BATON_EMBED_TIMEOUT_MS`); undefined: 60 000 ms. */
      readonly timeoutMs?: number | undefined
    }

/**
 * How the search should combine its arms (weighted RRF, `fuseRanks`): lexical (bm25 over
 * `expandQuery(query)`), vector (`searchVectors`), and the reranker's order over the top
 * `rerankDepth` of the lexical + vector fusion as a third list. Measured on the retrieval eval
 * for the embedded default (README); for Voyage the reranker is rerank-2.5 (not measured here).
 */
export interface FusionPlan {
  readonly lexical: number
  readonly vector: number
  readonly rerank: number
  readonly rerankDepth: number
  /** RRF constant of the fusion (`fuseRanks` `k`); default 60. */
  readonly rrfK?: number | undefined
  /**
   * Conversation context: each turn's fused score gains this share of the fused score of the
   * turn right before it in its session (the nearest with surface text) and half of it of the
   * turn right after, so an answer that lacks the question's words ("Yes, on Saturday!") rises
   * with the turn that has them; 0 or undefined: off. Applied after the reranker, over the top
   * `CONTEXT_DEPTH` turns and their neighbours.
   */
  readonly context?: number | undefined
}

/** The fusion plan chosen on the retrieval eval for the embedded default. */
export const EMBEDDED_FUSION_PLAN: FusionPlan = {
  lexical: 3,
  vector: 1,
  rerank: 6,
  rerankDepth: 30,
  rrfK: 10,
  context: 0.3,
}

/**
 * The fusion plan chosen on the retrieval eval for `use-lite` (README "Choosing the embedded
 * default"): its vector arm is worth more than the static table's (paraphrases), so it weighs
 * twice the lexical arm, and the static sentence reranker half as much as in
 * {@link EMBEDDED_FUSION_PLAN}.
 */
export const USE_LITE_FUSION_PLAN: FusionPlan = {
  lexical: 1,
  vector: 2,
  rerank: 3,
  rerankDepth: 30,
  rrfK: 10,
  context: 0.3,
}

/**
 * The fusion plan for Voyage (`voyage-4-large` + `rerank-2.5`): equal arms, the reranker's order
 * three times as heavy over the top 50, RRF k 10 and conversation context 0.3. Voyage cannot be
 * measured offline; the context share and k were measured on the retrieval eval with USE-lite and
 * the local reranker standing in (README "Voyage"): on the dialogue corpus R@5 69 → 86, R@10
 * 79 → 92 against the earlier k 60 without context, chat and coding unchanged or better.
 */
export const VOYAGE_FUSION_PLAN: FusionPlan = {
  lexical: 1,
  vector: 1,
  rerank: 3,
  rerankDepth: 50,
  rrfK: 10,
  context: 0.3,
}

/** The embedder, reranker and query handling of a configuration (`embedder` undefined: lexical only). */
export interface ConfiguredEmbedding {
  readonly config: EmbedderConfig
  readonly embedder: Embedder | undefined
  /** Second stage: Voyage rerank-2.5, or the local sentence reranker for embedded embedders. */
  readonly reranker: Reranker | undefined
  /** Rewrites a query for the lexical arm (stopwords out, static-table neighbours in). */
  readonly expandQuery: (query: string) => string
  readonly fusion: FusionPlan
  /**
   * `auto` only: the embedding of one embedded embedder (built on first pick, then reused).
   * Until resolved (`embeddingForIndex`, `embeddingForSearch`) an `auto` embedding is the
   * static table's.
   */
  readonly pick?: ((name: EmbeddedEmbedderName) => ConfiguredEmbedding) | undefined
}

/** Environment variables read here (a subset of `process.env`). */
export type EmbedderEnvironment = Readonly<Record<string, string | undefined>>

const value = (env: EmbedderEnvironment, name: string): string | undefined => {
  const v = env[name]?.trim()
  return v === undefined || v === "" ? undefined : v
}

const positiveInteger = (
  env: EmbedderEnvironment,
  name: string,
): Effect.Effect<number | undefined, EmbedderConfigError> => {
  const raw = value(env, name)
  if (raw === undefined) return Effect.succeed(undefined)
  const n = Number(raw)
  return Number.isInteger(n) && n > 0
    ? Effect.succeed(n)
    : Effect.fail(
        new EmbedderConfigError({
          variable: name,
          message: `${name} must be a positive integer, got "${raw}"`,
        }),
      )
}

const required = (
  env: EmbedderEnvironment,
  name: string,
  why: string,
): Effect.Effect<string, EmbedderConfigError> => {
  const v = value(env, name)
  return v === undefined
    ? Effect.fail(new EmbedderConfigError({ variable: name, message: `${why}: set ${name}` }))
    : Effect.succeed(v)
}

/** The `BATON_EMBEDDER` value that selects `config` (`auto`, `use-static`, `voyage`, …). */
export const embedderChoiceName = (config: EmbedderConfig): string =>
  config._tag === "Embedded"
    ? config.name
    : config._tag === "Voyage"
      ? "voyage"
      : config._tag === "OpenAiCompatible"
        ? "openai"
        : "none"

/** Reads the embedder choice from the environment (no IO, no network). */
export const embedderConfigFromEnvironment = (
  env: EmbedderEnvironment,
): Effect.Effect<EmbedderConfig, EmbedderConfigError> =>
  Effect.gen(function* () {
    const choice = (value(env, "BATON_EMBEDDER") ?? "embedded").toLowerCase()
    const tokenBudget =
      (yield* positiveInteger(env, "BATON_EMBED_MAX_TOKENS")) ?? DEFAULT_TOKEN_BUDGET
    const timeoutMs = yield* positiveInteger(env, "BATON_EMBED_TIMEOUT_MS")
    switch (choice) {
      case "none":
      case "off":
        return { _tag: "None" } as const
      case "embedded":
      case "default":
        return { _tag: "Embedded", name: DEFAULT_EMBEDDED_EMBEDDER } as const
      case "auto":
      case "use-static":
      case "use-lite":
        return { _tag: "Embedded", name: choice } as const
      case "voyage": {
        const apiKey = yield* required(
          env,
          "VOYAGE_API_KEY",
          "BATON_EMBEDDER=voyage needs a Voyage API key",
        )
        const rerank = (
          value(env, "BATON_VOYAGE_RERANK") ?? VOYAGE_DEFAULT_RERANK_MODEL
        ).toLowerCase()
        const voyageBase = value(env, "BATON_VOYAGE_BASE_URL")
        if (voyageBase !== undefined) yield* httpUrl("BATON_VOYAGE_BASE_URL", voyageBase)
        const model = value(env, "BATON_VOYAGE_MODEL") ?? VOYAGE_DEFAULT_MODEL
        const dimensions = yield* positiveInteger(env, "BATON_VOYAGE_DIM")
        const length = voyageLength(model, dimensions)
        if (length._tag === "Refused") {
          return yield* Effect.fail(
            new EmbedderConfigError({ variable: length.variable, message: length.message }),
          )
        }
        return {
          _tag: "Voyage",
          apiKey,
          baseUrl: voyageBase,
          model,
          dimensions,
          rerankModel: ["off", "none", "0", "false"].includes(rerank) ? undefined : rerank,
          tokenBudget,
          timeoutMs,
        } as const
      }
      case "openai":
      case "openai-compatible": {
        const baseUrl = yield* required(
          env,
          "BATON_EMBEDDINGS_URL",
          "BATON_EMBEDDER=openai needs the endpoint's base URL (the part before /embeddings)",
        )
        const model = yield* required(
          env,
          "BATON_EMBEDDINGS_MODEL",
          "BATON_EMBEDDER=openai needs a model name",
        )
        yield* httpUrl("BATON_EMBEDDINGS_URL", baseUrl)
        return {
          _tag: "OpenAiCompatible",
          // The base URL is the part before /embeddings; given whole, it is cut back to it.
          baseUrl: baseUrl.replace(/\/+$/, "").replace(/\/embeddings$/, ""),
          model,
          apiKey: value(env, "BATON_EMBEDDINGS_KEY"),
          dimensions: yield* positiveInteger(env, "BATON_EMBEDDINGS_DIM"),
          tokenBudget,
          timeoutMs,
        } as const
      }
      default:
        return yield* Effect.fail(
          new EmbedderConfigError({
            variable: "BATON_EMBEDDER",
            message: `unknown BATON_EMBEDDER "${choice}": use auto, use-static, use-lite, voyage, openai or none`,
          }),
        )
    }
  })

/** Refuses a value of `variable` that is not an http(s) URL (as `baton doctor` does). */
const httpUrl = (variable: string, raw: string): Effect.Effect<void, EmbedderConfigError> => {
  let protocol: string | undefined
  try {
    protocol = new URL(raw).protocol
  } catch {
    protocol = undefined
  }
  return protocol === "http:" || protocol === "https:"
    ? Effect.void
    : Effect.fail(
        new EmbedderConfigError({
          variable,
          message: `${variable} is not an http(s) URL: "${raw.slice(0, 200)}"`,
        }),
      )
}

/** Builds the embedder, reranker and query handling of a configuration. */
export const embedderFromConfig = (
  config: EmbedderConfig,
): Effect.Effect<ConfiguredEmbedding, EmbedderError> =>
  Effect.gen(function* () {
    // Local query expansion helps every configuration's lexical arm; without the table, plain.
    const expandQuery = yield* makeStaticQueryExpander().pipe(
      Effect.orElseSucceed(() => lexicalQuery),
    )
    const plain = { config, expandQuery, fusion: EMBEDDED_FUSION_PLAN }
    switch (config._tag) {
      case "None":
        return { ...plain, embedder: undefined, reranker: undefined }
      case "Embedded": {
        // The sentence reranker always uses the static table: USE-lite is too slow per query.
        const table = yield* makeStaticTableEmbedder()
        const reranker = makeSentenceReranker(table)
        const staticTable: ConfiguredEmbedding = { ...plain, embedder: table, reranker }
        let useLite: ConfiguredEmbedding | undefined
        // USE-lite's workers start on its first embedding, so picking it costs nothing yet.
        const pickUseLite = (): ConfiguredEmbedding =>
          (useLite ??= {
            ...plain,
            embedder: makeUseLiteEmbedder(),
            reranker,
            fusion: USE_LITE_FUSION_PLAN,
          })
        if (config.name === "use-static") return staticTable
        if (config.name === "use-lite") return pickUseLite()
        return {
          ...staticTable,
          pick: (name: EmbeddedEmbedderName) => (name === "use-lite" ? pickUseLite() : staticTable),
        }
      }
      case "Voyage": {
        // Embedding and reranking share one budget per run.
        const costGuard = makeCostGuard("voyage", config.tokenBudget)
        const base = {
          apiKey: config.apiKey,
          baseUrl: config.baseUrl,
          costGuard,
          ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
        }
        return {
          ...plain,
          fusion: VOYAGE_FUSION_PLAN,
          embedder: makeVoyageEmbedder({
            ...base,
            model: config.model,
            ...(config.dimensions === undefined ? {} : { dimensions: config.dimensions }),
          }),
          reranker:
            config.rerankModel === undefined
              ? undefined
              : makeVoyageReranker({ ...base, model: config.rerankModel }),
        }
      }
      case "OpenAiCompatible":
        return {
          ...plain,
          embedder: yield* makeOpenAiCompatibleEmbedder({
            baseUrl: config.baseUrl,
            model: config.model,
            apiKey: config.apiKey,
            dimensions: config.dimensions,
            knownDimensions: config.knownDimensions,
            tokenBudget: config.tokenBudget,
            ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
          }),
          reranker: undefined,
        }
    }
  })

/**
 * `config` with the vector length an index already holds for its OpenAI-compatible model, read
 * from the index's active fingerprint (`openai-compatible/<model>/<dim>`): a search then embeds
 * its query with one call instead of a probe call and the query call. Any other configuration,
 * or a fingerprint of another model, is returned as it is.
 */
export const withIndexedDimensions = (
  config: EmbedderConfig,
  fingerprint: string | undefined,
): EmbedderConfig => {
  if (config._tag !== "OpenAiCompatible" || config.dimensions !== undefined) return config
  const prefix = "openai-compatible/"
  if (fingerprint?.startsWith(prefix) !== true) return config
  const cut = fingerprint.lastIndexOf("/")
  const model = fingerprint.slice(prefix.length, cut)
  const dim = Number(fingerprint.slice(cut + 1))
  return model === config.model && Number.isInteger(dim) && dim > 0
    ? { ...config, knownDimensions: dim }
    : config
}

/** The embedder the environment asks for: default embedded, remote only when named. */
export const embedderFromEnvironment = (
  env: EmbedderEnvironment,
): Effect.Effect<ConfiguredEmbedding, EmbedderConfigError | EmbedderError> =>
  embedderConfigFromEnvironment(env).pipe(Effect.flatMap(embedderFromConfig))

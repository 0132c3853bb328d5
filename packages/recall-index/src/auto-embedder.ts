/**
 * The `auto` embedded default: USE-lite while the index is small enough for USE-lite to embed in
 * minutes on one core, the static word table beyond (README "Choosing the embedded default").
 * USE-lite finds far more on conversations (the retrieval eval) but embeds ~1,500 words/s; the
 * static table embeds a million chunks in minutes.
 * Guarantees: the index run decides from the index's size after its lexical pass (stateless:
 * the same index always gets the same answer, so a killed run resumes in the same space); a
 * search follows the space the index was last embedded in (`meta.embedder_fingerprint`), so
 * queries and stored vectors never come from different models. Only `embedForIndex` embeds
 * (through `embedBacklog`); the rest reads.
 */
import * as Effect from "effect/Effect"
import type { EmbedderError } from "./embedder.js"
import { embedderChoiceName, embedderConfigFromEnvironment } from "./embedder-config.js"
import type {
  ConfiguredEmbedding,
  EmbeddedEmbedderName,
  EmbedderEnvironment,
} from "./embedder-config.js"
import { USE_LITE_FINGERPRINT_PREFIX } from "./embedders/embedded-use-lite.js"
import { embedBacklog } from "./embedding-backlog.js"
import type { EmbedBacklogOptions, EmbedBacklogReport } from "./embedding-backlog.js"
import type { IndexBusyError, RecallStorageError } from "./errors.js"
import type { IndexerProcess } from "./index-lock.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"

/** Where `auto` stops choosing USE-lite. */
export interface AutoLimits {
  /** Most chunks (a bound on the scan; more chunks always means the static table). */
  readonly maxChunks: number
  /** Most characters of chunk text: about 5 minutes of USE-lite on one core. */
  readonly maxChars: number
}

/** The limits of `auto` (README "Choosing the embedded default"). */
export const AUTO_LIMITS: AutoLimits = { maxChunks: 30_000, maxChars: 3_000_000 }

/** What `auto` chose for an index run, and why. */
export interface AutoChoice {
  readonly name: EmbeddedEmbedderName
  /** Chunks counted (at most `maxChunks + 1`). */
  readonly chunks: number
  /** Characters of the chunks counted. */
  readonly chars: number
}

/** The embedded embedder `auto` uses to embed this index (after its lexical pass). */
export const autoChoiceForIndex = (
  limits: AutoLimits = AUTO_LIMITS,
): Effect.Effect<AutoChoice, RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const size = yield* Effect.try({
      try: () =>
        db.sqlite
          .prepare(
            `select count(*) as chunks, coalesce(sum(n), 0) as chars
             from (select char_end - char_start as n from chunks limit ?)`,
          )
          .get(limits.maxChunks + 1) as { chunks: number; chars: number },
      catch: storageFailure("read", db.path),
    })
    const fits = size.chunks <= limits.maxChunks && size.chars <= limits.maxChars
    return { name: fits ? "use-lite" : "use-static", chunks: size.chunks, chars: size.chars }
  })

/** Which embedder the environment selects, and for `auto` what it picks at the index's size. */
export interface EmbedderSelection {
  /** `auto`, `use-static`, `use-lite`, `voyage`, `openai` or `none`; null: misconfigured. */
  readonly configured: string | null
  /** For `auto` read against an index: its pick there now. */
  readonly auto: AutoChoice | null
  /** The limits `auto` was measured against (with `auto`). */
  readonly limits: AutoLimits | null
  /** Why the configuration cannot be used (search then uses words only). */
  readonly problem: string | null
}

/** The selection `env` makes, without reading an index (`auto` and `limits` are null). */
export const configuredEmbedderSelection = (env: EmbedderEnvironment): EmbedderSelection => {
  const config = Effect.runSync(Effect.result(embedderConfigFromEnvironment(env)))
  return config._tag === "Failure"
    ? {
        configured: null,
        auto: null,
        limits: null,
        problem: config.failure.message ?? config.failure._tag,
      }
    : { configured: embedderChoiceName(config.success), auto: null, limits: null, problem: null }
}

/** The selection `env` makes over this index: for `auto`, what the next index run embeds with. */
export const embedderSelection = (
  env: EmbedderEnvironment,
  limits: AutoLimits = AUTO_LIMITS,
): Effect.Effect<EmbedderSelection, RecallStorageError, RecallDatabase> => {
  const selection = configuredEmbedderSelection(env)
  return selection.configured !== "auto"
    ? Effect.succeed(selection)
    : autoChoiceForIndex(limits).pipe(Effect.map((auto) => ({ ...selection, auto, limits })))
}

/**
 * The embedded embedder whose space the index was last embedded in (`use-static` if none). When
 * the last embedding run used another provider (Voyage, an endpoint) and the configuration is back
 * to `auto`, the embedded space that holds vectors — the newest — is the one to search.
 */
export const autoChoiceForSearch: Effect.Effect<
  EmbeddedEmbedderName,
  RecallStorageError,
  RecallDatabase
> = Effect.gen(function* () {
  const db = yield* RecallDatabase
  const active = yield* Effect.try({
    try: () => {
      const last = db.sqlite
        .prepare("select value from meta where key = 'embedder_fingerprint'")
        .pluck()
        .get() as string | undefined
      if (last === undefined || last.startsWith("embedded/")) return last
      // The embedded space last filled; an index from before that was recorded: the newest.
      return (db.sqlite
        .prepare("select value from meta where key = 'embedded_fingerprint'")
        .pluck()
        .get() ??
        db.sqlite
          .prepare(
            `select fingerprint from embedders where fingerprint like 'embedded/%'
             and vector_count > 0 order by created_at desc, rowid desc limit 1`,
          )
          .pluck()
          .get()) as string | undefined
    },
    catch: storageFailure("read", db.path),
  })
  return active?.startsWith(USE_LITE_FINGERPRINT_PREFIX) === true ? "use-lite" : "use-static"
})

/** The embedding an index run uses: `configured` itself unless it is `auto`. */
export const embeddingForIndex = (
  configured: ConfiguredEmbedding,
  limits: AutoLimits = AUTO_LIMITS,
): Effect.Effect<ConfiguredEmbedding, RecallStorageError, RecallDatabase> => {
  const pick = configured.pick
  return pick === undefined
    ? Effect.succeed(configured)
    : autoChoiceForIndex(limits).pipe(Effect.map((choice) => pick(choice.name)))
}

/** The embedding a search uses: `configured` itself unless it is `auto`. */
export const embeddingForSearch = (
  configured: ConfiguredEmbedding,
): Effect.Effect<ConfiguredEmbedding, RecallStorageError, RecallDatabase> => {
  const pick = configured.pick
  return pick === undefined
    ? Effect.succeed(configured)
    : autoChoiceForSearch.pipe(Effect.map(pick))
}

/** What {@link embedForIndex} did. */
export interface IndexEmbedding {
  readonly report: EmbedBacklogReport
  /** Why `auto` fell back to the static table in this run; null when it did not. */
  readonly fallback: string | null
}

/**
 * Embeds the backlog as an index run should, with `configured` resolved by
 * {@link embeddingForIndex}; undefined when it has no embedder. When `auto` picked USE-lite and
 * USE-lite cannot run (an `EmbedderError`: the model does not load, its worker dies), the static
 * table embeds instead and `fallback` says why; the next run tries USE-lite again, whose vectors
 * so far stay stored. Every other failure (storage, the indexer lock), and any failure of a named
 * embedder, is the caller's.
 */
export const embedForIndex = (
  configured: ConfiguredEmbedding,
  options: EmbedBacklogOptions = {},
  limits: AutoLimits = AUTO_LIMITS,
): Effect.Effect<
  IndexEmbedding | undefined,
  EmbedderError | RecallStorageError | IndexBusyError,
  RecallDatabase | IndexerProcess
> =>
  Effect.gen(function* () {
    const chosen = yield* embeddingForIndex(configured, limits)
    const embedder = chosen.embedder
    if (embedder === undefined) return undefined
    const first = yield* Effect.result(embedBacklog(embedder, options))
    if (first._tag === "Success") return { report: first.success, fallback: null }
    const failure = first.failure
    const instead = configured.pick?.("use-static")
    if (
      failure._tag !== "EmbedderError" ||
      instead === undefined ||
      instead === chosen ||
      instead.embedder === undefined
    ) {
      return yield* Effect.fail(failure)
    }
    const report = yield* embedBacklog(instead.embedder, options)
    return {
      report,
      fallback: `${embedder.info.model} could not run (${failure.reason}); embedded with ${instead.embedder.info.model} instead`,
    }
  })

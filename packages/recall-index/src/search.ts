/**
 * Hybrid recall search: the lexical arm (FTS5 bm25 through `rankChunks`, over the provider's
 * query expansion) and the vector arm (KNN through `searchVectors`, when an embedder is given and
 * its vectors exist) are fused by weighted reciprocal rank (`fuseRanks`); a reranker's order over
 * the fused head joins as a third weighted list (the plan measured on the retrieval eval, see
 * `FusionPlan`); with `FusionPlan.context`, the turns next to strong hits in their session gain
 * a share of their scores (an answer rises with its question); then hits are cut to one per turn
 * (its best chunk) and one per text, capped per session and cut to k.
 * Guarantees: every filter (source, repository scope, session, calendar
 * days in an IANA zone, headless / subagent) runs inside each arm's query, so a small scope is
 * never starved by a large one; each arm can run alone (`arms`) and each hit reports its rank
 * and raw score in every arm, so the arms are measurable separately; a failing embedder or
 * reranker degrades the search (reported in `degraded`), never fails it; a query mostly in
 * Chinese, Japanese or Korean skips a vector arm and reranker that cannot read those scripts
 * (`readsCjk: false`, the embedded models) and ranks by its words; results are bounded
 * (`textChars`, `snippetChars`) and every hit is addressable by (session id, turn id) for
 * `expandAround` / `step`. Reads only; no IO besides the database and the given providers.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { wholeNumber } from "./input-numbers.js"
import { maskTranscriptText } from "./secret-masking.js"
import * as Schema from "effect/Schema"
import type { Embedder, Reranker } from "./embedder.js"
import { embedderChoiceName } from "./embedder-config.js"
import type { ConfiguredEmbedding, FusionPlan } from "./embedder-config.js"
import { autoChoiceForIndex } from "./auto-embedder.js"
import { VOYAGE_DEFAULT_MODEL } from "./embedders/voyage.js"
import { IndexerProcess } from "./index-lock.js"
import { RecallQueryError } from "./errors.js"
import type { RecallStorageError } from "./errors.js"
import { cjkShare } from "./cjk-text.js"
import { forkParents } from "./fork-lineage.js"
import { ftsMatchExpression, rankChunks } from "./fts-query.js"
import { lexicalQuery, speakerWords } from "./lexical-query.js"
import { hasLexicalBacklog } from "./lexical-backlog.js"
import { hasLookupIndex } from "./lookup-indexes.js"
import { DEFAULT_RRF_K, fuseRanks } from "./rank-fusion.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import type { RecallDatabaseShape } from "./recall-database.js"
import { compileFilters } from "./recall-filters.js"
import type { RecallFilters } from "./recall-filters.js"
import { capText, holdsQueryWord, queryTerms, shownChunkText, snippetFor } from "./snippet.js"
import { decodeRows } from "./stored-rows.js"
import { whenHuman } from "./time-format.js"
import type { TranscriptSource } from "./transcript-model.js"
import { codesUsableFor, MAX_KNN_K, searchVectors } from "./vector-search.js"
import type { VectorHit, VectorSearchOptions } from "./vector-search.js"
import type { VectorSearchWorker } from "./vector-search-worker.js"

/** A search arm. */
export type SearchArm = "lexical" | "vector"

/** What to search for, how many hits, and how to rank. */
export interface RecallSearchInput extends RecallFilters {
  readonly query: string
  /** Hits to return; default 10, at most 100. */
  readonly k?: number | undefined
  /** At most this many hits per session (marathon sessions must not crowd the list); default 3. */
  readonly perSession?: number | undefined
  /** Candidates taken from each arm before fusion; default 100, and at least 4 × `k`. */
  readonly candidates?: number | undefined
  /** Which arms run; default both (the vector arm only with an embedder). */
  readonly arms?: ReadonlyArray<SearchArm> | undefined
  /** Override the provider's fusion weights (lexical, vector, rerank) and rerank depth. */
  readonly weights?: Partial<FusionPlan> | undefined
  /**
   * How the vector arm applies filters; default `auto` (see {@link PREFILTER_MAX_CHUNKS} and
   * {@link PREFILTER_BUDGET}).
   */
  readonly vectorFilter?: "auto" | "pre" | "post" | undefined
  /** Longest chunk text returned per hit; default 1 000 characters. */
  readonly textChars?: number | undefined
  /** Longest snippet; default 240 characters. */
  readonly snippetChars?: number | undefined
  /**
   * How long a service's query embedding, and then its rerank, may each take before the search
   * goes on without it (reported in `degraded`); default {@link SEARCH_PROVIDER_TIMEOUT_MS}. A
   * provider that is down or hung would otherwise hold a search through its retries. Models in
   * this process (the embedded default) are not timed.
   */
  readonly providerTimeoutMs?: number | undefined
}

/** Default of {@link RecallSearchInput.providerTimeoutMs}. */
export const SEARCH_PROVIDER_TIMEOUT_MS = 6000

/**
 * `effect`, failing with `reason` when it has not finished within `ms` (it is interrupted). A
 * model in this process (`inProcess`) is not timed: its first call loads the model, which on a
 * busy machine can take longer than a service's answer should.
 */
const within = <A, E>(
  inProcess: boolean | undefined,
  effect: Effect.Effect<A, E>,
  ms: number,
  reason: string,
): Effect.Effect<A, E | { readonly reason: string }> =>
  inProcess === true
    ? effect
    : Effect.timeoutOrElse(effect, {
        duration: ms,
        orElse: () => Effect.fail({ reason }),
      })

/**
 * How the vector arm applies filters: `prefilter` restricts the KNN to the filtered chunks
 * (`searchVectors` `withinChunkIds`); `postfilter` takes the nearest `MAX_KNN_K` overall and keeps
 * the filtered ones; `unfiltered` when there is no filter.
 */
export type VectorFilterMode = "prefilter" | "postfilter" | "unfiltered"

/**
 * Without usable search codes, pre-filtering costs about (filtered chunks × stored vectors)
 * index probes in sqlite-vec; above this product the vector arm post-filters an over-fetch
 * instead (measured: 300 × 12 000 took ~1 s, the post-filter path ~60 ms).
 */
export const PREFILTER_BUDGET = 2_000_000

/**
 * With usable search codes, pre-filtering costs one key lookup per filtered chunk (≈ 3–5 µs)
 * and no more scanning than an unfiltered search, so the vector arm pre-filters up to this many
 * chunks (measured at 24 000 chunks, a 1 200-chunk scope: 49 ms pre-filtered against 122 ms
 * post-filtered; mapping 10 000 chunks to keys ≈ 56 ms at 100 000).
 */
export const PREFILTER_MAX_CHUNKS = 10_000

/** Providers the search may use; all optional (lexical-only without an embedder). */
export interface RecallSearchProviders {
  readonly embedder?: Embedder | undefined
  readonly reranker?: Reranker | undefined
  /** Rewrites the query for the lexical arm (`embedderFromEnvironment` gives one); default as is. */
  readonly expandQuery?: ((query: string) => string) | undefined
  /** How to weigh the arms; default {@link DEFAULT_FUSION_PLAN}. */
  readonly fusion?: FusionPlan | undefined
  /**
   * Runs the vector arm in a worker thread, overlapping the lexical arm (for long-lived hosts;
   * see `makeVectorSearchWorker`); default in this thread, after the lexical arm.
   */
  readonly vectorWorker?: VectorSearchWorker | undefined
  /**
   * The embedding configured in this environment, before `embeddingForSearch` resolved it: when
   * the index's vectors are another embedder's, the note names what `baton recall index` would
   * embed with here (for `auto`, its pick at the index's size). Read only then; default the
   * search's embedder.
   */
  readonly configured?: ConfiguredEmbedding | undefined
}

/** Turns (best first after fusion and reranking) whose neighbours gain from them (`FusionPlan.context`). */
export const CONTEXT_DEPTH = 50

/**
 * How many turns away a neighbour may be (turns without surface text, e.g. tool calls, are
 * skipped over): bounds the lookup however sparse a session's text is.
 */
export const CONTEXT_REACH = 16

/**
 * A turn whose text opens with a window found in at least this many chunks ("Noted.", "OK,
 * done.") is boilerplate: it gains nothing from context, so an acknowledgement never takes a
 * hit's place; the answer to a short question is the next turn past it (a conversation whose
 * every line was a user prompt, acknowledged the same way). Skipping boilerplate for the other
 * shares too cost the dialogue and chat evals 2–3 points of R@1; this changed no figure.
 */
export const BOILERPLATE_COPIES = 3

/**
 * With `FusionPlan.context`, the turn after a short question (ending in a question mark, at most
 * {@link QUESTION_WORDS} words) gains this many times the share: it is most likely the answer.
 * Measured on the retrieval eval's dialogue corpus (README).
 */
export const QUESTION_GAIN = 3

// Turn `n`'s first window is found in fewer than BOILERPLATE_COPIES chunks (the count stops
// there, so a reply repeated a million times costs no more than one repeated three times).
const NOT_BOILERPLATE = `not exists (
  select 1 from chunks f where f.turn_row = n.id and f.surface_index = 0 and f.chunk_index = 0
    and (select count(*) from (select 1 from chunks d where d.content_hash = f.content_hash limit ${BOILERPLATE_COPIES})) >= ${BOILERPLATE_COPIES})`

/**
 * A short question passes {@link QUESTION_GAIN} to its answer only when it is a hit itself: it
 * holds a word of the query, or its similarity to the query is at least this share of the
 * nearest chunk's. On a small history every turn is a vector candidate, and an unrelated
 * question ranked second by meaning lifted its answer over the one turn holding the query's
 * words ("Moss and Clay"). Measured on the re-enacted dialogue and chat evals (README).
 */
export const QUESTION_HIT_SIMILARITY = 0.6

/** Longest question, in words, whose next turn gains {@link QUESTION_GAIN}. */
export const QUESTION_WORDS = 15

/**
 * Share of a query's letters in CJK scripts from which a vector arm or reranker that cannot read
 * them (`readsCjk: false`) is skipped: a mixed query ("upload 重试") keeps them for its other
 * words.
 */
export const CJK_QUERY_SHARE = 0.5

/** A short question: "Did you ever adopt that beagle?", not a long request ending in one. */
export const isShortQuestion = (text: string): boolean => {
  const trimmed = text.trim()
  return /[?？]$/u.test(trimmed) && trimmed.split(/\s+/u).length <= QUESTION_WORDS
}

/** Fusion without a measured plan: equal arms, the reranker's order weighted 3 over the top 30. */
export const DEFAULT_FUSION_PLAN: FusionPlan = { lexical: 1, vector: 1, rerank: 3, rerankDepth: 30 }

/** Per-arm evidence for one hit. */
export interface HitScores {
  /** The fused (weighted RRF) score, plus what the turn gained from its neighbours (`FusionPlan.context`). */
  readonly fused: number
  /** 1-based rank in the lexical arm, null when it did not match. */
  readonly lexicalRank: number | null
  /** FTS5 bm25 rank (lower is better), null when it did not match. */
  readonly bm25: number | null
  /** 1-based rank in the vector arm, null when not among its candidates. */
  readonly vectorRank: number | null
  /** Cosine similarity to the query, null when not among the vector candidates. */
  readonly similarity: number | null
  /** Reranker relevance, null when the hit was not reranked. */
  readonly rerank: number | null
  /** 1-based rank in the reranker's order, null when not reranked. */
  readonly rerankRank: number | null
}

/** One search hit: a chunk of a turn, addressable by (sessionId, turnId). */
export interface RecallHit {
  readonly rank: number
  readonly source: TranscriptSource
  readonly sessionId: string
  readonly turnId: string
  readonly chunkId: number
  readonly role: string
  readonly cwd: string | null
  /** Last path segment of the session's repository root. */
  readonly project: string | null
  /** ISO-8601 time of the turn, null when unknown. */
  readonly timestamp: string | null
  /** The time for people, in the query's time zone: `2026-07-14 09:30 Europe/Berlin (3 days ago)`. */
  readonly whenHuman: string
  readonly headless: boolean
  readonly subagent: boolean
  /**
   * The session the hit's session was forked from (as `RecentSession.forkedFrom`): a hit in a fork
   * says where its history came from. Null for a session that starts with its own turn.
   */
  readonly forkedFrom: string | null
  /**
   * How many other sessions among the search's candidates hold this hit's exact text (a fork's
   * copy, a resumed session, the same prompt typed again): shown once, here, and counted instead
   * of listed. `grep` lists every one.
   */
  readonly sameTextSessions: number
  /** The chunk text, at most `textChars`. */
  readonly text: string
  readonly textTruncated: boolean
  /** A short excerpt around the first query term. */
  readonly snippet: string
  readonly scores: HitScores
}

/** How each arm ran. */
export interface SearchArmsReport {
  readonly lexical: { readonly ran: boolean; readonly candidates: number }
  readonly vector: {
    readonly ran: boolean
    readonly candidates: number
    readonly fingerprint: string | null
    /** How filters were applied, when it ran. */
    readonly filterMode: VectorFilterMode | null
    /** Why it did not run, when it did not. */
    readonly skipped: string | null
  }
  readonly rerank: { readonly ran: boolean; readonly model: string | null }
}

/** The answer of {@link searchRecall}. */
export interface RecallSearchResult {
  readonly query: string
  readonly hits: ReadonlyArray<RecallHit>
  readonly arms: SearchArmsReport
  /**
   * Set when the results come from part of the pipeline or part of the index: an arm or the
   * reranker failed, or a bulk indexing run has not yet added its newest chunks to the full-text
   * index.
   */
  readonly degraded: string | null
  /** True when the index holds no chunks at all ("nothing indexed yet"). */
  readonly indexEmpty: boolean
  /**
   * A caution for hits found by meaning alone: the words arm ran and none of the hits holds a
   * word of the query (`holdsQueryWord`: the query's own words, not the expander's), yet there
   * are hits (the vector arm always finds its nearest). They may be a paraphrase — what the
   * vector arm is for — or unrelated. Null otherwise.
   */
  readonly meaningOnly: string | null
  /** The filters as applied. */
  readonly applied: {
    readonly source: TranscriptSource | null
    readonly scopeRoot: string | null
    readonly startDate: string | null
    readonly endDate: string | null
    readonly timezone: string
  }
}

// Session and turn of each fused candidate; text is loaded only for the reranked head and the
// hits (`loadTexts`).
const ChunkRows = Schema.Array(
  Schema.Struct({
    chunk_id: Schema.Number,
    role: Schema.String,
    content_hash: Schema.String,
    turn_row: Schema.Number,
    turn_id: Schema.String,
    timestamp: Schema.NullOr(Schema.String),
    source: Schema.Literals(["claude", "codex"]),
    session_id: Schema.String,
    cwd: Schema.NullOr(Schema.String),
    repo_root: Schema.NullOr(Schema.String),
    headless: Schema.Number,
    subagent: Schema.Number,
    session_row: Schema.Number,
    forked_from: Schema.NullOr(Schema.String),
  }),
)

type ChunkRow = (typeof ChunkRows.Type)[number]

const ChunkTexts = Schema.Array(Schema.Tuple([Schema.Number, Schema.String, Schema.Number]))

/** A count for people: `12,345`. */
const count = (n: number): string => n.toLocaleString("en-US")

/**
 * The embedder that made a vector space, as a user names it (`use-lite`, `voyage/voyage-4-large`,
 * `openai-compatible/m1`), and the settings that search it, when its fingerprint says.
 */
const spaceOrigin = (
  fingerprint: string,
): { readonly name: string; readonly settings: string | null } => {
  const [provider, ...rest] = fingerprint.split("/")
  const model = rest.slice(0, -1).join("/")
  if (provider === "voyage" && model !== "") {
    const named = model === VOYAGE_DEFAULT_MODEL ? "" : `, BATON_VOYAGE_MODEL=${model}`
    return {
      name: `voyage/${model}`,
      settings: `BATON_EMBEDDER=voyage (and VOYAGE_API_KEY${named})`,
    }
  }
  if (provider === "openai-compatible" && model !== "") {
    return {
      name: `openai-compatible/${model}`,
      settings: `BATON_EMBEDDER=openai (with BATON_EMBEDDINGS_URL of its endpoint and BATON_EMBEDDINGS_MODEL=${model})`,
    }
  }
  if (provider === "embedded") {
    const name = rest[0] === "use-lite" ? "use-lite" : "use-static"
    return {
      name,
      settings: `BATON_EMBEDDER=${name} (or leave it unset: the default follows the index)`,
    }
  }
  return { name: fingerprint, settings: null }
}

/**
 * Whether an index run holds the indexer lock now: its lease has not run out and, with the
 * {@link IndexerProcess} service, its process is alive (as `recallStatus`'s `indexing`).
 */
const indexRunInProgress = (db: RecallDatabaseShape, now: number) =>
  Effect.gen(function* () {
    const host = yield* Effect.serviceOption(IndexerProcess)
    const lock = yield* Effect.try({
      try: () =>
        db.sqlite.prepare("select pid, lease_until from index_lock where id = 1").get() as
          { pid: number; lease_until: number } | undefined,
      catch: storageFailure("read", db.path),
    })
    return (
      lock !== undefined &&
      lock.lease_until > now &&
      (host._tag === "None" || host.value.isAlive(lock.pid))
    )
  })

/** Last segment of a path, or null. */
export const projectOf = (root: string | null): string | null => {
  if (root === null) return null
  const parts = root.split(/[\\/]/).filter((p) => p !== "")
  return parts.at(-1) ?? root
}

/**
 * The checks `searchRecall` makes before it reads anything — the query, the numbers, the weights,
 * the filters — with their values; fails as `searchRecall` would (a caller with no index yet uses
 * it to refuse bad input as a search would).
 */
export const checkSearchInput = (input: RecallSearchInput, now: number) =>
  Effect.gen(function* () {
    const query = input.query.trim()
    if (query === "") {
      return yield* new RecallQueryError({ field: "query", message: "the query is empty" })
    }
    if (query.length > 2000) {
      return yield* new RecallQueryError({
        field: "query",
        message: `the query is ${query.length} characters; it may be at most 2,000`,
      })
    }
    const k = yield* wholeNumber("k", input.k, { fallback: 10, least: 1, most: 100 })
    const providerTimeoutMs = yield* wholeNumber("providerTimeoutMs", input.providerTimeoutMs, {
      fallback: SEARCH_PROVIDER_TIMEOUT_MS,
      least: 1,
      most: 600_000,
    })
    // What the embedder and reranker see (a remote one leaves the machine): the query with its
    // secrets masked, as every indexed text is.
    const maskedQuery = maskTranscriptText(query).text
    const perSession = yield* wholeNumber("perSession", input.perSession, {
      fallback: 3,
      least: 1,
      most: 100,
    })
    // Four per hit asked for at least, so the per-session cap has other sessions to choose from.
    const candidates = Math.max(
      k * 4,
      yield* wholeNumber("candidates", input.candidates, { fallback: 100, least: 1, most: 1000 }),
    )
    const textChars = yield* wholeNumber("textChars", input.textChars, {
      fallback: 1000,
      least: 1,
      floor: 40,
      most: 20_000,
    })
    const snippetChars = yield* wholeNumber("snippetChars", input.snippetChars, {
      fallback: 240,
      least: 1,
      floor: 40,
      most: 2000,
    })
    for (const [name, weight] of Object.entries(input.weights ?? {})) {
      if (
        weight !== undefined &&
        !(typeof weight === "number" && weight >= 0 && isFinite(weight))
      ) {
        return yield* new RecallQueryError({
          field: "limit",
          message: `weights.${name} must be a number of at least 0; got ${String(weight)}`,
        })
      }
    }
    const arms = new Set<SearchArm>(input.arms ?? ["lexical", "vector"])
    const filters = yield* compileFilters(input, now)
    return {
      query,
      k,
      providerTimeoutMs,
      maskedQuery,
      perSession,
      candidates,
      textChars,
      snippetChars,
      arms,
      filters,
    }
  })

/**
 * Searches the index by words (FTS5 bm25) and by meaning (KNN in `providers.embedder`'s space,
 * when its vectors exist), fuses the arms by weighted reciprocal rank, lets the reranker reorder
 * the head, and returns at most `k` hits (default 10; at most `perSession` per session, one per
 * turn). Every filter (source, `scopeCwd`, calendar days in `timezone`, headless / subagent) runs
 * inside each arm. A failing or missing embedder or reranker degrades the search to what still
 * runs (`degraded` says why), never fails it. Each hit carries its address (`sessionId`,
 * `turnId`) for {@link expandAround} / {@link step}, and its rank and score in every arm.
 *
 * Pass the embedder the index was embedded with: for the default (`auto`), resolve
 * `embedderFromEnvironment(env)` with `embeddingForSearch` first, and pass the unresolved one as
 * `configured` (the notes then name what an index run here would embed with). `degraded` also
 * says when the vectors are another embedder's (naming the settings that search them), when an
 * index run is in progress, and how much of the active space is embedded while it has a
 * backlog. Bad input (dates, zone, query, numbers) is a `RecallQueryError` naming the field.
 */
export const searchRecall = (
  input: RecallSearchInput,
  providers: RecallSearchProviders = {},
): Effect.Effect<RecallSearchResult, RecallQueryError | RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const now = yield* Clock.currentTimeMillis
    const {
      query,
      k,
      providerTimeoutMs,
      maskedQuery,
      perSession,
      candidates,
      textChars,
      snippetChars,
      arms,
      filters,
    } = yield* checkSearchInput(input, now)
    const read = <A>(f: () => A) => Effect.try({ try: f, catch: storageFailure("read", db.path) })

    const applied = {
      source: input.source ?? null,
      scopeRoot: filters.scopeRoot ?? null,
      startDate: filters.range?.startDate ?? null,
      endDate: filters.range?.endDate ?? null,
      timezone: filters.timezone,
    }
    const anyChunk = yield* read(() => db.sqlite.prepare("select 1 from chunks limit 1").get())
    const degradedBy: Array<string> = []

    const plan: FusionPlan = { ...(providers.fusion ?? DEFAULT_FUSION_PLAN), ...input.weights }

    // Vector arm (started first): the query embedded with the given embedder, KNN in that
    // embedder's space only.
    let vectorSkipped: string | null = null
    let vectorMode: VectorFilterMode | null = null
    let awaitVector: Effect.Effect<
      ReadonlyArray<VectorHit>,
      RecallQueryError | RecallStorageError
    > = Effect.succeed([])
    const embedder = providers.embedder
    // Sends the search to the worker at once when there is one (it runs while the lexical arm
    // does; any failure of the worker's, e.g. it cannot start, falls back to this thread, which
    // reports the error if the database itself is at fault); otherwise runs it later.
    const worker = providers.vectorWorker
    // The fallback keeps the codes as the worker would have (a one-shot CLI call keeps none).
    const inProcess = (options: VectorSearchOptions) =>
      searchVectors(options, worker?.holding).pipe(Effect.provideService(RecallDatabase, db))
    const launch = (
      options: VectorSearchOptions,
    ): Effect.Effect<
      Effect.Effect<ReadonlyArray<VectorHit>, RecallQueryError | RecallStorageError>
    > =>
      worker === undefined
        ? Effect.succeed(inProcess(options))
        : worker
            .start(db.path, options)
            .pipe(Effect.map((awaiting) => awaiting.pipe(Effect.catch(() => inProcess(options)))))
    // A query mostly in Chinese, Japanese or Korean: a model that cannot read them ranks by
    // noise (every CJK text embeds alike), so only the words (CJK bigrams) rank.
    const cjkQuery = cjkShare(query) >= CJK_QUERY_SHARE
    // What a missing vector arm leaves: the words, or nothing when only meaning was asked for.
    const unavailable = arms.has("lexical") ? "lexical only" : "vector search unavailable"
    // The space the index was last embedded in (`meta.embedder_fingerprint`), read when needed.
    const activeSpace = () =>
      db.sqlite
        .prepare("select value from meta where key = 'embedder_fingerprint'")
        .pluck()
        .get() as string | undefined
    if (!arms.has("vector")) vectorSkipped = "not requested"
    else if (embedder === undefined) vectorSkipped = "no embedder configured"
    else if (cjkQuery && embedder.info.readsCjk === false) {
      vectorSkipped = `${embedder.info.model} does not read Chinese, Japanese or Korean`
    } else {
      // Existence, not a count: counting 100 k keys per query costs ~10 ms.
      const stored = yield* read(
        () =>
          db.sqlite
            .prepare(
              `select count(*) as n from (select 1 from vector_keys where fingerprint = ? limit 1)`,
            )
            .get(embedder.info.fingerprint) as { n: number },
      )
      if (stored.n === 0) {
        // Vectors of another space (another environment's provider, or another embedded model):
        // name what made them and what to set here to search them — an index run would embed
        // the whole history again, in this environment's space.
        const other = yield* read(activeSpace)
        const indexing = yield* indexRunInProgress(db, now)
        if (other === undefined || other === "" || other === embedder.info.fingerprint) {
          // Unnamed: with the default, the space a search resolves to before any vectors exist
          // (the static table) need not be the one the index run fills.
          vectorSkipped = indexing
            ? "no vectors yet: an index run is in progress, and its vectors become searchable as it stores them"
            : "no vectors yet (run 'baton recall index')"
        } else {
          const origin = spaceOrigin(other)
          const configured = providers.configured
          const instead =
            configured?.pick !== undefined
              ? (yield* autoChoiceForIndex()).name
              : configured !== undefined
                ? embedderChoiceName(configured.config)
                : spaceOrigin(embedder.info.fingerprint).name
          const searchThem =
            origin.settings === null
              ? "configure that embedder here to search them by meaning"
              : `set ${origin.settings} to search them by meaning`
          vectorSkipped =
            `the index's vectors were made by ${origin.name}: ${searchThem}` +
            (indexing
              ? " (an index run is in progress: what it embeds becomes searchable as it stores it)"
              : `, or run 'baton recall index' to embed with ${instead} instead (re-embeds the whole history)`)
        }
        // No vector arm, though an embedder is configured: the caller is told, as for a failing one.
        degradedBy.push(`${unavailable}: ${vectorSkipped}`)
      } else {
        const embedded = yield* Effect.result(
          within(
            embedder.info.inProcess,
            embedder.embedQuery(maskedQuery),
            providerTimeoutMs,
            `${embedder.info.provider} did not embed the query within ${providerTimeoutMs} ms`,
          ),
        )
        if (embedded._tag === "Failure") {
          vectorSkipped = `the embedder failed: ${embedded.failure.reason}`
          // One sentence: the skip and the note say it in the same words (renderers show it once).
          degradedBy.push(`${unavailable}: ${vectorSkipped}`)
        } else if (embedded.success.every((x) => x === 0 || !Number.isFinite(x))) {
          // No direction (a query of no word the model knows, or a broken answer): every chunk
          // would be as near as any other.
          vectorSkipped = "the query has no vector (no word the embedder knows)"
        } else {
          const scoped = filters.all.args.length > 0 || filters.all.sql !== "1 = 1"
          const within = scoped
            ? yield* read(
                () =>
                  db.sqlite
                    .prepare(
                      `select c.id from chunks c join turns t on t.id = c.turn_row
                       join sessions s on s.id = t.session_row where ${filters.all.sql}`,
                    )
                    .pluck()
                    .all(...filters.all.args) as number[],
              )
            : undefined
          if (within === undefined) {
            vectorMode = "unfiltered"
            awaitVector = yield* launch({
              vector: embedded.success,
              k: candidates,
              fingerprint: embedder.info.fingerprint,
            })
          } else if (within.length === 0) {
            vectorMode = "prefilter"
          } else if (
            input.vectorFilter === "pre" ||
            (input.vectorFilter !== "post" &&
              ((yield* read(() => codesUsableFor(db.sqlite, embedder.info.fingerprint)))
                ? within.length <= PREFILTER_MAX_CHUNKS
                : within.length *
                    (yield* read(
                      () =>
                        db.sqlite
                          .prepare(
                            `select coalesce((select vector_count from embedders
                               where fingerprint = ?), 0) as n`,
                          )
                          .get(embedder.info.fingerprint) as { n: number },
                    )).n <=
                  PREFILTER_BUDGET))
          ) {
            vectorMode = "prefilter"
            awaitVector = yield* launch({
              vector: embedded.success,
              k: candidates,
              fingerprint: embedder.info.fingerprint,
              withinChunkIds: within,
            })
          } else {
            // Large scope × large index: take the nearest MAX_KNN_K overall, keep the scope's.
            vectorMode = "postfilter"
            const allowed = new Set(within)
            awaitVector = (yield* launch({
              vector: embedded.success,
              k: MAX_KNN_K,
              fingerprint: embedder.info.fingerprint,
            })).pipe(
              Effect.map((hits) => hits.filter((h) => allowed.has(h.chunkId)).slice(0, candidates)),
            )
          }
        }
      }
    }
    // A partial space: the vector arm sees only the embedded chunks. The backlog belongs to the
    // active space; its existence is one probe of the partial backlog index, and only a backlog
    // is counted (per-session stored counts for the total, as status sums them).
    if (
      embedder !== undefined &&
      vectorSkipped === null &&
      (yield* read(activeSpace)) === embedder.info.fingerprint &&
      (yield* read(() =>
        db.sqlite.prepare("select 1 from chunks where needs_embedding = 1 limit 1").get(),
      )) !== undefined
    ) {
      const coverage = yield* read(
        () =>
          db.sqlite
            .prepare(
              `select (select count(*) from chunks where needs_embedding = 1) as backlog,
                      (select coalesce(sum(chunk_count), 0) from sessions) as chunks`,
            )
            .get() as { backlog: number; chunks: number },
      )
      const total = Math.max(coverage.chunks, coverage.backlog)
      const rest = (yield* indexRunInProgress(db, now))
        ? "the index run in progress embeds the rest"
        : "'baton recall index' embeds the rest"
      degradedBy.push(
        `meaning search covers ${count(total - coverage.backlog)} of ${count(total)} chunks (backlog ${count(coverage.backlog)}; ${rest})`,
      )
    }
    // The space's vectors came from another server than the query's (an OpenAI-compatible
    // endpoint; such servers often ignore the model name): the results still come, with a note.
    const endpoint = embedder?.info.endpoint
    if (
      embedder !== undefined &&
      vectorSkipped === null &&
      endpoint !== undefined &&
      endpoint !== ""
    ) {
      const stored = yield* read(
        () =>
          db.sqlite
            .prepare("select endpoint from embedders where fingerprint = ?")
            .pluck()
            .get(embedder.info.fingerprint) as string | null | undefined,
      )
      if (typeof stored === "string" && stored !== endpoint)
        degradedBy.push(
          `the vectors of ${embedder.info.fingerprint} came from ${stored}, but the query was embedded by ${endpoint} (BATON_EMBEDDINGS_URL), which may run another model under the same name: set BATON_EMBEDDINGS_URL back to ${stored}, or set BATON_EMBEDDINGS_MODEL to a name unique to the new model and run 'baton recall index'`,
        )
    }
    // Lexical arm: bm25 over the porter FTS index, terms OR-ed (bm25 still favours rows with more).
    // The expander's words beyond the query's own are scored only when selective (see
    // `matchChunks` `expansion`).
    const expanded = providers.expandQuery?.(query)
    const lexicalText = expanded === undefined ? query : lexicalQuery(query)
    const lexical =
      arms.has("lexical") &&
      ftsMatchExpression(`${lexicalText} ${expanded ?? ""}`, "any") !== undefined
        ? yield* rankChunks(lexicalText, {
            limit: candidates,
            mode: "any",
            filter: filters.all,
            ...(expanded === undefined ? {} : { expansion: expanded }),
            // Its personal pronouns (dropped by lexicalQuery) only score: "my dog" asks for the
            // turn where the user wrote "my".
            scoring: speakerWords(query),
          })
        : []
    if (arms.has("lexical") && (yield* read(() => hasLexicalBacklog(db.sqlite)))) {
      // A bulk indexing run fills the full-text index at its end (`lexical-backlog.ts`).
      degradedBy.push(
        "the newest chunks are not in the full-text index yet: a running indexer adds them when it finishes, or, if it stopped, the next 'baton recall index' does",
      )
    }
    const bm25 = new Map(lexical.map((m) => [m.chunkId, m.rank]))
    const vectorHits = yield* awaitVector
    const similarity = new Map<number, number>()
    for (const h of vectorHits)
      if (!similarity.has(h.chunkId)) similarity.set(h.chunkId, h.similarity)

    const armLists = [
      { name: "lexical", weight: plan.lexical, ids: lexical.map((m) => m.chunkId) },
      { name: "vector", weight: plan.vector, ids: vectorHits.map((h) => h.chunkId) },
    ]
    const rrf = { k: plan.rrfK ?? DEFAULT_RRF_K }
    const fused = fuseRanks(armLists, rrf).slice(0, candidates * 2)

    const rows = new Map<number, ChunkRow>()
    const loadRows = (ids: ReadonlyArray<number>) =>
      Effect.gen(function* () {
        if (ids.length === 0) return
        const loaded = yield* decodeRows(
          ChunkRows,
          db.path,
          yield* read(() =>
            db.sqlite
              .prepare(
                `select c.id as chunk_id, c.role, c.content_hash, c.turn_row, t.turn_id, t.timestamp,
                        s.source, s.session_id, s.cwd, s.repo_root, s.headless, s.subagent,
                        s.id as session_row, s.forked_from
                 from chunks c join turns t on t.id = c.turn_row
                 join sessions s on s.id = t.session_row
                 where c.id in (select value from json_each(?))`,
              )
              .all(JSON.stringify(ids)),
          ),
        )
        for (const row of loaded) rows.set(row.chunk_id, row)
      })
    yield* loadRows(fused.map((f) => f.id))
    const texts = new Map<number, string>()
    const starts = new Map<number, number>()
    const loadTexts = (ids: ReadonlyArray<number>) =>
      Effect.gen(function* () {
        const missing = ids.filter((id) => !texts.has(id))
        if (missing.length === 0) return
        const loaded = yield* decodeRows(
          ChunkTexts,
          db.path,
          yield* read(() =>
            db.sqlite
              .prepare(
                "select id, text, char_start from chunks where id in (select value from json_each(?))",
              )
              .raw()
              .all(JSON.stringify(missing)),
          ),
        )
        for (const [id, text, start] of loaded) {
          texts.set(id, text)
          starts.set(id, start)
        }
      })
    const textOf = (id: number): string => texts.get(id) ?? ""
    // One hit per turn (its best chunk: a long reply's other windows add nothing a caller
    // cannot expand), and the same text in several places (fork / resume copies, repeated
    // answers) once: keep the best, and when it is a fork's copy of a text its parent session
    // holds too, show the parent's in its place (the words were said there first).
    // Prepared on first use, inside `read` (only a repeated text or a hit needs it).
    let forkParentOf: ReturnType<typeof forkParents> | undefined
    const parentSessions = new Map<number, string | null>()
    const parentSession = (row: ChunkRow) => {
      if (!parentSessions.has(row.session_row)) {
        forkParentOf ??= forkParents(db.sqlite)
        parentSessions.set(
          row.session_row,
          forkParentOf(row.source, row.session_row, row.forked_from),
        )
      }
      return parentSessions.get(row.session_row) ?? null
    }
    // Every session (source + id) seen holding each text, across the calls of `distinct`.
    const textSessions = new Map<string, Set<string>>()
    const distinct = <T extends { readonly id: number }>(list: ReadonlyArray<T>) =>
      read(() => {
        const keptText = new Map<string, number>()
        const seenTurns = new Set<number>()
        const kept: Array<{ fused: T; row: ChunkRow }> = []
        for (const f of list) {
          const row = rows.get(f.id)
          if (row === undefined || seenTurns.has(row.turn_row)) continue
          let holders = textSessions.get(row.content_hash)
          if (holders === undefined) textSessions.set(row.content_hash, (holders = new Set()))
          holders.add(`${row.source}\u0000${row.session_id}`)
          const at = keptText.get(row.content_hash)
          if (at === undefined) {
            keptText.set(row.content_hash, kept.length)
            seenTurns.add(row.turn_row)
            kept.push({ fused: f, row })
            continue
          }
          const copy = kept[at]!
          if (copy.row.source === row.source && parentSession(copy.row) === row.session_id) {
            seenTurns.add(row.turn_row)
            kept[at] = { fused: copy.fused, row }
          }
        }
        return kept
      })
    let ranked = yield* distinct(fused)

    // Reranker: its order over the fused head joins the fusion as a third weighted list.
    let rerankRan = false
    const rerankScore = new Map<number, number>()
    const rerankRank = new Map<number, number>()
    const reranker = providers.reranker
    if (
      reranker !== undefined &&
      ranked.length > 1 &&
      plan.rerank > 0 &&
      !(cjkQuery && reranker.readsCjk === false)
    ) {
      const depth = Math.min(ranked.length, Math.max(k, Math.floor(plan.rerankDepth)))
      const head = ranked.slice(0, depth)
      yield* loadTexts(head.map((r) => r.row.chunk_id))
      const result = yield* Effect.result(
        within(
          reranker.inProcess,
          reranker.rerank(
            maskedQuery,
            head.map((r) => textOf(r.row.chunk_id)),
            depth,
          ),
          providerTimeoutMs,
          `${reranker.provider} did not rerank within ${providerTimeoutMs} ms`,
        ),
      )
      if (result._tag === "Failure") degradedBy.push(`not reranked: ${result.failure.reason}`)
      else {
        rerankRan = true
        const order = [...result.success]
          .filter((r) => head[r.index] !== undefined)
          .sort((a, b) => b.score - a.score || a.index - b.index)
        order.forEach((r, i) => {
          const id = head[r.index]!.row.chunk_id
          if (!rerankRank.has(id)) {
            rerankRank.set(id, i + 1)
            rerankScore.set(id, r.score)
          }
        })
        ranked = yield* distinct(
          fuseRanks(
            [...armLists, { name: "rerank", weight: plan.rerank, ids: [...rerankRank.keys()] }],
            rrf,
          ),
        )
      }
    }

    // Conversation context: a turn gains a share of its neighbours' fused scores.
    const contextShare = plan.context ?? 0
    if (contextShare > 0 && ranked.length > 0) {
      const head = ranked.slice(0, CONTEXT_DEPTH)
      // Counting a window's copies needs the hash index; while a large indexing run defers it,
      // no turn counts as boilerplate (a scan of every chunk per neighbour would take minutes).
      const notBoilerplate = (yield* read(() => hasLookupIndex(db.sqlite, "chunks_content_hash")))
        ? NOT_BOILERPLATE
        : "1"
      const neighbours = yield* read(
        () =>
          db.sqlite
            .prepare(
              `select h.value as turn_row,
                 (select case when ${notBoilerplate} then n.id end from turns n where n.session_row = t.session_row
                    and n.ordinal between t.ordinal - ? and t.ordinal - 1 and n.surface_count > 0
                    order by n.ordinal desc limit 1) as before,
                 (select case when ${notBoilerplate} then n.id end from turns n where n.session_row = t.session_row
                    and n.ordinal between t.ordinal + 1 and t.ordinal + ? and n.surface_count > 0
                    order by n.ordinal limit 1) as after,
                 (select n.id from turns n where n.session_row = t.session_row
                    and n.ordinal between t.ordinal + 1 and t.ordinal + ? and n.surface_count > 0
                    and ${notBoilerplate}
                    order by n.ordinal limit 1) as answer
               from json_each(?) h join turns t on t.id = h.value`,
            )
            .all(
              CONTEXT_REACH,
              CONTEXT_REACH,
              CONTEXT_REACH,
              JSON.stringify(head.map((r) => r.row.turn_row)),
            ) as Array<{
            turn_row: number
            before: number | null
            after: number | null
            answer: number | null
          }>,
      )
      const base = new Map(ranked.map((r) => [r.row.turn_row, r.fused.score]))
      const gained = new Map<number, number>()
      // The turn after a match (an answer to it) gains the share; after a short question that
      // is a hit itself, the next turn that is not boilerplate gains QUESTION_GAIN times the
      // share. The turn before (what it answers) gains half the share.
      const gain = (turn: number | null, amount: number) => {
        if (turn !== null) gained.set(turn, (gained.get(turn) ?? 0) + amount)
      }
      yield* loadTexts(head.map((r) => r.row.chunk_id))
      const chunkOf = new Map(head.map((r) => [r.row.turn_row, r.row.chunk_id]))
      const lexicalHit = new Set(
        ranked
          .filter((r) => (r.fused.ranks["lexical"] ?? null) !== null)
          .map((r) => r.row.turn_row),
      )
      const nearest = Math.max(0, ...similarity.values())
      const isHit = (turn: number) =>
        lexicalHit.has(turn) ||
        (nearest > 0 &&
          (similarity.get(chunkOf.get(turn) ?? -1) ?? -Infinity) >=
            QUESTION_HIT_SIMILARITY * nearest)
      for (const n of neighbours) {
        const share = contextShare * (base.get(n.turn_row) ?? 0)
        const asks = isShortQuestion(textOf(chunkOf.get(n.turn_row) ?? -1)) && isHit(n.turn_row)
        if (asks) gain(n.answer, share * QUESTION_GAIN)
        else gain(n.after, share)
        gain(n.before, share / 2)
      }
      // Neighbours not among the candidates enter with their first chunk, within the filters.
      const newcomers = [...gained.keys()].filter((turn) => !base.has(turn))
      if (newcomers.length > 0) {
        const firstChunks = yield* read(
          () =>
            db.sqlite
              .prepare(
                `select min(c.id) from chunks c join turns t on t.id = c.turn_row
                 join sessions s on s.id = t.session_row
                 where c.turn_row in (select value from json_each(?)) and ${filters.all.sql}
                 group by c.turn_row`,
              )
              .pluck()
              .all(JSON.stringify(newcomers), ...filters.all.args) as number[],
        )
        yield* loadRows(firstChunks)
        ranked = yield* distinct([
          ...ranked.map((r) => r.fused),
          ...firstChunks.map((id) => ({ id, score: 0, ranks: {} })),
        ])
      }
      // Array sort is stable: equal scores keep the fused order.
      ranked = ranked
        .map((r) => ({
          ...r,
          fused: { ...r.fused, score: r.fused.score + (gained.get(r.row.turn_row) ?? 0) },
        }))
        .sort((a, b) => b.fused.score - a.fused.score)
    }

    const perSessionCount = new Map<string, number>()
    const terms = queryTerms(query)
    const chosen: typeof ranked = []
    const held: typeof ranked = []
    // The cap trades a hit only for other sessions' hits of the same standing: one the words arm
    // found is held back while other sessions still have word hits to show, not for hits found by
    // meaning alone — else one session holding every turn with the query's words would show three
    // of them, then noise, and the rest after every other candidate.
    const byWords = (c: (typeof ranked)[number]) => typeof c.fused.ranks["lexical"] === "number"
    const sessionKey = (c: (typeof ranked)[number]) => `${c.row.source}\u0000${c.row.session_id}`
    for (const [at, candidate] of ranked.entries()) {
      if (chosen.length >= k) break
      if (
        !byWords(candidate) &&
        held.some(byWords) &&
        !ranked
          .slice(at + 1)
          .some((c) => byWords(c) && (perSessionCount.get(sessionKey(c)) ?? 0) < perSession)
      ) {
        chosen.push(...held.filter(byWords).slice(0, k - chosen.length))
        held.splice(0, held.length, ...held.filter((c) => !byWords(c)))
        if (chosen.length >= k) break
      }
      const key = sessionKey(candidate)
      const count = perSessionCount.get(key) ?? 0
      if (count >= perSession) {
        held.push(candidate)
        continue
      }
      perSessionCount.set(key, count + 1)
      chosen.push(candidate)
    }
    // The cap spreads the hits over sessions; it does not shorten the list. When the other
    // sessions run out (one long session holds most candidates), the held-back hits follow, in
    // their order.
    chosen.push(...held.slice(0, k - chosen.length))
    yield* loadTexts(chosen.map((c) => c.row.chunk_id))
    yield* read(() => chosen.forEach(({ row }) => parentSession(row)))
    const hits: Array<RecallHit> = []
    for (const { fused: f, row } of chosen) {
      const full = shownChunkText(textOf(row.chunk_id), starts.get(row.chunk_id) ?? 0)
      const text = capText(full, textChars)
      hits.push({
        rank: hits.length + 1,
        source: row.source,
        sessionId: row.session_id,
        turnId: row.turn_id,
        chunkId: row.chunk_id,
        role: row.role,
        cwd: row.cwd,
        project: projectOf(row.repo_root),
        timestamp: row.timestamp,
        whenHuman: whenHuman(row.timestamp, now, filters.timezone),
        headless: row.headless === 1,
        subagent: row.subagent === 1,
        forkedFrom: parentSessions.get(row.session_row) ?? null,
        sameTextSessions: Math.max(0, (textSessions.get(row.content_hash)?.size ?? 1) - 1),
        text: text.text,
        textTruncated: text.truncated,
        snippet: snippetFor(full, terms, snippetChars),
        scores: {
          fused: f.score,
          lexicalRank: f.ranks["lexical"] ?? null,
          bm25: bm25.get(row.chunk_id) ?? null,
          vectorRank: f.ranks["vector"] ?? null,
          similarity: similarity.get(row.chunk_id) ?? null,
          rerank: rerankScore.get(row.chunk_id) ?? null,
          rerankRank: rerankRank.get(row.chunk_id) ?? null,
        },
      })
    }

    const lexicalRan = arms.has("lexical")
    return {
      query,
      hits,
      arms: {
        lexical: { ran: lexicalRan, candidates: lexical.length },
        vector: {
          ran: vectorSkipped === null,
          candidates: vectorHits.length,
          fingerprint: embedder?.info.fingerprint ?? null,
          filterMode: vectorMode,
          skipped: vectorSkipped,
        },
        rerank: { ran: rerankRan, model: rerankRan ? (reranker?.model ?? null) : null },
      },
      degraded: degradedBy.length === 0 ? null : degradedBy.join("; "),
      indexEmpty: anyChunk === undefined,
      // Judged on the hits themselves: the words arm also matches the expander's words (a hit
      // may hold none of the query's own), and misses what its tokens leave out (emoji).
      meaningOnly:
        hits.length > 0 && lexicalRan && !hits.some((h) => holdsQueryWord(h.text, query))
          ? "none of these hits holds a word of the query: they are only the nearest by meaning " +
            "(a paraphrase, or unrelated)"
          : null,
      applied,
    }
  })

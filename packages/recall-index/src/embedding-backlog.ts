/**
 * Drains the embedding backlog (`chunks.needs_embedding = 1`) into one embedder's vector space.
 * Guarantees: a paid provider's cost guard is checked first, without changing anything; then the
 * embedder is activated (its vec0 table exists, the backlog is recomputed against its vectors,
 * so switching embedders re-embeds cleanly and never mixes spaces), and a run that fails before
 * writing a vector puts the space active before back (flags recomputed against it); each
 * distinct text (content hash) is embedded at most once per fingerprint, and a text that already
 * has a vector is only marked done; each batch writes the vectors, their `vector_keys`, the search
 * codes (`vector-code-store.ts`) and the chunks' flags together, and consecutive batches share
 * one `BEGIN IMMEDIATE` transaction ({@link EMBED_COMMIT_LIMITS}), so a run killed midway leaves
 * whole batches (it loses at most the open commit) and the next run resumes where it stopped; a
 * run that fails or is interrupted commits the batches it wrote, and a batch whose write fails
 * is rolled back with its commit, never stored in part; the indexer
 * lock is held for the run (renewed between batches), so the indexer and the backlog never write
 * at the same time. Vectors of the wrong length or with non-finite values are refused
 * (`EmbedderError` `bad_response`), never stored.
 */
import type { Database } from "better-sqlite3"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Embedder, EmbedderFailure } from "./embedder.js"
import { EmbedderError } from "./embedder.js"
import type { EmbedderConfigError, IndexBusyError } from "./errors.js"
import { RecallStorageError } from "./errors.js"
import { acquireIndexLock, IndexerProcess } from "./index-lock.js"
import { deferWalCheckpoints, makeCommitGroup } from "./index-writer.js"
import type { CommitGroupLimits } from "./index-writer.js"
import { buildLookupIndexes } from "./lookup-indexes.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import type { CodeWriter } from "./vector-code-store.js"
import {
  blobOf,
  convertVectorsToInt8,
  int8ValuesOf,
  makeCodeWriter,
  syncCodes,
  vectorElementsOf,
} from "./vector-code-store.js"
import { int8Code } from "./vector-codes.js"
import { vectorBlob } from "./vector-search.js"
import {
  activateSpace,
  cosineSimilarity,
  endpointMismatch,
  endpointSamples,
  restoreActiveSpace,
  SAME_VECTORS_COSINE,
} from "./vector-tables.js"

/**
 * When the backlog commits: batches share a transaction until one of these is reached. Each
 * commit rewrites the pages its batches touched — leaves of the random `vector_keys` index, the
 * vec0 chunk's bookkeeping, the open code segment — so fewer, larger commits write each such
 * page once for many batches. Measured on 84 000 texts of 512 dimensions, writes only: one
 * commit per 512-text batch 4.25–4.33 s and 703 MB written, 8 192 texts per commit 3.71–3.74 s
 * and 371 MB. Savepoints per batch (as the indexer's per-file units) cost more than they saved
 * there (12.5 s): a failed batch rolls its whole commit back instead. Grouping is for in-process
 * embedders: with a provider across the network (`inProcess` not true) each batch commits as it
 * is written, and what was marked done commits before the requests go out, so the write lock is
 * never held while waiting for a server (another writer would wait on it, then fail as busy).
 */
export const EMBED_COMMIT_LIMITS: CommitGroupLimits = {
  maxMs: 1_000,
  maxBytes: 16 * 1024 * 1024,
  maxFiles: 64,
}

/** Progress after each batch written: `done` of `total` backlog chunks are resolved. */
export interface EmbedBacklogProgress {
  readonly done: number
  readonly total: number
  /** Distinct texts embedded so far in this run. */
  readonly embedded: number
  /** Distinct texts that already had a vector (shared by content hash). */
  readonly reused: number
}

/** Options of {@link embedBacklog}. */
export interface EmbedBacklogOptions {
  /** Texts per embedding call and per transaction; default `embedder.info.maxBatch`. */
  readonly batchSize?: number
  /** Embedding calls in flight at once; default 1 for local embedders, 4 for remote ones. */
  readonly concurrency?: number
  /** Stop after embedding this many distinct texts (the rest stays in the backlog). */
  readonly maxTexts?: number
  /** Called synchronously after every batch written (committed with its group). */
  readonly onProgress?: (progress: EmbedBacklogProgress) => void
  /**
   * Called synchronously, with the number of vectors, before the run rewrites an earlier
   * version's float vectors as int8 (once per index: 4.3 s for 209 000 vectors, 60 s for 2.09 M).
   */
  readonly onVectorConversion?: (vectors: number) => void
  /** Take the indexer lock for the run (default true); false only when the caller holds it. */
  readonly takeLock?: boolean
  /** Lock lease; default 120 000 ms, renewed once a quarter of it has passed. */
  readonly leaseMs?: number
  /** When batches commit (`maxFiles` counts batches); default {@link EMBED_COMMIT_LIMITS}. */
  readonly commitGroup?: CommitGroupLimits
}

/** What a run did. */
export interface EmbedBacklogReport {
  readonly fingerprint: string
  readonly vecTable: string
  /** Backlog chunks when the run started (after activation). */
  readonly total: number
  /** Chunks marked done in this run. */
  readonly resolved: number
  /** Distinct texts embedded in this run. */
  readonly embedded: number
  /** Distinct texts that already had a vector and were only marked done. */
  readonly reused: number
  /** Batches written (all committed when the run returns). */
  readonly batches: number
  /** Backlog chunks left (non-zero after `maxTexts`). */
  readonly remaining: number
  /**
   * Vectors an earlier version stored as floats, rewritten as int8 by this run (a quarter of the
   * bytes; see `convertVectorsToInt8`); 0 once the embedder's table is int8.
   */
  readonly vectorsConverted: number
  /**
   * The space the index was embedded in before, when this run switched to another (the whole
   * history is embedded again in the new space, or its vectors reused if it had them); else null.
   */
  readonly switchedFrom: string | null
  /**
   * The space's server moved: its stored endpoint was `from`, the embedder's is `to`, whose vectors
   * of texts already embedded were the stored ones again (lowest `cosine`; null when the space held
   * no vector to compare), so the space adopted `to` and keeps its `vectors`. Null (or absent, in
   * a report of an earlier version) when the endpoint did not change.
   */
  readonly endpointMoved?: EndpointMove | null
}

/** A space's server that moved (see {@link EmbedBacklogReport.endpointMoved}). */
export interface EndpointMove {
  readonly from: string
  readonly to: string
  readonly vectors: number
  readonly cosine: number | null
}

interface BacklogText {
  readonly hash: string
  readonly text: string
}

/**
 * Embeds every chunk lacking a vector in `embedder`'s space, each distinct text once (a text that
 * has a vector already is only marked done). Switching embedders re-embeds into the new space,
 * never mixing spaces. Batches commit as they go, so an interrupted run keeps whole batches and
 * the next run resumes; it holds the indexer lock (`IndexBusyError` while another run has it).
 * Vectors of the wrong length or with non-finite values are refused (`EmbedderError`). For the
 * default embedder (`auto`) use `embedForIndex`, which resolves it as `baton recall index` does.
 */
export const embedBacklog = (
  embedder: Embedder,
  options: EmbedBacklogOptions = {},
): Effect.Effect<
  EmbedBacklogReport,
  EmbedderError | RecallStorageError | IndexBusyError,
  RecallDatabase | IndexerProcess
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const host = yield* IndexerProcess
    const leaseMs = options.leaseMs ?? 120_000
    const startedAt = yield* Clock.currentTimeMillis
    const lease =
      options.takeLock === false
        ? undefined
        : yield* acquireIndexLock(db.sqlite, db.path, host, startedAt, leaseMs)
    // Checkpoints wait for the end of the run, as an indexing run's do: each batch writes ~2.7 KB
    // per vector (float vector, codes, key), so at SQLite's default threshold a checkpoint ran
    // every few batches (12–15 % of a run of 84 000 texts, in three paired runs).
    const run = Effect.acquireUseRelease(
      Effect.try({
        try: () => deferWalCheckpoints(db.sqlite),
        catch: storageFailure("write", db.path),
      }),
      () => drain(db.sqlite, db.path, embedder, options, leaseMs, lease?.renew),
      (restore) => Effect.sync(restore),
    ).pipe(
      // The last run's embedding failure stays in `meta` until a run succeeds: `recall status`
      // shows it, also for a run nobody watched (the SessionStart hook's, in the background).
      Effect.tapError((error) =>
        error._tag === "EmbedderError"
          ? recordEmbeddingFailure(db.sqlite, {
              at: new Date(startedAt).toISOString(),
              fingerprint: embedder.info.fingerprint,
              failure: error.failure,
              reason: error.message,
            })
          : Effect.void,
      ),
      Effect.tap(() => recordEmbeddingFailure(db.sqlite, null)),
    )
    return yield* lease === undefined ? run : run.pipe(Effect.ensuring(lease.release))
  })

/** The last embedding run's failure, as `meta.embedding_failure` holds it (JSON). */
export interface EmbeddingFailure {
  /** When the run started (ISO). */
  readonly at: string
  /** The space it embedded in; a provider, or the variable to fix, when setting it up failed. */
  readonly fingerprint: string
  /**
   * What failed: an {@link EmbedderFailure} (`cost_guard`: refused until the budget is raised),
   * `configuration` (the settings are incomplete), or null (recorded by an earlier version).
   */
  readonly failure: EmbedderFailure | "configuration" | null
  readonly reason: string
}

/**
 * Records that the embedder could not be set up — its settings ({@link EmbedderConfigError}) or
 * its first request (an endpoint's dimension probe) failed — as the last embedding failure, so
 * `recall status` shows it also for a run nobody watched. Best effort: never fails.
 */
export const recordEmbedderSetupFailure = (
  error: EmbedderError | EmbedderConfigError,
): Effect.Effect<void, never, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const now = yield* Clock.currentTimeMillis
    yield* recordEmbeddingFailure(
      db.sqlite,
      error._tag === "EmbedderConfigError"
        ? {
            at: new Date(now).toISOString(),
            fingerprint: error.variable,
            failure: "configuration",
            reason: error.message,
          }
        : {
            at: new Date(now).toISOString(),
            fingerprint: error.provider,
            failure: error.failure,
            reason: error.message,
          },
    )
  })

/** Stores (or, with null, clears) the last embedding failure; a write that fails is skipped. */
const recordEmbeddingFailure = (
  sqlite: Database,
  failure: EmbeddingFailure | null,
): Effect.Effect<void> =>
  Effect.sync(() => {
    try {
      if (failure === null) sqlite.prepare("delete from meta where key = 'embedding_failure'").run()
      else
        sqlite
          .prepare(
            "insert into meta (key, value) values ('embedding_failure', ?) on conflict(key) do update set value = excluded.value",
          )
          .run(JSON.stringify(failure))
    } catch {
      // Best effort: the run's own error is what the caller gets.
    }
  })

/**
 * Distinct texts, and their estimated tokens, lacking a vector in `fingerprint`'s space: the
 * backlog flags when it is the active space, else computed from its vector keys without writing.
 */
const backlogEstimate = (
  sqlite: Database,
  fingerprint: string,
): { readonly texts: number; readonly tokens: number } => {
  const active = sqlite
    .prepare("select value from meta where key = 'embedder_fingerprint'")
    .pluck()
    .get() as string | undefined
  const lacking =
    active === fingerprint
      ? "needs_embedding = 1"
      : `not exists (select 1 from vector_keys k
           where k.fingerprint = @fingerprint and k.content_hash = chunks.content_hash)`
  const estimate = sqlite.prepare(
    `select count(*) as texts, coalesce(sum((length(text) + 3) / 4), 0) as tokens
     from (select min(text) as text from chunks where ${lacking} group by content_hash)`,
  )
  return (active === fingerprint ? estimate.get() : estimate.get({ fingerprint })) as {
    texts: number
    tokens: number
  }
}

const drain = (
  sqlite: Database,
  path: string,
  embedder: Embedder,
  options: EmbedBacklogOptions,
  leaseMs: number,
  renew: ((now: number) => Effect.Effect<boolean, RecallStorageError>) | undefined,
) =>
  Effect.gen(function* () {
    const { info } = embedder
    // A paid provider's cap, checked before anything is sent or changed: a backlog estimated past
    // it is refused whole (the user raises the cap to pay for it), instead of spending the budget
    // on a part of it in every run and failing each time; the active space stays as it was.
    if (info.paid && info.tokenBudget !== undefined && options.maxTexts === undefined) {
      const { texts, tokens } = yield* Effect.try({
        try: () => backlogEstimate(sqlite, info.fingerprint),
        catch: storageFailure("read", path),
      })
      if (tokens > info.tokenBudget) {
        return yield* new EmbedderError({
          provider: info.provider,
          failure: "cost_guard",
          retryable: false,
          reason:
            `embedding the backlog would send about ${tokens} estimated tokens (${texts} texts) ` +
            `to ${info.provider}, over a run's budget of ${info.tokenBudget}: nothing was sent; ` +
            `raise BATON_EMBED_MAX_TOKENS to at least ${tokens} to allow it`,
        })
      }
    }
    const moved = yield* movedEndpoint(sqlite, path, embedder)
    const active = yield* activateSpace(info.fingerprint, info.dim, info.endpoint, moved?.from)
    const store = yield* Effect.try({
      // Marking a text done looks its copies up by content hash: an indexing run that stopped
      // before building its deferred lookup indexes left them to whoever writes next.
      try: () => {
        buildLookupIndexes(sqlite)
        return prepareStore(
          sqlite,
          info.fingerprint,
          active.vecTable,
          info.dim,
          options.commitGroup ?? EMBED_COMMIT_LIMITS,
          options.onVectorConversion,
        )
      },
      catch: storageFailure("write", path),
    })
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? info.maxBatch))
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? (info.remote ? 4 : 1)))
    const maxTexts = options.maxTexts ?? Infinity
    let done = 0
    let embedded = 0
    let reused = 0
    let batches = 0
    let cursor = 0
    let renewedAt = yield* Clock.currentTimeMillis
    const progress = () => options.onProgress?.({ done, total: active.backlog, embedded, reused })

    // A provider across the network: no transaction stays open while its requests are out.
    const remote = info.inProcess !== true
    const fill = Effect.gen(function* () {
      while (embedded < maxTexts) {
        const want = Math.min(batchSize * concurrency, maxTexts - embedded)
        const page = yield* Effect.try({
          try: () => store.nextTexts(cursor, want),
          catch: storageFailure("read", path),
        })
        if (page.texts.length === 0 && page.known.length === 0) break
        cursor = page.cursor
        if (page.known.length > 0) {
          const now = yield* Clock.currentTimeMillis
          done += yield* Effect.try({
            try: () => store.markDone(page.known, now),
            catch: storageFailure("write", path),
          })
          reused += page.known.length
        }
        if (remote && page.texts.length > 0)
          yield* Effect.try({ try: store.commit, catch: storageFailure("write", path) })
        const groups: BacklogText[][] = []
        for (let at = 0; at < page.texts.length; at += batchSize) {
          groups.push(page.texts.slice(at, at + batchSize))
        }
        // Embed the groups concurrently, write each as soon as its vectors are back.
        yield* Effect.forEach(
          groups,
          (group) =>
            embedder.embedDocuments(group.map((t) => t.text)).pipe(
              Effect.flatMap((vectors) =>
                checkVectors(info.provider, info.dim, info.inProcess !== true, group, vectors),
              ),
              Effect.flatMap((vectors) =>
                Effect.flatMap(Clock.currentTimeMillis, (now) =>
                  Effect.try({
                    try: () => {
                      const resolved = store.write(group, vectors, now)
                      if (remote) store.commit()
                      return resolved
                    },
                    catch: storageFailure("write", path),
                  }),
                ),
              ),
              Effect.tap((resolved) =>
                Effect.sync(() => {
                  done += resolved
                  embedded += group.length
                  batches += 1
                  progress()
                }),
              ),
            ),
          { concurrency, discard: true },
        )
        if (page.texts.length === 0) progress()
        if (renew !== undefined) {
          const at = yield* Clock.currentTimeMillis
          if (at - renewedAt >= leaseMs / 4) {
            renewedAt = at
            if (!(yield* renew(at))) {
              return yield* Effect.fail(
                new RecallStorageError({
                  operation: "write",
                  path,
                  reason: "the index lock lease was lost while embedding",
                }),
              )
            }
          }
        }
      }
      yield* Effect.try({ try: store.commit, catch: storageFailure("write", path) })
    })
    // Failed or interrupted, the run keeps the whole batches it wrote. A run that failed before
    // writing a vector into the space it switched to (the first batch refused) leaves the space
    // active before as it was; the restore recomputes the flags against it, so they never
    // describe another space than the active one. Interrupted, the switch stays (as it was).
    yield* fill.pipe(
      Effect.ensuring(Effect.sync(store.close)),
      Effect.tapError(() =>
        embedded === 0 ? restoreActiveSpace(active).pipe(Effect.ignore) : Effect.void,
      ),
    )
    if (embedded > 0 && info.dim % 8 === 0) {
      // A large run re-centres the sign bits once it has doubled the collection.
      yield* Effect.try({
        try: () => syncCodes(sqlite, info.fingerprint, active.vecTable, info.dim),
        catch: storageFailure("write", path),
      })
    }
    const remaining = yield* Effect.try({
      try: () =>
        (
          sqlite.prepare("select count(*) as n from chunks where needs_embedding = 1").get() as {
            n: number
          }
        ).n,
      catch: storageFailure("read", path),
    })
    return {
      fingerprint: info.fingerprint,
      vecTable: active.vecTable,
      total: active.backlog,
      resolved: done,
      embedded,
      reused,
      batches,
      remaining,
      vectorsConverted: store.vectorsConverted,
      switchedFrom: active.switchedFrom,
      endpointMoved: moved,
    } satisfies EmbedBacklogReport
  })

/**
 * Whether the embedder's endpoint, another than the one its space was built with, is the same
 * model at another address: it embeds a few texts the space holds (the lowest chunk ids with a
 * vector) and compares with their stored vectors. The same vectors (cosine ≥
 * {@link SAME_VECTORS_COSINE} for every text) → the move, which the activation adopts; others → the
 * activation's refusal, with the cosine (an `EmbedderError`, before anything changed); a failed
 * request fails the run as any embedding call does. Null when there is nothing to decide (no
 * endpoint, the same one, none stored yet, no such space). A space with no vector moves unasked.
 */
const movedEndpoint = (
  sqlite: Database,
  path: string,
  embedder: Embedder,
): Effect.Effect<EndpointMove | null, EmbedderError | RecallStorageError> =>
  Effect.gen(function* () {
    const { info } = embedder
    const to = info.endpoint
    if (to === undefined || to === "") return null
    const stored = yield* Effect.try({
      try: () => endpointSamples(sqlite, info.fingerprint, info.dim),
      catch: storageFailure("read", path),
    })
    const from = stored?.endpoint ?? null
    if (stored === undefined || from === null || from === to) return null
    if (stored.samples.length === 0) return { from, to, vectors: stored.vectors, cosine: null }
    const texts = stored.samples.map((sample) => ({ hash: "", text: sample.text }))
    const vectors = yield* embedder
      .embedDocuments(texts.map((t) => t.text))
      .pipe(
        Effect.flatMap((vectors) =>
          checkVectors(info.provider, info.dim, info.inProcess !== true, texts, vectors),
        ),
      )
    let cosine = 1
    stored.samples.forEach((sample, i) => {
      const vector = vectors[i]
      cosine = Math.min(cosine, vector === undefined ? 0 : cosineSimilarity(sample.vector, vector))
    })
    if (cosine >= SAME_VECTORS_COSINE) return { from, to, vectors: stored.vectors, cosine }
    return yield* new EmbedderError({
      provider: info.provider,
      failure: "bad_request",
      retryable: false,
      reason: endpointMismatch(info.fingerprint, from, to, cosine),
    })
  })

const checkVectors = (
  provider: string,
  dim: number,
  /** An embedding service (Voyage, an OpenAI-compatible endpoint), not a model in this process. */
  service: boolean,
  group: ReadonlyArray<BacklogText>,
  vectors: ReadonlyArray<Float32Array>,
): Effect.Effect<ReadonlyArray<Float32Array>, EmbedderError> => {
  const bad = (reason: string) =>
    Effect.fail(new EmbedderError({ provider, failure: "bad_response", retryable: false, reason }))
  if (vectors.length !== group.length) {
    return bad(`asked for ${group.length} vectors, got ${vectors.length}`)
  }
  for (const v of vectors) {
    if (v.length !== dim) return bad(`a vector has ${v.length} dimensions, expected ${dim}`)
    let zero = true
    for (let i = 0; i < v.length; i++) {
      if (!Number.isFinite(v[i])) return bad("a vector holds a non-finite value")
      if (v[i] !== 0) zero = false
    }
    // No direction: stored, it would be as near to every query as any other. A model in this
    // process may mean it (a text of no word it knows); a service answering so is broken.
    if (zero && service) return bad("a vector is all zeros")
  }
  return Effect.succeed(vectors)
}

interface BacklogStore {
  /** Next backlog texts after chunk id `cursor`, split into new ones and ones with a vector. */
  readonly nextTexts: (
    cursor: number,
    want: number,
  ) => {
    readonly texts: ReadonlyArray<BacklogText>
    readonly known: ReadonlyArray<string>
    readonly cursor: number
  }
  /** Marks the chunks of `hashes` done (in the open commit, at `now`); how many changed. */
  readonly markDone: (hashes: ReadonlyArray<string>, now: number) => number
  /**
   * Stores one batch of vectors and marks their chunks done, in the open commit (begun at `now`
   * if none is); a failure rolls the commit back. Returns how many chunks changed.
   */
  readonly write: (
    group: ReadonlyArray<BacklogText>,
    vectors: ReadonlyArray<Float32Array>,
    now: number,
  ) => number
  /** Commits the open commit, if any. */
  readonly commit: () => void
  /** Float vectors of an earlier version rewritten as int8 when the store was prepared. */
  readonly vectorsConverted: number
  /** Commits the open commit if it can, else rolls it back; never throws (a finalizer). */
  readonly close: () => void
}

const prepareStore = (
  sqlite: Database,
  fingerprint: string,
  vecTable: string,
  dim: number,
  limits: CommitGroupLimits,
  onConversion: ((vectors: number) => void) | undefined,
): BacklogStore => {
  // Search codes (sign bits + int8) need whole bytes of bits; other dimensions search exactly.
  const codes = dim % 8 === 0 ? syncCodesOf(sqlite, fingerprint, vecTable, dim) : undefined
  // A float table of an earlier version becomes int8: from its codes once they cover it (just
  // repaired), or, at a dimension without codes, from its floats.
  let vectorsConverted = 0
  if (vectorElementsOf(sqlite, vecTable) === "float32") {
    onConversion?.(
      sqlite
        .prepare("select count(*) from vector_keys where fingerprint = ?")
        .pluck()
        .get(fingerprint) as number,
    )
    vectorsConverted = convertVectorsToInt8(sqlite, fingerprint, vecTable, dim)
  }
  const int8 = vectorElementsOf(sqlite, vecTable) === "int8"
  const page = sqlite.prepare(
    "select id, content_hash, text from chunks where needs_embedding = 1 and id > ? order by id limit ?",
  )
  const keyOf = sqlite
    .prepare("select id from vector_keys where fingerprint = ? and content_hash = ?")
    .pluck()
  const insertKey = sqlite
    .prepare(
      "insert into vector_keys (fingerprint, content_hash) values (?, ?) on conflict do nothing returning id",
    )
    .pluck()
  const insertVector = sqlite.prepare(
    `insert into ${vecTable} (rowid, embedding) values (?, ${int8 ? "vec_int8(?)" : "?"})`,
  )
  // `+needs_embedding`: look the hash up by its index; the partial backlog index would make
  // every flip scan the whole backlog (quadratic on a large first run).
  const flip = sqlite.prepare(
    "update chunks set needs_embedding = 0 where content_hash = ? and +needs_embedding = 1",
  )
  const markDone = (hashes: ReadonlyArray<string>): number => {
    let changed = 0
    for (const hash of hashes) changed += flip.run(hash).changes
    return changed
  }
  const write = (group: ReadonlyArray<BacklogText>, vectors: ReadonlyArray<Float32Array>) => {
    let changed = 0
    group.forEach((item, i) => {
      const vector = vectors[i]
      const id = insertKey.get(fingerprint, item.hash) as number | undefined
      if (id !== undefined && vector !== undefined) {
        if (int8) {
          const code = int8Code(vector)
          insertVector.run(BigInt(id), blobOf(int8ValuesOf(code)))
          codes?.add(id, vector, code)
        } else {
          insertVector.run(BigInt(id), vectorBlob(vector))
          codes?.add(id, vector)
        }
      }
      changed += flip.run(item.hash).changes
    })
    codes?.flush()
    return changed
  }
  const commits = makeCommitGroup(sqlite, limits)
  // A unit that throws rolls its commit back: its statements ran outside any savepoint.
  const inCommit = (now: number, bytes: number, unit: () => number): number => {
    commits.begin(now)
    let changed: number
    try {
      changed = unit()
    } catch (error) {
      commits.abort()
      throw error
    }
    commits.counted(bytes, now)
    return changed
  }
  return {
    nextTexts: (cursor, want) => {
      const texts: BacklogText[] = []
      const known: string[] = []
      const seen = new Set<string>()
      let last = cursor
      // Pages of chunk rows until `want` new texts are found or the backlog ends.
      while (texts.length < want) {
        const rows = page.all(last, Math.max(64, want * 2)) as Array<{
          id: number
          content_hash: string
          text: string
        }>
        if (rows.length === 0) break
        for (const row of rows) {
          last = row.id
          if (seen.has(row.content_hash)) continue
          seen.add(row.content_hash)
          if (keyOf.get(fingerprint, row.content_hash) !== undefined) known.push(row.content_hash)
          else texts.push({ hash: row.content_hash, text: row.text })
          if (texts.length >= want) break
        }
      }
      return { texts, known, cursor: last }
    },
    markDone: (hashes, now) => inCommit(now, 0, () => markDone(hashes)),
    write: (group, vectors, now) =>
      inCommit(now, group.length * dim * (int8 ? 1 : 4), () => write(group, vectors)),
    commit: commits.commit,
    close: commits.close,
    vectorsConverted,
  }
}

/**
 * Repairs the search codes of `vecTable` (see `vector-code-store.ts`), drops the 1-bit vec0
 * companion table earlier versions kept, and returns a writer for new codes.
 */
const syncCodesOf = (
  sqlite: Database,
  fingerprint: string,
  vecTable: string,
  dim: number,
): CodeWriter => {
  sqlite.exec(`drop table if exists ${vecTable}_bits`)
  syncCodes(sqlite, fingerprint, vecTable, dim)
  return makeCodeWriter(sqlite, vecTable, dim)
}

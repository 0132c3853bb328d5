/**
 * `recallStatus`: everything an agent or a person needs to judge the index before trusting a
 * recall — counts (per source), the embedding backlog and which vector spaces exist, freshness
 * (newest indexed activity, last run and its age, whether an indexer is running now), files the
 * indexer gave up on, and where transcripts are looked for. Guarantees: reads only, one
 * database; `empty` is true exactly when no session is indexed, so callers can say "nothing
 * indexed yet" with the roots that were searched instead of reporting an error.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { RecallQueryError, RecallStorageError } from "./errors.js"
import type { EmbeddingFailure } from "./embedding-backlog.js"
import { IndexerProcess } from "./index-lock.js"
import { indexStatus } from "./index-maintenance.js"
import type { IndexStatus } from "./index-maintenance.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { COUNTS_BY_SOURCE_SQL } from "./session-counts.js"
import { decodeRows } from "./stored-rows.js"
import { relativeAge, resolveTimeZone, whenHuman } from "./time-format.js"
import { transcriptRoots } from "./transcript-discovery.js"
import type { DiscoveryEnvironment, TranscriptRoots } from "./transcript-discovery.js"
import { vectorElementsOf } from "./vector-code-store.js"
import type { VectorElements } from "./vector-code-store.js"

/** Counts of one source. */
export interface SourceCounts {
  readonly sessions: number
  readonly turns: number
  readonly chunks: number
}

/** One stored vector space. */
export interface StoredEmbedder {
  readonly fingerprint: string
  readonly dim: number
  readonly vectors: number
  /** The space the last embedding run filled (`meta.embedder_fingerprint`). */
  readonly active: boolean
  /**
   * How its vectors are stored: `int8`, or `float32` in a table of an earlier version that the
   * next embedding run in this space rewrites as int8 (see `convertVectorsToInt8`).
   */
  readonly elements: VectorElements
  /**
   * The server its vectors came from (an OpenAI-compatible endpoint: origin and path); null for
   * a provider that names its model exactly, or a space made before endpoints were stored.
   */
  readonly endpoint: string | null
}

/** The index at a glance, for people and agents. */
export interface RecallStatus extends IndexStatus {
  readonly databasePath: string
  /** No session indexed yet. */
  readonly empty: boolean
  readonly bySource: { readonly claude: SourceCounts; readonly codex: SourceCounts }
  readonly embedders: ReadonlyArray<StoredEmbedder>
  readonly newestActivityHuman: string | null
  readonly lastRunAgo: string | null
  /** An indexer holds the lock right now. */
  readonly indexing: { readonly pid: number; readonly since: string } | null
  /**
   * The last embedding run's failure (the provider down, refusing, over budget), until a run
   * succeeds; null when the last one did.
   */
  readonly embeddingFailure: EmbeddingFailure | null
  /** Where transcripts are looked for (when the environment was given). */
  readonly roots: TranscriptRoots | null
}

const SourceRows = Schema.Array(
  Schema.Struct({
    source: Schema.String,
    sessions: Schema.Number,
    turns: Schema.Number,
    chunks: Schema.Number,
  }),
)

const EmbedderRows = Schema.Array(
  Schema.Struct({
    fingerprint: Schema.String,
    dim: Schema.Number,
    vectors: Schema.Number,
    active: Schema.Number,
    elements: Schema.Literals(["int8", "float32"]),
    endpoint: Schema.NullOr(Schema.String),
  }),
)

const LockRow = Schema.NullOr(
  Schema.Struct({ pid: Schema.Number, acquired_at: Schema.Number, lease_until: Schema.Number }),
)

/** Options of {@link recallStatus}. */
export interface RecallStatusOptions {
  /** Resolves the transcript roots reported in `roots`. */
  readonly environment?: DiscoveryEnvironment | undefined
  /**
   * Zone of the human times; default this computer's. Not an IANA zone: a `RecallQueryError` on
   * `timezone`.
   */
  readonly timezone?: string | undefined
}

/**
 * Runs `reads` in one read transaction (one snapshot of a WAL database), so counts taken by
 * separate queries agree while an index run commits; joins a transaction already open.
 */
const inOneSnapshot = <A, E>(
  reads: Effect.Effect<A, E, RecallDatabase>,
): Effect.Effect<A, E, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    return yield* Effect.acquireUseRelease(
      Effect.sync(() => {
        if (db.sqlite.inTransaction) return false
        db.sqlite.exec("begin")
        return true
      }),
      () => reads,
      (began) =>
        Effect.sync(() => {
          if (began && db.sqlite.inTransaction) db.sqlite.exec("commit")
        }),
    )
  })

/** Reports the state of the recall index, every count from one snapshot. */
export const recallStatus = (
  options: RecallStatusOptions = {},
): Effect.Effect<RecallStatus, RecallQueryError | RecallStorageError, RecallDatabase> =>
  inOneSnapshot(
    Effect.gen(function* () {
      const db = yield* RecallDatabase
      const now = yield* Clock.currentTimeMillis
      const timezone = yield* resolveTimeZone(options.timezone)
      // With the process service (the CLI and the MCP server provide it), a lock whose process is
      // gone — an index run stopped by Ctrl-C or a kill — is no running index, though its lease has
      // not run out yet (the next run takes it over at once).
      const host = yield* Effect.serviceOption(IndexerProcess)
      const base = yield* indexStatus(now)
      const read = <A>(f: () => A) => Effect.try({ try: f, catch: storageFailure("read", db.path) })
      const perSource = yield* decodeRows(
        SourceRows,
        db.path,
        yield* read(() => db.sqlite.prepare(COUNTS_BY_SOURCE_SQL).all()),
      )
      const embedders = yield* decodeRows(
        EmbedderRows,
        db.path,
        yield* read(() =>
          (
            db.sqlite
              .prepare(
                `select e.fingerprint, e.dim, e.vec_table,
                    e.vector_count as vectors, e.endpoint,
                    coalesce((select value from meta where key = 'embedder_fingerprint'), '')
                      = e.fingerprint as active
             from embedders e order by e.created_at`,
              )
              .all() as Array<{ vec_table: string }>
          ).map((row) => ({ ...row, elements: vectorElementsOf(db.sqlite, row.vec_table) })),
        ),
      )
      const lock = yield* decodeRows(
        LockRow,
        db.path,
        (yield* read(() =>
          db.sqlite
            .prepare("select pid, acquired_at, lease_until from index_lock where id = 1")
            .get(),
        )) ?? null,
      )
      const counts = (source: string): SourceCounts => {
        const row = perSource.find((r) => r.source === source)
        return { sessions: row?.sessions ?? 0, turns: row?.turns ?? 0, chunks: row?.chunks ?? 0 }
      }
      return {
        ...base,
        databasePath: db.path,
        empty: base.sessions === 0,
        bySource: { claude: counts("claude"), codex: counts("codex") },
        embedders: embedders.map((e) => ({
          fingerprint: e.fingerprint,
          dim: e.dim,
          vectors: e.vectors,
          active: e.active === 1,
          elements: e.elements,
          endpoint: e.endpoint,
        })),
        newestActivityHuman:
          base.newestActivity === null ? null : whenHuman(base.newestActivity, now, timezone),
        lastRunAgo: base.lastRun === null ? null : relativeAge(base.lastRun.finishedAt, now),
        indexing:
          lock !== null &&
          lock.lease_until > now &&
          (host._tag === "None" || host.value.isAlive(lock.pid))
            ? { pid: lock.pid, since: new Date(lock.acquired_at).toISOString() }
            : null,
        roots: options.environment === undefined ? null : transcriptRoots(options.environment),
        embeddingFailure: yield* read(() => {
          const raw = db.sqlite
            .prepare("select value from meta where key = 'embedding_failure'")
            .pluck()
            .get()
          if (typeof raw !== "string") return null
          try {
            const parsed = JSON.parse(raw) as Partial<EmbeddingFailure>
            return typeof parsed.at === "string" &&
              typeof parsed.fingerprint === "string" &&
              typeof parsed.reason === "string"
              ? {
                  at: parsed.at,
                  fingerprint: parsed.fingerprint,
                  failure: typeof parsed.failure === "string" ? parsed.failure : null,
                  reason: parsed.reason,
                }
              : null
          } catch {
            return null
          }
        }),
      }
    }),
  )

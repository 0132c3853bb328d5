/**
 * Per-embedder vector storage: each embedder fingerprint (provider/model/dim) gets its own vec0
 * table, created lazily, so switching models never mixes spaces and the old space keeps serving
 * while the new one fills. Vectors are keyed by `vector_keys (fingerprint, content_hash)`: one
 * vector per distinct chunk text per model, shared by every copy of that text. Activating an
 * embedder other than the index's current one recomputes the `chunks.needs_embedding` backlog
 * against its keys (the same embedder keeps the flags: new chunks arrive flagged); a run that
 * wrote nothing into the space it activated puts the previous one back ({@link restoreActiveSpace}).
 * A space of an embedder that names its endpoint (an OpenAI-compatible server) is stored with it,
 * and activating it from another endpoint is refused ({@link endpointMismatch}): such servers
 * often ignore the model name, so the fingerprint alone cannot tell two models apart. A space
 * stored without one (made before schema 14) adopts the endpoint of its next activation.
 * No embedding here.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { EmbedderError } from "./embedder.js"
import { RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { dropCodeTables, int8VectorTable } from "./vector-code-store.js"

/** The active embedder and its vec0 table. */
export interface ActiveEmbedder {
  readonly fingerprint: string
  readonly dim: number
  readonly vecTable: string
  /** Chunks without a vector in this embedder's space. */
  readonly backlog: number
  /** The space the index was last embedded in, when it was another one (a switch); else null. */
  readonly switchedFrom: string | null
}

/** An activation with what it replaced, for {@link restoreActiveSpace}. */
export interface ActivatedSpace extends ActiveEmbedder {
  /** The active space before (the same fingerprint when unchanged); null: none yet. */
  readonly previous: string | null
  /** `meta.embedded_fingerprint` before (the embedded space last filled). */
  readonly embeddedBefore: string | null
  /** Whether this activation created the space's table. */
  readonly created: boolean
}

/**
 * Creates (once) the vec0 table of `fingerprint` with `int8[dim]` vectors (cosine distance), records it as the
 * index's embedder in `meta`, and, when that changes the index's embedder, marks every chunk
 * lacking its vector as needing embedding.
 */
export const activateEmbedder = (
  fingerprint: string,
  dim: number,
  endpoint?: string,
): Effect.Effect<ActiveEmbedder, RecallStorageError | EmbedderError, RecallDatabase> =>
  activateSpace(fingerprint, dim, endpoint)

/**
 * Why a space stored with endpoint `stored` does not take vectors from `endpoint`, and what to do
 * (only OpenAI-compatible embedders name an endpoint, hence the variable names).
 */
export const endpointMismatch = (fingerprint: string, stored: string, endpoint: string): string =>
  `the space ${fingerprint} holds vectors from ${stored}, but BATON_EMBEDDINGS_URL now names ` +
  `${endpoint}, which may serve another model under the same name; nothing was embedded. ` +
  `To embed with the new server, set BATON_EMBEDDINGS_MODEL to a name unique to its model ` +
  `(a new space is built); or set BATON_EMBEDDINGS_URL back to ${stored}`

/** {@link activateEmbedder}, also saying what it replaced. */
export const activateSpace = (
  fingerprint: string,
  dim: number,
  endpoint?: string,
): Effect.Effect<ActivatedSpace, RecallStorageError | EmbedderError, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const now = yield* Clock.currentTimeMillis
    return yield* Number.isInteger(dim) && dim > 0 && dim <= 8192
      ? Effect.try({
          try: () =>
            db.sqlite
              .transaction((now: number): ActivatedSpace | string | EmbedderError => {
                const known = db.sqlite
                  .prepare("select dim, vec_table, endpoint from embedders where fingerprint = ?")
                  .get(fingerprint) as
                  { dim: number; vec_table: string; endpoint: string | null } | undefined
                if (known !== undefined && known.dim !== dim) {
                  return `embedder ${fingerprint} is stored with dimension ${known.dim}, not ${dim}`
                }
                const named = endpoint === undefined || endpoint === "" ? null : endpoint
                if (known !== undefined && named !== null) {
                  if (known.endpoint !== null && known.endpoint !== named) {
                    return new EmbedderError({
                      provider: fingerprint.split("/")[0] ?? fingerprint,
                      failure: "bad_request",
                      retryable: false,
                      reason: endpointMismatch(fingerprint, known.endpoint, named),
                    })
                  }
                  // A space made before endpoints were stored adopts this one.
                  if (known.endpoint === null)
                    db.sqlite
                      .prepare("update embedders set endpoint = ? where fingerprint = ?")
                      .run(named, fingerprint)
                }
                let vecTable = known?.vec_table
                if (vecTable === undefined) {
                  const next = db.sqlite
                    .prepare("select coalesce(max(rowid), 0) + 1 as n from embedders")
                    .get() as { n: number }
                  vecTable = `vec_${next.n}`
                  db.sqlite.exec(int8VectorTable(vecTable, dim))
                  db.sqlite
                    .prepare(
                      "insert into embedders (fingerprint, dim, vec_table, created_at, endpoint) values (?, ?, ?, ?, ?)",
                    )
                    .run(fingerprint, dim, vecTable, now, named)
                }
                const previous = db.sqlite
                  .prepare("select value from meta where key = 'embedder_fingerprint'")
                  .pluck()
                  .get() as string | undefined
                const embeddedBefore = db.sqlite
                  .prepare("select value from meta where key = 'embedded_fingerprint'")
                  .pluck()
                  .get() as string | undefined
                db.sqlite
                  .prepare(
                    "insert into meta (key, value) values ('embedder_fingerprint', ?) on conflict(key) do update set value = excluded.value",
                  )
                  .run(fingerprint)
                // The embedded space last filled, for `auto` after a run with a service.
                if (fingerprint.startsWith("embedded/")) {
                  db.sqlite
                    .prepare(
                      "insert into meta (key, value) values ('embedded_fingerprint', ?) on conflict(key) do update set value = excluded.value",
                    )
                    .run(fingerprint)
                }
                // The flags describe the active embedder's space; they are recomputed only when it
                // changes (a full update of every chunk: ~20 s at 1.5 M chunks, which a no-change
                // run must not pay). With the same embedder, new chunks arrive flagged and the
                // backlog clears them.
                if (previous !== fingerprint) {
                  db.sqlite
                    .prepare(
                      `update chunks set needs_embedding = not exists (
                         select 1 from vector_keys k
                         where k.fingerprint = ? and k.content_hash = chunks.content_hash)`,
                    )
                    .run(fingerprint)
                }
                const backlog = db.sqlite
                  .prepare("select count(*) as n from chunks where needs_embedding = 1")
                  .get() as { n: number }
                return {
                  fingerprint,
                  dim,
                  vecTable,
                  backlog: backlog.n,
                  switchedFrom:
                    previous !== undefined && previous !== fingerprint ? previous : null,
                  previous: previous ?? null,
                  embeddedBefore: embeddedBefore ?? null,
                  created: known === undefined,
                }
              })
              .immediate(now),
          catch: storageFailure("write", db.path),
        }).pipe(
          Effect.flatMap(
            (out): Effect.Effect<ActivatedSpace, RecallStorageError | EmbedderError> =>
              typeof out === "string"
                ? Effect.fail(
                    new RecallStorageError({ operation: "write", path: db.path, reason: out }),
                  )
                : out instanceof EmbedderError
                  ? Effect.fail(out)
                  : Effect.succeed(out),
          ),
        )
      : Effect.fail(
          new RecallStorageError({
            operation: "write",
            path: db.path,
            reason: `vector dimension must be an integer in 1..8192, got ${dim}`,
          }),
        )
  })

/**
 * Undoes {@link activateSpace} for a run that wrote no vector: the space active before is active
 * again, with the backlog flags recomputed against its vectors (so they never describe another
 * space than the active one), and a space the activation created that holds no vector is dropped.
 * One transaction. Nothing to do when the activation changed nothing.
 */
export const restoreActiveSpace = (
  space: ActivatedSpace,
): Effect.Effect<void, RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    if (space.previous === space.fingerprint) return
    const db = yield* RecallDatabase
    yield* Effect.try({
      try: () =>
        db.sqlite
          .transaction(() => {
            const setMeta = (key: string, value: string | null) => {
              if (value === null) db.sqlite.prepare("delete from meta where key = ?").run(key)
              else
                db.sqlite
                  .prepare(
                    "insert into meta (key, value) values (?, ?) on conflict(key) do update set value = excluded.value",
                  )
                  .run(key, value)
            }
            setMeta("embedder_fingerprint", space.previous)
            setMeta("embedded_fingerprint", space.embeddedBefore)
            // No active space before: the flags still say "no vector" (none was written).
            if (space.previous !== null) {
              db.sqlite
                .prepare(
                  `update chunks set needs_embedding = not exists (
                     select 1 from vector_keys k
                     where k.fingerprint = ? and k.content_hash = chunks.content_hash)`,
                )
                .run(space.previous)
            }
            const vectors = db.sqlite
              .prepare("select count(*) from vector_keys where fingerprint = ?")
              .pluck()
              .get(space.fingerprint) as number
            if (space.created && vectors === 0) {
              db.sqlite.exec(`drop table if exists ${space.vecTable}`)
              dropCodeTables(db.sqlite, space.vecTable)
              db.sqlite
                .prepare("delete from embedders where fingerprint = ?")
                .run(space.fingerprint)
            }
          })
          .immediate(),
      catch: storageFailure("write", db.path),
    })
  })

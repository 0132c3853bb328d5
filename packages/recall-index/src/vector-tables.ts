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
 * often ignore the model name, so the fingerprint alone cannot tell two models apart — unless the
 * caller has checked that the new endpoint gives the stored vectors again (a server that moved:
 * {@link endpointSamples}, {@link SAME_VECTORS_COSINE}), when the space adopts it. A space
 * stored without one (made before schema 14) adopts the endpoint of its next activation.
 * No embedding here.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { EmbedderError } from "./embedder.js"
import { RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import type { Database } from "better-sqlite3"
import { dropCodeTables, int8VectorTable, vectorElementsOf } from "./vector-code-store.js"

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
  movedFrom?: string,
): Effect.Effect<ActiveEmbedder, RecallStorageError | EmbedderError, RecallDatabase> =>
  activateSpace(fingerprint, dim, endpoint, movedFrom)

/**
 * Why a space stored with endpoint `stored` does not take vectors from `endpoint`, and what to do
 * (only OpenAI-compatible embedders name an endpoint, hence the variable names). `cosine`: the
 * lowest cosine similarity between the new endpoint's vectors of stored texts and the stored
 * ones, when they were compared.
 */
export const endpointMismatch = (
  fingerprint: string,
  stored: string,
  endpoint: string,
  cosine?: number,
): string =>
  `the space ${fingerprint} holds vectors from ${stored}, but BATON_EMBEDDINGS_URL now names ` +
  `${endpoint}, which may serve another model under the same name` +
  (cosine === undefined
    ? ""
    : ` (its vectors of texts already embedded differ from the stored ones: cosine ` +
      `${cosine.toFixed(2)}, where the same model gives at least ${SAME_VECTORS_COSINE})`) +
  `; nothing was embedded. ` +
  `To embed with the new server, set BATON_EMBEDDINGS_MODEL to a name unique to its model ` +
  `(a new space is built); or set BATON_EMBEDDINGS_URL back to ${stored}`

/**
 * The cosine similarity at or above which an endpoint's vector of a stored text counts as the
 * stored vector again (the server moved, the model is the same). Stored vectors are int8 (each
 * value rounded to 1/254 of the largest): that costs about 1e-3 of cosine similarity, and a
 * server running the same model in other precision or batching differs by about as much (0.99
 * or more). Two different models' vectors of one text are unrelated directions (cosine near 0,
 * rarely above 0.5, even for models of one family), so 0.98 leaves room on both sides.
 */
export const SAME_VECTORS_COSINE = 0.98

/** How many stored texts {@link endpointSamples} takes to compare a moved server's vectors. */
export const ENDPOINT_SAMPLES = 3

/** A space's stored endpoint, vectors, and a few of its texts with their stored vectors. */
export interface EndpointSamples {
  /** Null: stored without one (before schema 14). */
  readonly endpoint: string | null
  /** Vectors the space holds. */
  readonly vectors: number
  /** The texts of the lowest chunk ids that have a vector in the space, each once. */
  readonly samples: ReadonlyArray<{ readonly text: string; readonly vector: Float32Array }>
}

/**
 * What a new endpoint must reproduce for `fingerprint`'s space to adopt it: its stored endpoint,
 * and up to `limit` texts with their stored vectors (dequantized: int8 values are the vector up to
 * a scale, which a cosine ignores). Undefined when the space does not exist or has another
 * dimension (the activation says so). Reads only.
 */
export const endpointSamples = (
  sqlite: Database,
  fingerprint: string,
  dim: number,
  limit: number = ENDPOINT_SAMPLES,
): EndpointSamples | undefined => {
  const space = sqlite
    .prepare("select dim, vec_table, endpoint from embedders where fingerprint = ?")
    .get(fingerprint) as { dim: number; vec_table: string; endpoint: string | null } | undefined
  if (space === undefined || space.dim !== dim) return undefined
  const vectors = sqlite
    .prepare("select count(*) from vector_keys where fingerprint = ?")
    .pluck()
    .get(fingerprint) as number
  const hasTable =
    sqlite
      .prepare("select 1 from sqlite_master where type = 'table' and name = ?")
      .pluck()
      .get(space.vec_table) !== undefined
  const samples: Array<{ text: string; vector: Float32Array }> = []
  if (vectors > 0 && hasTable) {
    const int8 = vectorElementsOf(sqlite, space.vec_table) === "int8"
    const vectorOf = sqlite
      .prepare(`select embedding from ${space.vec_table} where rowid = ?`)
      .pluck()
    // In chunk order: the oldest texts, the same ones every run. Copies of a text share one
    // vector, so a few more rows than texts are read (fewer samples if they are all copies).
    const rows = sqlite
      .prepare(
        `select c.text as text, c.content_hash as hash, k.id as key
         from chunks c join vector_keys k
           on k.fingerprint = ? and k.content_hash = c.content_hash
         order by c.id limit ?`,
      )
      .all(fingerprint, limit * 16) as Array<{ text: string; hash: string; key: number }>
    const seen = new Set<string>()
    for (const row of rows) {
      if (seen.has(row.hash)) continue
      seen.add(row.hash)
      const blob = vectorOf.get(BigInt(row.key)) as Buffer | undefined
      if (blob === undefined || blob.byteLength !== dim * (int8 ? 1 : 4)) continue
      const vector = new Float32Array(dim)
      const values = int8
        ? new Int8Array(blob.buffer, blob.byteOffset, dim)
        : new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + dim * 4))
      for (let i = 0; i < dim; i++) vector[i] = values[i] ?? 0
      samples.push({ text: row.text, vector })
      if (samples.length >= limit) break
    }
  }
  return { endpoint: space.endpoint, vectors, samples }
}

/** Cosine similarity of two vectors of one length (0 when either has no direction). */
export const cosineSimilarity = (a: Float32Array, b: Float32Array): number => {
  let dot = 0
  let aa = 0
  let bb = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    dot += x * y
    aa += x * x
    bb += y * y
  }
  return aa === 0 || bb === 0 ? 0 : dot / Math.sqrt(aa * bb)
}

/**
 * {@link activateEmbedder}, also saying what it replaced. `movedFrom`: the stored endpoint the
 * caller found `endpoint` to reproduce (a server that moved); the space adopts `endpoint` when
 * that is still the stored one, instead of refusing it.
 */
export const activateSpace = (
  fingerprint: string,
  dim: number,
  endpoint?: string,
  movedFrom?: string,
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
                  const moved = known.endpoint !== null && known.endpoint === movedFrom
                  if (known.endpoint !== null && known.endpoint !== named && !moved) {
                    return new EmbedderError({
                      provider: fingerprint.split("/")[0] ?? fingerprint,
                      failure: "bad_request",
                      retryable: false,
                      reason: endpointMismatch(fingerprint, known.endpoint, named),
                    })
                  }
                  // A space made before endpoints were stored adopts this one, as does one
                  // whose server moved.
                  if (known.endpoint === null || (moved && known.endpoint !== named))
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

/**
 * Nearest-neighbour search as an effect over the {@link RecallDatabase} service: the search of
 * `vector-knn.ts` (re-exported here), its invalid requests (a query vector of the wrong length or
 * with a non-finite value, a bad `k` or `pool`) as {@link RecallQueryError} and driver failures
 * as {@link RecallStorageError}.
 */
import * as Effect from "effect/Effect"
import { RecallQueryError } from "./errors.js"
import type { RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { searchVectorsIn } from "./vector-knn.js"
import type { CodeHolding, VectorHit, VectorSearchOptions } from "./vector-knn.js"

export * from "./vector-knn.js"

/** The k nearest chunks to `vector` in the space of `fingerprint` (codes kept as `holding` says). */
export const searchVectors = (
  options: VectorSearchOptions,
  holding: CodeHolding = {},
): Effect.Effect<ReadonlyArray<VectorHit>, RecallQueryError | RecallStorageError, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const outcome = yield* Effect.try({
      try: () => searchVectorsIn(db.sqlite, options, holding),
      catch: storageFailure("read", db.path),
    })
    if (typeof outcome === "string") {
      return yield* new RecallQueryError({
        field: /^(k|pool) /.test(outcome) ? "limit" : "query",
        message: outcome,
      })
    }
    return outcome
  })

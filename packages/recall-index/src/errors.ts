/**
 * Tagged errors of @baton/recall-index. Each carries what a user needs to act; none carries
 * file contents or query text.
 */
import { Data } from "effect"

/** Stage at which the vector store probe failed. */
export type VectorStoreProbeStage = "load-driver" | "open-database" | "load-extension" | "query"

/** The SQLite driver or the sqlite-vec extension cannot be loaded or used on this machine. */
export class VectorStoreUnavailableError extends Data.TaggedError("VectorStoreUnavailableError")<{
  readonly stage: VectorStoreProbeStage
  readonly reason: string
}> {}

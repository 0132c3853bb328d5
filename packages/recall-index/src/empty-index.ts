/**
 * `emptyIndexFacts`: why an index holds no session yet — an indexer writing the first sessions
 * now, files that failed to index, transcripts waiting for a first run, or none found — so the
 * CLI and the MCP tools can say it the same way instead of "nothing indexed" alone. Runs
 * discovery (a stat and a 4 KiB head per transcript), so callers run it only for an empty index.
 */
import * as Effect from "effect/Effect"
import type { RecallStatus } from "./recall-status.js"
import type { TranscriptFileSystem } from "./transcript-file-system.js"
import { discoverTranscripts, transcriptRoots } from "./transcript-discovery.js"
import type { DiscoveryEnvironment, TranscriptRoots } from "./transcript-discovery.js"

/** What is known about an index that holds no session yet. */
export interface EmptyIndexFacts {
  /** Where transcripts are looked for. */
  readonly roots: TranscriptRoots
  /** Those of the roots that do not exist. */
  readonly missingRoots: ReadonlyArray<string>
  /** Transcript files on disk now. */
  readonly transcripts: number
  /** An indexer holds the lock now. */
  readonly indexing: RecallStatus["indexing"]
  /** Files the indexer failed on (retried next run) or quarantined. */
  readonly failing: number
  /** Files left out on purpose: their sessions were forgotten. */
  readonly forgotten: number
  /** The headline reason: the first of these that holds, in this order. */
  readonly reason: EmptyIndexReason
}

/**
 * Why the index is empty: an indexer is writing the first sessions, files failed to index, the
 * transcripts found were all forgotten (`forget`: index runs skip them on purpose), transcripts
 * wait for a first run, or none were found.
 */
export type EmptyIndexReason = "indexing" | "failing" | "forgotten" | "waiting" | "none-found"

/**
 * Gathers the facts. `status` is the index's `recallStatus` when an index file exists
 * (`undefined` when there is none yet: nothing is indexing or failing then).
 */
export const emptyIndexFacts = (
  environment: DiscoveryEnvironment,
  status:
    Pick<RecallStatus, "indexing" | "failingFiles" | "quarantined" | "forgottenFiles"> | undefined,
): Effect.Effect<EmptyIndexFacts, never, TranscriptFileSystem> =>
  Effect.map(discoverTranscripts(environment), (discovery) => {
    const indexing = status?.indexing ?? null
    const failing = (status?.failingFiles ?? 0) + (status?.quarantined.length ?? 0)
    const transcripts = discovery.files.length
    const forgotten = status?.forgottenFiles ?? 0
    return {
      roots: transcriptRoots(environment),
      missingRoots: discovery.missingRoots,
      transcripts,
      indexing,
      failing,
      forgotten,
      reason:
        indexing !== null
          ? "indexing"
          : failing > 0
            ? "failing"
            : forgotten > 0 && transcripts <= forgotten
              ? "forgotten"
              : transcripts > 0
                ? "waiting"
                : "none-found",
    }
  })

/**
 * The incremental-indexing decision as one pure table: what changed between the signature
 * stored for a file and the one discovery just saw. Guarantees: `append` only when the rows on
 * record can be extended in place (same inode, same head, larger plain file, a stored parse
 * state); anything doubtful is `rewrite` (re-index from byte 0), never a silent skip.
 */

/** The part of a discovered file the decision reads. */
export interface SignatureNow {
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
  readonly headHash: string
  readonly compression: "none" | "zstd"
}

/** The part of a stored `files` row the decision reads. */
export interface SignatureStored {
  readonly size: number
  readonly mtimeMs: number
  readonly inode: number
  readonly headHash: string
  readonly status: "indexed" | "failed" | "quarantined" | "missing" | "forgotten"
  /** The stored rows can be resumed (a parse state exists). */
  readonly resumable: boolean
  /** `size:mtime:inode:head` of the version that was quarantined, if any. */
  readonly failedSignature: string | null
  /** The parser version that read the stored rows. */
  readonly parserVersion: number
}

/** What the indexer does with a file. */
export type FileChange =
  "new" | "unchanged" | "append" | "rewrite" | "reparse" | "skip-quarantined" | "skip-forgotten"

/** The signature string recorded when a version of a file fails. */
export const signatureKey = (now: SignatureNow): string =>
  `${now.size}:${now.mtimeMs}:${now.ino}:${now.headHash}`

/**
 * Decides how to index a file. `reparse` (read it again whole) when rows an older parser made
 * would otherwise stay: the parser version moved on (`parserVersion`). `prefixMatches` answers "do the file's first `min(headBytes,
 * stored.size)` bytes still hash to the stored head hash?" — needed when a small file grows
 * past its old size, which changes the head hash although nothing before was rewritten.
 */
export const decideFileChange = (
  stored: SignatureStored | undefined,
  now: SignatureNow,
  prefixMatches: boolean,
  parserVersion: number,
): FileChange => {
  if (stored === undefined) return "new"
  if (stored.status === "forgotten") return "skip-forgotten"
  if (stored.status === "quarantined" && stored.failedSignature === signatureKey(now)) {
    return "skip-quarantined"
  }
  if (!stored.resumable) return "new"
  if (stored.parserVersion < parserVersion) return "reparse"
  const sameFile = stored.inode === now.ino
  const sameHead = stored.headHash === now.headHash
  if (sameFile && sameHead && stored.size === now.size && stored.mtimeMs === now.mtimeMs) {
    return stored.status === "indexed" ? "unchanged" : "append"
  }
  if (
    sameFile &&
    (sameHead || prefixMatches) &&
    now.size > stored.size &&
    now.compression === "none"
  ) {
    return "append"
  }
  return "rewrite"
}

/** True when `prefixMatches` needs checking (a grown file whose head hash moved). */
export const needsPrefixCheck = (
  stored: SignatureStored | undefined,
  now: SignatureNow,
  headBytes: number,
): boolean =>
  stored !== undefined &&
  stored.resumable &&
  stored.inode === now.ino &&
  stored.headHash !== now.headHash &&
  now.size > stored.size &&
  stored.size < headBytes &&
  now.compression === "none"

/**
 * Tagged errors of @baton/recall-index. Each carries what a user needs to act; none carries
 * file contents or query text.
 */
import { dirname } from "node:path"
import * as Data from "effect/Data"
import { RELATIVE_DATA_DIR_REASON, relativeDataDirMessage } from "./data-directory.js"

/** Stage at which the vector store probe failed. */
export type VectorStoreProbeStage = "load-driver" | "open-database" | "load-extension" | "query"

/** The SQLite driver or the sqlite-vec extension cannot be loaded or used on this machine. */
export class VectorStoreUnavailableError extends Data.TaggedError("VectorStoreUnavailableError")<{
  readonly stage: VectorStoreProbeStage
  readonly reason: string
}> {
  override get message(): string {
    return `the SQLite vector store cannot be used on this machine (${this.stage}): ${this.reason}`
  }
}

/** Which file-system call failed. */
export type TranscriptFsOperation = "list" | "stat" | "read"

/** A transcript file or root could not be listed, statted or read; `code` is the errno code. */
export class TranscriptReadError extends Data.TaggedError("TranscriptReadError")<{
  readonly path: string
  readonly operation: TranscriptFsOperation
  readonly code: string
}> {
  override get message(): string {
    return `cannot ${this.operation} ${this.path}: ${this.code}`
  }
}

/** A `.jsonl.zst` rollout is not valid zstd (corrupt or cut short). */
export class TranscriptDecompressError extends Data.TaggedError("TranscriptDecompressError")<{
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `${this.path} is not valid zstd (corrupt or cut short): ${this.reason}`
  }
}

/**
 * A resume point does not fit the file: the offset lies past its end (the file was replaced or
 * truncated) or the state belongs to another source. Re-parse the file from offset 0.
 */
export class TranscriptResumeError extends Data.TaggedError("TranscriptResumeError")<{
  readonly path: string
  readonly offset: number
  readonly size: number
}> {
  override get message(): string {
    return (
      `cannot resume ${this.path} at byte ${this.offset}: it has ${this.size} bytes (replaced or ` +
      "truncated); parse it again from the start"
    )
  }
}

/** Every error the transcript readers return. */
export type TranscriptError =
  TranscriptReadError | TranscriptDecompressError | TranscriptResumeError

/** What the index store was doing when SQLite or the file system refused. */
export type RecallStorageOperation =
  "create-directory" | "open" | "migrate" | "read" | "write" | "decode" | "close" | "vacuum"

/** The recall index database could not be opened, migrated, read or written. */
export class RecallStorageError extends Data.TaggedError("RecallStorageError")<{
  readonly operation: RecallStorageOperation
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    // SQLITE_BUSY after the busy timeout: another process holds the write lock — in practice an
    // index run, which holds it while it writes (its files commit in groups).
    if (/database is locked|SQLITE_BUSY/i.test(this.reason))
      return (
        `the recall index at ${this.path} is busy: another process is writing it (an index run?); ` +
        "try again when it finishes ('baton recall status' shows a running index)"
      )
    if (this.operation === "create-directory" && this.reason === RELATIVE_DATA_DIR_REASON)
      return relativeDataDirMessage(this.path)
    if (this.operation === "create-directory" && this.path === "") {
      return (
        "no directory was given for the recall index: set BATON_DATA_DIR (or pass dataDir) to a " +
        "directory you can write (default: $XDG_DATA_HOME/baton, else ~/.local/share/baton)"
      )
    }
    if (this.operation === "create-directory") {
      const what = /^dangling symbolic link/.test(this.reason)
        ? `cannot be created: ${this.reason.replace(/^dangling symbolic link: /, "")}`
        : /EEXIST|ENOTDIR/.test(this.reason)
          ? "is not a directory (a file is in the way)"
          : /EACCES|EPERM|EROFS/.test(this.reason)
            ? "cannot be created here (no permission, or a read-only file system)"
            : /ENOSPC/.test(this.reason)
              ? "cannot be created: the disk is full"
              : `cannot be created (${this.reason})`
      return (
        `the recall index directory ${this.path} ${what}: set BATON_DATA_DIR to a directory ` +
        "you can write (default: $XDG_DATA_HOME/baton, else ~/.local/share/baton)"
      )
    }
    const where = dirname(this.path)
    // SQLITE_IOERR_SHMSIZE: opening a WAL database on a disk without 32 KiB free, where SQLite
    // cannot size the shared-memory file it maps (it says only "disk I/O error").
    if (/database or disk is full|SQLITE_FULL|ENOSPC|SQLITE_IOERR_SHMSIZE/i.test(this.reason)) {
      const full = `the disk holding the recall index (${where}) is full`
      // A vacuum runs in one transaction: a failed one leaves the file as it was.
      if (this.operation === "vacuum")
        return (
          `${full} (${this.reason}): the vacuum was undone and the index is unchanged; free ` +
          "some space (a vacuum needs up to about twice the index's size free) and run " +
          "'baton recall vacuum' again"
        )
      if (this.operation === "open" || this.operation === "read")
        return (
          `${full}, so the index at ${this.path} cannot be ` +
          `${this.operation === "open" ? "opened" : "read"}, not even to search it ` +
          `(${this.reason}): free some space there, or set BATON_DATA_DIR to a directory on ` +
          "another disk (and index again there); the index is unchanged"
        )
    }
    // SQLITE_FULL: rows already committed stay; an index run commits files in groups, so the
    // next one continues from the last group.
    if (/database or disk is full|SQLITE_FULL|ENOSPC|SQLITE_IOERR_SHMSIZE/i.test(this.reason))
      return (
        `the disk holding the recall index (${where}) is full: free some space, or set ` +
        "BATON_DATA_DIR to a directory on another disk (and index again there); what was " +
        "written before is kept, and the next index run continues from it"
      )
    // EROFS: a read-only mount. A WAL database cannot be opened there unless its -wal and -shm
    // files exist (SQLite cannot create them), which a clean close removes.
    if (/EROFS|read-only file system/i.test(this.reason)) {
      const opening = this.operation === "open"
      return (
        `the file system holding the recall index (${where}) is read-only, so the index at ` +
        `${this.path} cannot be ${opening ? "opened" : "written"} (${this.reason}): remount it ` +
        "read-write, or set BATON_DATA_DIR to a directory on a writable disk (and index again " +
        `there)${opening ? "; Baton cannot yet read an index on a read-only file system" : ""}`
      )
    }
    if (/readonly database|SQLITE_READONLY|EACCES|EPERM|EROFS/i.test(this.reason))
      return (
        `the recall index at ${this.path} cannot be written (${this.reason}): check that the ` +
        `file and ${where} are yours and writable (baton creates them 0600 and 0700)`
      )
    if (/malformed|not a database|SQLITE_CORRUPT|SQLITE_NOTADB/i.test(this.reason))
      return (
        `the recall index at ${this.path} is damaged (${this.reason}): move it aside and run ` +
        "'baton recall index' to build it again from the transcripts on disk (sessions whose " +
        "transcripts were deleted since are only in the damaged file)"
      )
    if (/unable to open database file|SQLITE_CANTOPEN|EISDIR/i.test(this.reason))
      return (
        `the recall index at ${this.path} cannot be opened (${this.reason}): it must be a ` +
        `database file you can read and write, in ${where} (a directory of that name, or a ` +
        "file you may not open, is in the way)"
      )
    if (/^written by a newer Baton/.test(this.reason))
      return (
        `the recall index at ${this.path} was ${this.reason}. If you have just updated Baton, ` +
        "this process is the previous version still running: restart it (an agent's MCP server " +
        "restarts with the agent session; a 'baton recall index --watch' by running it again). " +
        "Otherwise update Baton to use this index, or set BATON_DATA_DIR to another directory " +
        "for a separate index of this version's own; the index is left as it is"
      )
    return `recall index ${this.operation} failed at ${this.path}: ${this.reason}`
  }
}

/** Another indexer holds the index lock: wait for it, or retry after its lease expires. */
export class IndexBusyError extends Data.TaggedError("IndexBusyError")<{
  readonly pid: number
  /** Epoch ms when the other indexer took the lock. */
  readonly since: number
  readonly message: string
}> {}

/** Which recall input was rejected. */
export type RecallQueryField =
  "query" | "limit" | "source" | "date" | "timezone" | "pattern" | "session" | "turn" | "direction"

/**
 * A recall search or navigation input is invalid (a malformed date, an unknown time zone, an
 * invalid or unsafe regular expression…). `message` says what to change; it never quotes more
 * than a short prefix of the input.
 */
export class RecallQueryError extends Data.TaggedError("RecallQueryError")<{
  readonly field: RecallQueryField
  readonly message: string
}> {}

/** The session, or the turn within it, is not in the index (never indexed, pruned or forgotten). */
export class RecallNotFoundError extends Data.TaggedError("RecallNotFoundError")<{
  readonly sessionId: string
  readonly turnId: string | null
  readonly message: string
}> {}

/** The embedder settings (`BATON_EMBEDDER` and friends) are incomplete or unknown. */
export class EmbedderConfigError extends Data.TaggedError("EmbedderConfigError")<{
  /** The environment variable to set or fix. */
  readonly variable: string
  readonly message: string
}> {}

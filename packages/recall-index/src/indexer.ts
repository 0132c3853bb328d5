/**
 * The incremental indexer: discover transcripts, compare each signature with the stored one in
 * memory (one SELECT of all file rows), and index only what changed — appended bytes resume from
 * the stored offset and `ParseState`, rewritten or truncated files are re-indexed from byte 0,
 * and a rollout moved to `archived_sessions/` keeps its rows. Guarantees: each file is written in
 * its own transaction — a savepoint in a commit group of consecutive files (a kill leaves whole
 * files only, and loses at most the open group); one failing file never stops the run, is
 * retried next run and quarantined after `quarantineAfter` consecutive failures; only one
 * indexer runs at a time (index-lock.ts); vanished files keep their rows (prune is explicit); a
 * run with much to write builds the lookup indexes once at its end (lookup-indexes.ts), and any
 * run builds those a stopped run left missing.
 * All IO arrives as services: files, database, clock, process. Memory: one file's parse result
 * is held at a time, so peak memory scales with the largest transcript.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { basename, posix } from "node:path"
import type { ChunkOptions } from "./chunker.js"
import type { IndexBusyError, RecallStorageError, TranscriptError } from "./errors.js"
import { decideFileChange, needsPrefixCheck, signatureKey } from "./file-change.js"
import type { FileChange, SignatureStored } from "./file-change.js"
import { acquireIndexLock, IndexerProcess } from "./index-lock.js"
import { dropVectorsOfGoneText, hasGoneTextNote } from "./gone-vectors.js"
import { deferWalCheckpoints, makeCommitGroup, makeIndexWriter } from "./index-writer.js"
import type { CommitGroup, CommitGroupLimits } from "./index-writer.js"
import {
  buildLookupIndexes,
  dropLookupIndexes,
  missingLookupIndexes,
  shouldDeferLookupIndexes,
} from "./lookup-indexes.js"
import {
  deferLexicalIndex,
  finishLexicalBacklog,
  lexicalBacklogSize,
  shouldDeferLexicalIndex,
} from "./lexical-backlog.js"
import { RecallDatabase, storageFailure, WRITER_ANNOUNCEMENT_STALE_MS } from "./recall-database.js"
import { decodeFileRows, decodeParseState } from "./stored-rows.js"
import type { StoredFile } from "./stored-rows.js"
import { discoverTranscripts, headHashOf, transcriptRoots } from "./transcript-discovery.js"
import type {
  DiscoveredTranscript,
  DiscoveryEnvironment,
  DiscoveryProblem,
} from "./transcript-discovery.js"
import { TranscriptFileSystem } from "./transcript-file-system.js"
import type { ParseResult, TranscriptSource } from "./transcript-model.js"
import {
  applyCodexThreadNames,
  readCodexThreadNames,
  saveThreadIndexSignature,
  threadIndexSignature,
} from "./codex-thread-names.js"
import type { RepositoryFiles } from "./repository-root.js"
import { makeSessionRepositoryResolver } from "./session-repository.js"
import { addSkippedLines, skippedLinesOf } from "./skipped-lines.js"
import type { SkippedLines } from "./skipped-lines.js"
import {
  parseTranscriptFile,
  readCompressedSlices,
  readDecompressedHead,
  TRANSCRIPT_PARSER_VERSION,
} from "./transcript-parser.js"

/** Options of {@link indexTranscripts}. */
export interface IndexOptions {
  readonly environment: DiscoveryEnvironment
  readonly sources?: ReadonlyArray<TranscriptSource>
  readonly chunkOptions?: ChunkOptions
  /** Consecutive failures before a file is quarantined; default 3. */
  readonly quarantineAfter?: number
  /** Lock lease, renewed between files once a quarter of it has passed; default 120 000 ms. */
  readonly leaseMs?: number
  /** When consecutive file writes commit together (see `CommitGroup`); defaults apply. */
  readonly commitGroup?: CommitGroupLimits
  /** Called synchronously with every progress event (draw a bar, log). */
  readonly onProgress?: (event: IndexProgressEvent) => void
  /**
   * Reads git's files (`nodeRepositoryFiles` for the disk) to place each session in its main
   * repository — a linked worktree in the checkout it came from — at index time; without it only
   * the string rules of `repoRootOf` apply (see `session-repository.ts`).
   */
  readonly repositoryFiles?: RepositoryFiles
  /**
   * A file is read and written in slices of about this many bytes (whole lines; see
   * {@link INDEX_SLICE_BYTES}, the default), so a transcript of any size indexes in bounded memory.
   */
  readonly sliceBytes?: number
  /**
   * Whether the run drops the lookup indexes before writing and builds them at its end
   * (`lookup-indexes.ts`). Default: when {@link shouldDeferLookupIndexes} says so for the bytes
   * the run will parse against those already indexed — a first index of a history or a large
   * catch-up.
   */
  readonly deferLookupIndexes?: boolean
  /**
   * Whether the run leaves its new chunks out of the full-text index and adds them in one
   * statement at its end (`lexical-backlog.ts`). Default: the same rule as
   * {@link deferLookupIndexes}, for a run that rewrites no indexed content
   * ({@link shouldDeferLexicalIndex}).
   */
  readonly deferLexicalIndex?: boolean
  /**
   * The parser version this run records; a file parsed by a lower one is read again whole.
   * Default {@link TRANSCRIPT_PARSER_VERSION} (other values are for tests of an upgrade).
   */
  readonly parserVersion?: number
}

/**
 * Bytes of a transcript parsed and written at a time. One slice's parse holds a few times its
 * size in memory: a 408 MB transcript indexed whole peaked at 1.07 GB RSS.
 */
export const INDEX_SLICE_BYTES = 4 * 1024 * 1024

/** How a file was handled in a run. */
export type IndexedFileMode = "new" | "append" | "rewrite" | "reparse"

/** Progress of a run: `done`/`total` count files that needed work. */
export type IndexProgressEvent =
  | {
      readonly _tag: "Planned"
      readonly discovered: number
      readonly unchanged: number
      readonly toIndex: number
      readonly moved: number
      readonly missing: number
    }
  | {
      readonly _tag: "FileIndexed"
      readonly path: string
      readonly mode: IndexedFileMode
      readonly done: number
      readonly total: number
      readonly turns: number
      readonly chunks: number
      readonly bytes: number
    }
  | {
      /** A slice of a large file is written (see `sliceBytes`); its `FileIndexed` comes later. */
      readonly _tag: "SliceIndexed"
      readonly path: string
      /** Files done before this one. */
      readonly done: number
      readonly total: number
      /** Bytes of this file covered so far. */
      readonly offset: number
      readonly turns: number
      readonly chunks: number
      readonly bytes: number
    }
  | {
      readonly _tag: "FileFailed"
      readonly path: string
      readonly done: number
      readonly total: number
      readonly error: string
      readonly failures: number
      readonly quarantined: boolean
    }
  | {
      /**
       * The files are written; the lookup indexes are being built (deferred by this run, or left
       * missing by one that stopped early): seconds on a large index.
       */
      readonly _tag: "BuildingLookupIndexes"
      readonly indexes: ReadonlyArray<string>
    }
  | {
      /**
       * The files are written; the chunks this run (or one that stopped early) left out of the
       * full-text index are being added to it: seconds on a large run.
       */
      readonly _tag: "BuildingLexicalIndex"
      readonly chunks: number
    }
  | { readonly _tag: "Finished"; readonly report: IndexRunReport }

/** A failure of one file in a run. */
export interface IndexFileFailure {
  readonly path: string
  readonly error: string
  readonly failures: number
  readonly quarantined: boolean
}

/** What a run did. */
export interface IndexRunReport {
  readonly startedAt: number
  readonly finishedAt: number
  readonly discovered: number
  readonly unchanged: number
  readonly indexedNew: number
  readonly appended: number
  readonly rewritten: number
  /** Unchanged files read again whole because an older parser indexed them. */
  readonly reparsed: number
  readonly moved: number
  readonly markedMissing: number
  readonly skippedQuarantined: number
  readonly skippedForgotten: number
  readonly failed: ReadonlyArray<IndexFileFailure>
  readonly turnsAdded: number
  readonly chunksAdded: number
  readonly rawRecordsAdded: number
  readonly bytesRead: number
  /** Chunks waiting for an embedding after the run. */
  readonly embeddingBacklog: number
  readonly missingRoots: ReadonlyArray<string>
  readonly problems: ReadonlyArray<DiscoveryProblem>
  /**
   * Lines of the bytes read this run that the parsers skipped (not JSON, not a record, an unknown
   * record type), and in how many files; null when none. `indexStatus` has them for every file.
   */
  readonly skippedLines: RunSkippedLines | null
}

/** Skipped lines summed over files. */
export interface RunSkippedLines extends SkippedLines {
  readonly files: number
}

const HEAD_BYTES = 4096

const storedSignature = (row: StoredFile): SignatureStored => ({
  size: row.size,
  mtimeMs: row.mtime_ms,
  inode: row.inode,
  headHash: row.head_hash,
  status: row.status,
  resumable: row.resumable === 1,
  failedSignature: row.failed_signature,
  parserVersion: row.parser_version,
})

const describe = (error: TranscriptError | RecallStorageError): string => {
  switch (error._tag) {
    case "TranscriptReadError":
      return `${error.operation} failed: ${error.code}`
    case "TranscriptDecompressError":
      return `zstd: ${error.reason}`
    case "TranscriptResumeError":
      return `resume offset ${error.offset} past size ${error.size}`
    case "RecallStorageError":
      return `${error.operation}: ${error.reason}`
  }
}

/** Whether the first `length` bytes of `path` still hash to `headHash`. */
const prefixStillMatches = (
  path: string,
  length: number,
  headHash: string,
): Effect.Effect<boolean, never, TranscriptFileSystem> =>
  TranscriptFileSystem.use((fs) => fs.read(path, 0, length)).pipe(
    Effect.map((bytes) => headHashOf(bytes) === headHash),
    Effect.catch(() => Effect.succeed(false)),
  )

/**
 * The index in `vanished` of the plain rollout `file` is the compressed form of: same source,
 * its name plus `.zst`, and `file`'s decompressed head hashing to the head hash stored for it
 * (over the same number of bytes). -1 when there is none, or `file` cannot be decompressed
 * (it is then indexed as a new file, which reports the failure).
 */
const compressedTwin = (
  file: DiscoveredTranscript,
  vanished: ReadonlyArray<StoredFile>,
): Effect.Effect<number, never, TranscriptFileSystem> =>
  Effect.gen(function* () {
    const name = basename(file.path)
    for (const [at, r] of vanished.entries()) {
      if (
        r.source !== file.source ||
        r.compression !== "none" ||
        `${basename(r.path)}.zst` !== name
      )
        continue
      const head = yield* Effect.result(
        readDecompressedHead(file.path, Math.min(r.size, HEAD_BYTES)),
      )
      if (head._tag === "Success" && headHashOf(head.success) === r.head_hash) return at
    }
    return -1
  })

/** Runs one incremental indexing pass over every discovered transcript. */
export const indexTranscripts = (
  options: IndexOptions,
): Effect.Effect<
  IndexRunReport,
  IndexBusyError | RecallStorageError,
  TranscriptFileSystem | RecallDatabase | IndexerProcess
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const host = yield* IndexerProcess
    const startedAt = yield* Clock.currentTimeMillis
    const leaseMs = options.leaseMs ?? 120_000
    return yield* Effect.acquireUseRelease(
      acquireIndexLock(db.sqlite, db.path, host, startedAt, leaseMs),
      (lease) =>
        Effect.acquireUseRelease(
          Effect.try({
            try: () => deferWalCheckpoints(db.sqlite),
            catch: storageFailure("write", db.path),
          }),
          () =>
            Effect.acquireUseRelease(
              Effect.sync(() => makeCommitGroup(db.sqlite, options.commitGroup)),
              (group) => runIndex(options, startedAt, leaseMs, lease.renew, group),
              // Reached with the group still open only when the run failed or was interrupted:
              // what was written is kept (whole files), or rolled back if it cannot commit.
              (group) => Effect.sync(() => group.close()),
            ),
          (restore) => Effect.sync(restore),
        ),
      (lease) => lease.release,
    )
  })

const runIndex = (
  options: IndexOptions,
  startedAt: number,
  leaseMs: number,
  renew: (now: number) => Effect.Effect<boolean, RecallStorageError>,
  group: CommitGroup,
): Effect.Effect<
  IndexRunReport,
  RecallStorageError,
  TranscriptFileSystem | RecallDatabase | IndexerProcess
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const emit = (event: IndexProgressEvent): void => options.onProgress?.(event)
    const quarantineAfter = Math.max(1, options.quarantineAfter ?? 3)
    const parserVersion = options.parserVersion ?? TRANSCRIPT_PARSER_VERSION
    const writer = yield* Effect.try({
      try: () =>
        makeIndexWriter(
          db.sqlite,
          options.chunkOptions ?? {},
          makeSessionRepositoryResolver(db.sqlite, options.repositoryFiles),
          parserVersion,
        ),
      catch: storageFailure("open", db.path),
    })

    const rows = yield* Effect.tryPromise({
      try: async () =>
        (await db.kysely())
          .selectFrom("files")
          .select([
            "id",
            "path",
            "source",
            "compression",
            "size",
            "mtime_ms",
            "inode",
            "head_hash",
            "indexed_offset",
            "resumable",
            "status",
            "failure_count",
            "failed_signature",
            "parser_version",
          ])
          .execute(),
      catch: storageFailure("read", db.path),
    })
    const stored = new Map((yield* decodeFileRows(db.path, rows)).map((r) => [r.path, r]))
    // A file indexed with the same size, mtime and inode is not read again (see
    // `DiscoveryOptions.known`); only fully indexed files qualify.
    const discovery = yield* discoverTranscripts(options.environment, {
      ...(options.sources === undefined ? {} : { sources: options.sources }),
      known: (path) => {
        const row = stored.get(path)
        return row === undefined || row.status !== "indexed"
          ? undefined
          : { size: row.size, mtimeMs: row.mtime_ms, ino: row.inode, headHash: row.head_hash }
      },
    })

    // Files gone from disk: a rollout moved to archived_sessions/ keeps its rows (re-pointed),
    // and so does one Codex compressed to `.jsonl.zst` (re-pointed, then re-indexed in place);
    // a forgotten file stays forgotten at its new path. Any other vanished file is marked
    // missing and its history kept until prune / forget.
    // A run limited to some sources looks only for their files: the others are not gone.
    const seen = new Set(discovery.files.map((f) => f.path))
    const searched = (source: string) =>
      options.sources === undefined || options.sources.some((s) => s === source)
    // A file under a directory discovery could not read (EACCES, EIO, …), or one it could not
    // stat, may well still be there: it is not gone, and prune must not take its history.
    const unreadable = discovery.problems
      .filter((p) => p.code !== "ENOENT")
      .map((p) => p.path.replace(/\/+$/, ""))
    const hidden = (path: string) =>
      unreadable.some((dir) => path === dir || path.startsWith(`${dir}/`))
    const vanished = [...stored.values()].filter(
      (r) => !seen.has(r.path) && searched(r.source) && !hidden(r.path),
    )
    let moved = 0
    for (const file of discovery.files) {
      if (stored.has(file.path)) continue
      let at = vanished.findIndex(
        (r) =>
          r.source === file.source &&
          r.head_hash === file.headHash &&
          (r.resumable === 1 || r.status === "forgotten"),
      )
      if (at === -1 && file.compression === "zstd") at = yield* compressedTwin(file, vanished)
      const from = vanished[at]
      if (from === undefined) continue
      vanished.splice(at, 1)
      yield* Effect.try({
        try: () => writer.movePath(from.path, file),
        catch: storageFailure("write", db.path),
      })
      stored.delete(from.path)
      stored.set(file.path, {
        ...from,
        path: file.path,
        status: from.status === "missing" ? "indexed" : from.status,
      })
      moved += 1
    }
    const newlyMissing = vanished
      .filter((r) => r.status !== "missing" && r.status !== "forgotten")
      .map((r) => r.path)
    if (newlyMissing.length > 0) {
      yield* Effect.try({
        try: () => writer.markMissing(newlyMissing),
        catch: storageFailure("write", db.path),
      })
    }

    const work: Array<{ file: DiscoveredTranscript; change: FileChange; row?: StoredFile }> = []
    let unchanged = 0
    let skippedQuarantined = 0
    let skippedForgotten = 0
    for (const file of discovery.files) {
      const row = stored.get(file.path)
      const sig = row === undefined ? undefined : storedSignature(row)
      const prefix =
        row !== undefined && needsPrefixCheck(sig, file, HEAD_BYTES)
          ? yield* prefixStillMatches(file.path, row.size, row.head_hash)
          : false
      const change = decideFileChange(sig, file, prefix, parserVersion)
      if (change === "unchanged") unchanged += 1
      else if (change === "skip-quarantined") skippedQuarantined += 1
      else if (change === "skip-forgotten") skippedForgotten += 1
      else work.push(row === undefined ? { file, change } : { file, change, row })
    }
    emit({
      _tag: "Planned",
      discovered: discovery.files.length,
      unchanged,
      toIndex: work.length,
      moved,
      missing: newlyMissing.length,
    })

    // A run with much to write builds the lookup indexes once at its end instead of row by row.
    const plannedBytes = work.reduce(
      (sum, { file, change, row }) =>
        sum +
        Math.max(
          0,
          change === "append" && row !== undefined ? file.size - row.indexed_offset : file.size,
        ),
      0,
    )
    let indexedBytes = 0
    for (const row of stored.values()) indexedBytes += row.indexed_offset
    const bulk = shouldDeferLookupIndexes(plannedBytes, indexedBytes)
    // And fills the full-text index once at its end (`lexical-backlog.ts`), unless that would
    // take sessions a word search finds now out of it meanwhile.
    const bulkLexical = shouldDeferLexicalIndex({
      plannedBytes,
      indexedBytes,
      replacesIndexedContent: work.some(
        ({ file, change, row }) =>
          row !== undefined &&
          row.indexed_offset > 0 &&
          // A compressed file is always read whole (see below).
          (change !== "append" || file.compression === "zstd"),
      ),
    })
    if (work.length > 0) {
      yield* Effect.try({
        try: () => {
          if (options.deferLookupIndexes ?? bulk) dropLookupIndexes(db.sqlite)
          if (options.deferLexicalIndex ?? bulkLexical) deferLexicalIndex(db.sqlite)
        },
        catch: storageFailure("write", db.path),
      })
    }

    const counts = { new: 0, append: 0, rewrite: 0, reparse: 0 }
    const failed: Array<IndexFileFailure> = []
    let turnsAdded = 0
    let chunksAdded = 0
    let rawRecordsAdded = 0
    let bytesRead = 0
    let skipped: SkippedLines | undefined
    const skippedFiles = new Set<string>()
    let done = 0
    let renewedAt = startedAt
    // Renew once a quarter of the lease has passed (a write per file would cost a commit); false
    // when the lease was lost.
    const keepLease = (at: number): Effect.Effect<boolean, RecallStorageError> => {
      if (at - renewedAt < leaseMs / 4) return Effect.succeed(true)
      renewedAt = at
      return renew(at)
    }
    // A writer (forget, prune) waits for the lock: commit and let it in. The pause lasts while
    // an announcement counts (a long `forget --all` keeps the run waiting instead of failing it
    // busy), capped at that same span in case a clock step keeps one counting. Between files,
    // and between the slices of a large one.
    const letWritersIn = Effect.gen(function* () {
      if (!db.writerWaiting()) return
      yield* Effect.try({ try: () => group.commit(), catch: storageFailure("write", db.path) })
      for (
        let waited = 0;
        waited < WRITER_ANNOUNCEMENT_STALE_MS && db.writerWaiting();
        waited += 20
      )
        yield* Effect.sleep(20)
    })
    for (const item of work) {
      const { file } = item
      const parseOptions = {
        includeSidechains: file.role === "subagent",
        maxBytes: Math.max(1, options.sliceBytes ?? INDEX_SLICE_BYTES),
      }
      const attempt: Effect.Effect<
        {
          mode: IndexedFileMode
          /** Bytes of the last slice, not yet counted in the commit group. */
          uncounted: number
          /** Forgotten after the run planned it (see `FileWriteCounts.forgotten`): not written. */
          forgotten: boolean
          leaseLost: boolean
        },
        TranscriptError | RecallStorageError,
        TranscriptFileSystem
      > = Effect.gen(function* () {
        let mode: IndexedFileMode =
          item.change === "append" || item.change === "rewrite" || item.change === "reparse"
            ? item.change
            : "new"
        // A compressed file is read from its start, in slices that share one decoder; one that
        // failed part-way is written again whole (`append` reaches it only as a retry).
        const compressed =
          file.compression === "zstd" ? readCompressedSlices(file, parseOptions) : undefined
        if (compressed !== undefined && mode === "append") mode = "rewrite"
        let result: ParseResult
        const stateJson =
          mode === "append" && item.row !== undefined
            ? yield* Effect.tryPromise({
                try: async () =>
                  (await db.kysely())
                    .selectFrom("file_states")
                    .select("parse_state")
                    .where("file_id", "=", item.row!.id)
                    .executeTakeFirst(),
                catch: storageFailure("read", db.path),
              })
            : undefined
        if (mode === "append" && typeof stateJson?.parse_state === "string") {
          const state = yield* decodeParseState(file.path, stateJson.parse_state)
          const resumed = yield* Effect.result(parseTranscriptFile(file, state, parseOptions))
          if (resumed._tag === "Success") result = resumed.success
          else {
            mode = "rewrite"
            result = yield* parseTranscriptFile(file, undefined, parseOptions)
          }
        } else {
          result = yield* compressed?.next ?? parseTranscriptFile(file, undefined, parseOptions)
        }
        // A large file goes in slices of whole lines, each written as an append to the one
        // before: a slice's file row records the bytes it covers as the file's size, so a run
        // that stops between slices leaves a file the next run appends to.
        for (let first = true; ; first = false) {
          const now = yield* Clock.currentTimeMillis
          // The group's transaction starts at its first write, so parsing the file that opens
          // a group happens outside it (another writer can take the lock in between).
          yield* Effect.try({
            try: () => group.begin(now),
            catch: storageFailure("write", db.path),
          })
          const more = result.stats.more === true
          const slice = yield* Effect.try({
            try: () =>
              writer.writeFile({
                // A compressed file's row covers no prefix it could resume from: size -1 makes
                // a run stopped between its slices write it again whole.
                file: more
                  ? { ...file, size: compressed === undefined ? result.state.nextOffset : -1 }
                  : file,
                mode: first && mode !== "append" ? "full" : "append",
                result,
                now,
              }),
            catch: storageFailure("write", db.path),
          })
          // Counted as written: a later slice that fails does not undo this one.
          turnsAdded += slice.turns
          chunksAdded += slice.chunks
          rawRecordsAdded += slice.rawRecords
          bytesRead += result.stats.bytesRead
          const sliceSkipped = skippedLinesOf(result.stats)
          if (sliceSkipped !== undefined) {
            skipped = addSkippedLines(skipped, sliceSkipped)
            skippedFiles.add(file.path)
          }
          if (slice.forgotten === true) {
            return { mode, uncounted: 0, forgotten: true, leaseLost: false }
          }
          if (!more) break
          emit({
            _tag: "SliceIndexed",
            path: file.path,
            done,
            total: work.length,
            offset: result.state.nextOffset,
            turns: turnsAdded,
            chunks: chunksAdded,
            bytes: bytesRead,
          })
          const at = yield* Clock.currentTimeMillis
          if (!(yield* keepLease(at))) {
            return { mode, uncounted: 0, forgotten: false, leaseLost: true }
          }
          yield* Effect.try({
            try: () => group.counted(result.stats.bytesRead, at),
            catch: storageFailure("write", db.path),
          })
          yield* letWritersIn
          result = yield* compressed?.next ?? parseTranscriptFile(file, result.state, parseOptions)
        }
        return { mode, uncounted: result.stats.bytesRead, forgotten: false, leaseLost: false }
      })
      const outcome = yield* Effect.result(attempt)
      const lost = group.lost()
      if (lost > 0) {
        const why = outcome._tag === "Failure" ? `: ${describe(outcome.failure)}` : ""
        return yield* storageFailure(
          "write",
          db.path,
        )(
          `SQLite rolled back the writes of the ${lost} files before ${file.path}${why}; ` +
            "the next run indexes them again",
        )
      }
      if (outcome._tag === "Success" && outcome.success.leaseLost) {
        return yield* storageFailure("write", db.path)("the index lock lease was lost mid-run")
      }
      done += 1
      if (outcome._tag === "Success" && outcome.success.forgotten) {
        skippedForgotten += 1
      } else if (outcome._tag === "Success") {
        counts[outcome.success.mode] += 1
        emit({
          _tag: "FileIndexed",
          path: file.path,
          mode: outcome.success.mode,
          done,
          total: work.length,
          turns: turnsAdded,
          chunks: chunksAdded,
          bytes: bytesRead,
        })
      } else {
        const error = describe(outcome.failure)
        const recorded = yield* Effect.try({
          try: () => writer.recordFailure(file, signatureKey(file), error, quarantineAfter),
          catch: storageFailure("write", db.path),
        })
        failed.push({ path: file.path, error, ...recorded })
        emit({ _tag: "FileFailed", path: file.path, done, total: work.length, error, ...recorded })
      }
      const at = yield* Clock.currentTimeMillis
      if (!(yield* keepLease(at))) {
        return yield* storageFailure("write", db.path)("the index lock lease was lost mid-run")
      }
      const parsed = outcome._tag === "Success" ? outcome.success.uncounted : 0
      yield* Effect.try({
        try: () => group.counted(parsed, at),
        catch: storageFailure("write", db.path),
      })
      yield* letWritersIn
    }
    yield* Effect.try({ try: () => group.commit(), catch: storageFailure("write", db.path) })
    yield* Effect.try({
      try: () => writer.refreshRepositories(),
      catch: storageFailure("write", db.path),
    })
    if (options.sources === undefined || options.sources.includes("codex")) {
      // Read again when it changed, or when this run wrote sessions it may name.
      const wrote = counts.new + counts.append + counts.rewrite + counts.reparse > 0
      const { names, signature } = yield* readCodexThreadNames(
        posix.dirname(transcriptRoots(options.environment).codexSessions),
        wrote ? undefined : threadIndexSignature(db.sqlite),
      )
      if (names !== undefined) {
        yield* Effect.try({
          try: () => {
            applyCodexThreadNames(db.sqlite, names)
            saveThreadIndexSignature(db.sqlite, signature)
          },
          catch: storageFailure("write", db.path),
        })
      }
    }
    const lexicalBacklog = yield* Effect.try({
      try: () => lexicalBacklogSize(db.sqlite),
      catch: storageFailure("read", db.path),
    })
    if (lexicalBacklog > 0) emit({ _tag: "BuildingLexicalIndex", chunks: lexicalBacklog })
    yield* Effect.try({
      try: () => finishLexicalBacklog(db.sqlite),
      catch: storageFailure("write", db.path),
    })
    const missingIndexes = yield* Effect.try({
      try: () => missingLookupIndexes(db.sqlite),
      catch: storageFailure("read", db.path),
    })
    if (missingIndexes.length > 0) {
      emit({ _tag: "BuildingLookupIndexes", indexes: missingIndexes })
      yield* Effect.try({
        try: () => buildLookupIndexes(db.sqlite),
        catch: storageFailure("write", db.path),
      })
    }
    // Vectors of the texts this run's rewrites removed and no chunk holds again (after the lookup
    // indexes: each text is one probe of the hash index).
    yield* Effect.try({
      try: () => {
        if (hasGoneTextNote(db.sqlite))
          db.sqlite.transaction(() => dropVectorsOfGoneText(db.sqlite)).immediate()
      },
      catch: storageFailure("write", db.path),
    })

    const backlog = yield* Effect.tryPromise({
      try: async () =>
        (await db.kysely())
          .selectFrom("chunks")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("needs_embedding", "=", 1)
          .executeTakeFirstOrThrow(),
      catch: storageFailure("read", db.path),
    })
    const finishedAt = yield* Clock.currentTimeMillis
    const report: IndexRunReport = {
      startedAt,
      finishedAt,
      discovered: discovery.files.length,
      unchanged,
      indexedNew: counts.new,
      appended: counts.append,
      rewritten: counts.rewrite,
      reparsed: counts.reparse,
      moved,
      markedMissing: newlyMissing.length,
      skippedQuarantined,
      skippedForgotten,
      failed,
      turnsAdded,
      chunksAdded,
      rawRecordsAdded,
      bytesRead,
      embeddingBacklog: Number(backlog.n),
      missingRoots: discovery.missingRoots,
      problems: discovery.problems,
      skippedLines: skipped === undefined ? null : { files: skippedFiles.size, ...skipped },
    }
    yield* Effect.tryPromise({
      try: async () =>
        (await db.kysely())
          .insertInto("meta")
          .values({ key: "last_run", value: JSON.stringify(report) })
          .onConflict((oc) => oc.column("key").doUpdateSet({ value: JSON.stringify(report) }))
          .execute(),
      catch: storageFailure("write", db.path),
    })
    emit({ _tag: "Finished", report })
    return report
  })

/**
 * The job journal: where jobs live on disk and the rules for changing them.
 *
 * Layout (directories 0700, files 0600), under `BATON_JOBS_DIR` or `$CODEX_HOME/tools/baton/jobs`:
 *   <threadId>/thread.json            thread index: current job id, last job number, history (≤ 20)
 *   <threadId>/<jobId>.job.json       the job record (schema-versioned, revisioned)
 *   <threadId>/<jobId>.handoff.json   the bound handoff's canonical text, created once (`wx`)
 *   <threadId>/<jobId>.events.jsonl   append-only event log (transitions, message types; no text)
 *   <threadId>/<jobId>.cancel         cancel marker
 *   <threadId>/<jobId>.launch.json    the launched worker's pid and start time (scheduler)
 *   <threadId>/<jobId>.worker.log     the worker process's stderr
 *   <threadId>/lock.json              the worker's lease lock (job-lock.ts)
 * Guarantees: every replace is atomic and durable; every read is decoded with effect/Schema and a
 * bad file is a JournalCorruptError naming it (never overwritten, never a crash); job writes are
 * compare-and-set on the revision; a handoff is never overwritten; one unfinished job per thread.
 * Leftover `*.tmp` files (a write torn by a crash) are ignored and reported by `inspect`.
 */
import * as path from "node:path"
import type { BoundHandoff } from "@baton/handoff"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import {
  HandoffAlreadyStoredError,
  HandoffJobMismatchError,
  InvalidJobIdError,
  JobNotFoundError,
  JournalConflictError,
  JournalCorruptError,
} from "./errors.js"
import type { JournalError } from "./errors.js"
import { JournalIoError } from "./errors.js"
import { JournalFileSystem } from "./journal-file-system.js"
import type { JournalFileSystemShape } from "./journal-file-system.js"
import type { JobRecord, NewJobInput } from "./job-record.js"
import { JobRecordSchema, isTerminalStatus, jobStatuses, newJob } from "./job-record.js"
import { jobMetrics } from "./metrics.js"

/** Private modes of the journal. */
export const JOURNAL_DIR_MODE = 0o700
/** Private modes of the journal. */
export const JOURNAL_FILE_MODE = 0o600
/** Finished jobs whose metrics a thread keeps. */
export const HISTORY_LIMIT = 20

/**
 * The refusal of a relative `BATON_JOBS_DIR` (null for an absolute or unset one): it would be
 * read from each process's working directory, so a schedule, its worker and the MCP server
 * could each keep journals of their own. `nodeCompactionLayer` and the worker hand the journal
 * {@link refusingJournalFileSystem} with it, so every operation fails with it.
 */
export const relativeJobsDirError = (env: {
  readonly BATON_JOBS_DIR?: string | undefined
}): JournalIoError | null => {
  const value = env.BATON_JOBS_DIR
  return value === undefined || value === "" || path.isAbsolute(value)
    ? null
    : new JournalIoError({
        path: value,
        operation: "resolve",
        code: "ERELATIVE",
        detail:
          "BATON_JOBS_DIR is a relative path: give an absolute path (a relative one is read from each process's working directory, so a schedule, its worker and the MCP server would each use different journals)",
      })
}

/** `BATON_JOBS_DIR`, else `$CODEX_HOME/tools/baton/jobs` (`CODEX_HOME` defaults to `$HOME/.codex`). */
export const jobsDirectory = (env: {
  readonly BATON_JOBS_DIR?: string | undefined
  readonly CODEX_HOME?: string | undefined
  readonly HOME?: string | undefined
}): string => {
  if (env.BATON_JOBS_DIR !== undefined && env.BATON_JOBS_DIR !== "")
    return path.resolve(env.BATON_JOBS_DIR)
  const home =
    env.CODEX_HOME !== undefined && env.CODEX_HOME !== ""
      ? env.CODEX_HOME
      : path.join(env.HOME ?? "", ".codex")
  return path.resolve(home, "tools", "baton", "jobs")
}

const safeId = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** Checks that an id is a safe file-name component (blocks path traversal). */
export const checkId = (
  field: "threadId" | "jobId",
  value: string,
): Effect.Effect<string, InvalidJobIdError> =>
  safeId.test(value) && !value.includes("..")
    ? Effect.succeed(value)
    : Effect.fail(new InvalidJobIdError({ field, value }))

/** Paths of one thread's journal files. */
export const journalPaths = (dir: string, threadId: string) => {
  const threadDir = path.join(dir, threadId)
  return {
    threadDir,
    index: path.join(threadDir, "thread.json"),
    lock: path.join(threadDir, "lock.json"),
    job: (jobId: string) => path.join(threadDir, `${jobId}.job.json`),
    handoff: (jobId: string) => path.join(threadDir, `${jobId}.handoff.json`),
    events: (jobId: string) => path.join(threadDir, `${jobId}.events.jsonl`),
    cancel: (jobId: string) => path.join(threadDir, `${jobId}.cancel`),
    /** Who launched the worker process and when (written by the scheduler right after the spawn). */
    launch: (jobId: string) => path.join(threadDir, `${jobId}.launch.json`),
    /** The worker process's stderr (errors only, never message text). */
    workerLog: (jobId: string) => path.join(threadDir, `${jobId}.worker.log`),
  }
}

const StoredJobSchema = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  revision: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)),
  job: JobRecordSchema,
})

/** A job as stored: its record and the revision a compare-and-set write must name. */
export type StoredJob = typeof StoredJobSchema.Type

const NullableNumber = Schema.NullOr(Schema.Number)

/** One finished job's metrics, kept in the thread index. */
export const HistoryEntrySchema = Schema.Struct({
  jobId: Schema.String,
  jobNumber: Schema.Number,
  status: Schema.Literals(jobStatuses),
  createdAt: Schema.Number,
  endedAt: NullableNumber,
  resumeSkipped: Schema.NullOr(Schema.String),
  tokensBefore: NullableNumber,
  tokensAfter: NullableNumber,
  tokensReclaimed: NullableNumber,
  reclaimedFraction: NullableNumber,
  compactionDurationMs: NullableNumber,
  continuationDelayMs: NullableNumber,
})

/** One finished job's metrics. */
export type HistoryEntry = typeof HistoryEntrySchema.Type

const ThreadIndexSchema = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  revision: Schema.Number,
  threadId: Schema.String,
  currentJobId: Schema.NullOr(Schema.String),
  lastJobNumber: Schema.Number,
  history: Schema.Array(HistoryEntrySchema),
})

type ThreadIndex = typeof ThreadIndexSchema.Type

/** One line of a job's event log: metadata only, never message text. */
export const EventLogEntrySchema = Schema.Struct({
  at: Schema.Number,
  kind: Schema.Literals(["scheduled", "transition", "protocol", "lock", "note"]),
  from: Schema.optionalKey(Schema.String),
  to: Schema.optionalKey(Schema.String),
  event: Schema.optionalKey(Schema.String),
  /** Protocol entries: the message type (method or notification name) only. */
  messageType: Schema.optionalKey(Schema.String),
  detail: Schema.optionalKey(Schema.String),
})

/** One line of a job's event log. */
export type EventLogEntry = typeof EventLogEntrySchema.Type

/** What scheduling returns: the job, and whether it already existed. */
export interface ScheduleResult {
  readonly stored: StoredJob
  readonly alreadyScheduled: boolean
}

/** A thread's journal at a glance, with any torn temp files found next to it. */
export interface ThreadInspection {
  readonly current: StoredJob | null
  readonly history: ReadonlyArray<HistoryEntry>
  readonly tornTempFiles: ReadonlyArray<string>
}

/** The journal's operations. Every write is atomic; every read is decoded. */
export interface JournalShape {
  readonly dir: string
  /** Creates a job unless the thread has an unfinished one (then returns it, `alreadyScheduled`). */
  readonly schedule: (input: {
    readonly job: Omit<NewJobInput, "jobNumber" | "createdAt">
    readonly handoff: BoundHandoff | null
  }) => Effect.Effect<ScheduleResult, JournalError>
  readonly readJob: (threadId: string, jobId: string) => Effect.Effect<StoredJob, JournalError>
  /** The thread's current (latest) job, or null. */
  readonly currentJob: (threadId: string) => Effect.Effect<StoredJob | null, JournalError>
  /** Compare-and-set: writes `job` as revision `expectedRevision + 1`; a terminal job enters the history. */
  readonly saveJob: (
    job: JobRecord,
    expectedRevision: number,
  ) => Effect.Effect<StoredJob, JournalError>
  /** The stored handoff text, exactly as written (verify it with `verifyHandoffRecord`). */
  readonly readHandoff: (threadId: string, jobId: string) => Effect.Effect<string, JournalError>
  readonly appendEvent: (
    threadId: string,
    jobId: string,
    entry: EventLogEntry,
  ) => Effect.Effect<void, JournalError>
  /** Appends several entries with one write (one fsync), in order. */
  readonly appendEvents: (
    threadId: string,
    jobId: string,
    entries: ReadonlyArray<EventLogEntry>,
  ) => Effect.Effect<void, JournalError>
  /** The log's entries; a torn last line (crash mid-append) is dropped and reported. */
  readonly readEvents: (
    threadId: string,
    jobId: string,
  ) => Effect.Effect<
    { readonly entries: ReadonlyArray<EventLogEntry>; readonly tornTail: boolean },
    JournalError
  >
  /** Writes the cancel marker (idempotent). */
  readonly requestCancel: (threadId: string, jobId: string) => Effect.Effect<void, JournalError>
  readonly isCancelRequested: (
    threadId: string,
    jobId: string,
  ) => Effect.Effect<boolean, JournalError>
  readonly inspect: (threadId: string) => Effect.Effect<ThreadInspection, JournalError>
}

/** The journal service. */
export class Journal extends Context.Service<Journal, JournalShape>()(
  "@baton/compaction/Journal",
) {}

const decodeFile = <S extends Schema.Codec<unknown, unknown>>(
  schema: S,
  file: string,
  text: string,
): Effect.Effect<S["Type"], JournalCorruptError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Effect.fail(
      new JournalCorruptError({ path: file, problem: "not JSON (a half-written or edited file)" }),
    )
  }
  const decoded = Schema.decodeUnknownResult(schema as never)(json) as Result.Result<
    S["Type"],
    Schema.SchemaError
  >
  return Result.isSuccess(decoded)
    ? Effect.succeed(decoded.success)
    : Effect.fail(
        new JournalCorruptError({
          path: file,
          problem: `does not match its schema: ${decoded.failure.message.slice(0, 400)}`,
        }),
      )
}

const encodeJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

const historyEntry = (job: JobRecord): HistoryEntry => {
  const m = jobMetrics(job)
  return {
    jobId: job.jobId,
    jobNumber: job.jobNumber,
    status: job.status,
    createdAt: job.createdAt,
    endedAt: job.endedAt,
    resumeSkipped: job.resumeSkipped,
    tokensBefore: m.tokensBefore,
    tokensAfter: m.tokensAfter,
    tokensReclaimed: m.tokensReclaimed,
    reclaimedFraction: m.reclaimedFraction,
    compactionDurationMs: m.compactionDurationMs,
    continuationDelayMs: m.continuationDelayMs,
  }
}

const sameEntry = (a: HistoryEntry, b: HistoryEntry): boolean =>
  (Object.keys(a) as Array<keyof HistoryEntry>).every((key) => a[key] === b[key])

/**
 * `history` as the job file says it is: with `job`'s entry (added, or replacing a stale one) when
 * `job` has ended, without it while `job` is unfinished. The job file is the truth. Ending a job
 * writes the thread index first and the job file second, so a reader between the two writes (or
 * after a process died between them) finds an entry for a job that has not ended yet (dropped
 * here), or a job ended by recovery instead (its entry replaced). Readers and the next index write
 * take it from the job itself. Returns `history` itself when nothing changes.
 */
const historyWith = (
  history: ReadonlyArray<HistoryEntry>,
  job: JobRecord,
): ReadonlyArray<HistoryEntry> => {
  const at = history.findIndex((h) => h.jobId === job.jobId)
  if (!isTerminalStatus(job.status))
    return at === -1 ? history : history.filter((h) => h.jobId !== job.jobId)
  const entry = historyEntry(job)
  const found = history[at]
  if (found !== undefined)
    return sameEntry(found, entry) ? history : history.map((h, i) => (i === at ? entry : h))
  return [...history, entry].slice(-HISTORY_LIMIT)
}

/** How often an index write that lost its compare-and-set is redone on a fresh read. */
const INDEX_WRITE_ATTEMPTS = 5

/** Builds the journal over the file-system port at `dir`. */
export const makeJournal = (dir: string, fs: JournalFileSystemShape): JournalShape => {
  const root = path.resolve(dir)
  const paths = (threadId: string) => journalPaths(root, threadId)

  // Directories this journal already created or checked: an append (the hot path while a worker
  // runs) then costs one fsync'd write, not a mkdir and chmod of two directories first.
  const ensured = new Set<string>()
  const ensureThreadDir = (threadId: string): Effect.Effect<void, JournalIoError> =>
    ensured.has(threadId)
      ? Effect.void
      : Effect.gen(function* () {
          yield* fs.ensureDir(root, JOURNAL_DIR_MODE)
          yield* fs.ensureDir(paths(threadId).threadDir, JOURNAL_DIR_MODE)
          ensured.add(threadId)
        })

  const readIndex = (threadId: string) =>
    Effect.gen(function* () {
      const file = paths(threadId).index
      const text = yield* fs.readText(file)
      return text === null ? null : yield* decodeFile(ThreadIndexSchema, file, text)
    })

  const writeIndex = (
    index: ThreadIndex,
    expectedRevision: number,
  ): Effect.Effect<void, JournalError> =>
    Effect.gen(function* () {
      const file = paths(index.threadId).index
      const onDisk = yield* readIndex(index.threadId)
      const found = onDisk?.revision ?? 0
      if (found !== expectedRevision)
        return yield* new JournalConflictError({
          path: file,
          expectedRevision,
          foundRevision: onDisk?.revision ?? null,
        })
      yield* fs.writeAtomic(
        file,
        encodeJson({ ...index, revision: expectedRevision + 1 }),
        JOURNAL_FILE_MODE,
      )
    })

  const readStored = (threadId: string, jobId: string) =>
    Effect.gen(function* () {
      yield* checkId("threadId", threadId)
      yield* checkId("jobId", jobId)
      const file = paths(threadId).job(jobId)
      const text = yield* fs.readText(file)
      if (text === null) return null
      return yield* decodeFile(StoredJobSchema, file, text)
    })

  const readJob: JournalShape["readJob"] = (threadId, jobId) =>
    Effect.flatMap(readStored(threadId, jobId), (stored) =>
      stored === null
        ? Effect.fail(new JobNotFoundError({ threadId, jobId, path: paths(threadId).job(jobId) }))
        : Effect.succeed(stored),
    )

  const currentJob: JournalShape["currentJob"] = (threadId) =>
    Effect.gen(function* () {
      yield* checkId("threadId", threadId)
      const index = yield* readIndex(threadId)
      if (index === null || index.currentJobId === null) return null
      return yield* readJob(threadId, index.currentJobId)
    })

  const appendEvents: JournalShape["appendEvents"] = (threadId, jobId, entries) =>
    Effect.gen(function* () {
      if (entries.length === 0) return
      yield* checkId("threadId", threadId)
      yield* checkId("jobId", jobId)
      yield* ensureThreadDir(threadId)
      const lines = entries
        .map((entry) => `${JSON.stringify(Schema.encodeSync(EventLogEntrySchema)(entry))}\n`)
        .join("")
      yield* fs.append(paths(threadId).events(jobId), lines, JOURNAL_FILE_MODE)
    })

  const appendEvent: JournalShape["appendEvent"] = (threadId, jobId, entry) =>
    appendEvents(threadId, jobId, [entry])

  const schedule: JournalShape["schedule"] = ({ job, handoff }) =>
    Effect.gen(function* () {
      yield* checkId("threadId", job.threadId)
      yield* checkId("jobId", job.jobId)
      if (handoff !== null) {
        if (handoff.record.jobId !== job.jobId || handoff.record.threadId !== job.threadId)
          return yield* new HandoffJobMismatchError({
            jobId: job.jobId,
            detail: "the handoff is bound to another thread or job",
          })
        if (handoff.digest !== job.handoffDigest)
          return yield* new HandoffJobMismatchError({
            jobId: job.jobId,
            detail: "the job's handoffDigest is not the bound handoff's digest",
          })
      }
      const p = paths(job.threadId)
      // One attempt: read the index, create the job's files, then publish the job in the index by
      // compare-and-set. A lost compare-and-set (a worker that ended the previous job updated the
      // history meanwhile) removes the files this attempt created and starts over from a fresh
      // read, so the job number is taken from the index that is actually replaced and no job file
      // is left that the index does not name.
      const attempt = Effect.gen(function* () {
        const index = yield* readIndex(job.threadId)
        let history = index?.history ?? []
        if (index !== null && index.currentJobId !== null) {
          const existing = yield* readJob(job.threadId, index.currentJobId)
          if (!isTerminalStatus(existing.job.status))
            return { stored: existing, alreadyScheduled: true }
          history = historyWith(history, existing.job)
        }
        yield* ensureThreadDir(job.threadId)
        if ((yield* fs.readText(p.job(job.jobId))) !== null)
          return yield* new JournalConflictError({
            path: p.job(job.jobId),
            expectedRevision: 0,
            foundRevision: 1,
          })
        const created: Array<string> = []
        // Never removes what the index names: a write that failed after its rename landed.
        const rollBack = Effect.gen(function* () {
          const now = yield* Effect.orElseSucceed(readIndex(job.threadId), () => null)
          if (now?.currentJobId === job.jobId) return
          for (const file of created) yield* Effect.ignore(fs.remove(file))
        })
        return yield* Effect.gen(function* () {
          if (handoff !== null) {
            const stored = yield* fs.createExclusive(
              p.handoff(job.jobId),
              handoff.text,
              JOURNAL_FILE_MODE,
            )
            if (!stored) return yield* new HandoffAlreadyStoredError({ path: p.handoff(job.jobId) })
            created.push(p.handoff(job.jobId))
          }
          const now = yield* Clock.currentTimeMillis
          const record = newJob({
            ...job,
            jobNumber: (index?.lastJobNumber ?? 0) + 1,
            createdAt: now,
          })
          const stored: StoredJob = { schemaVersion: 1, revision: 1, job: record }
          created.push(p.job(job.jobId))
          yield* fs.writeAtomic(p.job(job.jobId), encodeJson(stored), JOURNAL_FILE_MODE)
          yield* writeIndex(
            {
              schemaVersion: 1,
              revision: index?.revision ?? 0,
              threadId: job.threadId,
              currentJobId: job.jobId,
              lastJobNumber: record.jobNumber,
              history,
            },
            index?.revision ?? 0,
          )
          return { stored, alreadyScheduled: false, now }
        }).pipe(Effect.onError(() => rollBack))
      })
      let outcome: Effect.Success<typeof attempt> | null = null
      for (let tries = 1; outcome === null; tries++) {
        const result = yield* Effect.result(attempt)
        if (Result.isSuccess(result)) outcome = result.success
        else if (
          result.failure._tag !== "JournalConflict" ||
          result.failure.path !== p.index ||
          tries >= INDEX_WRITE_ATTEMPTS
        )
          return yield* result.failure
      }
      if (outcome.alreadyScheduled || !("now" in outcome)) return outcome
      const { stored, now } = outcome
      yield* appendEvent(job.threadId, job.jobId, {
        at: now,
        kind: "scheduled",
        to: "scheduled",
        detail: `job ${stored.job.jobNumber}; resume ${stored.job.resume}`,
      })
      return { stored, alreadyScheduled: false }
    })

  /** Puts an ended job's entry in the thread's history (compare-and-set, redone on a fresh read). */
  const recordEnded = (job: JobRecord): Effect.Effect<void, JournalError> =>
    Effect.gen(function* () {
      for (let tries = 1; ; tries++) {
        const index = yield* readIndex(job.threadId)
        if (index === null) return
        const history = historyWith(index.history, job)
        if (history === index.history) return
        const written = yield* Effect.result(writeIndex({ ...index, history }, index.revision))
        if (Result.isSuccess(written)) return
        if (written.failure._tag !== "JournalConflict" || tries >= INDEX_WRITE_ATTEMPTS)
          return yield* written.failure
      }
    })

  const saveJob: JournalShape["saveJob"] = (job, expectedRevision) =>
    Effect.gen(function* () {
      const file = paths(job.threadId).job(job.jobId)
      const onDisk = yield* readStored(job.threadId, job.jobId)
      if (onDisk === null || onDisk.revision !== expectedRevision)
        return yield* new JournalConflictError({
          path: file,
          expectedRevision,
          foundRevision: onDisk?.revision ?? null,
        })
      // An ending enters the thread's history before the job file says it ended. A scheduler
      // (under the thread's admin lock) writes the index only once the current job has ended, so
      // this lock-free index write is over before any scheduler can start one, and never races
      // it. The history is metrics only: a failure to write it does not keep the job from ending
      // (the next index write and every reader take the entry from the job file).
      if (isTerminalStatus(job.status)) yield* Effect.ignore(recordEnded(job))
      const stored: StoredJob = { schemaVersion: 1, revision: expectedRevision + 1, job }
      yield* fs.writeAtomic(file, encodeJson(stored), JOURNAL_FILE_MODE)
      return stored
    })

  const readHandoff: JournalShape["readHandoff"] = (threadId, jobId) =>
    Effect.gen(function* () {
      yield* checkId("threadId", threadId)
      yield* checkId("jobId", jobId)
      const file = paths(threadId).handoff(jobId)
      const text = yield* fs.readText(file)
      if (text === null) return yield* new JobNotFoundError({ threadId, jobId, path: file })
      return text
    })

  const readEvents: JournalShape["readEvents"] = (threadId, jobId) =>
    Effect.gen(function* () {
      yield* checkId("threadId", threadId)
      yield* checkId("jobId", jobId)
      const file = paths(threadId).events(jobId)
      const text = (yield* fs.readText(file)) ?? ""
      const lines = text.split("\n")
      const tail = lines.pop() ?? ""
      const entries: Array<EventLogEntry> = []
      for (const [i, line] of lines.entries()) {
        const entry = yield* decodeFile(EventLogEntrySchema, `${file}:${i + 1}`, line)
        entries.push(entry)
      }
      return { entries, tornTail: tail.length > 0 }
    })

  const requestCancel: JournalShape["requestCancel"] = (threadId, jobId) =>
    Effect.gen(function* () {
      yield* readJob(threadId, jobId)
      const now = yield* Clock.currentTimeMillis
      yield* fs.createExclusive(
        paths(threadId).cancel(jobId),
        `${new Date(now).toISOString()}\n`,
        JOURNAL_FILE_MODE,
      )
    })

  const isCancelRequested: JournalShape["isCancelRequested"] = (threadId, jobId) =>
    Effect.gen(function* () {
      yield* checkId("threadId", threadId)
      yield* checkId("jobId", jobId)
      return (yield* fs.readText(paths(threadId).cancel(jobId))) !== null
    })

  const inspect: JournalShape["inspect"] = (threadId) =>
    Effect.gen(function* () {
      yield* checkId("threadId", threadId)
      const names = yield* fs.list(paths(threadId).threadDir)
      const index = yield* readIndex(threadId)
      const current = yield* currentJob(threadId)
      const history = index?.history ?? []
      return {
        current,
        history: current === null ? history : historyWith(history, current.job),
        tornTempFiles: names
          .filter((n) => n.endsWith(".tmp"))
          .map((n) => path.join(paths(threadId).threadDir, n)),
      }
    })

  return {
    dir: root,
    schedule,
    readJob,
    currentJob,
    saveJob,
    readHandoff,
    appendEvent,
    appendEvents,
    readEvents,
    requestCancel,
    isCancelRequested,
    inspect,
  }
}

/** Layer: the journal at `dir` over whatever `JournalFileSystem` is provided. */
export const journalLayer = (dir: string): Layer.Layer<Journal, never, JournalFileSystem> =>
  Layer.effect(
    Journal,
    JournalFileSystem.useSync((fs) => makeJournal(dir, fs)),
  )

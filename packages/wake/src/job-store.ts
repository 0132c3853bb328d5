/**
 * The job store: wake jobs on disk (layout in job-paths.ts) and the rules for changing them.
 *
 * Guarantees: directories 0700, files 0600; every replace is atomic and durable; every read of
 * `state.json` is decoded with effect/Schema and a bad file is a WakeFileCorruptError naming it,
 * never overwritten; a record that read would reject is never written (JobRecordInvalidError); every change runs under the job lock and is compare-and-set on the revision;
 * an existing job, checkpoint or sealed capsule is never overwritten by create or seal. The capsule
 * is always projected from the checkpoint on disk, locally (no model). Time from the Effect Clock.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { capsuleFreshness, projectCapsule, sha256Hex } from "./capsule.js"
import type { Capsule, CapsuleFreshness } from "./capsule.js"
import {
  checkpointProblems,
  checkpointTemplate,
  parseCheckpoint,
  renderCheckpoint,
} from "./checkpoint.js"
import type { CheckpointReport } from "./checkpoint.js"
import {
  CheckpointNotReadyError,
  JobConflictError,
  JobExistsError,
  JobNotFoundError,
  JobRecordInvalidError,
  WakeFileCorruptError,
} from "./errors.js"
import type { WakeStoreError } from "./errors.js"
import { transition } from "./job-machine.js"
import type { JobEvent, Transition } from "./job-machine.js"
import { checkJobId, isValidJobId, jobPaths, WAKE_DIR_MODE, WAKE_FILE_MODE } from "./job-paths.js"
import type { JobPaths } from "./job-paths.js"
import { withJobLock } from "./job-lock.js"
import { JobRecordSchema, newJobRecord } from "./job-record.js"
import type { JobBounds, JobRecord } from "./job-record.js"
import { WakeFileSystem } from "./wake-file-system.js"
import type { HolderProbe } from "./watcher-lock.js"
import type { WakeFileSystemShape } from "./wake-file-system.js"

const StateFileSchema = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  revision: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)),
  job: JobRecordSchema,
})

/** A job as stored: its record and the revision a compare-and-set write must name. */
export type StoredJob = typeof StateFileSchema.Type

/** What creating a job needs; `objective` pre-fills the checkpoint. */
export interface CreateJobInput {
  readonly jobId: string
  readonly originalThreadId: string | null
  readonly cwd: string
  readonly model: string | null
  readonly reasoningEffort: string | null
  readonly limitId: string | null
  readonly bounds: JobBounds
  readonly objective: string | null
}

/** A projection written to disk. */
export interface Projection {
  readonly stored: StoredJob
  readonly capsule: Capsule
  readonly report: CheckpointReport
}

/** The capsule's status for `status` commands. */
export interface MemoryStatus {
  readonly stored: StoredJob
  readonly freshness: CapsuleFreshness
  readonly capsuleBytes: number | null
  readonly problems: ReadonlyArray<string>
}

/** The store's operations. */
export interface JobStoreShape {
  readonly wakeDir: string
  readonly paths: (jobId: string) => JobPaths
  /** Creates a draft job with a template checkpoint and its capsule; an existing job is an error. */
  readonly create: (input: CreateJobInput) => Effect.Effect<StoredJob, WakeStoreError>
  readonly read: (jobId: string) => Effect.Effect<StoredJob, WakeStoreError>
  /** Ids of the job directories that hold a `state.json`, sorted. */
  readonly list: () => Effect.Effect<ReadonlyArray<string>, WakeStoreError>
  /** Under the lock: read, apply `change`, write back compare-and-set (unchanged reference = no write). */
  readonly modify: (
    jobId: string,
    change: (job: JobRecord) => JobRecord,
  ) => Effect.Effect<StoredJob, WakeStoreError>
  /** Under the lock: runs the transition table and persists a changed job; effects are the caller's. */
  readonly applyEvent: (
    jobId: string,
    event: JobEvent,
  ) => Effect.Effect<
    { readonly stored: StoredJob; readonly transition: Transition },
    WakeStoreError
  >
  readonly readCheckpoint: (jobId: string) => Effect.Effect<string | null, WakeStoreError>
  readonly writeCheckpoint: (jobId: string, text: string) => Effect.Effect<void, WakeStoreError>
  /** Under the lock: projects the capsule from the checkpoint on disk and records its hashes. */
  readonly refreshCapsule: (jobId: string) => Effect.Effect<Projection, WakeStoreError>
  /** Under the lock: refreshes, then writes an immutable sealed copy; a no-op for a sealed checkpoint hash. */
  readonly seal: (
    jobId: string,
  ) => Effect.Effect<{ readonly stored: StoredJob; readonly sealed: boolean }, WakeStoreError>
  readonly memoryStatus: (jobId: string) => Effect.Effect<MemoryStatus, WakeStoreError>
  /**
   * Runs `use` holding the thread's create lock (`locks/thread-<sha256>.lock`, the job lock's
   * exclusive-create and stale-takeover machinery): "find the thread's open job, else create"
   * inside it is atomic across processes. Never waits: a held lock is JobLockHeldError.
   */
  readonly withThreadLock: <A, E, R>(
    threadId: string,
    use: Effect.Effect<A, E, R>,
  ) => Effect.Effect<A, E | WakeStoreError, R>
  /** What a crash or failed write left in the jobs directory (reported, never removed). */
  readonly leftovers: () => Effect.Effect<Leftovers, WakeStoreError>
}

/** Files and directories a killed or failed operation left behind. */
export interface Leftovers {
  /** Job directories without a `state.json` (a create that failed or was killed). */
  readonly orphanJobDirs: ReadonlyArray<string>
  /** Temporary files of interrupted writes (`*.tmp`, `*.creating`) and moved-aside stale locks. */
  readonly tornTempFiles: ReadonlyArray<string>
}

/** The job store service. */
export class JobStore extends Context.Service<JobStore, JobStoreShape>()("@baton/wake/JobStore") {}

const decodeStateFile = Schema.decodeUnknownResult(StateFileSchema)

/**
 * The text of `state.json` for `stored`, checked first the way a read will check it (the JSON
 * round trip, then the schema): a record a read would reject (NaN, a fraction or a negative where
 * a whole number belongs, an unknown delivery) is JobRecordInvalidError and is never written. A
 * state file is a few KiB; the check costs tens of microseconds per write.
 */
const encode = (file: string, stored: StoredJob): Effect.Effect<string, JobRecordInvalidError> => {
  const text = `${JSON.stringify(stored, null, 2)}\n`
  const decoded = decodeStateFile(JSON.parse(text))
  return Result.isSuccess(decoded)
    ? Effect.succeed(text)
    : Effect.fail(
        new JobRecordInvalidError({ path: file, problem: decoded.failure.message.slice(0, 400) }),
      )
}

const decodeState = (
  file: string,
  text: string,
): Effect.Effect<StoredJob, WakeFileCorruptError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Effect.fail(
      new WakeFileCorruptError({ path: file, problem: "not JSON (torn or edited)" }),
    )
  }
  const decoded = decodeStateFile(json)
  return Result.isSuccess(decoded)
    ? Effect.succeed(decoded.success)
    : Effect.fail(
        new WakeFileCorruptError({
          path: file,
          problem: `does not match the state schema: ${decoded.failure.message.slice(0, 400)}`,
        }),
      )
}

/** Options of {@link makeJobStore}. */
export interface JobStoreOptions {
  /**
   * Tells whether a lock holder's process runs, so a lock left by a killed process is taken over
   * at once instead of when its lease ends (`nodeContinuationProcesses.isAlive` on Node, as the
   * watcher lock uses); default: leases only.
   */
  readonly holderProbe?: HolderProbe
}

/** Builds the store over a file system, rooted at `wakeDir`; `pid` names the lock holder. */
export const makeJobStore = (
  wakeDir: string,
  fs: WakeFileSystemShape,
  pid: number,
  options: JobStoreOptions = {},
): JobStoreShape => {
  const paths = (jobId: string) => jobPaths(wakeDir, jobId)

  const readStored = (jobId: string) =>
    Effect.gen(function* () {
      yield* checkJobId(jobId)
      const file = paths(jobId).state
      const text = yield* fs.readText(file)
      if (text === null) return yield* new JobNotFoundError({ jobId, path: file })
      return yield* decodeState(file, text)
    })

  const save = (job: JobRecord, expectedRevision: number) =>
    Effect.gen(function* () {
      const file = paths(job.jobId).state
      const text = yield* fs.readText(file)
      const found = text === null ? null : (yield* decodeState(file, text)).revision
      if (found !== expectedRevision)
        return yield* new JobConflictError({ path: file, expectedRevision, foundRevision: found })
      const stored: StoredJob = { schemaVersion: 1, revision: expectedRevision + 1, job }
      yield* fs.writeAtomic(file, yield* encode(file, stored), WAKE_FILE_MODE)
      return stored
    })

  const locked = <A>(jobId: string, use: Effect.Effect<A, WakeStoreError>) =>
    Effect.flatMap(checkJobId(jobId), () =>
      withJobLock(fs, paths(jobId).lock, pid, use, options.holderProbe),
    )

  /** Projects the capsule from the checkpoint on disk; writes it when it differs. */
  const project = (job: JobRecord) =>
    Effect.gen(function* () {
      const p = paths(job.jobId)
      const checkpointText = yield* fs.readText(p.checkpoint)
      if (checkpointText === null)
        return yield* new CheckpointNotReadyError({
          path: p.checkpoint,
          problems: ["checkpoint.md is missing"],
        })
      const { checkpoint, report } = parseCheckpoint(checkpointText)
      const capsule = projectCapsule({ jobId: job.jobId, checkpoint, checkpointText })
      const onDisk = yield* fs.readText(p.capsule)
      if (onDisk !== capsule.text) yield* fs.writeAtomic(p.capsule, capsule.text, WAKE_FILE_MODE)
      const now = yield* Clock.currentTimeMillis
      const checkpointSha256 = sha256Hex(checkpointText)
      const changed =
        job.memory.checkpointSha256 !== checkpointSha256 ||
        job.memory.capsuleSha256 !== capsule.sha256
      const next: JobRecord = {
        ...job,
        updatedAt: now,
        memory: {
          checkpointSha256,
          capsuleSha256: capsule.sha256,
          capsuleBytes: capsule.bytes,
          projectedAt: now,
          projections: job.memory.projections + (changed || onDisk !== capsule.text ? 1 : 0),
          ready: checkpointProblems(checkpointText).length === 0,
          maskedSecrets: capsule.maskedSecrets,
        },
      }
      return { next, capsule, report }
    })

  const create: JobStoreShape["create"] = (input) =>
    Effect.gen(function* () {
      yield* checkJobId(input.jobId)
      const p = paths(input.jobId)
      if ((yield* fs.readText(p.state)) !== null)
        return yield* new JobExistsError({ jobId: input.jobId, path: p.state })
      const newDir = (yield* fs.isDirectory(p.dir)) === null
      let madeCheckpoint = false
      /** A create that fails (a full disk) takes back what it made: no job dir without state. */
      const undo = Effect.gen(function* () {
        if ((yield* fs.readText(p.state)) !== null) return
        if (madeCheckpoint) yield* fs.remove(p.checkpoint)
        if (!newDir) return
        yield* fs.remove(p.capsule)
        for (const dir of [p.sealedDir, p.runsDir, p.dir]) yield* fs.removeDir(dir)
      }).pipe(Effect.ignore)
      return yield* Effect.onError(
        Effect.gen(function* () {
          for (const dir of [p.dir, p.runsDir, p.sealedDir]) yield* fs.ensureDir(dir, WAKE_DIR_MODE)
          return yield* locked(
            input.jobId,
            Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              // An existing checkpoint (e.g. a job dir restored by hand) is kept, never replaced.
              madeCheckpoint = yield* fs.createExclusive(
                p.checkpoint,
                renderCheckpoint(checkpointTemplate(input.objective)),
                WAKE_FILE_MODE,
              )
              const { next } = yield* project(newJobRecord({ ...input, createdAt: now }))
              const stored: StoredJob = { schemaVersion: 1, revision: 1, job: next }
              const text = yield* encode(p.state, stored)
              if (!(yield* fs.createExclusive(p.state, text, WAKE_FILE_MODE)))
                return yield* new JobExistsError({ jobId: input.jobId, path: p.state })
              return stored
            }),
          )
        }),
        () => undo,
      )
    })

  const withThreadLock: JobStoreShape["withThreadLock"] = (threadId, use) =>
    Effect.gen(function* () {
      const dir = `${wakeDir}/locks`
      yield* fs.ensureDir(wakeDir, WAKE_DIR_MODE)
      yield* fs.ensureDir(dir, WAKE_DIR_MODE)
      const file = `${dir}/thread-${sha256Hex(threadId.toLowerCase())}.lock`
      return yield* withJobLock(fs, file, pid, use, options.holderProbe)
    })

  const isTorn = (name: string) =>
    name.endsWith(".tmp") || name.endsWith(".creating") || /\.stale-\d+-\d+$/.test(name)

  const leftovers: JobStoreShape["leftovers"] = () =>
    Effect.gen(function* () {
      const jobsDir = `${wakeDir}/jobs`
      const orphanJobDirs: Array<string> = []
      const tornTempFiles: Array<string> = []
      for (const name of [...(yield* fs.list(`${wakeDir}/locks`))].sort())
        if (isTorn(name)) tornTempFiles.push(`${wakeDir}/locks/${name}`)
      for (const name of [...(yield* fs.list(jobsDir))].sort()) {
        if (!isValidJobId(name)) continue
        const p = paths(name)
        if ((yield* fs.isDirectory(p.dir)) !== true) continue
        const inside = yield* fs.list(p.dir)
        if (!inside.includes("state.json")) orphanJobDirs.push(p.dir)
        for (const entry of inside) if (isTorn(entry)) tornTempFiles.push(`${p.dir}/${entry}`)
        for (const sub of [p.runsDir, p.sealedDir])
          for (const entry of yield* fs.list(sub))
            if (isTorn(entry)) tornTempFiles.push(`${sub}/${entry}`)
      }
      return { orphanJobDirs, tornTempFiles }
    })

  const list: JobStoreShape["list"] = () =>
    Effect.gen(function* () {
      const dir = `${wakeDir}/jobs`
      const ids: Array<string> = []
      for (const name of yield* fs.list(dir))
        if (isValidJobId(name) && (yield* fs.readText(paths(name).state)) !== null) ids.push(name)
      return ids.sort()
    })

  const modify: JobStoreShape["modify"] = (jobId, change) =>
    locked(
      jobId,
      Effect.gen(function* () {
        const stored = yield* readStored(jobId)
        const next = change(stored.job)
        return next === stored.job ? stored : yield* save(next, stored.revision)
      }),
    )

  const applyEvent: JobStoreShape["applyEvent"] = (jobId, event) =>
    locked(
      jobId,
      Effect.gen(function* () {
        const stored = yield* readStored(jobId)
        const result = transition(stored.job, event)
        const saved = result.job === stored.job ? stored : yield* save(result.job, stored.revision)
        return { stored: saved, transition: result }
      }),
    )

  const readCheckpoint: JobStoreShape["readCheckpoint"] = (jobId) =>
    Effect.flatMap(checkJobId(jobId), () => fs.readText(paths(jobId).checkpoint))

  const writeCheckpoint: JobStoreShape["writeCheckpoint"] = (jobId, text) =>
    locked(
      jobId,
      Effect.gen(function* () {
        yield* readStored(jobId)
        // The replaced version stays recoverable (one level), so no write loses a checkpoint.
        const previous = yield* fs.readText(paths(jobId).checkpoint)
        if (previous !== null && previous !== text)
          yield* fs.writeAtomic(paths(jobId).previousCheckpoint, previous, WAKE_FILE_MODE)
        yield* fs.writeAtomic(paths(jobId).checkpoint, text, WAKE_FILE_MODE)
      }),
    )

  const refreshCapsule: JobStoreShape["refreshCapsule"] = (jobId) =>
    locked(
      jobId,
      Effect.gen(function* () {
        const stored = yield* readStored(jobId)
        const { next, capsule, report } = yield* project(stored.job)
        return { stored: yield* save(next, stored.revision), capsule, report }
      }),
    )

  const seal: JobStoreShape["seal"] = (jobId) =>
    locked(
      jobId,
      Effect.gen(function* () {
        const stored = yield* readStored(jobId)
        const { next, capsule } = yield* project(stored.job)
        const sha = next.memory.checkpointSha256 ?? ""
        const file = paths(jobId).sealed(sha)
        if (stored.job.seal?.checkpointSha256 === sha && (yield* fs.readText(file)) !== null)
          return { stored, sealed: false }
        yield* fs.ensureDir(paths(jobId).sealedDir, WAKE_DIR_MODE)
        // Same checkpoint and job give the same bytes, so an existing sealed file is kept as is.
        yield* fs.createExclusive(file, capsule.text, WAKE_FILE_MODE)
        const now = yield* Clock.currentTimeMillis
        const sealed: JobRecord = {
          ...next,
          seal: {
            checkpointSha256: sha,
            capsuleSha256: capsule.sha256,
            sealedAt: now,
            file: `capsule-${sha}.md`,
          },
        }
        return { stored: yield* save(sealed, stored.revision), sealed: true }
      }),
    )

  const memoryStatus: JobStoreShape["memoryStatus"] = (jobId) =>
    Effect.gen(function* () {
      const stored = yield* readStored(jobId)
      const p = paths(jobId)
      const checkpointText = yield* fs.readText(p.checkpoint)
      const capsuleText = yield* fs.readText(p.capsule)
      return {
        stored,
        freshness: capsuleFreshness(stored.job.memory, { checkpointText, capsuleText }),
        capsuleBytes: capsuleText === null ? null : Buffer.byteLength(capsuleText, "utf8"),
        problems:
          checkpointText === null
            ? ["checkpoint.md is missing"]
            : checkpointProblems(checkpointText),
      }
    })

  return {
    wakeDir,
    paths,
    create,
    read: readStored,
    list,
    modify,
    applyEvent,
    readCheckpoint,
    writeCheckpoint,
    refreshCapsule,
    seal,
    memoryStatus,
    withThreadLock,
    leftovers,
  }
}

/** Layer: the store at `wakeDir` over the WakeFileSystem service. */
export const jobStoreLayer = (
  wakeDir: string,
  pid: number,
  options: JobStoreOptions = {},
): Layer.Layer<JobStore, never, WakeFileSystem> =>
  Layer.effect(
    JobStore,
    WakeFileSystem.useSync((fs) => makeJobStore(wakeDir, fs, pid, options)),
  )

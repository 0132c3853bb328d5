/**
 * The watcher: one process per user that carries wake jobs across quota windows.
 *
 * Guarantees:
 * - single instance: it holds the per-user lease lock (`watcher.lock`) for its whole life and
 *   renews it; a lost lock stops it before its next write;
 * - it never calls a model while waiting: quota comes from `account/rateLimits/read` (QuotaReader)
 *   and, passively, from rollout `token_count` events (ThreadSignals), read on a cadence aligned
 *   to the reset hint (watcher-cadence.ts);
 * - only an explicit `allowed: true` reading launches (the transition table decides); unknown
 *   readings keep the job waiting and escalate after `bounds.unknownUsageLimit` in a row;
 * - every change goes through the job store (job lock + compare-and-set) and the transition
 *   table; effects run in the order the table lists them, `Persist` first, so a crash after a
 *   launch still finds the job `running`;
 * - runs are tracked through their exit events; a run found `running` after a restart is adopted
 *   by pid and start time (a zombie or a recycled pid counts as ended), never launched again;
 * - a watchdog bounds each continuation's runtime and silence; stop and the watchdog end the
 *   whole process group;
 * - a checkpoint request the channel could not deliver (a busy thread) is offered again, at most
 *   every `checkpointRetryMs`, while `checkpointRetryDue` holds; one delivery per rise;
 * - time is the Effect Clock, so tests drive it with TestClock.
 * It must never decide what the transition table decides.
 */
import type { RateLimitsState } from "@baton/ipc-codex"
import { applyRateLimitsUpdate } from "@baton/ipc-codex"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import { CheckpointChannel } from "./checkpoint-channel.js"
import { ContinuationProcesses } from "./continuation-processes.js"
import type { ProcessExit } from "./continuation-processes.js"
import type {
  WakeStoreError,
  WatcherLockHeldError,
  WatcherLockLostError,
  WakeIoError,
} from "./errors.js"
import { checkpointRetryDue } from "./job-machine.js"
import type { JobEvent } from "./job-machine.js"
import type { DeliveryMode, JobRecord } from "./job-record.js"
import { JobStore } from "./job-store.js"
import {
  discoverRunThread,
  launchContinuation,
  readRunMeta,
  readRunOutcome,
  stopContinuation,
  updateRunMeta,
} from "./launcher.js"
import type { LaunchContext } from "./launcher.js"
import { readPressure } from "./pressure.js"
import { QuotaReader, allowanceOf } from "./quota-reader.js"
import type { QuotaReading } from "./quota-reader.js"
import { runFiles } from "./run-meta.js"
import type { RunFiles } from "./run-meta.js"
import { classifyCodexError } from "./failure-classifier.js"
import { SameThreadTurns } from "./same-thread-turns.js"
import { ThreadSignals } from "./thread-signals.js"
import { defaultWatcherLimits, quotaReadDueAt } from "./watcher-cadence.js"
import type { WatcherLimits } from "./watcher-cadence.js"
import { acquireWatcherLock, releaseWatcherLock, renewWatcherLock } from "./watcher-lock.js"
import type { WatcherIdentity } from "./watcher-lock.js"
import { WakeFileSystem } from "./wake-file-system.js"

/** One line of the watcher's log. */
export interface WatcherEvent {
  readonly at: number
  readonly kind: string
  readonly jobId?: string
  readonly [key: string]: unknown
}

/** What the watcher needs besides its services. */
export interface WatcherOptions {
  readonly identity: WatcherIdentity
  /** Absolute path of the `codex` executable continuations run. */
  readonly codexBinary: string
  /** How continuations run Baton (absolute node and script paths). */
  readonly batonCommand: string
  /** Environment continuations inherit. */
  readonly baseEnv: Readonly<Record<string, string | undefined>>
  readonly limits?: Partial<WatcherLimits>
  /** Lease of the watcher lock (default 30 s). */
  readonly leaseMs?: number
  /** One pass, then return (launched runs keep running; the next watcher adopts them). */
  readonly once?: boolean
  readonly onEvent?: (event: WatcherEvent) => void
}

/** Why the watcher stopped. */
export type WatcherError = WatcherLockHeldError | WatcherLockLostError | WakeIoError

/** The services the watcher runs on. */
export type WatcherServices =
  | JobStore
  | WakeFileSystem
  | QuotaReader
  | ThreadSignals
  | ContinuationProcesses
  | CheckpointChannel
  | SameThreadTurns

interface TrackedRun {
  readonly jobId: string
  readonly generation: number
  /** The continuation's process (null for a turn on the original thread). */
  readonly pid: number | null
  readonly startTicks: number | null
  /** A turn on the original thread in the daemon (no process of ours). */
  readonly turn: { readonly threadId: string; readonly turnId: string } | null
  /** The turn was seen active at least once (a turn just started may still read idle). */
  seenActive: boolean
  readonly files: RunFiles
  readonly mode: DeliveryMode
  /** Spawned by this watcher (exit known from its event) or adopted from an earlier one. */
  readonly child: boolean
  readonly startedAt: number
  exit: ProcessExit | null
  threadId: string | null
  lastSize: number
  lastGrowthAt: number
  killedBy: string | null
}

const activeStates = new Set(["monitoring", "quota_waiting", "retry_waiting", "running"])

/** The earliest future reset (ms) of the bucket that applies to a job, else the latest known. */
const resetsAtFor = (state: RateLimitsState | null, job: JobRecord, now: number): number | null => {
  if (state === null) return null
  const selector = { limitId: job.limitId, model: job.model }
  const reading = readPressure(state, selector)
  const bucket =
    (reading.limitId === null ? undefined : state.byLimitId[reading.limitId]) ?? state.snapshot
  const resets = [bucket.primary?.resetsAt, bucket.secondary?.resetsAt]
    .filter((s): s is number => typeof s === "number" && Number.isFinite(s))
    .map((s) => s * 1000)
  if (resets.length === 0) return null
  const future = resets.filter((ms) => ms > now)
  return future.length > 0 ? Math.min(...future) : Math.max(...resets)
}

/** Runs the watcher until interrupted (or after one pass with `once`). */
export const runWatcher = (
  options: WatcherOptions,
): Effect.Effect<void, WatcherError, WatcherServices | Scope.Scope> =>
  Effect.gen(function* () {
    const limits: WatcherLimits = { ...defaultWatcherLimits, ...options.limits }
    const scope = yield* Scope.Scope
    const background = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.asVoid(Effect.forkIn(effect, scope))
    const store = yield* JobStore
    const fs = yield* WakeFileSystem
    const quota = yield* QuotaReader
    const signals = yield* ThreadSignals
    const processes = yield* ContinuationProcesses
    const channel = yield* CheckpointChannel
    const sameThread = yield* SameThreadTurns
    const log = (kind: string, fields: Record<string, unknown> = {}) =>
      Effect.map(Clock.currentTimeMillis, (at) => options.onEvent?.({ at, kind, ...fields }))

    const held = yield* acquireWatcherLock(
      fs,
      store.wakeDir,
      options.identity,
      processes.isAlive,
      options.leaseMs,
    )
    yield* Effect.addFinalizer(() => Effect.andThen(releaseWatcherLock(fs, held), log("stopped")))
    yield* log("started", { pid: options.identity.pid, wakeDir: store.wakeDir })

    const ctx: LaunchContext = {
      store,
      fs,
      processes,
      signals,
      sameThread,
      codexBinary: options.codexBinary,
      batonCommand: options.batonCommand,
      baseEnv: options.baseEnv,
    }
    const wake = yield* Queue.unbounded<string>()
    const tracked = new Map<string, TrackedRun>()
    /** When each job's checkpoint request was last offered to the channel (this process). */
    const checkpointAttemptAt = new Map<string, number>()
    let rateLimits: RateLimitsState | null = null
    /** When the newest reading in `rateLimits` was taken (ms). */
    let rateLimitsAt: number | null = null
    /**
     * False while the newest reading in `rateLimits` is history (a rollout as it was when this
     * watcher started): such a reading establishes a job's band; see `replay` in the table.
     */
    let rateLimitsLive = false
    /** Threads polled at least once by this watcher (the first poll returns the rollout's history). */
    const polledThreads = new Set<string>()
    const startedAt = yield* Clock.currentTimeMillis
    let lastReadAt: number | null = null
    let lastTailAt: number | null = null
    const now = Clock.currentTimeMillis

    const logStoreError = (jobId: string, error: WakeStoreError) =>
      log("warning", { jobId, detail: error.message, error: error._tag })

    /** Applies one event and runs the effects the table returns; null when the store refused. */
    const apply = (jobId: string, event: JobEvent): Effect.Effect<JobRecord | null> =>
      Effect.gen(function* () {
        const result = yield* Effect.result(store.applyEvent(jobId, event))
        if (result._tag === "Failure") {
          yield* logStoreError(jobId, result.failure)
          return null
        }
        const { stored, transition } = result.success
        if (transition.effects.length > 0)
          yield* log("transition", {
            jobId,
            event: event._tag,
            state: stored.job.state,
            pressure: stored.job.pressure,
            effects: transition.effects.map((e) => e._tag),
          })
        let job = stored.job
        for (const effect of transition.effects) {
          switch (effect._tag) {
            case "Persist":
            case "ScheduleRetry":
            case "CancelRetry":
              break
            case "SealCapsule": {
              const sealed = yield* Effect.result(store.seal(jobId))
              if (sealed._tag === "Failure") yield* logStoreError(jobId, sealed.failure)
              else {
                job = sealed.success.stored.job
                yield* log("sealed", { jobId, checkpointSha256: effect.checkpointSha256 })
              }
              break
            }
            case "RequestCheckpoint": {
              const outcome = yield* channel.request(job, effect.band, options.batonCommand)
              const at = yield* now
              const changed = yield* Effect.result(
                store.modify(jobId, (j) => ({
                  ...j,
                  checkpointRequest: {
                    band: effect.band,
                    requestedAt: at,
                    delivered: outcome.delivered,
                    detail: outcome.detail,
                    retryPending: !outcome.delivered && outcome.retryable,
                  },
                })),
              )
              if (changed._tag === "Success") job = changed.success.job
              checkpointAttemptAt.set(jobId, at)
              yield* log("checkpoint-requested", { jobId, band: effect.band, ...outcome })
              break
            }
            case "LaunchContinuation": {
              const next = yield* launch(job, effect.generation)
              if (next !== null) job = next
              break
            }
            case "TerminateRun":
              yield* terminate(jobId, effect.generation, job, "stopped")
              break
            case "Notify":
              yield* log("notify", { jobId, notify: effect.kind, detail: effect.detail })
              break
          }
        }
        return job
      })

    const launch = (job: JobRecord, generation: number): Effect.Effect<JobRecord | null> =>
      Effect.gen(function* () {
        const result = yield* launchContinuation(ctx, job, generation)
        const at = yield* now
        if (result._tag === "Refused") {
          yield* log("launch-refused", { jobId: job.jobId, generation, detail: result.detail })
          return yield* apply(job.jobId, {
            _tag: "LaunchFailed",
            at,
            generation,
            detail: result.detail,
          })
        }
        const run: TrackedRun =
          result._tag === "Spawned"
            ? {
                jobId: job.jobId,
                generation,
                pid: result.process.pid,
                startTicks: result.process.startTicks,
                turn: null,
                seenActive: false,
                files: result.files,
                mode: result.mode,
                child: true,
                startedAt: at,
                exit: null,
                threadId: null,
                lastSize: 0,
                lastGrowthAt: at,
                killedBy: null,
              }
            : {
                jobId: job.jobId,
                generation,
                pid: null,
                startTicks: null,
                turn: { threadId: result.threadId, turnId: result.turnId },
                seenActive: false,
                files: result.files,
                mode: "original_thread",
                child: false,
                startedAt: at,
                exit: null,
                threadId: result.threadId,
                lastSize: 0,
                lastGrowthAt: at,
                killedBy: null,
              }
        tracked.set(job.jobId, run)
        if (result._tag === "Spawned")
          yield* background(
            Effect.gen(function* () {
              run.exit = yield* result.process.exit
              yield* Queue.offer(wake, job.jobId)
            }),
          )
        yield* log("launched", {
          jobId: job.jobId,
          generation,
          pid: run.pid,
          mode: run.mode,
          label: run.turn === null ? "cli_continuation" : "same_thread_turn",
          ...(result._tag === "Spawned" && result.fallback !== null
            ? { fallback: `original_thread unavailable: ${result.fallback}` }
            : {}),
        })
        const started = yield* apply(job.jobId, {
          _tag: "RunStarted",
          at,
          generation,
          pid: run.pid,
          threadId: run.threadId,
        })
        const extra = yield* Effect.result(
          store.modify(job.jobId, (j) =>
            j.run === null || j.run.generation !== generation
              ? j
              : { ...j, run: { ...j.run, startTicks: run.startTicks, mode: run.mode } },
          ),
        )
        return extra._tag === "Success" ? extra.success.job : started
      })

    const terminate = (
      jobId: string,
      generation: number,
      job: JobRecord,
      reason: string,
    ): Effect.Effect<void> =>
      Effect.gen(function* () {
        const run = tracked.get(jobId)
        if (run?.generation === generation && run.turn !== null) {
          if (run.killedBy === null) run.killedBy = reason
          yield* log("stopping-run", { jobId, generation, turnId: run.turn.turnId, reason })
          yield* sameThread.interrupt(run.turn.threadId, run.turn.turnId)
          return
        }
        const pid = run?.generation === generation ? run.pid : null
        const fromRecord = job.run?.generation === generation ? job.run : null
        const target =
          pid !== null
            ? { pid, startTicks: run?.startTicks ?? null }
            : fromRecord?.pid !== null && fromRecord?.pid !== undefined
              ? { pid: fromRecord.pid, startTicks: fromRecord.startTicks ?? null }
              : null
        if (run !== undefined && run.killedBy === null) run.killedBy = reason
        if (target === null) return
        yield* log("stopping-run", { jobId, generation, pid: target.pid, reason })
        yield* background(
          stopContinuation(processes, target.pid, target.startTicks, limits.stopGraceMs),
        )
      })

    /** Records a run's end and feeds `RunExited` to the table. */
    const finish = (
      job: JobRecord,
      generation: number,
      files: RunFiles,
      exit: ProcessExit,
      killedBy: string | null,
      threadId: string | null,
      mode: DeliveryMode,
    ) =>
      Effect.gen(function* () {
        tracked.delete(job.jobId)
        const outcome = yield* readRunOutcome(ctx, files, exit, killedBy, threadId)
        yield* log("run-ended", {
          jobId: job.jobId,
          generation,
          failure: outcome.failure,
          detail: outcome.detail,
          exitCode: exit.code,
          signal: exit.signal,
          threadId: outcome.threadId,
        })
        const at = yield* now
        const next = yield* apply(job.jobId, {
          _tag: "RunExited",
          at,
          generation,
          failure: outcome.failure,
          detail: outcome.detail,
          resetsAt: outcome.resetsAt,
        })
        yield* Effect.ignore(
          store.modify(job.jobId, (j) => ({
            ...j,
            continuationThreadId: outcome.threadId ?? j.continuationThreadId ?? null,
            lastRun: {
              generation,
              mode,
              threadId: outcome.threadId,
              endedAt: at,
              exitCode: exit.code,
              signal: exit.signal,
              failure: outcome.failure,
              detail: outcome.detail,
            },
          })),
        )
        return next
      })

    /** Whether a run not spawned by this watcher still runs (process, or turn in the daemon). */
    const stillRunning = (run: TrackedRun, at: number) =>
      Effect.gen(function* () {
        if (run.turn !== null) {
          const active = yield* sameThread.isActive(run.turn.threadId)
          if (active === true) run.seenActive = true
          // A turn just started can still read idle; unknown keeps it (the watchdog bounds it).
          return active !== false || (!run.seenActive && at - run.startedAt < 10_000)
        }
        return run.pid !== null && (yield* processes.isAlive(run.pid, run.startTicks))
      })

    /** Tracks, adopts, watches and finishes the job's current run. */
    const superviseRun = (job: JobRecord) =>
      Effect.gen(function* () {
        const run = job.run
        const current = tracked.get(job.jobId)
        const at = yield* now
        if (run === null) {
          // The job left `running` (completed, paused or stopped) while its run may still live.
          if (current === undefined) return
          if (!current.child && current.exit === null)
            if (!(yield* stillRunning(current, at))) current.exit = { code: null, signal: null }
          if (current.exit !== null) {
            yield* finish(
              job,
              current.generation,
              current.files,
              current.exit,
              current.killedBy,
              current.threadId,
              current.mode,
            )
            return
          }
          if (job.state === "stopped" && current.killedBy === null)
            yield* terminate(job.jobId, current.generation, job, "stopped by the user")
          // Paused or completed from outside: the run finishes on its own, still bounded.
          else yield* watchdog(job, current, at)
          return
        }
        // A run still alive from an earlier generation: keep supervising it, never replace it.
        if (current !== undefined && current.generation !== run.generation && current.exit === null)
          return
        if (current === undefined || current.generation !== run.generation) {
          const files = runFiles(store.paths(job.jobId), run.generation)
          const meta = yield* readRunMeta(fs, files)
          const turnThread = run.threadId ?? meta?.threadId ?? null
          if ((run.mode ?? meta?.mode) === "original_thread" && meta?.turnId && turnThread) {
            const adopted: TrackedRun = {
              jobId: job.jobId,
              generation: run.generation,
              pid: null,
              startTicks: null,
              turn: { threadId: turnThread, turnId: meta.turnId },
              seenActive: false,
              files,
              mode: "original_thread",
              child: false,
              startedAt: run.startedAt ?? run.launchedAt,
              exit: null,
              threadId: turnThread,
              lastSize: 0,
              lastGrowthAt: at,
              killedBy: null,
            }
            tracked.set(job.jobId, adopted)
            yield* log("adopted", {
              jobId: job.jobId,
              generation: run.generation,
              turnId: meta.turnId,
            })
            return
          }
          const pid = run.pid ?? meta?.pid ?? null
          const startTicks = run.startTicks ?? meta?.startTicks ?? null
          if (pid === null) {
            if (at - run.launchedAt >= limits.spawnGraceMs)
              yield* apply(job.jobId, {
                _tag: "LaunchFailed",
                at,
                generation: run.generation,
                detail: "the watcher stopped before the continuation was spawned; nothing ran",
              })
            return
          }
          const mode = run.mode ?? meta?.mode ?? "new_thread"
          if (yield* processes.isAlive(pid, startTicks)) {
            tracked.set(job.jobId, {
              jobId: job.jobId,
              generation: run.generation,
              pid,
              startTicks,
              turn: null,
              seenActive: false,
              files,
              mode,
              child: false,
              startedAt: run.startedAt ?? run.launchedAt,
              exit: null,
              threadId: run.threadId ?? meta?.threadId ?? null,
              lastSize: 0,
              lastGrowthAt: at,
              killedBy: null,
            })
            yield* log("adopted", { jobId: job.jobId, generation: run.generation, pid })
            return
          }
          yield* finish(
            job,
            run.generation,
            files,
            { code: null, signal: null },
            null,
            run.threadId,
            mode,
          )
          return
        }
        // A run we know.
        if (!current.child && current.exit === null) {
          if (!(yield* stillRunning(current, at))) current.exit = { code: null, signal: null }
        }
        if (current.exit !== null) {
          yield* finish(
            job,
            current.generation,
            current.files,
            current.exit,
            current.killedBy,
            current.threadId,
            current.mode,
          )
          return
        }
        if (current.threadId === null) {
          const threadId = yield* discoverRunThread(fs, current.files)
          if (threadId !== null) {
            current.threadId = threadId
            yield* updateRunMeta(fs, current.files, { threadId })
            yield* Effect.ignore(
              store.modify(job.jobId, (j) =>
                j.run === null || j.run.generation !== current.generation
                  ? j
                  : { ...j, run: { ...j.run, threadId }, continuationThreadId: threadId },
              ),
            )
          }
        }
        yield* watchdog(job, current, at)
      })

    /** Bounds a run's runtime and silence (a turn in the daemon writes no run log). */
    const watchdog = (job: JobRecord, current: TrackedRun, at: number) =>
      Effect.gen(function* () {
        const size =
          current.turn === null ? ((yield* processes.fileSize(current.files.log)) ?? 0) : 0
        if (size > current.lastSize || current.turn !== null) {
          current.lastSize = size
          current.lastGrowthAt = at
        }
        const reason =
          at - current.startedAt >= limits.maxRunMs
            ? `watchdog: the continuation ran longer than ${Math.round(limits.maxRunMs / 1000)} s`
            : at - current.lastGrowthAt >= limits.maxSilenceMs
              ? `watchdog: no output for ${Math.round(limits.maxSilenceMs / 1000)} s`
              : null
        if (reason !== null && current.killedBy === null) {
          yield* log("watchdog", { jobId: job.jobId, generation: current.generation, reason })
          yield* terminate(job.jobId, current.generation, job, reason)
        }
      })

    /** Feeds passive rollout signals (rate limits, a usage-limit turn end) to live jobs. */
    const tail = (jobs: Map<string, JobRecord>) =>
      Effect.gen(function* () {
        const at = yield* now
        const watched = new Map<string, Array<string>>()
        for (const job of jobs.values()) {
          const threads =
            job.state === "monitoring"
              ? [job.originalThreadId]
              : job.state === "running"
                ? [job.run?.threadId ?? null]
                : []
          for (const thread of threads)
            if (thread !== null) watched.set(thread, [...(watched.get(thread) ?? []), job.jobId])
        }
        for (const [thread, jobIds] of watched) {
          // The first poll of a thread reads its rollout from the start: lines written before this
          // watcher started are history. Only their newest reading counts; it establishes the
          // current band and asks the agent only for a rise no one acted on yet (after the arm
          // and the job's last request: never a second request for a rise after a restart).
          const firstPoll = !polledThreads.has(thread)
          const batch = yield* signals.poll(thread)
          polledThreads.add(thread)
          const isHistory = (signal: (typeof batch)[number]) => {
            if (!firstPoll || signal._tag === "ErrorReported") return false
            const written = signal.at ?? null
            return written === null || written < startedAt
          }
          const updatedBefore = new Map(jobIds.map((id) => [id, jobs.get(id)?.updatedAt ?? 0]))
          const history = batch.filter(isHistory)
          const newestPast = history.findLast((s) => s._tag === "RateLimits")
          if (newestPast?._tag === "RateLimits") {
            const sampleAt = newestPast.at ?? null
            if (rateLimitsAt === null || sampleAt === null || sampleAt >= rateLimitsAt) {
              rateLimits = applyRateLimitsUpdate(rateLimits, newestPast.snapshot, at)
              rateLimitsAt = sampleAt ?? rateLimitsAt
              rateLimitsLive = false
              yield* observePressure(jobs, jobIds, { replay: true, sampleAt })
            }
          }
          let lastEnd: (typeof batch)[number] | undefined
          for (const signal of batch) {
            if (signal._tag === "TurnEnded") lastEnd = signal
            if (signal._tag !== "RateLimits" || isHistory(signal)) continue
            const sampleAt = signal.at ?? at
            rateLimits = applyRateLimitsUpdate(rateLimits, signal.snapshot, at)
            rateLimitsAt = Math.max(rateLimitsAt ?? 0, sampleAt)
            rateLimitsLive = true
            // Each live snapshot in file order, so the bands are climbed one by one.
            yield* observePressure(jobs, jobIds, { replay: false, sampleAt })
          }
          if (lastEnd?._tag !== "TurnEnded" || lastEnd.error === null) continue
          if (classifyCodexError(lastEnd.error.kind) !== "usage_limit") continue
          const endedAt = lastEnd.at ?? null
          const pastEnd = isHistory(lastEnd)
          for (const jobId of jobIds) {
            const job = jobs.get(jobId)
            if (job?.state !== "monitoring") continue
            // A usage-limit end from history counts only when the job has not changed since
            // (else it was acted on, or the user armed or resumed the job after it).
            if (pastEnd && (endedAt === null || endedAt <= (updatedBefore.get(jobId) ?? 0)))
              continue
            const next = yield* apply(jobId, {
              _tag: "UsageLimitHit",
              at,
              resetsAt: resetsAtFor(rateLimits, job, at),
            })
            if (next !== null) jobs.set(jobId, next)
          }
        }
        lastTailAt = at
      })

    const observePressure = (
      jobs: Map<string, JobRecord>,
      only?: ReadonlyArray<string>,
      reading: { readonly replay: boolean; readonly sampleAt: number | null } = {
        replay: !rateLimitsLive,
        sampleAt: rateLimitsAt,
      },
    ) =>
      Effect.gen(function* () {
        if (rateLimits === null) return
        const at = yield* now
        for (const job of [...jobs.values()]) {
          if (!activeStates.has(job.state)) continue
          if (only !== undefined && !only.includes(job.jobId)) continue
          const pressure = readPressure(rateLimits, { limitId: job.limitId, model: job.model })
          if (pressure.band === "unknown") continue
          if (pressure.band === job.pressure && pressure.usedPercent === job.usedPercent) continue
          const next = yield* apply(job.jobId, {
            _tag: "PressureObserved",
            at,
            band: pressure.band,
            usedPercent: pressure.usedPercent,
            sampleAt: reading.sampleAt,
            replay: reading.replay,
          })
          if (next !== null) jobs.set(job.jobId, next)
        }
      })

    /** Offers an undelivered checkpoint request of the current rise again (throttled per job). */
    const retryCheckpointRequests = (jobs: Map<string, JobRecord>) =>
      Effect.gen(function* () {
        for (const job of [...jobs.values()]) {
          if (!checkpointRetryDue(job)) continue
          const at = yield* now
          const last = checkpointAttemptAt.get(job.jobId) ?? job.checkpointRequest?.requestedAt
          if (last !== undefined && at - last < limits.checkpointRetryMs) continue
          checkpointAttemptAt.set(job.jobId, at)
          const outcome = yield* channel.request(job, job.pressure, options.batonCommand)
          if (!outcome.delivered && outcome.retryable) continue
          // Delivered, or no channel can carry it any more: the rise's request is settled.
          const changed = yield* Effect.result(
            store.modify(job.jobId, (j) => {
              const request = j.checkpointRequest ?? null
              if (request?.retryPending !== true || request.delivered) return j
              return {
                ...j,
                checkpointRequest: {
                  ...request,
                  band: outcome.delivered ? job.pressure : request.band,
                  delivered: outcome.delivered,
                  detail: outcome.delivered ? `${outcome.detail} (on retry)` : outcome.detail,
                  retryPending: false,
                },
              }
            }),
          )
          if (changed._tag === "Success") jobs.set(job.jobId, changed.success.job)
          else yield* logStoreError(job.jobId, changed.failure)
          yield* log("checkpoint-requested", {
            jobId: job.jobId,
            band: job.pressure,
            retry: true,
            ...outcome,
          })
        }
      })

    const readQuota = (jobs: Map<string, JobRecord>) =>
      Effect.gen(function* () {
        const reading: QuotaReading = yield* quota.read
        lastReadAt = reading.at
        const fresh =
          reading._tag === "Read"
            ? reading.rateLimits
            : reading._tag === "SignedOut" && rateLimits === null
              ? reading.rateLimits
              : null
        if (fresh !== null) {
          rateLimits = fresh
          rateLimitsAt = reading.at
          rateLimitsLive = true
        }
        const allowed = allowanceOf(reading)
        yield* log("quota", {
          reading: reading._tag,
          allowed,
          ...(reading._tag === "Read" ? {} : { detail: reading.detail }),
        })
        yield* observePressure(jobs)
        // A run slot is held by every live run, also one whose job was paused or completed
        // from outside while it ran (the process lives on until it exits).
        const busy = new Set(
          [...jobs.values()].filter((j) => j.state === "running").map((j) => j.jobId),
        )
        for (const run of tracked.values()) busy.add(run.jobId)
        let slots = limits.maxConcurrentRuns - busy.size
        const at = reading.at
        for (const job of [...jobs.values()]) {
          // A job never gets a second run beside its live one.
          const ownRunLives = job.state !== "running" && tracked.has(job.jobId)
          const base = {
            at,
            allowed,
            launchSlotFree: slots > 0 && !ownRunLives,
          }
          const event: JobEvent | null =
            job.state === "monitoring" || job.state === "quota_waiting"
              ? { _tag: "UsageObserved", ...base, resetsAt: resetsAtFor(rateLimits, job, at) }
              : job.state === "retry_waiting"
                ? job.nextRetryAt === null || at >= job.nextRetryAt
                  ? { _tag: "RetryDue", ...base }
                  : { _tag: "UsageObserved", ...base, resetsAt: resetsAtFor(rateLimits, job, at) }
                : null
          if (event === null) continue
          if (ownRunLives && allowed === true)
            yield* log("launch-deferred", {
              jobId: job.jobId,
              detail: `continuation ${tracked.get(job.jobId)?.generation} still runs`,
            })
          const next = yield* apply(job.jobId, event)
          if (next === null) continue
          jobs.set(job.jobId, next)
          if (next.state === "running" && job.state !== "running") slots -= 1
        }
      })

    const checkBounds = (jobs: Map<string, JobRecord>) =>
      Effect.gen(function* () {
        const at = yield* now
        for (const job of [...jobs.values()]) {
          if (!activeStates.has(job.state)) continue
          if (at - job.createdAt < job.bounds.maxWallClockMs) continue
          const next = yield* apply(job.jobId, {
            _tag: "BoundsExceeded",
            at,
            bound: "max_wall_clock",
          })
          if (next !== null) jobs.set(job.jobId, next)
        }
      })

    const loadJobs = Effect.gen(function* () {
      const jobs = new Map<string, JobRecord>()
      const ids = yield* Effect.result(store.list())
      if (ids._tag === "Failure") {
        yield* log("warning", { detail: ids.failure.message })
        return jobs
      }
      for (const id of ids.success) {
        const stored = yield* Effect.result(store.read(id))
        if (stored._tag === "Success") jobs.set(id, stored.success.job)
        else yield* logStoreError(id, stored.failure)
      }
      return jobs
    })

    /**
     * Adopts live runs of jobs that are no longer `running` (paused or completed while their run
     * lived) from their meta files, once per watcher: a successor still counts them.
     */
    let orphansAdopted = false
    const adoptOrphanRuns = (jobs: Map<string, JobRecord>) =>
      Effect.gen(function* () {
        orphansAdopted = true
        const at = yield* now
        for (const job of jobs.values()) {
          if (job.state === "running" || job.generation < 1 || tracked.has(job.jobId)) continue
          const files = runFiles(store.paths(job.jobId), job.generation)
          const meta = yield* readRunMeta(fs, files)
          if (meta === null || meta.endedAt !== null || meta.pid === null) continue
          if (!(yield* processes.isAlive(meta.pid, meta.startTicks))) continue
          tracked.set(job.jobId, {
            jobId: job.jobId,
            generation: job.generation,
            pid: meta.pid,
            startTicks: meta.startTicks,
            turn: null,
            seenActive: false,
            files,
            mode: meta.mode,
            child: false,
            startedAt: meta.launchedAt,
            exit: null,
            threadId: meta.threadId,
            lastSize: 0,
            lastGrowthAt: at,
            killedBy: null,
          })
          yield* log("adopted", { jobId: job.jobId, generation: job.generation, pid: meta.pid })
        }
      })

    /** One pass; returns how long to sleep before the next. */
    const tick = Effect.gen(function* () {
      const jobs = yield* loadJobs
      if (!orphansAdopted) yield* adoptOrphanRuns(jobs)
      for (const job of [...jobs.values()])
        if (job.state === "running" || tracked.has(job.jobId)) {
          yield* superviseRun(job)
          const fresh = yield* Effect.result(store.read(job.jobId))
          if (fresh._tag === "Success") jobs.set(job.jobId, fresh.success.job)
        }
      for (const run of [...tracked.values()]) if (!jobs.has(run.jobId)) tracked.delete(run.jobId)
      const at = yield* now
      const live = [...jobs.values()].some((j) => j.state === "monitoring" || j.state === "running")
      if (
        live &&
        (lastTailAt === null || at - lastTailAt >= Math.min(limits.tailMs, limits.pollCapMs))
      ) {
        yield* tail(jobs)
        yield* observePressure(jobs)
        yield* retryCheckpointRequests(jobs)
      }
      const cadence = () =>
        [...jobs.values()].map((j) => ({
          state: j.state,
          nextRetryAt: j.nextRetryAt,
          // A usage-limit cooldown ends no earlier than the reset: read when it is over.
          resetsAtMs:
            j.resetsAt === null && (j.cooldownUntil ?? null) === null
              ? null
              : Math.max(j.resetsAt ?? 0, j.cooldownUntil ?? 0),
        }))
      const due = quotaReadDueAt(cadence(), lastReadAt, at, limits)
      if (due !== null && due <= at) yield* readQuota(jobs)
      yield* checkBounds(jobs)
      const after = yield* now
      const nextRead = quotaReadDueAt(cadence(), lastReadAt, after, limits)
      const anyLive =
        tracked.size > 0 ||
        [...jobs.values()].some((j) => j.state === "monitoring" || j.state === "running")
      const candidates = [
        nextRead === null ? limits.idleMs : nextRead - after,
        anyLive ? limits.tailMs : limits.idleMs,
      ]
      return Math.max(10, Math.min(...candidates, limits.pollCapMs))
    })

    const heartbeat = Effect.gen(function* () {
      const every = Math.max(10, Math.floor((options.leaseMs ?? 30_000) / 3))
      for (;;) {
        yield* Effect.sleep(every)
        yield* renewWatcherLock(fs, held, options.leaseMs)
      }
    })

    const loop = Effect.gen(function* () {
      for (;;) {
        const delay = yield* tick
        if (options.once === true) return
        yield* Effect.raceFirst(Effect.sleep(delay), Effect.asVoid(Queue.take(wake)))
      }
    })

    const beat = yield* Effect.forkScoped(heartbeat)
    yield* Effect.raceFirst(loop, Fiber.join(beat))
  })

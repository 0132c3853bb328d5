/**
 * The worker: runs one compaction job against a live thread through a `ThreadController`.
 *
 * Guarantees:
 * - one worker per thread: it holds the thread's lease lock (renewed by heartbeats) while it runs
 *   and releases it at the end; a lost lock stops it without another write;
 * - one loop, one job: thread states, timer firings, send results and the cancel marker become
 *   `JobEvent`s fed to `transition` one at a time; effects run in the order the machine lists
 *   them, so the compare-and-set `PersistJob` always lands before a send;
 * - each request is sent once: a timeout or disconnect with `outcomeMayBeUnknown` becomes the
 *   machine's OutcomeUnknown event, never a resend;
 * - new user input is judged against the job's stored user-boundary fingerprint (the anchor the
 *   schedule path took with `threadUserBoundary`), so input that arrived before the worker's
 *   first look still cancels the job;
 * - time is the Effect Clock (timers, `at` stamps), so tests drive it with TestClock;
 * - the event log gets transitions and message types only, never handoff, user or turn text.
 * It must never decide anything the transition table decides.
 */
import type { ThreadController, ThreadState } from "@baton/ipc-codex"
import { renderContinuation, verifyHandoffRecord } from "@baton/handoff"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { JobLockHeldError, JobLockLostError, JournalError } from "./errors.js"
import type { JobEffect, JobEvent, TimerName, TransitionLogEntry } from "./job-machine.js"
import { transition } from "./job-machine.js"
import { isTerminalStatus } from "./job-record.js"
import type { JobRecord } from "./job-record.js"
import { acquireJobLock, heartbeatJobLock, ProcessProbe, releaseJobLock } from "./job-lock.js"
import { JournalFileSystem } from "./journal-file-system.js"
import { Journal, journalPaths } from "./journal.js"
import type { EventLogEntry, StoredJob } from "./journal.js"
import { jobMetrics } from "./metrics.js"
import { idleEdge, idleSampleOf, isIdleSample } from "./stable-idle.js"
import { threadUserBoundary, userTurnsOfState } from "./user-boundary.js"

const now = Clock.currentTimeMillis

/** What the worker needs besides its services. */
export interface RunWorkerOptions {
  readonly threadId: string
  readonly jobId: string
  readonly controller: ThreadController
  /** Lock lease; heartbeats renew it every third of it (default 30 s). */
  readonly leaseMs?: number
  /** How often the cancel marker is checked (default 500 ms). */
  readonly cancelPollMs?: number
  /**
   * Called after each durable flush with the transitions it made durable (fault injection for
   * the crash tests: worker-main SIGKILLs itself here when told to).
   */
  readonly afterFlush?: (transitions: ReadonlyArray<TransitionLogEntry>) => Effect.Effect<void>
}

/** Why the worker stopped before the job ended. */
export type WorkerError = JournalError | JobLockHeldError | JobLockLostError

/** What the worker remembers of the states it has seen; only changes become events. */
export interface ThreadObservation {
  readonly idle: boolean | null
  /**
   * The user-boundary fingerprint new input is judged against: the job's stored one, or, when
   * none was recorded at schedule time (null), the first state seen.
   */
  readonly anchor: string | null
  readonly lastFingerprint: string | null
  readonly stoppedTurn: string | null
  readonly seenTurns: ReadonlySet<string>
  readonly completedItems: ReadonlySet<string>
  readonly endedTurns: ReadonlySet<string>
  /** The last token usage reported (time and numbers): a change in either is a new report. */
  readonly usageKey: string | null
}

/** Nothing seen yet, and no anchor (the first state seen becomes it). */
export const initialObservation: ThreadObservation = {
  idle: null,
  anchor: null,
  lastFingerprint: null,
  stoppedTurn: null,
  seenTurns: new Set(),
  completedItems: new Set(),
  endedTurns: new Set(),
  usageKey: null,
}

/**
 * Nothing seen yet, anchored on the job's stored user-boundary fingerprint (`threadUserBoundary`
 * at schedule time), so input that arrived before the worker's first look still cancels. An
 * empty stored fingerprint means none was recorded: the first state seen is the anchor.
 */
export const observationFor = (job: JobRecord): ThreadObservation => ({
  ...initialObservation,
  anchor: job.userFingerprint === "" ? null : job.userFingerprint,
})

const usageKeyOf = (usage: NonNullable<ThreadState["tokenUsage"]>): string =>
  JSON.stringify([
    usage.receivedAtMs,
    usage.turnId,
    usage.last.totalTokens,
    usage.modelContextWindow,
  ])

/**
 * Turns one thread state into job events (pure). Order within a state: idle edge, user boundary,
 * turns started, compaction items completed, token usage, turns ended. Turn starts are stamped
 * with `at`, the Clock time the worker first saw them (attribution compares it to the request).
 * Token usage is reported when it changes, and again, as the state holds it, with every
 * compaction item that completes: the usage carried by the state that carried the completion
 * (the real app-server reports the compacted size before `item/completed`; the extension's
 * `latestTokenUsageInfo` is a level without a turn id). The machine decides whose it is.
 */
export const observeThreadState = (
  memory: ThreadObservation,
  state: ThreadState,
  at: number,
): { readonly memory: ThreadObservation; readonly events: ReadonlyArray<JobEvent> } => {
  const events: Array<JobEvent> = []
  const idle = isIdleSample(idleSampleOf(state))
  const edge = idleEdge(memory.idle, idle)
  if (edge !== null) events.push({ _tag: edge, at })

  const boundary = threadUserBoundary(state)
  const anchor = memory.anchor ?? boundary.fingerprint
  let lastFingerprint = memory.lastFingerprint
  if (boundary.fingerprint !== anchor && boundary.fingerprint !== lastFingerprint) {
    lastFingerprint = boundary.fingerprint
    events.push({ _tag: "UserBoundaryChanged", at, fingerprint: boundary.fingerprint })
  }
  let stoppedTurn = memory.stoppedTurn
  const stoppedKey = boundary.turnId ?? "unknown"
  if (boundary.stopped && stoppedKey !== stoppedTurn) {
    stoppedTurn = stoppedKey
    const status = userTurnsOfState(state).find((t) => t.turnId === boundary.turnId)?.status
    events.push({
      _tag: "UserTurnStopped",
      at,
      status: status === "failed" ? "failed" : "interrupted",
    })
  }

  const seenTurns = new Set(memory.seenTurns)
  for (const turn of state.turns)
    if (!seenTurns.has(turn.id)) {
      seenTurns.add(turn.id)
      events.push({ _tag: "CompactionTurnStarted", at, turnId: turn.id, startedAt: at })
    }

  const completedItems = new Set(memory.completedItems)
  let itemCompleted = false
  for (const c of state.compactions)
    if (c.phase === "completed" && !completedItems.has(c.itemId)) {
      completedItems.add(c.itemId)
      itemCompleted = true
      events.push({ _tag: "CompactionItemCompleted", at, turnId: c.turnId, itemId: c.itemId })
    }

  const usage = state.tokenUsage
  const usageKey = usage === null ? memory.usageKey : usageKeyOf(usage)
  if (usage !== null && (usageKey !== memory.usageKey || itemCompleted))
    events.push({
      _tag: "TokenUsageObserved",
      at,
      turnId: usage.turnId,
      totalTokens: usage.last.totalTokens,
      modelContextWindow: usage.modelContextWindow,
    })

  const endedTurns = new Set(memory.endedTurns)
  for (const turn of state.turns) {
    if (turn.status === "inProgress" || endedTurns.has(turn.id)) continue
    endedTurns.add(turn.id)
    // Both readings: the machine keeps the one whose turn id is ours (compaction or continuation).
    if (turn.status === "completed")
      events.push(
        { _tag: "CompactionTurnCompleted", at, turnId: turn.id },
        { _tag: "ContinuationTurnCompleted", at, turnId: turn.id },
      )
    else {
      const status = turn.status === "interrupted" ? "interrupted" : "failed"
      events.push(
        { _tag: "CompactionTurnFailed", at, turnId: turn.id, status },
        { _tag: "ContinuationTurnFailed", at, turnId: turn.id, status },
      )
    }
  }

  return {
    memory: {
      idle,
      anchor,
      lastFingerprint,
      stoppedTurn,
      seenTurns,
      completedItems,
      endedTurns,
      usageKey,
    },
    events,
  }
}

type Input =
  | { readonly _tag: "State"; readonly state: ThreadState }
  | { readonly _tag: "Event"; readonly event: JobEvent }
  | { readonly _tag: "Lost"; readonly detail: string }
  | { readonly _tag: "Stop"; readonly error: WorkerError }

const timerEvent = (timer: TimerName, token: number, at: number): JobEvent => {
  switch (timer) {
    case "idle_debounce":
      return { _tag: "IdleStable", at, token }
    case "idle_wait_deadline":
      return { _tag: "DeadlineExpired", at, budget: "idle_wait" }
    case "compaction_deadline":
      return { _tag: "DeadlineExpired", at, budget: "compaction" }
    case "continuation_deadline":
      return { _tag: "DeadlineExpired", at, budget: "continuation" }
    case "continuation_turn_deadline":
      return { _tag: "DeadlineExpired", at, budget: "continuation_turn" }
  }
}

const mayBeUnknown = (error: { readonly _tag: string }): boolean =>
  "outcomeMayBeUnknown" in error && error.outcomeMayBeUnknown === true

/**
 * Runs job `jobId` of `threadId` to a terminal state and returns it as stored. Fails only when
 * the journal or the lock does (a conflicting write or a lost lock stops it without writing).
 */
export const runWorker = (
  options: RunWorkerOptions,
): Effect.Effect<StoredJob, WorkerError, Journal | JournalFileSystem | ProcessProbe> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { threadId, jobId, controller } = options
      const leaseMs = options.leaseMs ?? 30_000
      const journal = yield* Journal
      const probe = yield* ProcessProbe
      const fs = yield* JournalFileSystem
      let stored = yield* journal.readJob(threadId, jobId)
      if (isTerminalStatus(stored.job.status)) return stored

      const taken = yield* Effect.result(
        acquireJobLock({ dir: journal.dir, threadId, jobId, leaseMs }),
      )
      if (Result.isFailure(taken)) {
        const error = taken.failure
        // Another job's worker holds the thread: this job can never run (one job per thread).
        // Nothing was sent, so end it now by the table instead of leaving it scheduled forever.
        if (
          error._tag !== "JobLockHeld" ||
          error.holderJobId === jobId ||
          stored.job.status !== "scheduled"
        )
          return yield* error
        const step = transition(stored.job, {
          _tag: "WorkerLost",
          at: yield* now,
          detail: `the thread lock is held by pid ${error.holderPid} for another job (${error.holderJobId})`,
        })
        const entries: Array<EventLogEntry> = []
        for (const effect of step.effects)
          if (effect._tag === "AppendLog") entries.push({ kind: "transition", ...effect.entry })
        yield* journal.appendEvents(threadId, jobId, entries)
        return yield* journal.saveJob(step.job, stored.revision)
      }
      const acquired = taken.success
      yield* Effect.addFinalizer(() =>
        Effect.ignore(
          releaseJobLock(journal.dir, acquired.lock).pipe(
            Effect.provideService(JournalFileSystem, fs),
          ),
        ),
      )
      const inputs = yield* Queue.unbounded<Input>()
      const offer = (input: Input) => Queue.offer(inputs, input)

      let lock = acquired.lock
      yield* Effect.forkChild(
        Effect.forever(
          Effect.gen(function* () {
            yield* Effect.sleep(Math.max(1, Math.floor(leaseMs / 3)))
            lock = yield* heartbeatJobLock(journal.dir, lock, leaseMs)
          }),
        ).pipe(Effect.catch((error) => offer({ _tag: "Stop", error }))),
      )
      yield* Effect.forkChild(
        Effect.forever(
          Effect.gen(function* () {
            yield* Effect.sleep(options.cancelPollMs ?? 500)
            if (yield* journal.isCancelRequested(threadId, jobId))
              yield* offer({ _tag: "Event", event: { _tag: "CancelRequested", at: yield* now } })
          }),
        ).pipe(Effect.catch((error) => offer({ _tag: "Stop", error }))),
      )
      yield* Effect.forkChild(
        controller.observe.pipe(
          Stream.runForEach((state) => offer({ _tag: "State", state })),
          Effect.matchEffect({
            onFailure: (error) => offer({ _tag: "Lost", detail: error._tag }),
            onSuccess: () => offer({ _tag: "Lost", detail: "the thread's state stream ended" }),
          }),
        ),
      )

      let observation = observationFor(stored.job)
      const timers = new Map<TimerName, Fiber.Fiber<unknown>>()
      // Timers start once the state that owns them is durable (after the flush), so a deadline
      // never fires for a state that is not on disk yet.
      const pendingTimers = new Map<TimerName, Extract<JobEffect, { _tag: "StartTimer" }>>()
      const cancelTimer = (timer: TimerName) =>
        Effect.gen(function* () {
          pendingTimers.delete(timer)
          const fiber = timers.get(timer)
          timers.delete(timer)
          if (fiber !== undefined) yield* Fiber.interrupt(fiber)
        })
      const startTimer = (effect: Extract<JobEffect, { _tag: "StartTimer" }>) =>
        Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(
            Effect.gen(function* () {
              yield* Effect.sleep(effect.delayMs)
              yield* offer({
                _tag: "Event",
                event: timerEvent(effect.timer, effect.token, yield* now),
              })
            }),
          )
          timers.set(effect.timer, fiber)
        })
      // Writes are coalesced: log lines and the job record are written once per batch of events
      // (one append, one save), and always before a request is sent (write-ahead). Transient
      // states that a batch passes through are logged but not saved on their own.
      const pendingLog: Array<EventLogEntry> = []
      const pendingTransitions: Array<TransitionLogEntry> = []
      let dirty = false
      const flush = Effect.gen(function* () {
        if (pendingLog.length > 0)
          yield* journal.appendEvents(threadId, jobId, pendingLog.splice(0))
        if (dirty) {
          dirty = false
          stored = yield* journal.saveJob(stored.job, stored.revision)
        }
        const made = pendingTransitions.splice(0)
        if (made.length > 0 && options.afterFlush !== undefined) yield* options.afterFlush(made)
        const starts = [...pendingTimers.values()]
        pendingTimers.clear()
        for (const start of starts) yield* startTimer(start)
      })
      const log = (messageType: string, detail?: string) =>
        Effect.map(now, (at) => {
          pendingLog.push({
            at,
            kind: "protocol",
            messageType,
            ...(detail === undefined ? {} : { detail }),
          })
        })

      /** Runs one effect; returns the event it produced, if any (fed back before the queue). */
      const runEffect = (
        job: JobRecord,
        effect: JobEffect,
      ): Effect.Effect<JobEvent | null, WorkerError> =>
        Effect.gen(function* () {
          switch (effect._tag) {
            case "AppendLog":
              pendingLog.push({ kind: "transition", ...effect.entry })
              pendingTransitions.push(effect.entry)
              return null
            case "PersistJob":
              dirty = true
              return null
            case "RecordMetrics": {
              // saveJob puts the metrics in the thread's history; the log gets numbers only.
              const m = jobMetrics(job)
              pendingLog.push({
                at: yield* now,
                kind: "note",
                detail: `metrics tokensBefore=${m.tokensBefore} tokensAfter=${m.tokensAfter} compactionDurationMs=${m.compactionDurationMs} continuationDelayMs=${m.continuationDelayMs}`,
              })
              return null
            }
            case "CancelTimer":
              yield* cancelTimer(effect.timer)
              return null
            case "StartTimer":
              yield* cancelTimer(effect.timer)
              pendingTimers.set(effect.timer, effect)
              return null
            case "SendCompactionRequest": {
              yield* log("compact")
              yield* flush
              const result = yield* Effect.result(controller.compact)
              const at = yield* now
              if (result._tag === "Success") {
                yield* log("compact/accepted")
                return { _tag: "CompactionAccepted", at }
              }
              const error = result.failure
              yield* log("compact/error", error._tag)
              return mayBeUnknown(error)
                ? { _tag: "CompactionOutcomeUnknown", at, detail: error._tag }
                : { _tag: "CompactionRejected", at, detail: error._tag }
            }
            case "VerifyHandoff": {
              const at = yield* now
              if (job.handoffDigest === null)
                return { _tag: "HandoffRejected", at, detail: "no handoff was stored" }
              const text = yield* Effect.result(journal.readHandoff(threadId, jobId))
              if (text._tag === "Failure")
                return { _tag: "HandoffRejected", at, detail: text.failure._tag }
              const record = yield* Effect.result(
                verifyHandoffRecord({
                  text: text.success,
                  expectedDigest: job.handoffDigest,
                  threadId,
                  jobId,
                  forContinuation: true,
                }),
              )
              if (record._tag === "Failure")
                return { _tag: "HandoffRejected", at, detail: record.failure._tag }
              const path = journalPaths(journal.dir, threadId).handoff(jobId)
              return { _tag: "HandoffVerified", at, text: renderContinuation(record.success, path) }
            }
            case "SendContinuation": {
              yield* log("startTurn")
              yield* flush
              const result = yield* Effect.result(
                controller.startTurn({ text: effect.text, clientUserMessageId: jobId }),
              )
              const at = yield* now
              if (result._tag === "Success") {
                yield* log("startTurn/accepted")
                return { _tag: "ContinuationAccepted", at, turnId: result.success.turnId }
              }
              const error = result.failure
              yield* log("startTurn/error", error._tag)
              return mayBeUnknown(error)
                ? { _tag: "ContinuationOutcomeUnknown", at, detail: error._tag }
                : { _tag: "ContinuationRejected", at, detail: error._tag }
            }
          }
        })

      /** Applies events in order, each with the effects it causes and the events those produce. */
      const apply = (first: ReadonlyArray<JobEvent>) =>
        Effect.gen(function* () {
          const pending = [...first]
          let event = pending.shift()
          while (event !== undefined && !isTerminalStatus(stored.job.status)) {
            const before = stored.job
            const step = transition(before, event)
            // `update` transitions change data without effects; the next persist carries them.
            stored = { ...stored, job: step.job }
            for (const effect of step.effects) {
              const produced = yield* runEffect(step.job, effect)
              if (produced !== null) pending.push(produced)
            }
            // Idle is reported on edges; a state that starts waiting for idle needs the level too.
            const waiting =
              step.job.status === "waiting_for_idle" ||
              step.job.status === "waiting_for_resume_idle"
            if (waiting && before.status !== step.job.status && observation.idle === true)
              pending.push({ _tag: "IdleObserved", at: yield* now })
            event = pending.shift()
          }
          yield* flush
        })

      // A job scheduled without a user-boundary anchor is anchored at the worker's first look
      // (persisted with WorkerStarted, before the scheduler returns to the agent): input that
      // arrives later always differs from it.
      let first: Input | undefined
      if (stored.job.userFingerprint === "") {
        const taken = yield* Effect.timeoutOption(Queue.take(inputs), 30_000)
        if (taken._tag === "Some") first = taken.value
      }
      yield* apply([
        {
          _tag: "WorkerStarted",
          at: yield* now,
          pid: probe.selfPid,
          ...(first?._tag === "State"
            ? { fingerprint: threadUserBoundary(first.state).fingerprint }
            : {}),
        },
      ])
      observation = observationFor(stored.job)
      while (!isTerminalStatus(stored.job.status)) {
        const input = first ?? (yield* Queue.take(inputs))
        first = undefined
        switch (input._tag) {
          case "State": {
            const seen = observeThreadState(observation, input.state, yield* now)
            observation = seen.memory
            yield* apply(seen.events)
            break
          }
          case "Event":
            yield* apply([input.event])
            break
          case "Lost":
            yield* apply([{ _tag: "WorkerLost", at: yield* now, detail: input.detail }])
            if (!isTerminalStatus(stored.job.status)) return stored
            break
          case "Stop":
            return yield* Effect.fail(input.error)
        }
      }
      for (const timer of [...timers.keys()]) yield* cancelTimer(timer)
      return stored
    }),
  )

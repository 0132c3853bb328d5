/**
 * The compaction job as one transition table: `transition(job, event) → {job, effects}`.
 *
 * Guarantees:
 * - pure: no clock (events carry `at`), no IO; effects are data for the worker to run in order;
 * - total: an event a state does not handle leaves the job unchanged (same reference, no effects);
 * - terminal states are final: no event leaves them;
 * - each request is sent at most once: `SendCompactionRequest` only when no compaction was ever
 *   requested, `SendContinuation` only when no continuation was ever requested; `PersistJob`
 *   always precedes a send, so a crash after the send is seen as "sent" (write-ahead);
 * - timers follow the state: each state owns a set of timers; leaving a state cancels the ones
 *   the next state does not own, entering one starts the new ones.
 * It must never decide anything from wall-clock time or from text it was not given.
 */
import { assessHeadroom } from "./headroom-guard.js"
import type {
  ActiveJobStatus,
  ContinuationOutcome,
  EndReason,
  JobRecord,
  JobStatus,
  ResumeSkipped,
  TerminalJobStatus,
} from "./job-record.js"
import { isTerminalStatus } from "./job-record.js"

/** Timers the worker runs for the machine; deadlines are per budget. */
export type TimerName =
  | "idle_debounce"
  | "idle_wait_deadline"
  | "compaction_deadline"
  | "continuation_deadline"
  | "continuation_turn_deadline"

/** The budget whose deadline fired. */
export type Budget = "idle_wait" | "compaction" | "continuation" | "continuation_turn"

/** Everything the worker reports to the machine; `at` is the Clock time it observed it. */
export type JobEvent =
  /** `fingerprint`: the user boundary at the worker's first look, anchoring a job scheduled without one. */
  | {
      readonly _tag: "WorkerStarted"
      readonly at: number
      readonly pid: number
      readonly fingerprint?: string
    }
  | { readonly _tag: "IdleObserved"; readonly at: number }
  | { readonly _tag: "IdleLost"; readonly at: number }
  /** The idle-debounce timer with this token fired. */
  | { readonly _tag: "IdleStable"; readonly at: number; readonly token: number }
  /** The latest user turn's fingerprint (user-boundary) as now observed. */
  | { readonly _tag: "UserBoundaryChanged"; readonly at: number; readonly fingerprint: string }
  | {
      readonly _tag: "UserTurnStopped"
      readonly at: number
      readonly status: "interrupted" | "failed"
    }
  | { readonly _tag: "CancelRequested"; readonly at: number }
  | { readonly _tag: "CompactionAccepted"; readonly at: number }
  /** The server answered the compaction request with an error: it did not act on it. */
  | { readonly _tag: "CompactionRejected"; readonly at: number; readonly detail: string }
  /** Timeout, disconnect or unreadable answer after the request was written. */
  | { readonly _tag: "CompactionOutcomeUnknown"; readonly at: number; readonly detail: string }
  /** A turn started; `startedAt` is when it was first observed. */
  | {
      readonly _tag: "CompactionTurnStarted"
      readonly at: number
      readonly turnId: string
      readonly startedAt: number
    }
  | {
      readonly _tag: "CompactionItemCompleted"
      readonly at: number
      readonly turnId: string
      readonly itemId: string
    }
  | { readonly _tag: "CompactionTurnCompleted"; readonly at: number; readonly turnId: string }
  | {
      readonly _tag: "CompactionTurnFailed"
      readonly at: number
      readonly turnId: string
      readonly status: "failed" | "interrupted"
    }
  /** Token usage as reported; `turnId` null when the transport does not say (extension IPC). */
  | {
      readonly _tag: "TokenUsageObserved"
      readonly at: number
      readonly turnId: string | null
      readonly totalTokens: number | null
      readonly modelContextWindow: number | null
    }
  /** The stored handoff re-verified (digest, binding, `resume: true`); `text` is the continuation. */
  | { readonly _tag: "HandoffVerified"; readonly at: number; readonly text: string }
  | { readonly _tag: "HandoffRejected"; readonly at: number; readonly detail: string }
  | { readonly _tag: "ContinuationAccepted"; readonly at: number; readonly turnId: string }
  | { readonly _tag: "ContinuationRejected"; readonly at: number; readonly detail: string }
  | { readonly _tag: "ContinuationOutcomeUnknown"; readonly at: number; readonly detail: string }
  | { readonly _tag: "ContinuationTurnCompleted"; readonly at: number; readonly turnId: string }
  | {
      readonly _tag: "ContinuationTurnFailed"
      readonly at: number
      readonly turnId: string
      readonly status: "failed" | "interrupted"
    }
  | { readonly _tag: "DeadlineExpired"; readonly at: number; readonly budget: Budget }
  /** The worker can no longer observe the thread: it died, its lock was recovered, or it lost the connection for good. */
  | {
      readonly _tag: "WorkerLost"
      readonly at: number
      readonly detail: string
      /** What to do before nothing-was-sent ends; default "schedule again" (a retry can help). */
      readonly nextStep?: string
      /**
       * Why nothing could be sent, when it is not the worker's loss: `thread_owned_elsewhere`, the
       * thread's single writer is another Codex process (before dispatch only).
       */
      readonly cause?: "thread_owned_elsewhere"
    }

/** The tag of a job event. */
export type JobEventTag = JobEvent["_tag"]

/** Every event tag, for exhaustive tables and tests. */
export const jobEventTags: ReadonlyArray<JobEventTag> = [
  "WorkerStarted",
  "IdleObserved",
  "IdleLost",
  "IdleStable",
  "UserBoundaryChanged",
  "UserTurnStopped",
  "CancelRequested",
  "CompactionAccepted",
  "CompactionRejected",
  "CompactionOutcomeUnknown",
  "CompactionTurnStarted",
  "CompactionItemCompleted",
  "CompactionTurnCompleted",
  "CompactionTurnFailed",
  "TokenUsageObserved",
  "HandoffVerified",
  "HandoffRejected",
  "ContinuationAccepted",
  "ContinuationRejected",
  "ContinuationOutcomeUnknown",
  "ContinuationTurnCompleted",
  "ContinuationTurnFailed",
  "DeadlineExpired",
  "WorkerLost",
]

/** One entry for the job's event log: a transition, never any message text. */
export interface TransitionLogEntry {
  readonly from: JobStatus
  readonly to: JobStatus
  readonly event: JobEventTag
  readonly at: number
}

/** What the worker must do, in order, after a transition. */
export type JobEffect =
  | { readonly _tag: "AppendLog"; readonly entry: TransitionLogEntry }
  /** Write the new record (compare-and-set on the revision the worker holds). */
  | { readonly _tag: "PersistJob" }
  | {
      readonly _tag: "StartTimer"
      readonly timer: TimerName
      readonly delayMs: number
      /** Echo as `IdleStable.token` when `timer` is `idle_debounce`. */
      readonly token: number
    }
  | { readonly _tag: "CancelTimer"; readonly timer: TimerName }
  | { readonly _tag: "SendCompactionRequest" }
  /** Read the stored handoff, verify it for a continuation, render the text → HandoffVerified / HandoffRejected. */
  | { readonly _tag: "VerifyHandoff" }
  | { readonly _tag: "SendContinuation"; readonly text: string }
  /** The job ended: compute its metrics from the record and keep them in the thread's history. */
  | { readonly _tag: "RecordMetrics" }

/** The result of one transition. */
export interface Transition {
  readonly job: JobRecord
  readonly effects: ReadonlyArray<JobEffect>
}

/** Timers each state owns (started on entry, cancelled on exit). */
export const timersOf: { readonly [S in JobStatus]: ReadonlyArray<TimerName> } = {
  scheduled: [],
  waiting_for_idle: ["idle_wait_deadline"],
  idle_settling: ["idle_wait_deadline", "idle_debounce"],
  compaction_requested: ["compaction_deadline"],
  compaction_accepted: ["compaction_deadline"],
  compacting: ["compaction_deadline"],
  finishing_compaction: ["compaction_deadline"],
  waiting_for_resume_idle: ["continuation_deadline"],
  resume_idle_settling: ["continuation_deadline", "idle_debounce"],
  verifying_handoff: ["continuation_deadline"],
  continuation_requested: ["continuation_deadline"],
  continuation_running: ["continuation_turn_deadline"],
  completed: [],
  resumed: [],
  cancelled: [],
  failed: [],
  expired: [],
  outcome_may_be_unknown: [],
}

const budgetTimer: { readonly [B in Budget]: TimerName } = {
  idle_wait: "idle_wait_deadline",
  compaction: "compaction_deadline",
  continuation: "continuation_deadline",
  continuation_turn: "continuation_turn_deadline",
}

const timerDelay = (job: JobRecord, timer: TimerName): number => {
  switch (timer) {
    case "idle_debounce":
      return job.settings.idleDebounceMs
    case "idle_wait_deadline":
      return job.settings.idleWaitMs
    case "compaction_deadline":
      return job.settings.compactionMs
    case "continuation_deadline":
      return job.settings.continuationMs
    case "continuation_turn_deadline":
      return job.settings.continuationTurnMs
  }
}

const timerEffects = (from: JobRecord, to: JobRecord): ReadonlyArray<JobEffect> => {
  const before = timersOf[from.status]
  const after = timersOf[to.status]
  // A fresh debounce is a new timer even when both states own one (never happens today).
  const cancels = before
    .filter((t) => !after.includes(t))
    .map((timer): JobEffect => ({ _tag: "CancelTimer", timer }))
  const starts = after
    .filter((t) => !before.includes(t))
    .map((timer): JobEffect => ({
      _tag: "StartTimer",
      timer,
      delayMs: timerDelay(to, timer),
      token: timer === "idle_debounce" ? to.debounceToken : 0,
    }))
  return [...cancels, ...starts]
}

/** Moves to `status`, stamping `updatedAt`; effects: log, persist, timers, then `extra`. */
const move = (
  job: JobRecord,
  event: JobEvent,
  status: JobStatus,
  patch: Partial<JobRecord> = {},
  extra: ReadonlyArray<JobEffect> = [],
): Transition => {
  const next: JobRecord = {
    ...job,
    ...patch,
    status,
    updatedAt: Math.max(job.updatedAt, event.at),
  }
  const ended: ReadonlyArray<JobEffect> = isTerminalStatus(status)
    ? [{ _tag: "RecordMetrics" }]
    : []
  return {
    job: next,
    effects: [
      {
        _tag: "AppendLog",
        entry: { from: job.status, to: status, event: event._tag, at: event.at },
      },
      { _tag: "PersistJob" },
      ...ended,
      ...timerEffects(job, next),
      ...extra,
    ],
  }
}

/** Same state, new data, nothing to do now (the next persist carries it). */
const update = (job: JobRecord, patch: Partial<JobRecord>): Transition => ({
  job: { ...job, ...patch },
  effects: [],
})

interface Ending {
  readonly reason: EndReason
  readonly detail: string
  readonly outcomeMayBeUnknown?: boolean
  readonly resumeSkipped?: ResumeSkipped | null
  readonly patch?: Partial<JobRecord>
}

const end = (
  job: JobRecord,
  event: JobEvent,
  status: TerminalJobStatus,
  ending: Ending,
): Transition =>
  move(job, event, status, {
    ...ending.patch,
    endedAt: event.at,
    reason: ending.reason,
    detail: ending.detail,
    outcomeMayBeUnknown: ending.outcomeMayBeUnknown ?? false,
    resumeSkipped: ending.resumeSkipped ?? job.resumeSkipped,
  })

type Handler<K extends JobEventTag> = (
  job: JobRecord,
  event: Extract<JobEvent, { readonly _tag: K }>,
) => Transition | null

type Row = { readonly [K in JobEventTag]?: Handler<K> }

const cancelReason = (
  event: JobEvent,
): { readonly reason: EndReason; readonly detail: string } | null => {
  if (event._tag === "CancelRequested")
    return { reason: "explicit_cancellation", detail: "Cancelled on request." }
  if (event._tag === "UserBoundaryChanged")
    return { reason: "new_user_input", detail: "New user input arrived; the job stood down." }
  if (event._tag === "UserTurnStopped")
    return {
      reason: "user_turn_stopped",
      detail: `The latest user turn ${event.status}; the job stood down.`,
    }
  return null
}

/** Cancellation by request, new user input or a stopped user turn (boundary unchanged → ignored). */
const cancelling = (outcomeMayBeUnknown: (job: JobRecord) => boolean): Row => {
  const handle = (job: JobRecord, event: JobEvent): Transition | null => {
    if (event._tag === "UserBoundaryChanged" && event.fingerprint === job.userFingerprint)
      return null
    const why = cancelReason(event)
    if (why === null) return null
    const unknown = outcomeMayBeUnknown(job)
    return end(job, event, "cancelled", {
      ...why,
      detail: unknown
        ? `${why.detail} The compaction request was already sent and cannot be recalled: its outcome is unknown.`
        : why.detail,
      outcomeMayBeUnknown: unknown,
    })
  }
  return { CancelRequested: handle, UserBoundaryChanged: handle, UserTurnStopped: handle }
}

const beforeSend = cancelling(() => false)
const compactionInFlight = cancelling((job) => job.compactionCompletedAt === null)

/** A usage sample as stored; an unknown turn is stored as "". */
const usageSample = (e: Extract<JobEvent, { readonly _tag: "TokenUsageObserved" }>) => ({
  turnId: e.turnId ?? "",
  totalTokens: e.totalTokens,
  modelContextWindow: e.modelContextWindow,
  at: e.at,
})

const recordUsageBefore: Row = {
  TokenUsageObserved: (job, e) => update(job, { usageBefore: usageSample(e) }),
}

/**
 * Fresh usage: after our compaction item completed (the only states with this row), reported for
 * our compaction turn or for no turn at all. Usage without a turn id is the thread's latest (the
 * extension's `latestTokenUsageInfo`): after our compaction it is what the continuation would
 * face, and a stale pre-compaction figure is caught by the guard (no reduction).
 */
const recordUsageAfter: Row = {
  TokenUsageObserved: (job, e) =>
    e.turnId === null || e.turnId === job.compactionTurnId
      ? update(job, { usageAfter: usageSample(e) })
      : null,
}

const deadline =
  (budget: Budget, onExpiry: Handler<"DeadlineExpired">): Handler<"DeadlineExpired"> =>
  (job, e) =>
    e.budget === budget && timersOf[job.status].includes(budgetTimer[budget])
      ? onExpiry(job, e)
      : null

/** A budget in words: minutes from a minute up, seconds below, ms below a second. */
const minutes = (ms: number): string =>
  ms >= 60_000
    ? `${Math.round(ms / 60_000)} min`
    : ms >= 1_000
      ? `${Math.round(ms / 1_000)} s`
      : `${ms} ms`

/** What to do about a thread another Codex process owns (its single writer). */
export const OWNED_ELSEWHERE_NEXT_STEP =
  "reach the thread through the process that owns it (the Codex daemon or the IDE extension it is open in: ask there, or schedule from an agent running in it), or wait until that other Codex process (for example a `codex exec` or TUI session on this thread) has ended, then schedule again"

const lostBeforeDispatch: Handler<"WorkerLost"> = (job, e) =>
  e.cause === "thread_owned_elsewhere"
    ? end(job, e, "failed", {
        reason: "thread_owned_elsewhere",
        detail: `Thread owned by another Codex process (${e.detail}); nothing was sent, ${e.nextStep ?? OWNED_ELSEWHERE_NEXT_STEP}.`,
      })
    : end(job, e, "failed", {
        reason: "worker_lost_before_dispatch",
        detail: `Worker lost before dispatch (${e.detail}); nothing was sent, ${e.nextStep ?? "schedule again"}.`,
      })

const lostAfterSend =
  (what: string): Handler<"WorkerLost"> =>
  (job, e) =>
    end(job, e, "outcome_may_be_unknown", {
      reason: "worker_lost_after_send",
      detail: `Worker lost after the ${what} request was sent (${e.detail}); its outcome is unknown and it is not retried.`,
      outcomeMayBeUnknown: true,
    })

const compactionDone = (job: JobRecord, e: JobEvent, skip: ResumeSkipped | null, detail: string) =>
  end(job, e, "completed", {
    reason: "compacted",
    detail,
    resumeSkipped: job.resume ? skip : null,
  })

const lostAfterCompaction: Handler<"WorkerLost"> = (job, e) =>
  compactionDone(
    job,
    e,
    "worker_lost",
    `Compaction completed; worker lost before the continuation (${e.detail}).`,
  )

const waitingForIdle = (next: "idle_settling" | "resume_idle_settling"): Row => ({
  IdleObserved: (job, e) => move(job, e, next, { debounceToken: job.debounceToken + 1 }),
})

const settling = (back: "waiting_for_idle" | "waiting_for_resume_idle"): Row => ({
  IdleLost: (job, e) => move(job, e, back),
})

const idleWaitExpiry: Row = {
  DeadlineExpired: deadline("idle_wait", (job, e) =>
    end(job, e, "expired", {
      reason: "idle_wait_budget_exceeded",
      detail: `The thread did not become stably idle within ${minutes(job.settings.idleWaitMs)}; nothing was sent.`,
    }),
  ),
}

const compactionExpiry: Row = {
  DeadlineExpired: deadline("compaction", (job, e) =>
    end(job, e, "outcome_may_be_unknown", {
      reason: "compaction_budget_exceeded",
      detail: `No compaction result within ${minutes(job.settings.compactionMs)} of the request; its outcome is unknown and it is not retried.`,
      outcomeMayBeUnknown: true,
    }),
  ),
}

const continuationWaitExpiry: Row = {
  DeadlineExpired: deadline("continuation", (job, e) =>
    end(job, e, "expired", {
      reason: "continuation_budget_exceeded",
      detail: `Compaction completed, but the thread did not become stably idle within ${minutes(job.settings.continuationMs)}; no continuation was sent.`,
    }),
  ),
}

const isOurTurn = (job: JobRecord, turnId: string): boolean => job.compactionTurnId === turnId

const attributeTurn: Handler<"CompactionTurnStarted"> = (job, e) =>
  job.compactionRequestedAt !== null && e.startedAt >= job.compactionRequestedAt
    ? move(job, e, "compacting", {
        compactionTurnId: e.turnId,
        compactionTurnStartedAt: e.startedAt,
      })
    : null

const afterCompaction = (job: JobRecord, e: JobEvent): Transition => {
  if (!job.resume)
    return compactionDone(job, e, null, "Compaction completed; no continuation was requested.")
  if (job.usageAfter !== null) {
    const verdict = assessHeadroom({
      before: job.usageBefore,
      after: job.usageAfter,
      threshold: job.settings.headroomThreshold,
    })
    if (!verdict.ok)
      return end(job, e, "completed", {
        reason: "compacted",
        detail: `Compaction completed; continuation skipped: ${verdict.problem}.`,
        resumeSkipped: "insufficient_headroom",
        patch: { resumeSkipReason: verdict.problem },
      })
  }
  // No fresh usage yet: it may still arrive; the decisive check runs right before sending.
  return move(job, e, "waiting_for_resume_idle")
}

const continuationOutcome = (
  job: JobRecord,
  e: JobEvent,
  outcome: ContinuationOutcome,
  detail: string,
): Transition =>
  end(job, e, "resumed", {
    reason: "continued",
    detail,
    patch: { continuationOutcome: outcome, continuationEndedAt: e.at },
  })

/**
 * The table: one row per non-terminal state; an event missing from a row leaves the job unchanged.
 * Handlers may also return null (a guard said no: foreign turn, stale timer, same fingerprint).
 */
export const jobTable: { readonly [S in ActiveJobStatus]: Row } = {
  scheduled: {
    ...beforeSend,
    ...recordUsageBefore,
    WorkerStarted: (job, e) =>
      move(job, e, "waiting_for_idle", {
        workerPid: e.pid,
        workerStartedAt: e.at,
        ...(job.userFingerprint === "" && e.fingerprint !== undefined
          ? { userFingerprint: e.fingerprint }
          : {}),
      }),
    WorkerLost: lostBeforeDispatch,
  },
  waiting_for_idle: {
    ...beforeSend,
    ...recordUsageBefore,
    ...waitingForIdle("idle_settling"),
    ...idleWaitExpiry,
    WorkerLost: lostBeforeDispatch,
  },
  idle_settling: {
    ...beforeSend,
    ...recordUsageBefore,
    ...settling("waiting_for_idle"),
    ...idleWaitExpiry,
    IdleStable: (job, e) =>
      e.token === job.debounceToken && job.compactionRequestedAt === null
        ? move(job, e, "compaction_requested", { compactionRequestedAt: e.at }, [
            { _tag: "SendCompactionRequest" },
          ])
        : null,
    WorkerLost: lostBeforeDispatch,
  },
  compaction_requested: {
    ...compactionInFlight,
    ...compactionExpiry,
    CompactionAccepted: (job, e) =>
      move(job, e, "compaction_accepted", { compactionAcceptedAt: e.at }),
    CompactionRejected: (job, e) =>
      end(job, e, "failed", {
        reason: "compaction_rejected",
        detail: `The compaction request was refused: ${e.detail}`,
      }),
    CompactionOutcomeUnknown: (job, e) =>
      end(job, e, "outcome_may_be_unknown", {
        reason: "compaction_outcome_unknown",
        detail: `The compaction request was sent but not answered (${e.detail}); its outcome is unknown and it is not retried.`,
        outcomeMayBeUnknown: true,
      }),
    CompactionTurnStarted: attributeTurn,
    WorkerLost: lostAfterSend("compaction"),
  },
  compaction_accepted: {
    ...compactionInFlight,
    ...compactionExpiry,
    CompactionTurnStarted: attributeTurn,
    WorkerLost: lostAfterSend("compaction"),
  },
  compacting: {
    ...compactionInFlight,
    ...compactionExpiry,
    // Codex 0.169 reports, for our compaction turn and before its item completes, first the
    // previous usage, then the summarization request's, then its estimate of the compacted context
    // (OBSERVED.md). A worker that joined a loaded thread may have seen no usage before: the first
    // sample of our turn is then the "before"; later ones are candidates for "after".
    TokenUsageObserved: (job, e) => {
      if (e.turnId === null || e.turnId !== job.compactionTurnId) return null
      const sample = {
        turnId: e.turnId,
        totalTokens: e.totalTokens,
        modelContextWindow: e.modelContextWindow,
        at: e.at,
      }
      return job.usageBefore === null
        ? update(job, { usageBefore: sample })
        : update(job, { usageAfter: sample })
    },
    CompactionAccepted: (job, e) =>
      job.compactionAcceptedAt === null ? update(job, { compactionAcceptedAt: e.at }) : null,
    CompactionItemCompleted: (job, e) =>
      isOurTurn(job, e.turnId)
        ? move(job, e, "finishing_compaction", {
            compactionItemId: e.itemId,
            compactionCompletedAt: e.at,
          })
        : null,
    CompactionTurnCompleted: (job, e) =>
      isOurTurn(job, e.turnId)
        ? end(job, e, "outcome_may_be_unknown", {
            reason: "compaction_turn_ended_without_item",
            detail:
              "Our compaction turn ended without a completed compaction item being seen; whether it compacted is unknown.",
            outcomeMayBeUnknown: true,
            patch: { compactionTurnEndedAt: e.at },
          })
        : null,
    CompactionTurnFailed: (job, e) =>
      isOurTurn(job, e.turnId)
        ? end(job, e, "failed", {
            reason:
              e.status === "failed" ? "compaction_turn_failed" : "compaction_turn_interrupted",
            detail: `Our compaction turn ${e.status} before compacting; nothing else was sent.`,
            patch: { compactionTurnEndedAt: e.at },
          })
        : null,
    WorkerLost: lostAfterSend("compaction"),
  },
  finishing_compaction: {
    ...compactionInFlight,
    ...recordUsageAfter,
    CompactionAccepted: (job, e) =>
      job.compactionAcceptedAt === null ? update(job, { compactionAcceptedAt: e.at }) : null,
    CompactionTurnCompleted: (job, e) =>
      isOurTurn(job, e.turnId) ? afterCompaction({ ...job, compactionTurnEndedAt: e.at }, e) : null,
    CompactionTurnFailed: (job, e) =>
      isOurTurn(job, e.turnId)
        ? compactionDone(
            { ...job, compactionTurnEndedAt: e.at },
            e,
            "compaction_turn_not_completed",
            `Compaction completed but its turn ${e.status}; no continuation was sent.`,
          )
        : null,
    DeadlineExpired: deadline("compaction", (job, e) =>
      compactionDone(
        job,
        e,
        "compaction_turn_not_completed",
        `Compaction completed but its turn did not end within ${minutes(job.settings.compactionMs)}; no continuation was sent.`,
      ),
    ),
    WorkerLost: lostAfterCompaction,
  },
  waiting_for_resume_idle: {
    ...beforeSend,
    ...recordUsageAfter,
    ...waitingForIdle("resume_idle_settling"),
    ...continuationWaitExpiry,
    WorkerLost: lostAfterCompaction,
  },
  resume_idle_settling: {
    ...beforeSend,
    ...recordUsageAfter,
    ...settling("waiting_for_resume_idle"),
    ...continuationWaitExpiry,
    IdleStable: (job, e) =>
      e.token === job.debounceToken
        ? move(job, e, "verifying_handoff", {}, [{ _tag: "VerifyHandoff" }])
        : null,
    WorkerLost: lostAfterCompaction,
  },
  verifying_handoff: {
    ...beforeSend,
    ...recordUsageAfter,
    ...settling("waiting_for_resume_idle"),
    ...continuationWaitExpiry,
    HandoffVerified: (job, e) => {
      if (job.continuationRequestedAt !== null) return null
      const verdict = assessHeadroom({
        before: job.usageBefore,
        after: job.usageAfter,
        threshold: job.settings.headroomThreshold,
      })
      const resumeCheck = {
        at: e.at,
        totalTokens: job.usageAfter?.totalTokens ?? null,
        modelContextWindow: job.usageAfter?.modelContextWindow ?? null,
        usedFraction: verdict.usedFraction,
        problem: verdict.ok ? null : verdict.problem,
      }
      if (!verdict.ok)
        return end(job, e, "completed", {
          reason: "compacted",
          detail: `Compaction completed; continuation skipped at the final check: ${verdict.problem}.`,
          resumeSkipped: "insufficient_headroom",
          patch: { resumeCheck, resumeSkipReason: verdict.problem },
        })
      return move(
        job,
        e,
        "continuation_requested",
        { resumeCheck, continuationRequestedAt: e.at },
        [{ _tag: "SendContinuation", text: e.text }],
      )
    },
    HandoffRejected: (job, e) =>
      end(job, e, "failed", {
        reason: "handoff_rejected",
        detail: `Compaction completed; the saved handoff failed verification (${e.detail}); no continuation was sent.`,
      }),
    WorkerLost: lostAfterCompaction,
  },
  continuation_requested: {
    ContinuationAccepted: (job, e) =>
      move(job, e, "continuation_running", {
        continuationTurnId: e.turnId,
        continuationAcceptedAt: e.at,
      }),
    ContinuationRejected: (job, e) =>
      end(job, e, "failed", {
        reason: "continuation_rejected",
        detail: `Compaction completed; the continuation was refused: ${e.detail}`,
      }),
    ContinuationOutcomeUnknown: (job, e) =>
      end(job, e, "outcome_may_be_unknown", {
        reason: "continuation_outcome_unknown",
        detail: `Compaction completed; the continuation was sent but not confirmed (${e.detail}); it is not resent.`,
        outcomeMayBeUnknown: true,
      }),
    DeadlineExpired: deadline("continuation", (job, e) =>
      end(job, e, "outcome_may_be_unknown", {
        reason: "continuation_budget_exceeded",
        detail: `Compaction completed; the continuation was sent but not confirmed within ${minutes(job.settings.continuationMs)}; it is not resent.`,
        outcomeMayBeUnknown: true,
      }),
    ),
    WorkerLost: lostAfterSend("continuation"),
  },
  continuation_running: {
    ContinuationTurnCompleted: (job, e) =>
      e.turnId === job.continuationTurnId
        ? continuationOutcome(job, e, "completed", "The continuation turn completed.")
        : null,
    ContinuationTurnFailed: (job, e) =>
      e.turnId === job.continuationTurnId
        ? continuationOutcome(job, e, e.status, `The continuation turn started and ${e.status}.`)
        : null,
    DeadlineExpired: deadline("continuation_turn", (job, e) =>
      continuationOutcome(
        job,
        e,
        "unfollowed",
        `The continuation turn started; it was still running after ${minutes(job.settings.continuationTurnMs)}.`,
      ),
    ),
    WorkerLost: (job, e) =>
      continuationOutcome(
        job,
        e,
        "unfollowed",
        `The continuation turn started; the worker stopped following it (${e.detail}).`,
      ),
  },
}

const unchanged = (job: JobRecord): Transition => ({ job, effects: [] })

/** Applies one event. Unhandled events and terminal states return the same job and no effects. */
export const transition = (job: JobRecord, event: JobEvent): Transition => {
  if (isTerminalStatus(job.status)) return unchanged(job)
  const row: Row = jobTable[job.status]
  const handler = row[event._tag] as Handler<JobEventTag> | undefined
  if (handler === undefined) return unchanged(job)
  return handler(job, event) ?? unchanged(job)
}

/** Applies events in order, collecting every effect (for tests and replay). */
export const runEvents = (
  job: JobRecord,
  events: ReadonlyArray<JobEvent>,
): { readonly job: JobRecord; readonly effects: ReadonlyArray<JobEffect> } =>
  events.reduce<{ job: JobRecord; effects: ReadonlyArray<JobEffect> }>(
    (acc, event) => {
      const step = transition(acc.job, event)
      return { job: step.job, effects: [...acc.effects, ...step.effects] }
    },
    { job, effects: [] },
  )

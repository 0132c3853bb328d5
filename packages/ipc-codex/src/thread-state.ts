/**
 * The typed state of one thread as seen by one connection, and its reducer. The reducer is a pure
 * function of (state, event): no IO, no clock reads (times arrive stamped on events). Histories are
 * bounded so a long-lived subscription cannot grow without limit. Compaction items are kept in
 * their own list so they are never evicted by ordinary items.
 */
import type {
  CodexErrorInfo,
  CodexEvent,
  CodexTurnError,
  ServerRequestHandling,
} from "./codex-event.js"
import { turnErrorOf } from "./codex-event.js"
import type { TokenUsageBreakdown } from "./protocol-schema.js"
import type { RateLimitsState } from "./rate-limits.js"
import { applyRateLimitsUpdate } from "./rate-limits.js"

/** Thread status kinds; `unknown` marks a status type this build does not know (protocol drift). */
export type ThreadStatusKind = "idle" | "active" | "notLoaded" | "systemError" | "unknown"

/** A thread's status with its `activeFlags` (`waitingOnApproval`, `waitingOnUserInput`, …). */
export interface ThreadStatusView {
  readonly type: ThreadStatusKind
  readonly activeFlags: ReadonlyArray<string>
  /** The wire `type` when it was not one of the known kinds. */
  readonly unknownType: string | null
}

/** A server→client request (approval, user input) that has not been resolved yet. */
export interface PendingServerRequest {
  readonly requestId: string | number
  readonly method: string
  readonly turnId: string | null
  readonly itemId: string | null
  readonly receivedAtMs: number
  readonly handling: ServerRequestHandling
}

/** One item of a turn, by kind and lifecycle phase. */
export interface ItemView {
  readonly id: string
  readonly type: string
  readonly phase: "started" | "completed"
  readonly startedAtMs: number | null
  readonly completedAtMs: number | null
}

/** Turn status on the wire: `inProgress`, `completed`, `interrupted`, `failed` (or a newer value). */
export type TurnStatus = "inProgress" | "completed" | "interrupted" | "failed" | (string & {})

/** One turn and its most recent items. */
export interface TurnView {
  readonly id: string
  readonly status: TurnStatus
  readonly error: CodexTurnError | null
  readonly startedAtMs: number | null
  readonly completedAtMs: number | null
  /** The state revision at which `turn/started` was applied (orders turns against requests). */
  readonly startedAtRevision: number
  readonly items: ReadonlyArray<ItemView>
}

/** A `contextCompaction` item's lifecycle. */
export interface CompactionView {
  readonly itemId: string
  readonly turnId: string
  readonly phase: "started" | "completed"
  readonly startedAtMs: number | null
  readonly completedAtMs: number | null
}

/** A `thread/compact/start` sent by this connection, and the first turn that started after it. */
export interface CompactionRequestView {
  readonly requestedAtMs: number
  readonly requestedAtRevision: number
  /** First `turn/started` applied after the request was sent; the compaction turn unless something raced it. */
  readonly turnId: string | null
  readonly outcome: "pending" | "accepted" | "rejected"
}

/** The freshest `thread/tokenUsage/updated`. */
export interface TokenUsageView {
  /** The turn the usage was reported for; null when the transport does not say (extension IPC). */
  readonly turnId: string | null
  readonly last: TokenUsageBreakdown
  readonly total: TokenUsageBreakdown
  readonly modelContextWindow: number | null
  readonly receivedAtMs: number
}

/** The last `error` notification. */
export interface ErrorView {
  readonly message: string
  readonly codexErrorInfo: CodexErrorInfo | null
  readonly additionalDetails: string | null
  readonly willRetry: boolean
  readonly turnId: string | null
  readonly receivedAtMs: number
}

/** Everything Baton knows about one thread from one connection. */
export interface ThreadState {
  readonly threadId: string
  /** Bumps on every applied event; equal revisions mean equal states. */
  readonly revision: number
  readonly status: ThreadStatusView
  /** Number of status notifications applied, so a consumer that skipped states still sees a flap. */
  readonly statusChanges: number
  readonly statusChangedAtMs: number | null
  /** Last time a non-idle status (or a pending request) was seen. */
  readonly lastBusyAtMs: number | null
  readonly activeTurnId: string | null
  readonly turns: ReadonlyArray<TurnView>
  readonly compactions: ReadonlyArray<CompactionView>
  readonly compactionRequests: ReadonlyArray<CompactionRequestView>
  readonly pendingServerRequests: ReadonlyArray<PendingServerRequest>
  readonly tokenUsage: TokenUsageView | null
  readonly rateLimits: RateLimitsState | null
  readonly lastError: ErrorView | null
  readonly errorCount: number
  /** Deprecated `thread/compacted` notifications seen (turn ids). */
  readonly compactedNotices: ReadonlyArray<string>
  /**
   * Nothing will update this state any more: the thread was closed (`thread/closed`), or the
   * connection it came from is gone (then the rest is the last known state, e.g. a turn still
   * `inProgress` after the server was killed). Pollers stop here.
   */
  readonly closed: boolean
  readonly updatedAtMs: number | null
}

/** Retention limits for the bounded histories in `ThreadState`. */
export const THREAD_STATE_LIMITS = {
  turns: 16,
  itemsPerTurn: 32,
  compactions: 16,
  compactionRequests: 8,
  compactedNotices: 8,
  pendingServerRequests: 64,
} as const

const unknownStatus: ThreadStatusView = { type: "unknown", activeFlags: [], unknownType: null }

/** The state of a thread nothing has been heard about yet. */
export const emptyThreadState = (
  threadId: string,
  rateLimits: RateLimitsState | null = null,
): ThreadState => ({
  threadId,
  revision: 0,
  status: unknownStatus,
  statusChanges: 0,
  statusChangedAtMs: null,
  lastBusyAtMs: null,
  activeTurnId: null,
  turns: [],
  compactions: [],
  compactionRequests: [],
  pendingServerRequests: [],
  tokenUsage: null,
  rateLimits,
  lastError: null,
  errorCount: 0,
  compactedNotices: [],
  closed: false,
  updatedAtMs: null,
})

const KNOWN_STATUS: ReadonlySet<string> = new Set(["idle", "active", "notLoaded", "systemError"])

/** Maps a wire `ThreadStatus` to the view (unknown types are kept, flagged, and count as busy). */
export const toStatusView = (status: {
  readonly type: string
  readonly activeFlags?: ReadonlyArray<string>
}): ThreadStatusView =>
  KNOWN_STATUS.has(status.type)
    ? {
        type: status.type as ThreadStatusKind,
        activeFlags: status.activeFlags ?? [],
        unknownType: null,
      }
    : { type: "unknown", activeFlags: status.activeFlags ?? [], unknownType: status.type }

/**
 * Idle for Baton: status `idle`, no `activeFlags`, no pending server→client request, and no turn
 * in progress. The last matters because 0.169 sends `thread/status/changed idle` just before
 * `turn/completed`, so status alone reads idle while the turn is still running. Stability over
 * time (the debounce) is the caller's business.
 */
export const isThreadIdle = (state: ThreadState): boolean =>
  state.activeTurnId === null &&
  state.status.type === "idle" &&
  state.status.activeFlags.length === 0 &&
  state.pendingServerRequests.length === 0

const keepLast = <A>(items: ReadonlyArray<A>, limit: number): ReadonlyArray<A> =>
  items.length <= limit ? items : items.slice(items.length - limit)

const upsert = <A>(
  items: ReadonlyArray<A>,
  match: (a: A) => boolean,
  make: (previous: A | undefined) => A,
  limit: number,
) => {
  const index = items.findIndex(match)
  if (index === -1) return keepLast([...items, make(undefined)], limit)
  const next = items.slice()
  next[index] = make(items[index])
  return next
}

const upsertTurn = (
  state: ThreadState,
  turnId: string,
  update: (previous: TurnView | undefined) => TurnView,
): ReadonlyArray<TurnView> =>
  upsert(state.turns, (t) => t.id === turnId, update, THREAD_STATE_LIMITS.turns)

const newTurn = (id: string, revision: number): TurnView => ({
  id,
  status: "inProgress",
  error: null,
  startedAtMs: null,
  completedAtMs: null,
  startedAtRevision: revision,
  items: [],
})

const withItem = (
  turn: TurnView,
  item: { readonly id: string; readonly type: string },
  phase: ItemView["phase"],
  at: number,
): TurnView => ({
  ...turn,
  items: upsert(
    turn.items,
    (i) => i.id === item.id,
    (previous) => ({
      id: item.id,
      type: item.type,
      phase: previous?.phase === "completed" ? "completed" : phase,
      startedAtMs: previous?.startedAtMs ?? (phase === "started" ? at : null),
      completedAtMs: phase === "completed" ? at : (previous?.completedAtMs ?? null),
    }),
    THREAD_STATE_LIMITS.itemsPerTurn,
  ),
})

const CONTEXT_COMPACTION = "contextCompaction"

/** Records a `thread/compact/start` this connection is about to send. */
export const recordCompactionRequest = (
  state: ThreadState,
  requestedAtMs: number,
): ThreadState => ({
  ...state,
  revision: state.revision + 1,
  compactionRequests: keepLast(
    [
      ...state.compactionRequests,
      { requestedAtMs, requestedAtRevision: state.revision + 1, turnId: null, outcome: "pending" },
    ],
    THREAD_STATE_LIMITS.compactionRequests,
  ),
  updatedAtMs: requestedAtMs,
})

/** Marks the newest pending compaction request accepted (`{}` came back) or rejected. */
export const settleCompactionRequest = (
  state: ThreadState,
  requestedAtRevision: number,
  outcome: "accepted" | "rejected",
): ThreadState => ({
  ...state,
  revision: state.revision + 1,
  compactionRequests: state.compactionRequests.map((r) =>
    r.requestedAtRevision === requestedAtRevision ? { ...r, outcome } : r,
  ),
})

/** Replaces the connection-wide rate-limit view carried by a thread's state. */
export const withRateLimits = (
  state: ThreadState,
  rateLimits: RateLimitsState | null,
  atMs: number,
): ThreadState => ({
  ...state,
  rateLimits,
  revision: state.revision + 1,
  updatedAtMs: atMs,
})

/** Seeds the status from a `thread/resume` or `thread/list` answer. */
export const seedStatus = (
  state: ThreadState,
  status: { readonly type: string; readonly activeFlags?: ReadonlyArray<string> },
  atMs: number,
): ThreadState =>
  applyEvent(state, {
    _tag: "ThreadStatusChanged",
    threadId: state.threadId,
    status,
    receivedAtMs: atMs,
  })

const attributeTurnToRequests = (
  requests: ReadonlyArray<CompactionRequestView>,
  turnId: string,
): ReadonlyArray<CompactionRequestView> =>
  requests.map((r) => (r.turnId === null && r.outcome !== "rejected" ? { ...r, turnId } : r))

/**
 * Applies one event to a thread's state. Events for other threads, and events the state does
 * not track, return the state unchanged (same reference).
 */
export const applyEvent = (state: ThreadState, event: CodexEvent): ThreadState => {
  const at = event.receivedAtMs
  const bump = (patch: Partial<ThreadState>): ThreadState => ({
    ...state,
    ...patch,
    revision: state.revision + 1,
    updatedAtMs: at,
  })
  if (event._tag === "RateLimitsUpdated")
    return withRateLimits(state, applyRateLimitsUpdate(state.rateLimits, event.rateLimits, at), at)
  if (event._tag === "ProtocolDrift" || event._tag === "OtherNotification") return state
  if (event.threadId !== state.threadId) return state
  switch (event._tag) {
    case "ThreadStatusChanged":
    case "ThreadStarted": {
      if (event.status === null) return bump({ closed: false })
      const status = toStatusView(event.status)
      const busy = status.type !== "idle" || status.activeFlags.length > 0
      return bump({
        status,
        statusChanges: state.statusChanges + 1,
        statusChangedAtMs: at,
        lastBusyAtMs: busy ? at : state.lastBusyAtMs,
        closed: false,
      })
    }
    case "ThreadClosed":
      return bump({
        closed: true,
        status: { type: "notLoaded", activeFlags: [], unknownType: null },
        activeTurnId: null,
      })
    case "TurnStarted": {
      const revision = state.revision + 1
      return bump({
        activeTurnId: event.turn.id,
        lastBusyAtMs: at,
        turns: upsertTurn(state, event.turn.id, (previous) => ({
          ...(previous ?? newTurn(event.turn.id, revision)),
          status: "inProgress",
          startedAtMs: previous?.startedAtMs ?? at,
        })),
        compactionRequests: attributeTurnToRequests(state.compactionRequests, event.turn.id),
      })
    }
    case "TurnCompleted": {
      const revision = state.revision + 1
      return bump({
        activeTurnId: state.activeTurnId === event.turn.id ? null : state.activeTurnId,
        turns: upsertTurn(state, event.turn.id, (previous) => ({
          ...(previous ?? newTurn(event.turn.id, revision)),
          status: event.turn.status ?? "completed",
          error: turnErrorOf(event.turn),
          completedAtMs: at,
        })),
      })
    }
    case "ItemStarted":
    case "ItemCompleted": {
      const phase = event._tag === "ItemStarted" ? "started" : "completed"
      const revision = state.revision + 1
      const turns = upsertTurn(state, event.turnId, (previous) =>
        withItem(previous ?? newTurn(event.turnId, revision), event.item, phase, at),
      )
      if (event.item.type !== CONTEXT_COMPACTION) return bump({ turns })
      const compactions = upsert(
        state.compactions,
        (c) => c.itemId === event.item.id,
        (previous): CompactionView => ({
          itemId: event.item.id,
          turnId: event.turnId,
          phase: previous?.phase === "completed" ? "completed" : phase,
          startedAtMs: previous?.startedAtMs ?? (phase === "started" ? at : null),
          completedAtMs: phase === "completed" ? at : (previous?.completedAtMs ?? null),
        }),
        THREAD_STATE_LIMITS.compactions,
      )
      return bump({ turns, compactions })
    }
    case "TokenUsageUpdated":
      return bump({
        tokenUsage: {
          turnId: event.turnId,
          last: event.tokenUsage.last,
          total: event.tokenUsage.total,
          modelContextWindow: event.tokenUsage.modelContextWindow ?? null,
          receivedAtMs: at,
        },
      })
    case "ErrorNotified":
      return bump({
        lastError: {
          message: event.error.message,
          codexErrorInfo: event.error.codexErrorInfo,
          additionalDetails: event.error.additionalDetails,
          willRetry: event.willRetry,
          turnId: event.turnId,
          receivedAtMs: at,
        },
        errorCount: state.errorCount + 1,
      })
    case "ThreadCompacted":
      return bump({
        compactedNotices: keepLast(
          [...state.compactedNotices, event.turnId],
          THREAD_STATE_LIMITS.compactedNotices,
        ),
      })
    case "ServerRequestReceived":
      return bump({
        lastBusyAtMs: at,
        pendingServerRequests: keepLast(
          [
            ...state.pendingServerRequests.filter((r) => r.requestId !== event.requestId),
            {
              requestId: event.requestId,
              method: event.method,
              turnId: event.turnId,
              itemId: event.itemId,
              receivedAtMs: at,
              handling: event.handling,
            },
          ],
          THREAD_STATE_LIMITS.pendingServerRequests,
        ),
      })
    case "ServerRequestResolved":
      return bump({
        pendingServerRequests: state.pendingServerRequests.filter(
          (r) => String(r.requestId) !== String(event.requestId),
        ),
      })
  }
}

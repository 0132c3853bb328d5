/**
 * Projects the extension's typed `ConversationView` onto the common `ThreadState`, so an
 * extension-owned thread is observed exactly like a daemon or stdio thread. Pure: (previous
 * state, view, time) → next state; no IO, no clock reads.
 * Mapping decisions (the extension state is a snapshot, not an event log):
 * - status = `threadRuntimeStatus.type`; `activeFlags` are derived: `waitingOnApproval` /
 *   `waitingOnUserInput` from pending `requests[]`, `pendingTurnSubmission` (Baton's own flag) for
 *   a non-terminal `unconfirmedTurnSubmissions` entry, so `isThreadIdle` matches the extension's
 *   idle rule;
 * - every `requests[]` entry is a pending server request (left pending: the owner answers);
 * - `contextCompaction` items in `turns` are compactions (completed iff the private `completed`
 *   flag is true); history items count only when they carry `completed: true`;
 * - a compaction request recorded by the adapter is attributed to the first turn that appears
 *   after the turns already known, like `turn/started` attribution on the app-server;
 * - token usage has only totals (no breakdown) and no turn id (`turnId: null`).
 */
import type { ConversationView, ExtensionTurnView } from "./extension/conversation-state.js"
import type {
  CompactionRequestView,
  CompactionView,
  ItemView,
  PendingServerRequest,
  ThreadState,
  TokenUsageView,
  TurnView,
} from "./thread-state.js"
import { THREAD_STATE_LIMITS, toStatusView } from "./thread-state.js"

/** The derived flag for a turn submission the owner has not confirmed yet. */
export const PENDING_TURN_SUBMISSION_FLAG = "pendingTurnSubmission"

const keepLast = <A>(items: ReadonlyArray<A>, limit: number): ReadonlyArray<A> =>
  items.length <= limit ? items : items.slice(items.length - limit)

const activeFlagsOf = (view: ConversationView): ReadonlyArray<string> => {
  const flags: Array<string> = []
  if (view.pendingRequests.some((r) => r.kind === "approval")) flags.push("waitingOnApproval")
  if (view.pendingRequests.some((r) => r.kind === "user-input")) flags.push("waitingOnUserInput")
  if (view.unconfirmedSubmissions > 0) flags.push(PENDING_TURN_SUBMISSION_FLAG)
  return flags
}

const toTurn = (
  turn: ExtensionTurnView & { readonly id: string },
  previous: TurnView | undefined,
  revision: number,
  atMs: number,
): TurnView => {
  const status = turn.status ?? "inProgress"
  const items = turn.items.map((item, index): ItemView => {
    const id = item.id ?? `${turn.id}:${index}`
    const before = previous?.items.find((i) => i.id === id)
    const phase = item.completed === false ? "started" : "completed"
    return {
      id,
      type: item.type,
      phase,
      startedAtMs: before?.startedAtMs ?? (phase === "started" ? atMs : null),
      completedAtMs: phase === "completed" ? (before?.completedAtMs ?? atMs) : null,
    }
  })
  return {
    id: turn.id,
    status,
    error: previous?.error ?? null,
    startedAtMs: turn.startedAtMs ?? previous?.startedAtMs ?? null,
    completedAtMs:
      status === "inProgress" ? null : (previous?.completedAtMs ?? (previous ? atMs : null)),
    startedAtRevision: previous?.startedAtRevision ?? revision,
    items: keepLast(items, THREAD_STATE_LIMITS.itemsPerTurn),
  }
}

const attribute = (
  requests: ReadonlyArray<CompactionRequestView>,
  previousTurns: ReadonlyArray<TurnView>,
  turnIds: ReadonlyArray<string>,
): ReadonlyArray<CompactionRequestView> => {
  if (!requests.some((r) => r.turnId === null && r.outcome !== "rejected")) return requests
  const known = new Set(previousTurns.map((t) => t.id))
  let lastKnown = -1
  turnIds.forEach((id, index) => {
    if (known.has(id)) lastKnown = index
  })
  const fresh = turnIds.slice(lastKnown + 1).find((id) => !known.has(id))
  if (fresh === undefined) return requests
  return requests.map((r) =>
    r.turnId === null && r.outcome !== "rejected" ? { ...r, turnId: fresh } : r,
  )
}

/** The next `ThreadState` of an extension-owned thread, given a fresh view of its state. */
export const threadStateFromView = (
  previous: ThreadState,
  view: ConversationView,
  atMs: number,
): ThreadState => {
  const revision = previous.revision + 1
  const status = toStatusView({ type: view.runtimeStatus, activeFlags: activeFlagsOf(view) })
  const statusChanged =
    status.type !== previous.status.type ||
    status.unknownType !== previous.status.unknownType ||
    status.activeFlags.join(",") !== previous.status.activeFlags.join(",")
  const busy = status.type !== "idle" || status.activeFlags.length > 0

  const identified = view.turns.filter(
    (t): t is ExtensionTurnView & { readonly id: string } => t.id !== undefined,
  )
  const turns = keepLast(
    identified.map((turn) =>
      toTurn(
        turn,
        previous.turns.find((t) => t.id === turn.id),
        revision,
        atMs,
      ),
    ),
    THREAD_STATE_LIMITS.turns,
  )
  const activeTurnId = [...turns].reverse().find((t) => t.status === "inProgress")?.id ?? null

  const compactions: Array<CompactionView> = []
  for (const item of view.compactions) {
    if (item.source === "history" && item.completed !== true) continue
    const before = previous.compactions.find((c) => c.itemId === item.id)
    const phase = item.completed === true ? "completed" : "started"
    compactions.push({
      itemId: item.id,
      turnId: item.turnId ?? "",
      phase,
      startedAtMs: before?.startedAtMs ?? (phase === "started" ? atMs : null),
      completedAtMs: phase === "completed" ? (before?.completedAtMs ?? atMs) : null,
    })
  }

  const pendingServerRequests = view.pendingRequests.map((request, index): PendingServerRequest => {
    const requestId = request.id ?? `request-${index}`
    const before = previous.pendingServerRequests.find((r) => r.requestId === requestId)
    return {
      requestId,
      method: request.method ?? "unknown",
      turnId: null,
      itemId: null,
      receivedAtMs: before?.receivedAtMs ?? atMs,
      handling: "left-pending",
    }
  })

  const usage = view.tokenUsage
  const lastTotal = usage?.lastTotalTokens
  const tokenUsage: TokenUsageView | null =
    usage === undefined || lastTotal === undefined
      ? null
      : {
          turnId: null,
          last: { totalTokens: lastTotal },
          total: { totalTokens: usage.totalTotalTokens ?? lastTotal },
          modelContextWindow: usage.modelContextWindow ?? null,
          receivedAtMs:
            previous.tokenUsage !== null &&
            previous.tokenUsage.last.totalTokens === lastTotal &&
            previous.tokenUsage.modelContextWindow === (usage.modelContextWindow ?? null)
              ? previous.tokenUsage.receivedAtMs
              : atMs,
        }

  return {
    ...previous,
    revision,
    status,
    statusChanges: statusChanged ? previous.statusChanges + 1 : previous.statusChanges,
    statusChangedAtMs: statusChanged ? atMs : previous.statusChangedAtMs,
    lastBusyAtMs: busy || pendingServerRequests.length > 0 ? atMs : previous.lastBusyAtMs,
    activeTurnId,
    turns,
    compactions: keepLast(compactions, THREAD_STATE_LIMITS.compactions),
    compactionRequests: attribute(
      previous.compactionRequests,
      previous.turns,
      identified.map((t) => t.id),
    ),
    pendingServerRequests: keepLast(
      pendingServerRequests,
      THREAD_STATE_LIMITS.pendingServerRequests,
    ),
    tokenUsage,
    closed: false,
    updatedAtMs: atMs,
  }
}

/**
 * Rate-limit state: the last full `account/rateLimits/read` merged with the sparse rolling
 * `account/rateLimits/updated` snapshots that follow it. A null or missing member in an update
 * never clears an earlier value. `ordinaryUsageAllowed` comes only from reads: nothing here infers
 * quota recovery from percentages or reset times. Pure functions.
 */
import type { RateLimitSnapshot, RateLimitWindow } from "./protocol-schema.js"

/** Merged rate-limit view for one connection. */
export interface RateLimitsState {
  /** From the last read only; null = unknown (never read, absent, or null on the wire). */
  readonly ordinaryUsageAllowed: boolean | null
  /** The single-bucket view (limit `codex` unless the server says otherwise). */
  readonly snapshot: RateLimitSnapshot
  /** Per-bucket views keyed by `limitId`. */
  readonly byLimitId: Readonly<Record<string, RateLimitSnapshot>>
  readonly lastReadAtMs: number | null
  readonly lastUpdateAtMs: number | null
}

/** A decoded `account/rateLimits/read` result. */
export interface RateLimitsRead {
  readonly ordinaryUsageAllowed: boolean | null
  readonly rateLimits: RateLimitSnapshot
  readonly rateLimitsByLimitId: Readonly<Record<string, RateLimitSnapshot>> | null
}

const DEFAULT_LIMIT_ID = "codex"

const mergeWindow = (
  previous: RateLimitWindow | null | undefined,
  update: RateLimitWindow | null | undefined,
): RateLimitWindow | null => {
  if (update === null || update === undefined) return previous ?? null
  if (previous === null || previous === undefined) return update
  return {
    usedPercent: update.usedPercent,
    windowDurationMins: update.windowDurationMins ?? previous.windowDurationMins ?? null,
    resetsAt: update.resetsAt ?? previous.resetsAt ?? null,
  }
}

const pick = <A>(update: A | null | undefined, previous: A | null | undefined): A | null =>
  update ?? previous ?? null

/** Merges a sparse snapshot into a previous one: present values win, null/missing keep the old value. */
export const mergeRateLimitSnapshot = (
  previous: RateLimitSnapshot | null,
  update: RateLimitSnapshot,
): RateLimitSnapshot => ({
  limitId: pick(update.limitId, previous?.limitId),
  limitName: pick(update.limitName, previous?.limitName),
  normalModelSlug: pick(update.normalModelSlug, previous?.normalModelSlug),
  primary: mergeWindow(previous?.primary, update.primary),
  secondary: mergeWindow(previous?.secondary, update.secondary),
  credits: pick(update.credits, previous?.credits),
  spendControlReached: pick(update.spendControlReached, previous?.spendControlReached),
  planType: pick(update.planType, previous?.planType),
  rateLimitReachedType: pick(update.rateLimitReachedType, previous?.rateLimitReachedType),
})

/** Applies one `account/rateLimits/updated` snapshot (sparse merge into the main and per-bucket views). */
export const applyRateLimitsUpdate = (
  state: RateLimitsState | null,
  update: RateLimitSnapshot,
  nowMs: number,
): RateLimitsState => {
  const bucket = update.limitId ?? state?.snapshot.limitId ?? DEFAULT_LIMIT_ID
  const mainId = state?.snapshot.limitId ?? DEFAULT_LIMIT_ID
  const previousBucket =
    state?.byLimitId[bucket] ?? (bucket === mainId ? (state?.snapshot ?? null) : null)
  const mergedBucket = mergeRateLimitSnapshot(previousBucket, update)
  return {
    ordinaryUsageAllowed: state?.ordinaryUsageAllowed ?? null,
    snapshot:
      bucket === mainId
        ? mergeRateLimitSnapshot(state?.snapshot ?? null, update)
        : (state?.snapshot ?? emptySnapshot),
    byLimitId: { ...state?.byLimitId, [bucket]: mergedBucket },
    lastReadAtMs: state?.lastReadAtMs ?? null,
    lastUpdateAtMs: nowMs,
  }
}

/** Replaces the state with a full read (the read is authoritative; later updates merge into it). */
export const applyRateLimitsRead = (read: RateLimitsRead, nowMs: number): RateLimitsState => {
  const mainId = read.rateLimits.limitId ?? DEFAULT_LIMIT_ID
  return {
    ordinaryUsageAllowed: read.ordinaryUsageAllowed,
    snapshot: read.rateLimits,
    byLimitId: { [mainId]: read.rateLimits, ...read.rateLimitsByLimitId },
    lastReadAtMs: nowMs,
    lastUpdateAtMs: null,
  }
}

const emptySnapshot: RateLimitSnapshot = {
  limitId: null,
  limitName: null,
  normalModelSlug: null,
  primary: null,
  secondary: null,
  credits: null,
  spendControlReached: null,
  planType: null,
  rateLimitReachedType: null,
}

/**
 * The headroom guard for the automatic continuation (never for compaction itself). Pure.
 * Freshness is decided by the caller (the sample must belong to our compaction turn and arrive
 * after its compaction item completed); the guard judges the numbers: they must exist, show
 * that context was reclaimed, and leave the used fraction at or under the threshold.
 */
import type { HeadroomProblem, TokenUsageSample } from "./job-record.js"

/** The guard's verdict, with the used fraction when it could be computed. */
export type HeadroomVerdict =
  | { readonly ok: true; readonly usedFraction: number }
  | { readonly ok: false; readonly problem: HeadroomProblem; readonly usedFraction: number | null }

/**
 * Judges fresh usage after compaction against the usage before it and a threshold (0..1;
 * exactly the threshold is allowed). Missing or non-finite numbers, a non-positive window or
 * negative tokens are `missing_token_telemetry`; no reduction is
 * `stale_or_unreclaimed_token_telemetry` (skipped when nothing was measured before).
 */
export const assessHeadroom = (input: {
  readonly before: TokenUsageSample | null
  readonly after: TokenUsageSample | null
  readonly threshold: number
}): HeadroomVerdict => {
  const tokens = input.after?.totalTokens ?? null
  const window = input.after?.modelContextWindow ?? null
  if (
    tokens === null ||
    window === null ||
    !Number.isFinite(tokens) ||
    !Number.isFinite(window) ||
    tokens < 0 ||
    window <= 0
  )
    return { ok: false, problem: "missing_token_telemetry", usedFraction: null }
  const usedFraction = tokens / window
  const beforeTokens = input.before?.totalTokens ?? null
  if (beforeTokens !== null && Number.isFinite(beforeTokens) && tokens >= beforeTokens)
    return { ok: false, problem: "stale_or_unreclaimed_token_telemetry", usedFraction }
  if (usedFraction > input.threshold)
    return { ok: false, problem: "above_headroom_threshold", usedFraction }
  return { ok: true, usedFraction }
}

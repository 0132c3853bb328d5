/**
 * The headroom guard for the automatic continuation (never for compaction itself). Pure.
 * Freshness is decided by the caller (the sample must belong to our compaction turn and arrive
 * after its compaction item completed); the guard judges the numbers: they must exist and leave
 * the window used after compaction at or under the threshold. Headroom is about the context the
 * continuation will run in, not about how much the compaction reclaimed: a short thread's
 * compacted context can be larger than before (the summary), and a sample that repeats the
 * pre-compaction usage overstates what is left, so "no reduction" is never by itself a reason to
 * skip. A context still above the threshold after compaction always skips.
 */
import type { HeadroomProblem, TokenUsageSample } from "./job-record.js"

/** The guard's verdict, with the used fraction when it could be computed. */
export type HeadroomVerdict =
  | { readonly ok: true; readonly usedFraction: number }
  | { readonly ok: false; readonly problem: HeadroomProblem; readonly usedFraction: number | null }

/**
 * Judges fresh usage after compaction against a threshold (0..1; exactly the threshold is
 * allowed). Missing or non-finite numbers, a non-positive window or negative tokens are
 * `missing_token_telemetry`; above the threshold is `above_headroom_threshold`. `before` is
 * accepted for the record only (`stale_or_unreclaimed_token_telemetry` is no longer produced;
 * older job records may still carry it).
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
  if (usedFraction > input.threshold)
    return { ok: false, problem: "above_headroom_threshold", usedFraction }
  return { ok: true, usedFraction }
}

/**
 * Quota pressure bands from rate-limit data, for the bucket that applies to the job's model.
 *
 * Guarantees: the band comes from the highest `usedPercent` across the chosen bucket's windows,
 * clamped to 0–100; no window with a figure means `unknown`, never `normal`. A band never says
 * anything about whether usage is allowed: only `ordinaryUsageAllowed` does. Pure.
 */
import type { RateLimitsState } from "@baton/ipc-codex"

/** Pressure bands: normal < 80 ≤ prepare < 90 ≤ high < 95 ≤ final; unknown without data. */
export type PressureBand = "unknown" | "normal" | "prepare" | "high" | "final"

/** Every band, lowest first (unknown ranks below normal). */
export const pressureBands: ReadonlyArray<PressureBand> = [
  "unknown",
  "normal",
  "prepare",
  "high",
  "final",
]

/** The band of a used percentage (null = no data). */
export const bandOf = (usedPercent: number | null): PressureBand => {
  if (usedPercent === null || !Number.isFinite(usedPercent)) return "unknown"
  if (usedPercent >= 95) return "final"
  if (usedPercent >= 90) return "high"
  if (usedPercent >= 80) return "prepare"
  return "normal"
}

/** Whether a band asks for the capsule to be sealed (high or final). */
export const bandSeals = (band: PressureBand): boolean => band === "high" || band === "final"

/** A pressure reading for one job. */
export interface PressureReading {
  readonly band: PressureBand
  /** Highest used percent of the chosen bucket, clamped to 0–100; null when unknown. */
  readonly usedPercent: number | null
  /** The bucket the reading came from (`limitId`), or null for the main snapshot without one. */
  readonly limitId: string | null
}

/** Which bucket applies: an explicit `limitId`, else the bucket whose normal model is the job's. */
export interface BucketSelector {
  readonly limitId: string | null
  readonly model: string | null
}

/** Reads the pressure for a job from merged rate-limit state (null state = unknown). */
export const readPressure = (
  state: RateLimitsState | null,
  selector: BucketSelector,
): PressureReading => {
  if (state === null) return { band: "unknown", usedPercent: null, limitId: null }
  const buckets = Object.entries(state.byLimitId).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const byId =
    selector.limitId === null ? undefined : buckets.find(([id]) => id === selector.limitId)?.[1]
  const byModel =
    selector.model === null
      ? undefined
      : buckets.find(([, bucket]) => bucket.normalModelSlug === selector.model)?.[1]
  const bucket = byId ?? byModel ?? state.snapshot
  const percents = [bucket.primary?.usedPercent, bucket.secondary?.usedPercent].filter(
    (p): p is number => typeof p === "number" && Number.isFinite(p),
  )
  const usedPercent =
    percents.length === 0 ? null : Math.min(100, Math.max(0, Math.max(...percents)))
  return {
    band: bandOf(usedPercent),
    usedPercent,
    limitId: bucket.limitId ?? (byId === undefined ? null : selector.limitId),
  }
}

/**
 * The whole-number options of the recall calls (`k`, `limit`, `count`, `before`, `textChars`, …),
 * checked one way. Guarantees: omitted (undefined) is the option's default; a value that is not a
 * whole number (NaN, ±Infinity, 2.5) or is below the option's least meaningful value fails with a
 * {@link RecallQueryError} on `limit` that names the option and its range; a value above the
 * documented maximum is that maximum, and a size below its floor (a text cut shorter than a few
 * words) is the floor — both documented on the option, neither an error.
 */
import * as Effect from "effect/Effect"
import { RecallQueryError } from "./errors.js"

/** The range of one whole-number option. */
export interface WholeNumberRange {
  /** The value when the option is omitted. */
  readonly fallback: number
  /** The least accepted value; smaller fails. */
  readonly least: number
  /** Accepted values below it become it (default: `least`). */
  readonly floor?: number
  /** Larger values become it. */
  readonly most: number
}

/** `value` of the option `name` checked against `range` (see the module header). */
export const wholeNumber = (
  name: string,
  value: number | undefined,
  range: WholeNumberRange,
): Effect.Effect<number, RecallQueryError> => {
  if (value === undefined) return Effect.succeed(range.fallback)
  if (!Number.isInteger(value) || value < range.least) {
    return Effect.fail(
      new RecallQueryError({
        field: "limit",
        message: `${name} must be a whole number of at least ${range.least} (at most ${range.most} is used); got ${String(value)}`,
      }),
    )
  }
  return Effect.succeed(Math.min(range.most, Math.max(range.floor ?? range.least, value)))
}

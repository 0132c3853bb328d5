/**
 * The handoff schema (effect/Schema) and its limits. Decoding is total: any unknown value
 * yields either a decoded Handoff or a HandoffInvalidError, never an exception.
 *
 * Optional fields (decided here, following Rekall's lenient reading):
 * - `preserve` and `discard` may be omitted and decode to `[]`;
 * - `nextStep` may be omitted and decodes to `""`; it must be non-blank when `resume` is true;
 * - `summary` and `resume` are required; `undefined` is never accepted for a present key.
 * The decoded handoff always has all five fields, so its canonical encoding (what is measured,
 * hashed and stored) does not depend on which optional keys the author wrote.
 * Strings are kept exactly as given: "non-empty" means non-empty after `String.prototype.trim`,
 * but nothing is trimmed or normalised.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { HandoffInvalidError } from "./errors.js"
import { invalidFromSchemaError, invalidFromDefect } from "./schema-issue-report.js"

/** Limits of a handoff: canonical UTF-8 size and items per list. */
export const handoffLimits = { maxBytes: 32_000, maxListItems: 40 } as const

/** A string that is not empty after trimming whitespace. */
export const NonBlankString = Schema.String.check(
  Schema.makeFilter((s: string) => s.trim().length > 0 || "must contain non-whitespace text"),
)

const HandoffList = Schema.Array(NonBlankString).check(
  Schema.isMaxLength(handoffLimits.maxListItems, {
    message: `must have at most ${handoffLimits.maxListItems} items`,
  }),
)

const noItems: ReadonlyArray<string> = []

/** Schema of a handoff as an agent writes it; unknown keys are rejected at decode time. */
export const HandoffSchema = Schema.Struct({
  summary: NonBlankString,
  preserve: HandoffList.pipe(Schema.withDecodingDefaultKey(Effect.succeed(noItems))),
  discard: HandoffList.pipe(Schema.withDecodingDefaultKey(Effect.succeed(noItems))),
  nextStep: Schema.String.pipe(Schema.withDecodingDefaultKey(Effect.succeed(""))),
  resume: Schema.Boolean,
}).check(
  Schema.makeFilter(
    (h) =>
      !h.resume ||
      h.nextStep.trim().length > 0 || {
        path: ["nextStep"],
        issue: "must contain non-whitespace text when resume is true",
      },
  ),
)

/** A decoded handoff: every field present, strings exactly as written. */
export type Handoff = typeof HandoffSchema.Type

/** Parse options: unknown keys fail, all problems reported, input kept (only its JSON type is shown). */
const strictDecoding = {
  onExcessProperty: "error",
  errors: "all",
  reportInput: true,
} as const

/**
 * Decodes `input` with `schema`, turning every failure (including a throwing getter or proxy in
 * hostile input) into a HandoffInvalidError whose paths start with `prefix`.
 */
export const decodeStrict = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown,
  prefix: ReadonlyArray<PropertyKey> = [],
): Result.Result<S["Type"], HandoffInvalidError> => {
  try {
    const decoded = Schema.decodeUnknownResult(schema, strictDecoding)(input)
    return Result.isSuccess(decoded)
      ? Result.succeed(decoded.success)
      : Result.fail(invalidFromSchemaError(decoded.failure, prefix))
  } catch (defect) {
    return Result.fail(invalidFromDefect(defect, prefix))
  }
}

/** Decodes a handoff (schema rules only; size and secrets are checked by validateHandoff). */
export const decodeHandoff = (input: unknown): Result.Result<Handoff, HandoffInvalidError> =>
  decodeStrict(HandoffSchema, input)

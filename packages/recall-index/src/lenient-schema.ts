/**
 * Lenient decoding helpers for transcript lines: a field that is missing or of the wrong type is
 * simply absent, so one odd field never costs a whole record; unknown fields are ignored by the
 * struct decoders (and counted separately by the readers).
 */
import { Effect, Option, Schema } from "effect"

/** An optional key that decodes to "absent" instead of failing when its value does not fit. */
export const lenient = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(schema.pipe(Schema.catchDecoding(() => Effect.succeed(Option.none()))))

/** Parses one line of JSON; `undefined` when it is not valid JSON. */
export const parseJsonLine = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** Whether `value` is a plain JSON object (not an array, not null). */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Top-level keys of `value` that are not in `known`. */
export const hasUnknownKeys = (
  value: Record<string, unknown>,
  known: ReadonlySet<string>,
): boolean => {
  for (const key in value) if (!known.has(key)) return true
  return false
}

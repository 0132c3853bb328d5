/**
 * Lenient decoding helpers for transcript lines: a field that is missing or of the wrong type is
 * simply absent, so one odd field never costs a whole record; unknown fields are ignored by the
 * struct decoders (and counted separately by the readers). The Claude and Codex readers decode
 * lines with the hand-written {@link readStruct} readers, which mirror `Schema.Struct` + `lenient`
 * exactly (property-tested against them) at a fraction of the cost per line.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** An optional key that decodes to "absent" instead of failing when its value does not fit. */
export const lenient = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(schema.pipe(Schema.catchDecoding(() => Effect.succeed(Option.none()))))

/**
 * A `\uD800`–`\uDFFF` escape: a line decoded from UTF-8 holds no surrogate itself, so only such
 * an escape can put a lone one into a parsed string.
 */
const surrogateEscape = /\\u[dD][89a-fA-F]/

/**
 * `value` with each lone surrogate in its strings (and keys) replaced by U+FFFD, as a UTF-8
 * decoder would: SQLite would otherwise store it as three bytes that read back as three U+FFFD.
 */
const wellFormed = (value: unknown): unknown => {
  if (typeof value === "string") return value.toWellFormed()
  if (Array.isArray(value)) return value.map(wellFormed)
  if (isJsonObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => [key.toWellFormed(), wellFormed(v)]),
    )
  return value
}

/**
 * Parses one line of JSON; `undefined` when it is not valid JSON. Strings come out well-formed
 * (a lone surrogate escape becomes one U+FFFD).
 */
export const parseJsonLine = (text: string): unknown => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text) as unknown
  } catch {
    return undefined
  }
  if (!surrogateEscape.test(text)) return parsed
  try {
    return wellFormed(parsed)
  } catch {
    // Nested too deep to walk (a stack overflow): kept as parsed.
    return parsed
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

/**
 * A hand-written lenient decoder: the decoded value, or `undefined` when `value` does not fit.
 * The readers below decode exactly like the `Schema` + {@link lenient} structs they replace on
 * the per-line hot path (a schema decode per line cost more than the JSON parse): same accepted
 * values, same output keys in the same (declaration) order, unknown keys dropped, never throws.
 */
export type LenientReader<A> = (value: unknown) => A | undefined

/** The type a {@link LenientReader} decodes to. */
export type ReadType<R> = R extends LenientReader<infer A> ? A : never

/** Accepts a string. */
export const readString: LenientReader<string> = (value) =>
  typeof value === "string" ? value : undefined

/** Accepts a boolean. */
export const readBoolean: LenientReader<boolean> = (value) =>
  typeof value === "boolean" ? value : undefined

/** Accepts any present value (`Schema.Unknown`): only an absent key stays absent. */
export const readUnknown: LenientReader<unknown> = (value) => value

/** Accepts an array (`Schema.Array(Schema.Unknown)`; the elements are not copied). */
export const readArray: LenientReader<ReadonlyArray<unknown>> = (value) =>
  Array.isArray(value) ? (value as ReadonlyArray<unknown>) : undefined

/** Accepts a string or an array (`Schema.Union([Schema.String, Schema.Array(Schema.Unknown)])`). */
export const readStringOrArray: LenientReader<string | ReadonlyArray<unknown>> = (value) =>
  typeof value === "string" || Array.isArray(value)
    ? (value as string | ReadonlyArray<unknown>)
    : undefined

type Fields = Readonly<Record<string, LenientReader<unknown>>>

/** The decoded struct: `Required` keys always present, every other key optional. */
export type LenientStruct<F extends Fields, Required extends keyof F> = {
  readonly [K in Required]: ReadType<F[K]>
} & { readonly [K in Exclude<keyof F, Required>]?: ReadType<F[K]> }

/**
 * A struct reader: a plain JSON object (not an array) whose `required` fields all decode; each
 * other field is kept when it decodes and dropped otherwise (a wrong-typed field never costs the
 * record). Output keys follow the order of `fields`, like a `Schema.Struct` decode.
 */
export const readStruct = <F extends Fields, Required extends keyof F & string = never>(
  fields: F,
  required: ReadonlyArray<Required> = [],
): LenientReader<LenientStruct<F, Required>> => {
  const entries = Object.entries(fields)
  const mandatory = new Set<string>(required)
  return (value) => {
    if (!isJsonObject(value)) return undefined
    const out: Record<string, unknown> = {}
    for (const [key, read] of entries) {
      const raw = value[key]
      const decoded = raw === undefined ? undefined : read(raw)
      if (decoded !== undefined) out[key] = decoded
      else if (mandatory.has(key)) return undefined
    }
    return out as LenientStruct<F, Required>
  }
}

/**
 * Canonical JSON: the one byte-exact text of a JSON value, used for hashing and storage.
 * Guarantees, for every JsonValue:
 * - object keys sorted by UTF-16 code unit (`Array.prototype.sort` default; the order of
 *   RFC 8785 JCS), at every depth; array order kept;
 * - no insignificant whitespace;
 * - strings exactly as given (no Unicode normalisation), escaped as `JSON.stringify` escapes
 *   them (lone surrogates become `\udXXX`, so the text is always well-formed UTF-16/UTF-8);
 * - numbers as `JSON.stringify` writes them (`-0` → `0`, shortest round-trip form);
 * - `JSON.parse(canonicalJson(v))` deep-equals `v`, and canonicalJson is idempotent over it.
 * Outside JsonValue it behaves like `JSON.stringify`: non-finite numbers and non-JSON array
 * elements become `null`, object members that are undefined, functions or symbols are skipped.
 * `toJSON` is never called. It never throws except on cyclic or absurdly deep input.
 */

/** A JSON value: what JSON.parse returns. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

const isSkipped = (value: unknown): boolean =>
  value === undefined || typeof value === "function" || typeof value === "symbol"

const encode = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null"
  if (typeof value === "boolean") return value ? "true" : "false"
  if (value === null || typeof value !== "object") return "null"
  if (Array.isArray(value)) return `[${value.map((item: unknown) => encode(item)).join(",")}]`
  const record = value as { readonly [key: string]: unknown }
  const members: Array<string> = []
  for (const key of Object.keys(record).sort()) {
    const member = record[key]
    if (!isSkipped(member)) members.push(`${JSON.stringify(key)}:${encode(member)}`)
  }
  return `{${members.join(",")}}`
}

/** The canonical JSON text of `value` (sorted keys, no whitespace, exact strings). */
export const canonicalJson = (value: JsonValue): string => encode(value)

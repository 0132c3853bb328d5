/**
 * Canonical JSON text for hashing: object keys sorted by UTF-16 code units at every depth,
 * array order kept, no whitespace, strings and finite numbers as `JSON.stringify` writes them.
 * Members whose value is undefined, a function or a symbol are omitted; non-finite numbers and
 * other non-JSON values become `null`. `toJSON` is never consulted. Pure; never throws on
 * acyclic input.
 */

const omitted = (value: unknown): boolean =>
  value === undefined || typeof value === "function" || typeof value === "symbol"

/** The canonical JSON text of a JSON-like value. */
export const canonicalJson = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) {
        const items = value as ReadonlyArray<unknown>
        return `[${items.map((item) => (omitted(item) ? "null" : canonicalJson(item))).join(",")}]`
      }
      const record = value as Readonly<Record<string, unknown>>
      const members = Object.keys(record)
        .sort()
        .filter((key) => !omitted(record[key]))
        .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
      return `{${members.join(",")}}`
    }
    case "bigint":
    case "function":
    case "symbol":
    case "undefined":
      return "null"
  }
}

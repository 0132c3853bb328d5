/**
 * Field paths and input descriptions for error messages. Guarantee: whatever comes from the
 * input (object keys, found values) is masked with the secret scanner and truncated before it
 * reaches a message, so errors never echo a credential or a megabyte of text.
 */
import { maskSecrets } from "./secret-scan.js"

const maxShown = 64

const shorten = (text: string): string => {
  const masked = maskSecrets(text)
  return masked.length > maxShown ? `${masked.slice(0, maxShown)}…` : masked
}

/** `["preserve", 3]` → `preserve[3]`; `["handoff", "summary"]` → `handoff.summary`; `[]` → "". */
export const formatFieldPath = (segments: ReadonlyArray<PropertyKey>): string =>
  segments
    .map((segment, index) => {
      if (typeof segment === "number") return `[${segment}]`
      if (typeof segment === "symbol") return `[${shorten(String(segment))}]`
      const shown = shorten(segment)
      if (shown === segment && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) {
        return index === 0 ? segment : `.${segment}`
      }
      return `[${JSON.stringify(shown)}]`
    })
    .join("")

/** A short, masked rendering of a value found in the input, for "expected X, found Y" texts. */
export const describeFound = (value: unknown): string => {
  if (value === undefined) return "missing"
  if (typeof value === "string") return JSON.stringify(shorten(value))
  if (value === null || typeof value === "number" || typeof value === "boolean") {
    return String(value)
  }
  return Array.isArray(value) ? "an array" : `a value of type ${typeof value}`
}

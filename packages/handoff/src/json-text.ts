/**
 * JSON text → unknown value, with failures as HandoffInvalidError. Guarantee: the error names
 * what went wrong and where (line and column when the runtime reports a position) but never
 * quotes the input, because V8 messages can embed a slice of it (and the slice may be a secret).
 * Bytes must be UTF-8 (never silently replaced with U+FFFD, which would change what the digest
 * binds), and an object must not repeat a key (JSON.parse would silently keep the last one).
 */
import * as Result from "effect/Result"
import type { HandoffInvalidError } from "./errors.js"
import { invalidAt } from "./schema-issue-report.js"

const lineAndColumn = (text: string, position: number): string => {
  const before = text.slice(0, position)
  const line = before.split("\n").length
  const column = position - before.lastIndexOf("\n")
  return `line ${line}, column ${column}`
}

/** The reason and location of a JSON.parse failure, without any quoted input. */
const describeSyntaxError = (text: string, error: unknown): string => {
  const message = error instanceof Error ? error.message : ""
  const positioned = /^(.*?) (?:in|after) JSON at position (\d+)/.exec(message)
  if (positioned !== null) {
    // V8's reasons quote grammar tokens (`Expected ',' or '}'`), never input; refuse anything else.
    const reason = positioned[1]!
    const safeReason = reason.length <= 80 && !reason.includes('"') ? reason : "syntax error"
    return `${safeReason} at ${lineAndColumn(text, Number(positioned[2]))}`
  }
  if (/Unexpected end of JSON input/.test(message)) {
    return `unexpected end of input at ${lineAndColumn(text, text.length)}`
  }
  if (/^Unexpected token/.test(message)) return "unexpected token"
  return "syntax error"
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Decodes UTF-8 bytes strictly; an invalid byte sequence is HandoffInvalid (nothing replaced). */
export const decodeUtf8Text = (bytes: Uint8Array): Result.Result<string, HandoffInvalidError> => {
  try {
    return Result.succeed(strictUtf8.decode(bytes))
  } catch {
    return Result.fail(
      invalidAt(
        [],
        "must be UTF-8 text: the input contains an invalid UTF-8 byte sequence (save the file as UTF-8)",
      ),
    )
  }
}

const isSpace = (c: string): boolean => c === " " || c === "\t" || c === "\n" || c === "\r"

/**
 * The first key repeated within one object of already-valid JSON text, with its position, or
 * null. Keys are compared decoded (`"a"` and `"\u0061"` are the same key).
 */
export const findDuplicateKey = (
  text: string,
): { readonly key: string; readonly position: number } | null => {
  // One entry per open container: a key set for objects, null for arrays.
  const stack: Array<Set<string> | null> = []
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "{") stack.push(new Set())
    else if (c === "[") stack.push(null)
    else if (c === "}" || c === "]") stack.pop()
    else if (c === '"') {
      const start = i
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++
      const keys = stack[stack.length - 1]
      if (keys === undefined || keys === null) continue
      let j = i + 1
      while (j < text.length && isSpace(text[j]!)) j++
      if (text[j] !== ":") continue
      const key = JSON.parse(text.slice(start, i + 1)) as string
      if (keys.has(key)) return { key, position: start }
      keys.add(key)
    }
  }
  return null
}

/** Parses JSON text; a syntax error or a repeated key becomes HandoffInvalid at the top-level path. */
export const parseJsonText = (text: string): Result.Result<unknown, HandoffInvalidError> => {
  if (typeof text !== "string") return Result.fail(invalidAt([], "must be JSON text (a string)"))
  let value: unknown
  try {
    value = JSON.parse(text) as unknown
  } catch (error) {
    return Result.fail(invalidAt([], `must be valid JSON: ${describeSyntaxError(text, error)}`))
  }
  const duplicate = findDuplicateKey(text)
  if (duplicate !== null)
    return Result.fail(
      invalidAt(
        [],
        `must not repeat a key in one object: a key of ${duplicate.key.length} characters appears twice (the second at ${lineAndColumn(text, duplicate.position)}); remove one`,
      ),
    )
  return Result.succeed(value)
}

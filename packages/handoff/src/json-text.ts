/**
 * JSON text → unknown value, with failures as HandoffInvalidError. Guarantee: the error names
 * what went wrong and where (line and column when the runtime reports a position) but never
 * quotes the input, because V8 messages can embed a slice of it (and the slice may be a secret).
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

/** Parses JSON text; a syntax error becomes HandoffInvalid at the top-level path. */
export const parseJsonText = (text: string): Result.Result<unknown, HandoffInvalidError> => {
  if (typeof text !== "string") return Result.fail(invalidAt([], "must be JSON text (a string)"))
  try {
    return Result.succeed(JSON.parse(text) as unknown)
  } catch (error) {
    return Result.fail(invalidAt([], `must be valid JSON: ${describeSyntaxError(text, error)}`))
  }
}

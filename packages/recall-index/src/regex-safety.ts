/**
 * Compiles a user's grep pattern into a RegExp that cannot run away. JavaScript regular
 * expressions backtrack, so a pattern like `(a+)+$` can take exponential time on a short line;
 * this module refuses the shapes that cause it instead of hoping. Guarantees: the pattern is at
 * most {@link MAX_PATTERN_CHARS} characters; no backreferences; no unbounded quantifier applied
 * to a group that itself contains an unbounded quantifier (star height ≤ 1); it compiles with
 * the `u` flag (so malformed escapes are errors, not literals). Every refusal is a
 * {@link RecallQueryError} on `pattern` saying what to change; nothing here throws. Callers
 * also bound the text each test sees (grep tests windows of at most a few KiB), which keeps
 * the remaining polynomial worst cases small.
 */
import * as Effect from "effect/Effect"
import { RecallQueryError } from "./errors.js"

/** Longest accepted pattern. */
export const MAX_PATTERN_CHARS = 300

const refuse = (message: string) => Effect.fail(new RecallQueryError({ field: "pattern", message }))

interface Frame {
  /** The group holds an unbounded quantifier (directly or in a nested group). */
  unbounded: boolean
}

/**
 * The quantifier starting at `i` — its length, whether it is unbounded, the fewest repeats it
 * allows — or undefined.
 */
const quantifierAt = (
  pattern: string,
  i: number,
): { readonly length: number; readonly unbounded: boolean; readonly min: number } | undefined => {
  const c = pattern[i]
  const lazy = (n: number) => (pattern[i + n] === "?" ? n + 1 : n)
  if (c === "*" || c === "+") return { length: lazy(1), unbounded: true, min: c === "*" ? 0 : 1 }
  if (c === "?") return { length: lazy(1), unbounded: false, min: 0 }
  if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
    if (m === null) return undefined
    const upper = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3])
    // A large finite repeat of a repeat is as bad as an unbounded one.
    return { length: lazy(m[0].length), unbounded: upper > 10, min: Number(m[1]) }
  }
  return undefined
}

/** The index just past the character class opening at `i` (a leading `]` or `^]` is literal). */
const classEnd = (pattern: string, i: number): number => {
  let j = i + 1
  if (pattern[j] === "^") j++
  if (pattern[j] === "]") j++
  while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1
  return j + 1
}

/** Why `pattern` is unsafe to backtrack over, or undefined when its shape is safe. */
export const unsafePatternReason = (pattern: string): string | undefined => {
  const stack: Array<Frame> = [{ unbounded: false }]
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]
    const top = stack[stack.length - 1]!
    if (c === "\\") {
      const next = pattern[i + 1] ?? ""
      if (/[1-9]/.test(next) || next === "k") {
        return "backreferences (\\1, \\k<name>) are not supported"
      }
      i += 2
    } else if (c === "[") {
      i = classEnd(pattern, i)
    } else if (c === "(") {
      stack.push({ unbounded: false })
      i += 1
      // Skip group syntax such as `?:`, `?=`, `?!`, `?<=`, `?<name>`.
      if (pattern[i] === "?") {
        const m = /^\?(?::|=|!|<=|<!|<[A-Za-z_$][\w$]*>)/.exec(pattern.slice(i))
        i += m === null ? 1 : m[0].length
      }
      continue
    } else if (c === ")") {
      if (stack.length === 1) return undefined // unbalanced: let the compiler report it
      const group = stack.pop()!
      const q = quantifierAt(pattern, i + 1)
      const parent = stack[stack.length - 1]!
      if (q !== undefined && q.unbounded && group.unbounded) {
        return "a repeated group contains another repeat (like (a+)+ or (\\w*)*), which can take exponential time; remove the inner or the outer repeat"
      }
      parent.unbounded = parent.unbounded || group.unbounded || (q?.unbounded ?? false)
      i += 1 + (q?.length ?? 0)
      continue
    } else {
      i += 1
    }
    const q = quantifierAt(pattern, i)
    if (q !== undefined) {
      if (q.unbounded) top.unbounded = true
      i += q.length
    }
  }
  return undefined
}

/**
 * Compiles a grep pattern in regex mode (flag `u`, and `i` unless case-sensitive), refusing with
 * a `RecallQueryError` on `pattern` what is known to run away: an empty pattern, one longer than
 * {@link MAX_PATTERN_CHARS}, backreferences, an unbounded repeat of a group that holds one. Passing
 * is no guarantee on every text; see `grepRecordsIsolated`.
 */
export const compileSafeRegex = (
  pattern: string,
  caseSensitive: boolean,
): Effect.Effect<RegExp, RecallQueryError> => {
  if (pattern === "") return refuse("the pattern is empty")
  if (pattern.length > MAX_PATTERN_CHARS) {
    return refuse(
      `the pattern is ${pattern.length} characters; it may be at most ${MAX_PATTERN_CHARS}`,
    )
  }
  const unsafe = unsafePatternReason(pattern)
  if (unsafe !== undefined) return refuse(unsafe)
  return Effect.try({
    try: () => new RegExp(pattern, caseSensitive ? "u" : "iu"),
    catch: (error) =>
      new RecallQueryError({
        field: "pattern",
        message:
          `not a valid regular expression: ${error instanceof Error ? error.message.replace(/^Invalid regular expression: /, "") : String(error)}`.slice(
            0,
            300,
          ),
      }),
  })
}

/** Escapes `text` for use as a literal inside a RegExp. */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** The length of the escape at `i` (a backslash) that is not a literal character. */
const escapeLength = (pattern: string, i: number): number => {
  const next = pattern[i + 1]
  const braced = () => {
    const close = pattern.indexOf("}", i)
    return close === -1 ? 2 : close - i + 1
  }
  if ((next === "p" || next === "P") && pattern[i + 2] === "{") return braced()
  if (next === "u") return pattern[i + 2] === "{" ? braced() : 6
  if (next === "x") return 4
  if (next === "c") return 3
  return 2
}

/** The index just past the group opening at `i`, or -1 when it is not closed. */
const groupEnd = (pattern: string, i: number): number => {
  let depth = 0
  let j = i
  while (j < pattern.length) {
    const c = pattern[j]
    if (c === "\\") j += 2
    else if (c === "[") j = classEnd(pattern, j)
    else {
      if (c === "(") depth++
      else if (c === ")" && --depth === 0) return j + 1
      j++
    }
  }
  return -1
}

/** Characters a `u`-mode pattern may escape to mean themselves. */
const SYNTAX = new Set("^$\\.*+?()[]{}|/")

/**
 * Runs of plain characters that every match of `pattern` (one `compileSafeRegex` accepted)
 * contains, longest first — what grep hands SQLite to skip the records that cannot match before
 * testing the rest in JavaScript. Only the pattern's top-level sequence counts: a group, a class,
 * `.`, an anchor or an escape such as `\d` ends a run; a character that may repeat ends the run
 * after it, one that may be absent (`?`, `*`, `{0,…}`) is left out. A top-level `|` gives none.
 * `timeout after \d+ ms` → `timeout after `, ` ms`.
 */
export const requiredLiterals = (pattern: string): Array<string> => {
  const runs: Array<string> = []
  let run = ""
  const end = () => {
    if (run !== "") runs.push(run)
    run = ""
  }
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]!
    let literal: string | undefined
    if (c === "\\") {
      const next = pattern[i + 1] ?? ""
      if (SYNTAX.has(next)) {
        literal = next
        i += 2
      } else i += escapeLength(pattern, i)
    } else if (c === "[") i = classEnd(pattern, i)
    else if (c === "(") {
      i = groupEnd(pattern, i)
      if (i === -1) return []
    } else if (c === "|") return []
    else if (c === "." || c === "^" || c === "$") i += 1
    else {
      // One code point, as the `u` flag reads it: a quantifier repeats the whole pair.
      const width = (pattern.codePointAt(i) ?? 0) > 0xffff ? 2 : 1
      literal = pattern.slice(i, i + width)
      i += width
    }
    const q = quantifierAt(pattern, i)
    if (q !== undefined) i += q.length
    if (literal === undefined || (q !== undefined && q.min === 0)) end()
    else {
      run += literal
      if (q !== undefined) end()
    }
  }
  end()
  return runs.sort((a, b) => b.length - a.length)
}

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

/** The length of the quantifier starting at `i`, and whether it is unbounded, or undefined. */
const quantifierAt = (
  pattern: string,
  i: number,
): { readonly length: number; readonly unbounded: boolean } | undefined => {
  const c = pattern[i]
  const lazy = (n: number) => (pattern[i + n] === "?" ? n + 1 : n)
  if (c === "*" || c === "+") return { length: lazy(1), unbounded: true }
  if (c === "?") return { length: lazy(1), unbounded: false }
  if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
    if (m === null) return undefined
    const upper = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3])
    // A large finite repeat of a repeat is as bad as an unbounded one.
    return { length: lazy(m[0].length), unbounded: upper > 10 }
  }
  return undefined
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
      // Skip the class: up to the first unescaped `]` (a leading `]` or `^]` is literal).
      let j = i + 1
      if (pattern[j] === "^") j++
      if (pattern[j] === "]") j++
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1
      i = j + 1
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

/** Compiles a safe grep pattern (regex mode) with `flags`; see the module header. */
export const compileSafeRegex = (
  pattern: string,
  caseSensitive: boolean,
): Effect.Effect<RegExp, RecallQueryError> => {
  if (pattern === "") return refuse("the pattern is empty")
  if (pattern.length > MAX_PATTERN_CHARS) {
    return refuse(`the pattern is ${pattern.length} characters; keep it under ${MAX_PATTERN_CHARS}`)
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

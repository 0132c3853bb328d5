/**
 * Skipped lines: what a parse could not use, kept per file (`files.skipped_lines`, schema 9) and
 * summed for a run and for `recall status`. The parsers never throw on a bad line; they count it
 * ({@link ParseStats}) and go on. These counts are how a user learns that a transcript holds lines
 * Baton does not read — a truncated write, a damaged file, or a record type a newer agent writes.
 * Lines that are read (unknown fields, invalid UTF-8 decoded with replacement, sidechains left out
 * by choice, a live file's unfinished last line) are not skipped lines.
 */
import type { ParseStats } from "./transcript-model.js"

/** Lines a parse could not use, by reason. */
export interface SkippedLines {
  /** All of them: `malformed + invalid +` the unknown types' counts. */
  readonly lines: number
  /** Not JSON, or JSON that is not an object. */
  readonly malformed: number
  /** JSON objects that are not a record of the format (e.g. no string `type`). */
  readonly invalid: number
  /** Records of a type the parser does not know, by type (Codex: also unknown payload types). */
  readonly unknownTypes: Readonly<Record<string, number>>
}

/** At most this many distinct unknown types are kept by name; the rest count under {@link OTHER_TYPES}. */
export const UNKNOWN_TYPES_KEPT = 20

/** The name the unknown types beyond {@link UNKNOWN_TYPES_KEPT} count under. */
export const OTHER_TYPES = "(other types)"

/** Longest unknown type name kept; a longer one is cut and ends in "…". */
const TYPE_NAME_CHARS = 60

const typeName = (type: string): string =>
  type.length <= TYPE_NAME_CHARS ? type : `${type.slice(0, TYPE_NAME_CHARS - 1)}…`

const sum = (counts: Readonly<Record<string, number>>): number =>
  Object.values(counts).reduce((a, b) => a + b, 0)

/** Bounds the unknown types: the most frequent {@link UNKNOWN_TYPES_KEPT} by name, the rest summed. */
const boundedTypes = (
  counts: ReadonlyArray<readonly [string, number]>,
): Readonly<Record<string, number>> => {
  const merged = new Map<string, number>()
  for (const [type, n] of counts) {
    if (n <= 0) continue
    const name = typeName(type)
    merged.set(name, (merged.get(name) ?? 0) + n)
  }
  const ordered = [...merged].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  const kept = ordered.filter(([t]) => t !== OTHER_TYPES).slice(0, UNKNOWN_TYPES_KEPT)
  const other = sum(Object.fromEntries(merged)) - kept.reduce((a, [, n]) => a + n, 0)
  return Object.fromEntries(other > 0 ? [...kept, [OTHER_TYPES, other]] : kept)
}

const make = (
  malformed: number,
  invalid: number,
  unknownTypes: Readonly<Record<string, number>>,
): SkippedLines | undefined => {
  const lines = malformed + invalid + sum(unknownTypes)
  return lines === 0 ? undefined : { lines, malformed, invalid, unknownTypes }
}

/** The lines `stats` counts as skipped; undefined when there are none. */
export const skippedLinesOf = (stats: ParseStats): SkippedLines | undefined =>
  make(
    stats.malformedLines,
    stats.invalidRecords,
    boundedTypes(Object.entries(stats.unknownRecordTypes)),
  )

/** `a` and `b` together (either may be undefined). */
export const addSkippedLines = (
  a: SkippedLines | undefined,
  b: SkippedLines | undefined,
): SkippedLines | undefined => {
  if (a === undefined) return b
  if (b === undefined) return a
  return make(
    a.malformed + b.malformed,
    a.invalid + b.invalid,
    boundedTypes([...Object.entries(a.unknownTypes), ...Object.entries(b.unknownTypes)]),
  )
}

const count = (v: unknown): number =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : 0

/**
 * Reads a stored `files.skipped_lines` value; undefined for null and for anything that is not the
 * shape {@link encodeSkippedLines} writes (a hand-edited or damaged value is not worth an error).
 */
export const decodeSkippedLines = (stored: string | null | undefined): SkippedLines | undefined => {
  if (stored === null || stored === undefined) return undefined
  let json: unknown
  try {
    json = JSON.parse(stored)
  } catch {
    return undefined
  }
  if (typeof json !== "object" || json === null) return undefined
  const o = json as Record<string, unknown>
  const types =
    typeof o.unknownTypes === "object" && o.unknownTypes !== null
      ? Object.entries(o.unknownTypes as Record<string, unknown>).map(
          ([t, n]) => [t, count(n)] as const,
        )
      : []
  return make(count(o.malformed), count(o.invalid), boundedTypes(types))
}

/** The stored form of `skipped`: JSON, or null when there is nothing. */
export const encodeSkippedLines = (skipped: SkippedLines | undefined): string | null =>
  skipped === undefined ? null : JSON.stringify(skipped)

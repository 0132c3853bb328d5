/**
 * Bounded, safe text renderings of raw records for expand / step / grep. Guarantees: never
 * includes signatures, encrypted content, base64 image / document data or base instructions;
 * masks secrets; output never exceeds the cap (a cut is reported as `truncated`).
 */
import type { SplitLine } from "./line-splitter.js"
import { maskTranscriptText } from "./secret-masking.js"
import type { RawRecord, RawRecordKind } from "./transcript-model.js"

/** Keys whose values are opaque, huge or private and never rendered. */
const droppedKeys = new Set([
  "signature",
  "encrypted_content",
  "base_instructions",
  "instructions",
  "dynamic_tools",
  "data",
  "image_url",
  "result",
  "replacement_history",
])

const longString = 2_000

/**
 * The first `cap` UTF-16 units of `text`, one fewer when the cut would fall between the halves of
 * a surrogate pair (a lone high surrogate is not valid UTF-8 and would be stored as such).
 */
const headOf = (text: string, cap: number): string => {
  if (text.length <= cap) return text
  const last = text.charCodeAt(cap - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? cap - 1 : cap)
}

/** JSON of `value` with dropped keys elided and long strings shortened, at most `cap` characters. */
export const sanitizedJson = (value: unknown, cap: number): string => {
  let budget = cap * 2
  const seen = new Set<unknown>()
  const replacer = (key: string, v: unknown): unknown => {
    if (budget <= 0) return undefined
    if (droppedKeys.has(key)) return "[omitted]"
    if (typeof v === "string") {
      budget -= Math.min(v.length, longString)
      return v.length > longString ? `${headOf(v, longString)}…` : v
    }
    if (typeof v === "object" && v !== null) {
      if (seen.has(v)) return undefined
      seen.add(v)
    }
    return v
  }
  try {
    return JSON.stringify(value, replacer) ?? ""
  } catch {
    return ""
  }
}

/** A rendered, masked and capped text. */
export interface RenderedText {
  readonly text: string
  readonly truncated: boolean
  readonly masked: number
}

/** Masks then caps `text` (masking first so a cut never splits a secret into an unmasked half). */
export const boundedText = (text: string, cap: number): RenderedText => {
  const window = headOf(text, cap * 4)
  const { text: masked, masked: count } = maskTranscriptText(window)
  const truncated = masked.length > cap || window.length < text.length
  return { text: headOf(masked, cap), truncated, masked: count }
}

/** Builds the raw record of one line (text masked and capped), counting masked secrets. */
export const rawRecordBuilder =
  (stats: { secretsMasked: number }, maxRawTextChars: number) =>
  (
    line: SplitLine,
    type: string,
    kind: RawRecordKind,
    text: string,
    timestamp: string | undefined,
    skipForGrep = false,
  ): RawRecord => {
    const rendered = boundedText(text, maxRawTextChars)
    stats.secretsMasked += rendered.masked
    return {
      offset: line.offset,
      length: line.length,
      recordType: type,
      kind,
      ...(timestamp !== undefined ? { timestamp } : {}),
      text: rendered.text,
      truncated: rendered.truncated,
      skipForGrep,
    }
  }

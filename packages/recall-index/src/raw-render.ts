/**
 * Bounded, safe text renderings of raw records for expand / step / grep. Guarantees: never
 * includes signatures, encrypted content, base64 image / document data or base instructions;
 * masks secrets; output never exceeds the cap (a cut is reported as `truncated`).
 */
import type { SplitLine } from "./line-splitter.js"
import { omissionMarker } from "./omission-marker.js"
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

/**
 * The last `count` UTF-16 units of `text`, one fewer when the cut would fall between the halves of
 * a surrogate pair.
 */
const tailOf = (text: string, count: number): string => {
  if (text.length <= count) return text
  const start = text.length - count
  const first = text.charCodeAt(start)
  return text.slice(first >= 0xdc00 && first <= 0xdfff ? start + 1 : start)
}

/**
 * Masks then caps `text` (masking first so a cut never splits a secret into an unmasked half).
 * A text over the cap keeps its head and its last quarter-cap, joined by an
 * `omissionMarker`: the end of a long tool output (a test run's failures and summary, a
 * build's error) is what one greps for as often as its start. `truncated` then says the middle
 * was left out. A text up to five caps is masked whole; a longer one in two windows, four caps at
 * the head and four tails at the end, never the whole of a huge text.
 */
export const boundedText = (text: string, cap: number): RenderedText => {
  const tailChars = Math.floor(cap / 4)
  if (text.length <= cap * 4 + tailChars * 4) {
    const { text: masked, masked: count } = maskTranscriptText(text)
    if (masked.length <= cap) return { text: masked, truncated: false, masked: count }
    return {
      text: joinHeadTail(masked, masked, cap, tailChars, masked.length),
      truncated: true,
      masked: count,
    }
  }
  const head = maskTranscriptText(headOf(text, cap * 4))
  const tail = maskTranscriptText(tailOf(text, tailChars * 4))
  return {
    text: joinHeadTail(head.text, tail.text, cap, tailChars, text.length),
    truncated: true,
    masked: head.masked + tail.masked,
  }
}

/**
 * The head of `head` and the last `tailChars` of `tail` with a marker between them, at most `cap`
 * units in all; `total` is the length the omitted count is taken from (the whole text's, so a
 * count is approximate by what masking changed in the windows).
 */
const joinHeadTail = (
  head: string,
  tail: string,
  cap: number,
  tailChars: number,
  total: number,
): string => {
  const end = tailChars > 0 ? tailOf(tail, tailChars) : ""
  // The marker's digits depend on the head's length, which depends on the marker: size it for the
  // largest count it can show.
  const room = cap - end.length - omissionMarker(total).length
  if (room <= 0) return headOf(head, cap)
  const start = headOf(head, room)
  return `${start}${omissionMarker(Math.max(0, total - start.length - end.length))}${end}`
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

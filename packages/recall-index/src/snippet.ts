/**
 * Short, bounded excerpts of stored text for search and grep results, so a result list never
 * floods an agent's context. Guarantees: whitespace runs collapse to one space; the result is
 * at most `maxChars` characters plus the two ellipses; a window is centred on the first match
 * when there is one and cut at word boundaries when possible; a surrogate pair is never split.
 */
import { cjkQueryTerms, cjkShare, hasCjk } from "./cjk-text.js"
import { identifierWords } from "./fts-text.js"
import { omissionMarker, omissionMarkerPattern } from "./omission-marker.js"

/**
 * Search terms of a query: lower-cased runs of letters, digits and `_` (at least 2 long); a run
 * holding Chinese, Japanese or Korean is followed by its character bigrams (a question written
 * without spaces is one run, which the text rarely holds whole), a camelCase identifier by its
 * words (the text may say "retry policy").
 */
export const queryTerms = (query: string): ReadonlyArray<string> => [
  ...new Set(
    (query.normalize("NFC").match(/[\p{L}\p{N}_]+/gu) ?? [])
      .flatMap((t) => [
        t.toLowerCase(),
        ...(t.length > 2 && hasCjk(t) ? cjkQueryTerms(t.toLowerCase()) : identifierWords(t)),
      ])
      .filter((t) => t.length >= 2),
  ),
]

/** Lower case, composed, without combining marks: `Café` and `cafe` compare equal. */
const folded = (text: string): string =>
  text
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .normalize("NFC")
    .toLowerCase()

/**
 * Whether `text` shows a word of `query` as the word index would find it: a term of
 * {@link queryTerms} (its first 60 %, at least 4 letters, for stems), ignoring case and accents,
 * or — for a query with no such terms (emoji, symbols) — the query itself.
 */
export const holdsQueryWord = (text: string, query: string): boolean => {
  const lower = folded(text)
  const terms = queryTerms(query).map(folded)
  if (terms.length === 0) {
    const raw = folded(query.trim())
    return raw !== "" && lower.includes(raw)
  }
  // A stem's worth of the term (porter finds "retries" for "retry", "deployed" for "deployment").
  const stem = (term: string) =>
    term.length > 4 ? term.slice(0, Math.max(4, Math.ceil(term.length * 0.6))) : term
  return terms.some((term) => lower.includes(stem(term)))
}

/** A two-character CJK term: a bigram, looked for only where no longer term is found. */
const isBigram = (term: string): boolean => term.length === 2 && cjkShare(term) === 1

const collapse = (text: string): string => text.replace(/\s+/gu, " ").trim()

const safeCut = (text: string, at: number): number => {
  const code = text.charCodeAt(at)
  return code >= 0xdc00 && code <= 0xdfff ? at - 1 : at
}

/**
 * A chunk's text as a hit shows it. A window after the first starts a fixed overlap before the
 * previous window's end, often inside a word ("r. The zebrafish job…"): up to its first space
 * (within 30 characters) is dropped and an ellipsis marks the cut. The words dropped are in the
 * previous window, and `expand` shows the whole turn.
 */
export const shownChunkText = (text: string, charStart: number): string => {
  if (charStart === 0) return text
  const space = text.search(/\s/u)
  return space > 0 && space <= 30 ? `…${text.slice(space + 1)}` : text
}

/** Caps `text` at `maxChars` (collapsed), marking a cut with `…`. */
export const capText = (
  text: string,
  maxChars: number,
): { readonly text: string; readonly truncated: boolean } =>
  text.length <= maxChars
    ? { text, truncated: false }
    : { text: `${text.slice(0, safeCut(text, maxChars))}…`, truncated: true }

/**
 * Caps a raw record's `text` at `maxChars` keeping its end too: the head, then
 * `[… N characters omitted …]`, then the last third — a command's output ends in its result (a
 * test run's summary, `[exit code 1]`). N counts a stored record's own omission (made at index
 * time) when it falls in the part left out. Under 120 characters, or when the record fits, as
 * {@link capText}.
 */
export const capRecordText = (
  text: string,
  maxChars: number,
): { readonly text: string; readonly truncated: boolean } => {
  if (text.length <= maxChars || maxChars < 120) return capText(text, maxChars)
  const tailChars = Math.floor(maxChars / 3)
  const marker = omissionMarker(text.length)
  const headChars = maxChars - tailChars - marker.length
  let tailStart = text.length - tailChars
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1
  const headEnd = safeCut(text, headChars)
  let omitted = tailStart - headEnd
  const stored = omissionMarkerPattern.exec(text.slice(headEnd, tailStart))
  if (stored !== null) omitted += Number(/\d+/.exec(stored[0])?.[0] ?? 0) - stored[0].length
  return {
    text: `${text.slice(0, headEnd)}${omissionMarker(omitted)}${text.slice(tailStart)}`,
    truncated: true,
  }
}

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * A window of `text` around `at` (a character index in the collapsed text) of at most `maxChars`,
 * with `…` where it was cut.
 */
const windowAround = (flat: string, at: number, matchLength: number, maxChars: number): string => {
  if (flat.length <= maxChars) return flat
  const lead = Math.floor((maxChars - Math.min(matchLength, maxChars)) / 3)
  let start = Math.max(0, Math.min(at - lead, flat.length - maxChars))
  let end = Math.min(flat.length, start + maxChars)
  if (start > 0) {
    const space = flat.indexOf(" ", start)
    if (space !== -1 && space < at && space - start < 20) start = space + 1
  }
  if (end < flat.length) {
    const space = flat.lastIndexOf(" ", end)
    if (space > at + matchLength && end - space < 20) end = space
  }
  start = safeCut(flat, start) === start - 1 ? start + 1 : start
  end = safeCut(flat, end)
  return `${start > 0 ? "…" : ""}${flat.slice(start, end)}${end < flat.length ? "…" : ""}`
}

/**
 * The longest piece (two characters or more) of a CJK query term that `lower` holds, at its
 * earliest place: a question written without spaces is one term the text rarely holds whole, and
 * the piece it shares longest (`重试策略`) says more than the first bigram found (`我们`).
 */
const longestCjkPiece = (
  terms: ReadonlyArray<string>,
  lower: string,
): { at: number; length: number } | undefined => {
  const runs = terms.filter((t) => t.length >= 2 && cjkShare(t) === 1)
  for (let length = Math.max(0, ...runs.map((r) => r.length)); length >= 2; length--) {
    let best: { at: number; length: number } | undefined
    for (const run of runs)
      for (let i = 0; i + length <= run.length; i++) {
        const at = lower.indexOf(run.slice(i, i + length))
        if (at !== -1 && (best === undefined || at < best.at)) best = { at, length }
      }
    if (best !== undefined) return best
  }
  return undefined
}

/**
 * A snippet of `text` around the first query term found (else its start), ≤ `maxChars`; CJK
 * bigrams count only when no other term is found, and then the longest piece of a CJK term the
 * text holds.
 */
export const snippetFor = (text: string, terms: ReadonlyArray<string>, maxChars = 240): string => {
  const flat = collapse(text)
  const lower = flat.toLowerCase()
  const firstOf = (candidates: ReadonlyArray<string>) => {
    let best: { at: number; length: number } | undefined
    for (const term of candidates) {
      // Porter stemming matches "retries" for "retry": fall back to the term's first 5 letters.
      const probes = term.length > 5 ? [term, term.slice(0, 5)] : [term]
      for (const probe of probes) {
        const at = lower.indexOf(probe)
        if (at !== -1 && (best === undefined || at < best.at)) best = { at, length: probe.length }
        if (at !== -1) break
      }
    }
    return best
  }
  const best = firstOf(terms.filter((t) => !isBigram(t))) ?? longestCjkPiece(terms, lower)
  return windowAround(flat, best?.at ?? 0, best?.length ?? 0, maxChars)
}

/** A snippet around a known match `[at, at + length)` of the raw `text`. */
export const snippetAt = (text: string, at: number, length: number, maxChars = 240): string => {
  // Collapse before and inside the match separately to map the offset into the collapsed text.
  const before = text.slice(0, at).replace(/\s+/gu, " ").replace(/^ /, "")
  const match = text.slice(at, at + length).replace(/\s+/gu, " ")
  const flat = collapse(text)
  return windowAround(flat, Math.min(before.length, flat.length), match.length, maxChars)
}

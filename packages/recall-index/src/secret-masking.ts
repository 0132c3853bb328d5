/**
 * Secret masking for everything the readers hand out (surface text and raw text), so nothing is
 * stored or embedded with a credential in it. Reuses the handoff scanner (PEM private keys, API
 * keys and tokens of common shapes, `password=`-style assignments); never throws. Base64 pasted as
 * text — a `data:…;base64,` URL, or a long bare run of base64 — is replaced by a short placeholder
 * (`[base64 data, 270 KB]`) on the way: it holds no words, and would otherwise be chunked, embedded
 * and ranked as if it were text (a pasted screenshot is hundreds of chunks). Placeholders are not
 * counted as secrets.
 */
import { findSecrets } from "@baton/handoff"

/** Masked text and how many secrets were replaced. */
export interface MaskedText {
  readonly text: string
  readonly masked: number
}

/**
 * The last text masked and its result. A reader often masks the same text twice in a row (a
 * prompt's raw record, then its surface text, which equals it unless harness tags were cut), so
 * the second scan is answered from here; the result depends on the text only.
 */
let last: { readonly input: string; readonly result: MaskedText } | undefined

/**
 * `text` with each likely secret replaced by `[redacted <kind>]`, and each data URL or long base64
 * run replaced by `[base64 …]` (see {@link replaceBase64}); `masked` counts the secrets only.
 */
export const maskTranscriptText = (text: string): MaskedText => {
  if (last !== undefined && last.input === text) return last.result
  const result = scanAndMask(text)
  last = { input: text, result }
  return result
}

const scanAndMask = (text: string): MaskedText => {
  // Secrets first, on the text as written (a token inside a long base64-looking run is still
  // found and counted); base64 is then replaced in the text between them.
  const found = findSecrets(text)
  if (found.length === 0) return { text: replaceBase64(text), masked: 0 }
  let out = ""
  let at = 0
  for (const m of found) {
    out += `${replaceBase64(text.slice(at, m.start))}[redacted ${m.kind}]`
    at = m.end
  }
  return { text: out + replaceBase64(text.slice(at)), masked: found.length }
}

/** Shortest bare base64 run replaced (a data URL's payload is replaced from 16 characters). */
export const BASE64_MIN_RUN = 200

/**
 * A data URL with a base64 payload (group 1: its media type, if any; group 2: the payload), or a
 * run of at least {@link BASE64_MIN_RUN} base64 characters that does not continue a longer one
 * (group 3). Linear: the lookbehinds stop a scan from restarting inside a run.
 */
const base64Pattern =
  /(?<![\w-])data:([\w.+-]+\/[\w.+-]+)?(?:;[\w.+-]+=[\w.+%-]*)*;base64,([A-Za-z0-9+/]{16,}={0,2})|(?<![A-Za-z0-9+/])([A-Za-z0-9+/]{200,}={0,2})/gi

const isBase64Char = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 47 && c <= 57) || c === 43

/**
 * Whether `text` holds a run of at least {@link BASE64_MIN_RUN} base64 characters. Cheap: such a
 * run covers one of every {@link BASE64_MIN_RUN}-th position, so only the runs through those are
 * measured (a regex trying every start is 30 times slower on ordinary text).
 */
const hasLongBase64Run = (text: string): boolean => {
  for (let i = BASE64_MIN_RUN - 1; i < text.length; i += BASE64_MIN_RUN) {
    if (!isBase64Char(text.charCodeAt(i))) continue
    let start = i
    while (start > 0 && isBase64Char(text.charCodeAt(start - 1))) start--
    let end = i + 1
    while (end < text.length && end - start < BASE64_MIN_RUN && isBase64Char(text.charCodeAt(end)))
      end++
    if (end - start >= BASE64_MIN_RUN) return true
  }
  return false
}

/** Cheap gate: text with no `data:` and no long run holds nothing {@link base64Pattern} replaces. */
const mayHoldBase64 = (text: string): boolean =>
  text.length >= 32 && (text.includes("data:") || text.includes("DATA:") || hasLongBase64Run(text))

/**
 * Whether a bare run looks like base64 rather than text that happens to have no punctuation: upper
 * case, lower case and digits all present (a hex hash has no upper case, an identifier rarely has
 * digits throughout), few slashes (a path has one every few characters) and not mostly lower case
 * (camel-case words). Random base64 is about 40 % lower case, 2 % slashes.
 */
const looksLikeBase64 = (run: string): boolean => {
  let upper = 0
  let lower = 0
  let digits = 0
  let slashes = 0
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i)
    if (c >= 97 && c <= 122) lower++
    else if (c >= 65 && c <= 90) upper++
    else if (c >= 48 && c <= 57) digits++
    else if (c === 47) slashes++
  }
  return (
    upper > 0 &&
    lower > 0 &&
    digits > 0 &&
    slashes * 10 <= run.length &&
    lower * 4 <= run.length * 3
  )
}

/** The decoded size of `chars` base64 characters, for a person: `512 bytes`, `270 KB`, `3.4 MB`. */
const decodedSize = (payload: string): string => {
  const padding = payload.endsWith("==") ? 2 : payload.endsWith("=") ? 1 : 0
  const bytes = Math.max(0, Math.floor((payload.length * 3) / 4) - padding)
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}

/**
 * `text` with each data URL (`data:image/png;base64,…` → `[base64 image/png, 270 KB]`) and each
 * bare base64 run of at least {@link BASE64_MIN_RUN} characters that {@link looksLikeBase64}
 * (→ `[base64 data, 270 KB]`) replaced. SHAs, UUIDs, paths and words never qualify.
 */
export const replaceBase64 = (text: string): string => {
  if (!mayHoldBase64(text)) return text
  return text.replace(
    base64Pattern,
    (
      whole,
      mediaType: string | undefined,
      payload: string | undefined,
      run: string | undefined,
    ) => {
      if (payload !== undefined)
        return `[base64 ${mediaType === undefined ? "data" : mediaType.toLowerCase()}, ${decodedSize(payload)}]`
      return run !== undefined && looksLikeBase64(run)
        ? `[base64 data, ${decodedSize(run)}]`
        : whole
    },
  )
}

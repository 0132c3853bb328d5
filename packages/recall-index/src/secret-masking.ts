/**
 * Secret masking for everything the readers hand out (surface text and raw text), so nothing is
 * stored or embedded with a credential in it. Reuses the handoff scanner (PEM private keys, API
 * keys and tokens of common shapes, `password=`-style assignments); never throws.
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

/** `text` with each likely secret replaced by `[redacted <kind>]`. */
export const maskTranscriptText = (text: string): MaskedText => {
  if (last !== undefined && last.input === text) return last.result
  const result = scanAndMask(text)
  last = { input: text, result }
  return result
}

const scanAndMask = (text: string): MaskedText => {
  const found = findSecrets(text)
  if (found.length === 0) return { text, masked: 0 }
  let out = ""
  let at = 0
  for (const m of found) {
    out += `${text.slice(at, m.start)}[redacted ${m.kind}]`
    at = m.end
  }
  return { text: out + text.slice(at), masked: found.length }
}

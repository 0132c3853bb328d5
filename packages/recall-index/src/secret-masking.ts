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

/** `text` with each likely secret replaced by `[redacted <kind>]`. */
export const maskTranscriptText = (text: string): MaskedText => {
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

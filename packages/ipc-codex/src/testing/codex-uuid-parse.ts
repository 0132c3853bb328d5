/**
 * How codex 0.169 parses a thread id (the Rust `uuid` crate's `Uuid::parse_str`), for the twin:
 * simple, hyphenated, braced and `urn:uuid:` forms are accepted and normalised to lowercase
 * hyphenated; anything else gets the crate's error text, which the real binary returns verbatim
 * after `invalid thread id: `. Pure; test support only.
 */

/** A parsed id, or the crate's error message. */
export type CodexUuidParse =
  | { readonly _tag: "Valid"; readonly id: string }
  | { readonly _tag: "Invalid"; readonly error: string }

const HEX = /^[0-9a-fA-F]$/
const GROUP_STARTS = [0, 9, 14, 19, 24] as const
const GROUP_LENGTHS = [8, 4, 4, 4, 12] as const

const hyphenate = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`.toLowerCase()

const accepted = (body: string, simpleAllowed: boolean): string | null => {
  if (simpleAllowed && /^[0-9a-fA-F]{32}$/.test(body)) return hyphenate(body)
  if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(body))
    return body.toLowerCase()
  return null
}

/** Parses `text` the way codex 0.169 does. */
export const parseCodexUuid = (text: string): CodexUuidParse => {
  const braced = text.length >= 2 && text.startsWith("{") && text.endsWith("}")
  const urn = text.startsWith("urn:uuid:")
  const body = braced ? text.slice(1, -1) : urn ? text.slice("urn:uuid:".length) : text
  const offset = braced ? 1 : urn ? "urn:uuid:".length : 0
  const simple = !braced && !urn
  const id = accepted(body, true)
  if (id !== null) return { _tag: "Valid", id }
  const invalid = (error: string): CodexUuidParse => ({ _tag: "Invalid", error })
  const bounds: Array<number> = []
  let hyphens = 0
  const chars = [...body]
  let index = 0
  for (const character of chars) {
    if (character === "-") {
      if (hyphens < 4) bounds.push(index)
      hyphens++
    } else if (!HEX.test(character)) {
      return invalid(
        `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${character}\` at ${index + offset + 1}`,
      )
    }
    index += Buffer.byteLength(character)
  }
  if (hyphens === 0 && simple)
    return invalid(
      `invalid length: expected length 32 for simple format, found ${Buffer.byteLength(text)}`,
    )
  if (hyphens !== 4) return invalid(`invalid group count: expected 5, found ${hyphens + 1}`)
  for (let group = 0; group < 4; group++) {
    const start = GROUP_STARTS[group]!
    if (bounds[group] !== GROUP_STARTS[group + 1]! - 1)
      return invalid(
        `invalid group length in group ${group}: expected ${GROUP_LENGTHS[group]}, found ${bounds[group]! - start}`,
      )
  }
  return invalid(
    `invalid group length in group 4: expected 12, found ${Buffer.byteLength(text) - GROUP_STARTS[4]}`,
  )
}

/**
 * SHA-256 digests as lowercase hex. A digest is always taken over UTF-8 bytes of a text; for
 * values, over their canonical JSON. Pure: no IO besides the hash itself.
 * SHA-256 detects changes; it is not a signature (anyone who can write the file can rehash it).
 */
import { createHash } from "node:crypto"
import { canonicalJson } from "./canonical-json.js"
import type { JsonValue } from "./canonical-json.js"
import type { Handoff } from "./handoff-schema.js"

/** SHA-256 of the UTF-8 bytes of `text`, lowercase hex. */
export const sha256Hex = (text: string): string =>
  createHash("sha256").update(text, "utf8").digest("hex")

/** SHA-256 (lowercase hex) of the canonical JSON of `value`. */
export const canonicalDigest = (value: JsonValue): string => sha256Hex(canonicalJson(value))

/** SHA-256 (lowercase hex) of the canonical JSON of a decoded handoff. */
export const handoffDigest = (handoff: Handoff): string => canonicalDigest(handoff)

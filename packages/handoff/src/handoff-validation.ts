/**
 * Accepting a handoff from outside. Checks run in a fixed order and stop at the first failing
 * stage: JSON parse (parseHandoffJson only) → schema → size → secret scan. Size is measured
 * on the canonical encoding of the decoded handoff, the bytes that are stored and hashed.
 * Guarantee: total over any input; failures are values (Result) or Effect failures, never throws.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { canonicalJson } from "./canonical-json.js"
import { HandoffContainsSecretError, HandoffTooLargeError } from "./errors.js"
import type { HandoffValidationError, SecretLocation } from "./errors.js"
import { formatFieldPath } from "./field-path.js"
import { decodeHandoff, handoffLimits } from "./handoff-schema.js"
import type { Handoff } from "./handoff-schema.js"
import { decodeUtf8Text, parseJsonText } from "./json-text.js"
import { findSecrets } from "./secret-scan.js"

const utf8 = new TextEncoder()

/** Fails with HandoffTooLarge when the canonical UTF-8 encoding exceeds the limit. */
export const checkHandoffSize = (
  handoff: Handoff,
): Result.Result<Handoff, HandoffTooLargeError> => {
  const bytes = utf8.encode(canonicalJson(handoff)).length
  return bytes <= handoffLimits.maxBytes
    ? Result.succeed(handoff)
    : Result.fail(new HandoffTooLargeError({ bytes, limit: handoffLimits.maxBytes }))
}

/** Every text field of a handoff with its path segments, in field order. */
const textFields = (
  handoff: Handoff,
): ReadonlyArray<readonly [ReadonlyArray<PropertyKey>, string]> => [
  [["summary"], handoff.summary],
  ...handoff.preserve.map((text, i) => [["preserve", i], text] as const),
  ...handoff.discard.map((text, i) => [["discard", i], text] as const),
  [["nextStep"], handoff.nextStep],
]

/** Fails with HandoffContainsSecret naming each field and kind of likely credential. */
export const checkHandoffSecrets = (
  handoff: Handoff,
  prefix: ReadonlyArray<PropertyKey> = [],
): Result.Result<Handoff, HandoffContainsSecretError> => {
  const findings: Array<SecretLocation> = []
  for (const [path, text] of textFields(handoff)) {
    const kinds = new Set(findSecrets(text).map((m) => m.kind))
    for (const kind of kinds) findings.push({ path: formatFieldPath([...prefix, ...path]), kind })
  }
  return findings.length === 0
    ? Result.succeed(handoff)
    : Result.fail(new HandoffContainsSecretError({ findings }))
}

/** Validates an already-parsed value as a handoff: schema → size → secrets. */
export const validateHandoffResult = (
  input: unknown,
): Result.Result<Handoff, HandoffValidationError> =>
  Result.flatMap(decodeHandoff(input), (handoff) =>
    Result.flatMap(checkHandoffSize(handoff), (sized) => checkHandoffSecrets(sized)),
  )

/** Effect form of validateHandoffResult. */
export const validateHandoff = (input: unknown): Effect.Effect<Handoff, HandoffValidationError> =>
  Effect.suspend(() => Effect.fromResult(validateHandoffResult(input)))

/** Drops one leading byte-order mark, which editors on Windows like to write (RFC 8259 §8.1). */
const withoutBom = (text: string): string =>
  typeof text === "string" && text.startsWith("\uFEFF") ? text.slice(1) : text

/**
 * Parses JSON text (or UTF-8 bytes, decoded strictly) and validates it as a handoff:
 * UTF-8 → JSON (no repeated keys) → schema → size → secrets.
 */
export const parseHandoffJsonResult = (
  text: string | Uint8Array,
): Result.Result<Handoff, HandoffValidationError> =>
  Result.flatMap(text instanceof Uint8Array ? decodeUtf8Text(text) : Result.succeed(text), (t) =>
    Result.flatMap(parseJsonText(withoutBom(t)), validateHandoffResult),
  )

/** Effect form of parseHandoffJsonResult, for the CLI and other text boundaries. */
export const parseHandoffJson = (
  text: string | Uint8Array,
): Effect.Effect<Handoff, HandoffValidationError> =>
  Effect.suspend(() => Effect.fromResult(parseHandoffJsonResult(text)))

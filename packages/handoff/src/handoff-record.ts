/**
 * Binding a handoff to its thread and job, and verifying it before a continuation.
 *
 * The stored form is the canonical JSON of `{version: 1, threadId, jobId, handoff, createdAt}`
 * and the digest is SHA-256 of exactly that text. `createdAt` is supplied by the caller (no
 * hidden clock). Verification runs in this order and stops at the first failure:
 * digest → JSON → version → record schema → threadId → jobId → canonical form → size →
 * secrets → (for a continuation) `resume === true`.
 * Guarantee: total; every failure is a tagged error value, nothing throws, nothing does IO.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { canonicalJson } from "./canonical-json.js"
import { sha256Hex } from "./digest.js"
import {
  HandoffBindingMismatchError,
  HandoffDigestMismatchError,
  HandoffDoesNotAuthorizeResumeError,
} from "./errors.js"
import type { HandoffError, HandoffValidationError } from "./errors.js"
import { describeFound } from "./field-path.js"
import { decodeStrict, HandoffSchema, NonBlankString } from "./handoff-schema.js"
import type { Handoff } from "./handoff-schema.js"
import { checkHandoffSecrets, checkHandoffSize } from "./handoff-validation.js"
import { parseJsonText } from "./json-text.js"
import { invalidAt } from "./schema-issue-report.js"

const isoTimestamp =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/

/** `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` naming a real calendar date and time. */
const isIsoTimestamp = (text: string): boolean => {
  const m = isoTimestamp.exec(text)
  if (m === null) return false
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offH = 0, offM = 0] = m
    .slice(1)
    .map((part) => (part === undefined ? 0 : Number(part)))
  const date = new Date(Date.UTC(year, month - 1, day))
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offH <= 23 &&
    offM <= 59
  )
}

const IsoTimestamp = Schema.String.check(
  Schema.makeFilter(
    (s: string) =>
      isIsoTimestamp(s) || "must be an ISO-8601 timestamp such as 2025-01-31T12:00:00.000Z",
  ),
)

const HandoffRecordSchema = Schema.Struct({
  version: Schema.Literal(1),
  threadId: NonBlankString,
  jobId: NonBlankString,
  handoff: HandoffSchema,
  createdAt: IsoTimestamp,
})

/** The stored, hashed record that binds a handoff to one thread and job. */
export type HandoffRecord = typeof HandoffRecordSchema.Type

/** What bindHandoff needs; `createdAt` is an ISO-8601 timestamp chosen by the caller. */
export interface BindHandoffInput {
  readonly threadId: string
  readonly jobId: string
  readonly handoff: Handoff
  readonly createdAt: string
}

/** A bound handoff: the record, its canonical text (store exactly this) and the text's SHA-256. */
export interface BoundHandoff {
  readonly record: HandoffRecord
  readonly text: string
  readonly digest: string
}

/** What verifyHandoffRecord checks the stored text against. */
export interface VerifyHandoffRecordInput {
  /** The stored text, exactly as read back. */
  readonly text: string
  /** The digest recorded at bind time (hex; compared case-insensitively). */
  readonly expectedDigest: string
  readonly threadId: string
  readonly jobId: string
  /** True before starting a continuation turn: then the handoff must say `resume: true`. */
  readonly forContinuation: boolean
}

const bindResult = (input: BindHandoffInput): Result.Result<BoundHandoff, HandoffValidationError> =>
  Result.flatMap(
    decodeStrict(HandoffRecordSchema, {
      version: 1,
      threadId: input.threadId,
      jobId: input.jobId,
      handoff: input.handoff,
      createdAt: input.createdAt,
    }),
    (record) =>
      Result.flatMap(checkHandoffSize(record.handoff), (handoff) =>
        Result.map(checkHandoffSecrets(handoff, ["handoff"]), () => {
          const text = canonicalJson(record)
          return { record, text, digest: sha256Hex(text) }
        }),
      ),
  )

/**
 * Re-validates a handoff and binds it to a thread and job; store `text`, keep `digest`.
 * Fails with HandoffInvalid (ids, timestamp, handoff), HandoffTooLarge or HandoffContainsSecret.
 */
export const bindHandoff = (
  input: BindHandoffInput,
): Effect.Effect<BoundHandoff, HandoffValidationError> =>
  Effect.suspend(() => Effect.fromResult(bindResult(input)))

const readVersion = (parsed: unknown): unknown =>
  typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? (parsed as { readonly version?: unknown }).version
    : undefined

const verifyResult = (
  input: VerifyHandoffRecordInput,
): Result.Result<HandoffRecord, HandoffError> => {
  if (typeof input.text !== "string") {
    return Result.fail(invalidAt([], "must be the stored record text (a string)"))
  }
  const actual = sha256Hex(input.text)
  const expected = String(input.expectedDigest).toLowerCase()
  if (actual !== expected) return Result.fail(new HandoffDigestMismatchError({ expected, actual }))
  const parsed = parseJsonText(input.text)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const version = readVersion(parsed.success)
  if (version !== 1) {
    return Result.fail(
      new HandoffBindingMismatchError({
        field: "version",
        expected: "1",
        found: describeFound(version),
      }),
    )
  }
  const decoded = decodeStrict(HandoffRecordSchema, parsed.success)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
  const record = decoded.success
  for (const field of ["threadId", "jobId"] as const) {
    if (record[field] !== input[field]) {
      return Result.fail(
        new HandoffBindingMismatchError({
          field,
          expected: describeFound(input[field]),
          found: describeFound(record[field]),
        }),
      )
    }
  }
  if (canonicalJson(record) !== input.text) {
    return Result.fail(
      invalidAt([], "must be the canonical JSON of a handoff record (as written by bindHandoff)"),
    )
  }
  const checked = Result.flatMap(checkHandoffSize(record.handoff), (handoff) =>
    checkHandoffSecrets(handoff, ["handoff"]),
  )
  if (Result.isFailure(checked)) return Result.fail(checked.failure)
  if (input.forContinuation && !record.handoff.resume) {
    return Result.fail(new HandoffDoesNotAuthorizeResumeError({ jobId: record.jobId }))
  }
  return Result.succeed(record)
}

/**
 * Verifies stored handoff text against its recorded digest, thread and job (and, for a
 * continuation, that it authorizes one). Succeeds with the decoded record.
 */
export const verifyHandoffRecord = (
  input: VerifyHandoffRecordInput,
): Effect.Effect<HandoffRecord, HandoffError> =>
  Effect.suspend(() => Effect.fromResult(verifyResult(input)))

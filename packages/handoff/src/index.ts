/**
 * @baton/handoff — the handoff contract: schema, canonical encoding, SHA-256 binding, secret
 * scan and continuation text. Pure: no clock, no files, no processes; every failure is a
 * tagged error value.
 */
export { canonicalJson } from "./canonical-json.js"
export { canonicalDigest, handoffDigest } from "./digest.js"
export { handoffLimits } from "./handoff-schema.js"
export {
  parseHandoffJson,
  parseHandoffJsonResult,
  validateHandoff,
  validateHandoffResult,
} from "./handoff-validation.js"
export { bindHandoff, verifyHandoffRecord } from "./handoff-record.js"
export { renderContinuation } from "./continuation.js"
export { findSecrets, maskSecrets } from "./secret-scan.js"
export {
  HandoffBindingMismatchError,
  HandoffContainsSecretError,
  HandoffDigestMismatchError,
  HandoffDoesNotAuthorizeResumeError,
  HandoffInvalidError,
  HandoffTooLargeError,
} from "./errors.js"

export type { JsonValue } from "./canonical-json.js"
export type { Handoff } from "./handoff-schema.js"
export type {
  BindHandoffInput,
  BoundHandoff,
  HandoffRecord,
  VerifyHandoffRecordInput,
} from "./handoff-record.js"
export type { SecretKind, SecretMatch } from "./secret-scan.js"
export type {
  BindingField,
  HandoffError,
  HandoffProblem,
  HandoffValidationError,
  SecretLocation,
} from "./errors.js"

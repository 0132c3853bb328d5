/**
 * Tagged errors of @baton/handoff. Convention: the class is `<Thing>Error`, the `_tag` is the
 * issue's name without the suffix (`HandoffTooLargeError` has `_tag: "HandoffTooLarge"`).
 * Every error carries what a user needs to act, and its message is derived from its fields.
 * Guarantee: no error carries or prints a detected secret, and field values from the input only
 * appear masked and truncated (see `describeFound` in field-path.ts).
 */
import * as Data from "effect/Data"
import type { SecretKind } from "./secret-scan.js"

/** One broken rule: the field path (`preserve[3]`, `handoff.summary`; "" is the whole value). */
export interface HandoffProblem {
  readonly path: string
  readonly rule: string
}

/** Where a likely secret was found: the field path and the kind of secret, never its text. */
export interface SecretLocation {
  readonly path: string
  readonly kind: SecretKind
}

/** Record fields that bind a stored handoff to its thread and job. */
export type BindingField = "version" | "threadId" | "jobId"

const subject = (path: string): string => (path === "" ? "the top-level value" : path)

const describeProblem = (problem: HandoffProblem): string =>
  `${subject(problem.path)} ${problem.rule}`

const secretLabels: { readonly [K in SecretKind]: string } = {
  "private-key": "a PEM private key block",
  "anthropic-api-key": "an Anthropic API key",
  "openai-api-key": "an OpenAI API key",
  "github-token": "a GitHub token",
  "aws-access-key-id": "an AWS access key id",
  "slack-token": "a Slack token",
  "google-api-key": "a Google API key",
  "stripe-secret-key": "a Stripe secret key",
  "npm-token": "an npm access token",
  "huggingface-token": "a Hugging Face token",
  "gitlab-token": "a GitLab personal access token",
  "sendgrid-api-key": "a SendGrid API key",
  "azure-storage-key": "an Azure storage or Service Bus key",
  "webhook-url": "a Slack or Discord webhook URL",
  "basic-auth": "HTTP Basic credentials",
  jwt: "a JSON Web Token",
  "bearer-token": "a bearer token",
  "credential-assignment": "a password, secret or token assignment",
  "url-password": "a password in a URL",
}

/** The handoff's canonical encoding exceeds the byte limit. */
export class HandoffTooLargeError extends Data.TaggedError("HandoffTooLarge")<{
  readonly bytes: number
  readonly limit: number
}> {
  override get message(): string {
    return (
      `Handoff is ${this.bytes} bytes of canonical JSON (UTF-8); the limit is ${this.limit} bytes. ` +
      "Shorten summary, preserve, discard or nextStep and try again."
    )
  }
}

/** The input is not valid JSON or breaks a schema rule; `path`/`rule` name the first problem. */
export class HandoffInvalidError extends Data.TaggedError("HandoffInvalid")<{
  readonly path: string
  readonly rule: string
  /** The problems kept (at most 20, then one `{ path: "", rule: "has N further problems" }`). */
  readonly issues: ReadonlyArray<HandoffProblem>
  /** How many problems were found, when more than `issues` lists. */
  readonly total?: number
}> {
  override get message(): string {
    const listed = this.issues.length > 0 ? this.issues : [{ path: this.path, rule: this.rule }]
    if (this.total !== undefined && this.total > listed.length - 1) {
      const shown = listed.slice(0, -1) // the last entry only counts the rest
      return `Invalid handoff (${this.total} problems, first ${shown.length} shown): ${shown.map(describeProblem).join("; ")}.`
    }
    if (listed.length === 1) return `Invalid handoff: ${describeProblem(listed[0]!)}.`
    return `Invalid handoff (${listed.length} problems): ${listed.map(describeProblem).join("; ")}.`
  }
}

/** The stored handoff record's SHA-256 differs from the digest recorded when it was bound. */
export class HandoffDigestMismatchError extends Data.TaggedError("HandoffDigestMismatch")<{
  readonly expected: string
  readonly actual: string
}> {
  override get message(): string {
    return (
      `Saved handoff changed since it was stored: expected SHA-256 ${this.expected}, ` +
      `found ${this.actual}. The continuation is cancelled; write a new handoff and schedule again.`
    )
  }
}

/** The stored record belongs to another thread or job, or has an unsupported version. */
export class HandoffBindingMismatchError extends Data.TaggedError("HandoffBindingMismatch")<{
  readonly field: BindingField
  readonly expected: string
  readonly found: string
}> {
  override get message(): string {
    return (
      `Saved handoff does not belong to this job: ${this.field} is ${this.found}, ` +
      `expected ${this.expected}. The continuation is cancelled.`
    )
  }
}

/** The handoff says `resume: false`, so it cannot start a continuation turn. */
export class HandoffDoesNotAuthorizeResumeError extends Data.TaggedError(
  "HandoffDoesNotAuthorizeResume",
)<{
  readonly jobId: string
}> {
  override get message(): string {
    return (
      `The saved handoff of job ${this.jobId} has resume: false, so it does not authorize a ` +
      "continuation. The compaction result is kept and no continuation is sent."
    )
  }
}

/** The handoff contains likely credentials; `findings` names fields and kinds, never the text. */
export class HandoffContainsSecretError extends Data.TaggedError("HandoffContainsSecret")<{
  readonly findings: ReadonlyArray<SecretLocation>
}> {
  override get message(): string {
    const where = this.findings.map((f) => `${subject(f.path)} contains ${secretLabels[f.kind]}`)
    return (
      `Handoff refused: ${where.join("; ")}. Remove the secret and refer to it by name ` +
      "(for example an environment variable) instead; handoffs are stored in plain text."
    )
  }
}

/** Errors of accepting a handoff: schema, size and secret scan. */
export type HandoffValidationError =
  HandoffInvalidError | HandoffTooLargeError | HandoffContainsSecretError

/** Every error this package produces. */
export type HandoffError =
  | HandoffValidationError
  | HandoffDigestMismatchError
  | HandoffBindingMismatchError
  | HandoffDoesNotAuthorizeResumeError

/**
 * How a continuation ended, decided from structured error data only: Codex's `codexErrorInfo`
 * (app-server, camelCase) or `codex_error_info` (rollout `task_complete` / `error` events,
 * snake_case), plus the exit status. Never a scan of messages, tool output or raw log text, so a
 * test log that says "timed out" cannot make a finished run look transient.
 *
 * Mapping: usage limit → `usage_limit`; server overloaded or internal server error → `overloaded`;
 * connection failures, stream connection failures, retry exhaustion and HTTP 408/429/5xx
 * → `connection`; a stream disconnected mid-turn → `stream`; everything else → `other`. A clean
 * exit without an error is `none` (the table then asks for attention unless the agent signalled
 * completion or a pause). Pure.
 */
import type { RunFailure } from "./job-machine.js"

/** A normalised Codex error kind: the camelCase variant name and its HTTP status, if any. */
export interface CodexErrorKind {
  readonly kind: string
  readonly httpStatusCode: number | null
}

const camel = (name: string): string =>
  name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

const statusOf = (details: unknown): number | null => {
  if (typeof details !== "object" || details === null) return null
  const record = details as Record<string, unknown>
  const value = record["httpStatusCode"] ?? record["http_status_code"]
  return typeof value === "number" && Number.isInteger(value) ? value : null
}

/** Normalises `"usage_limit_exceeded"`, `{http_connection_failed: {http_status_code}}` and their camelCase forms. */
export const codexErrorKind = (info: unknown): CodexErrorKind | null => {
  if (typeof info === "string" && info !== "") return { kind: camel(info), httpStatusCode: null }
  if (typeof info === "object" && info !== null && !Array.isArray(info)) {
    const keys = Object.keys(info)
    const first = keys[0]
    if (keys.length === 1 && first !== undefined)
      return {
        kind: camel(first),
        httpStatusCode: statusOf((info as Record<string, unknown>)[first]),
      }
    const kind = (info as Record<string, unknown>)["kind"]
    if (typeof kind === "string") return { kind: camel(kind), httpStatusCode: null }
  }
  return null
}

const transientStatus = (status: number | null): boolean =>
  status === null || status === 408 || status === 429 || status >= 500

/** The run failure class of one structured Codex error. */
export const classifyCodexError = (error: CodexErrorKind | null): RunFailure => {
  if (error === null) return "other"
  switch (error.kind) {
    case "usageLimitExceeded":
      return "usage_limit"
    case "serverOverloaded":
    case "internalServerError":
      return "overloaded"
    case "httpConnectionFailed":
      return transientStatus(error.httpStatusCode) ? "connection" : "other"
    case "responseStreamConnectionFailed":
    case "responseTooManyFailedAttempts":
      return "connection"
    case "responseStreamDisconnected":
      return "stream"
    default:
      return "other"
  }
}

/** What the classifier reads about one ended run. */
export interface RunEvidence {
  /** The error of the run's last turn (structured), or null when that turn ended cleanly. */
  readonly lastError: { readonly kind: CodexErrorKind | null; readonly message: string } | null
  readonly exitCode: number | null
  readonly signal: string | null
  /** Set when Baton itself ended the run (stop, watchdog). */
  readonly killedBy: string | null
}

/** The classification and the one-line detail recorded with it. */
export interface RunClassification {
  readonly failure: RunFailure
  readonly detail: string | null
}

const clip = (text: string): string => (text.length > 300 ? `${text.slice(0, 297)}...` : text)

/** Classifies an ended run from its structured evidence. */
export const classifyRun = (evidence: RunEvidence): RunClassification => {
  if (evidence.killedBy !== null) return { failure: "other", detail: evidence.killedBy }
  if (evidence.lastError !== null) {
    const failure = classifyCodexError(evidence.lastError.kind)
    const kind = evidence.lastError.kind?.kind ?? "unclassified"
    return { failure, detail: clip(`${kind}: ${evidence.lastError.message}`) }
  }
  if (evidence.signal !== null)
    return { failure: "other", detail: `continuation killed by ${evidence.signal}` }
  if (evidence.exitCode !== null && evidence.exitCode !== 0)
    return {
      failure: "other",
      detail: `continuation exited with code ${evidence.exitCode} without a structured error`,
    }
  return { failure: "none", detail: null }
}

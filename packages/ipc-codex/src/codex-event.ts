/**
 * Typed events decoded from app-server notifications and server→client requests. Decoding is
 * total: a known method whose params no longer match becomes a `ProtocolDrift` event, an unknown
 * method becomes `OtherNotification`. Pure functions; nothing here does IO or throws.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type {
  WireItem,
  WireThreadStatus,
  WireTokenUsage,
  WireTurn,
  RateLimitSnapshot,
} from "./protocol-schema.js"
import { NotificationParams, ServerRequestParamsSchema } from "./protocol-schema.js"

/** `codexErrorInfo` normalised: the variant name (`usageLimitExceeded`, `activeTurnNotSteerable`, …) and its payload. */
export interface CodexErrorInfo {
  readonly kind: string
  readonly details: unknown
}

/** A turn or `error` notification's error, with `codexErrorInfo` normalised. */
export interface CodexTurnError {
  readonly message: string
  readonly codexErrorInfo: CodexErrorInfo | null
  readonly additionalDetails: string | null
}

/** How Baton handled a server→client request: left for the thread's owner, or declined (private stdio only). */
export type ServerRequestHandling = "left-pending" | "declined"

/** One decoded event, stamped with the Clock time it was read. */
export type CodexEvent = (
  | {
      readonly _tag: "ThreadStatusChanged"
      readonly threadId: string
      readonly status: WireThreadStatus
    }
  | {
      readonly _tag: "ThreadStarted"
      readonly threadId: string
      readonly status: WireThreadStatus | null
    }
  | { readonly _tag: "ThreadClosed"; readonly threadId: string }
  | { readonly _tag: "TurnStarted"; readonly threadId: string; readonly turn: WireTurn }
  | { readonly _tag: "TurnCompleted"; readonly threadId: string; readonly turn: WireTurn }
  | {
      readonly _tag: "ItemStarted"
      readonly threadId: string
      readonly turnId: string
      readonly item: WireItem
    }
  | {
      readonly _tag: "ItemCompleted"
      readonly threadId: string
      readonly turnId: string
      readonly item: WireItem
    }
  | {
      readonly _tag: "TokenUsageUpdated"
      readonly threadId: string
      readonly turnId: string
      readonly tokenUsage: WireTokenUsage
    }
  | { readonly _tag: "RateLimitsUpdated"; readonly rateLimits: RateLimitSnapshot }
  | {
      readonly _tag: "ErrorNotified"
      readonly threadId: string
      readonly turnId: string | null
      readonly error: CodexTurnError
      readonly willRetry: boolean
    }
  | { readonly _tag: "ThreadCompacted"; readonly threadId: string; readonly turnId: string }
  | {
      readonly _tag: "ServerRequestReceived"
      readonly requestId: string | number
      readonly method: string
      readonly threadId: string | null
      readonly turnId: string | null
      readonly itemId: string | null
      readonly handling: ServerRequestHandling
    }
  | {
      readonly _tag: "ServerRequestResolved"
      readonly threadId: string
      readonly requestId: string | number
    }
  | { readonly _tag: "ProtocolDrift"; readonly method: string; readonly issue: string }
  | { readonly _tag: "OtherNotification"; readonly method: string; readonly params: unknown }
) & { readonly receivedAtMs: number }

/** A decoded event before it is stamped with a time. */
export type UnstampedCodexEvent = CodexEvent extends infer E
  ? E extends unknown
    ? Omit<E, "receivedAtMs">
    : never
  : never

/** Normalises `codexErrorInfo`: `"usageLimitExceeded"` or `{activeTurnNotSteerable: {turnKind}}` → `{kind, details}`. */
export const normalizeCodexErrorInfo = (raw: unknown): CodexErrorInfo | null => {
  if (typeof raw === "string") return { kind: raw, details: null }
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const keys = Object.keys(raw)
    const first = keys[0]
    if (keys.length === 1 && first !== undefined) {
      return { kind: first, details: (raw as Record<string, unknown>)[first] ?? null }
    }
    return { kind: "unknown", details: raw }
  }
  return null
}

const toTurnError = (error: {
  readonly message: string
  readonly codexErrorInfo?: unknown
  readonly additionalDetails?: string | null
}): CodexTurnError => ({
  message: error.message,
  codexErrorInfo: normalizeCodexErrorInfo(error.codexErrorInfo),
  additionalDetails: error.additionalDetails ?? null,
})

/** The turn's error with `codexErrorInfo` normalised, or null. */
export const turnErrorOf = (turn: WireTurn): CodexTurnError | null =>
  turn.error === undefined || turn.error === null ? null : toTurnError(turn.error)

type KnownMethod = keyof typeof NotificationParams

const isKnownMethod = (method: string): method is KnownMethod =>
  Object.hasOwn(NotificationParams, method)

const decodeWith = <S extends Schema.Decoder<unknown>>(schema: S, params: unknown) =>
  Schema.decodeUnknownResult(schema)(params)

/** Decodes one notification into an event; never fails (drift becomes `ProtocolDrift`). */
export const decodeNotification = (method: string, params: unknown): UnstampedCodexEvent => {
  if (!isKnownMethod(method)) return { _tag: "OtherNotification", method, params }
  const drift = (issue: string): UnstampedCodexEvent => ({ _tag: "ProtocolDrift", method, issue })
  switch (method) {
    case "thread/status/changed": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? { _tag: "ThreadStatusChanged", threadId: r.success.threadId, status: r.success.status }
        : drift(r.failure.message)
    }
    case "thread/started": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? {
            _tag: "ThreadStarted",
            threadId: r.success.thread.id,
            status: r.success.thread.status ?? null,
          }
        : drift(r.failure.message)
    }
    case "thread/closed": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? { _tag: "ThreadClosed", threadId: r.success.threadId }
        : drift(r.failure.message)
    }
    case "turn/started": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? { _tag: "TurnStarted", threadId: r.success.threadId, turn: r.success.turn }
        : drift(r.failure.message)
    }
    case "turn/completed": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? { _tag: "TurnCompleted", threadId: r.success.threadId, turn: r.success.turn }
        : drift(r.failure.message)
    }
    case "item/started": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? {
            _tag: "ItemStarted",
            threadId: r.success.threadId,
            turnId: r.success.turnId,
            item: r.success.item,
          }
        : drift(r.failure.message)
    }
    case "item/completed": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? {
            _tag: "ItemCompleted",
            threadId: r.success.threadId,
            turnId: r.success.turnId,
            item: r.success.item,
          }
        : drift(r.failure.message)
    }
    case "thread/tokenUsage/updated": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? {
            _tag: "TokenUsageUpdated",
            threadId: r.success.threadId,
            turnId: r.success.turnId,
            tokenUsage: r.success.tokenUsage,
          }
        : drift(r.failure.message)
    }
    case "account/rateLimits/updated": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? { _tag: "RateLimitsUpdated", rateLimits: r.success.rateLimits }
        : drift(r.failure.message)
    }
    case "error": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? {
            _tag: "ErrorNotified",
            threadId: r.success.threadId,
            turnId: r.success.turnId ?? null,
            error: toTurnError(r.success.error),
            willRetry: r.success.willRetry ?? false,
          }
        : drift(r.failure.message)
    }
    case "thread/compacted": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? { _tag: "ThreadCompacted", threadId: r.success.threadId, turnId: r.success.turnId }
        : drift(r.failure.message)
    }
    case "serverRequest/resolved": {
      const r = decodeWith(NotificationParams[method], params)
      return Result.isSuccess(r)
        ? {
            _tag: "ServerRequestResolved",
            threadId: r.success.threadId,
            requestId: r.success.requestId,
          }
        : drift(r.failure.message)
    }
  }
}

/** Decodes a server→client request into a `ServerRequestReceived` event (params are read leniently). */
export const decodeServerRequest = (
  requestId: string | number,
  method: string,
  params: unknown,
  handling: ServerRequestHandling,
): UnstampedCodexEvent => {
  const r = decodeWith(ServerRequestParamsSchema, params ?? {})
  const p = Result.isSuccess(r) ? r.success : {}
  return {
    _tag: "ServerRequestReceived",
    requestId,
    method,
    threadId: p.threadId ?? null,
    turnId: p.turnId ?? null,
    itemId: p.itemId ?? null,
    handling,
  }
}

/** The thread an event belongs to, if any. */
export const threadIdOf = (event: UnstampedCodexEvent): string | null => {
  switch (event._tag) {
    case "RateLimitsUpdated":
    case "ProtocolDrift":
    case "OtherNotification":
      return null
    case "ServerRequestReceived":
      return event.threadId
    case "ThreadStatusChanged":
    case "ThreadStarted":
    case "ThreadClosed":
    case "TurnStarted":
    case "TurnCompleted":
    case "ItemStarted":
    case "ItemCompleted":
    case "TokenUsageUpdated":
    case "ErrorNotified":
    case "ThreadCompacted":
    case "ServerRequestResolved":
      return event.threadId
  }
}

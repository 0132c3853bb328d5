/**
 * Turns a raw JSON-RPC error answer into the tagged error a caller can act on. The app-server
 * reports most conditions as `-32600` with a message, so classification matches codes first and
 * well-known message fragments second (as seen from codex-cli 0.169.0). Unrecognised answers stay
 * a generic `RpcError` with code and message. Pure.
 */
import type { CodexRequestError, RpcError } from "./errors.js"
import {
  ActiveWriterError,
  NotAuthenticatedError,
  OverloadedError,
  ProtocolMismatchError,
  ThreadNotFoundError,
  TurnNotSteerableError,
} from "./errors.js"

/** JSON-RPC code for "server overloaded; retry later". */
export const OVERLOADED_CODE = -32001

/** What the classifier knows about the failed request. */
export interface RpcErrorContext {
  readonly threadId?: string
  readonly serverVersion?: string
}

const notSteerable = (error: RpcError): string | null => {
  const fromMessage = /ActiveTurnNotSteerable\s*\{\s*turn_kind:\s*(\w+)/i.exec(error.detail)
  if (fromMessage?.[1] !== undefined) return fromMessage[1].toLowerCase()
  const data = error.data
  if (typeof data === "object" && data !== null) {
    const info = (data as { codexErrorInfo?: unknown }).codexErrorInfo
    if (typeof info === "object" && info !== null && "activeTurnNotSteerable" in info) {
      const kind = (info as { activeTurnNotSteerable?: { turnKind?: unknown } })
        .activeTurnNotSteerable?.turnKind
      return typeof kind === "string" ? kind : "unknown"
    }
  }
  return /ActiveTurnNotSteerable/i.test(error.detail) ? "unknown" : null
}

/** Classifies one error answer to `error.method`. */
export const classifyRpcError = (
  error: RpcError,
  context: RpcErrorContext = {},
): CodexRequestError => {
  const method = error.method
  const detail = error.detail
  const threadId =
    context.threadId ??
    /thread (?:id |not (?:found|loaded): )?([0-9a-f-]{8,})/i.exec(detail)?.[1] ??
    "unknown"
  const version =
    context.serverVersion === undefined ? {} : { serverVersion: context.serverVersion }
  if (error.code === OVERLOADED_CODE)
    return new OverloadedError({ method, detail, retryable: true })
  if (/already has an active writer/i.test(detail))
    return new ActiveWriterError({ threadId, method, detail })
  if (/authentication required/i.test(detail)) return new NotAuthenticatedError({ method, detail })
  const turnKind = notSteerable(error)
  if (turnKind !== null) return new TurnNotSteerableError({ threadId, method, turnKind, detail })
  if (/thread not found|no rollout found/i.test(detail))
    return new ThreadNotFoundError({ threadId, method, detail })
  // 0.169 answers `thread/read` of an id it has no rollout for with "thread not loaded: <id>"
  // (a stored thread that is not loaded reads fine), so there it means "no such thread".
  if (method === "thread/read" && /^thread not loaded/i.test(detail))
    return new ThreadNotFoundError({ threadId, method, detail })
  if (error.code === -32601 || /unknown variant/i.test(detail)) {
    return new ProtocolMismatchError({
      method,
      expected: `a server that implements ${method}`,
      seen: detail,
      ...version,
    })
  }
  if (
    error.code === -32602 ||
    /^Invalid request: (missing field|invalid type|unknown field|invalid value)/i.test(detail)
  ) {
    return new ProtocolMismatchError({
      method,
      expected: `${method} to accept Baton's parameters`,
      seen: detail,
      ...version,
    })
  }
  return error
}

/** True for errors that mean "nothing happened; safe to retry later" (only overload). */
export const isRetryable = (error: CodexRequestError): boolean => error._tag === "OverloadedError"

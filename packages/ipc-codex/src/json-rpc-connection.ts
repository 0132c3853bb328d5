/**
 * The JSON-RPC core shared by every transport. A transport adapter only moves text frames (one
 * WebSocket frame or one JSONL line per message); this core owns ids, pending requests, timeouts,
 * notifications and server→client requests.
 *
 * Guarantees:
 * - Reading never stops: the adapter hands frames over synchronously into an inbound queue that is
 *   drained by one fiber doing O(1) work per frame. Nothing downstream can apply back-pressure to
 *   the socket or pipe (a stalled subscriber stalls compaction for every daemon client).
 * - Every frame is decoded leniently (missing `jsonrpc` / `params`, extra members); non-JSON and
 *   undecodable frames are skipped and counted, never fatal.
 * - A request that was written and then timed out or lost its connection reports
 *   `outcomeMayBeUnknown: true`; nothing is ever resent automatically.
 * Time comes from the Effect Clock (timeouts and stamps follow a test clock).
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Scope } from "effect"
import type { TransportKind } from "./errors.js"
import { DisconnectedError, RequestTimeoutError, RpcError } from "./errors.js"
import { WireEnvelope, WireError } from "./protocol-schema.js"

/** Where an adapter delivers what it reads. Both calls are synchronous and never block. */
export interface FrameSink {
  /** One complete message (a WebSocket text frame or one JSONL line). */
  readonly frame: (text: string) => void
  /** The link is gone (socket closed, process exited); called at most once. */
  readonly closed: (reason: string) => void
}

/** What an adapter offers for writing: one call per message, plus close. */
export interface FrameLink {
  /** Writes one message; fails when the link is already closed. */
  readonly send: (frame: string) => Effect.Effect<void, DisconnectedError>
  /** Closes the link; idempotent. The adapter then reports `closed` on its sink. */
  readonly close: Effect.Effect<void>
  /** Frames the link dropped before delivery for exceeding its size limit (JSONL: long lines). */
  readonly oversizedFrames?: () => number
}

/** Opens a transport link delivering into `sink`; closing the scope closes the link. */
export type OpenFrameLink<E> = (sink: FrameSink) => Effect.Effect<FrameLink, E, Scope.Scope>

/** A JSON-RPC id. */
export type RequestId = string | number

/** A message the server initiated. */
export type IncomingMessage =
  | { readonly _tag: "Notification"; readonly method: string; readonly params: unknown }
  | {
      readonly _tag: "ServerRequest"
      readonly id: RequestId
      readonly method: string
      readonly params: unknown
    }

/** Counters describing what the core has seen; useful in diagnostics and tests. */
export interface JsonRpcStats {
  readonly framesReceived: number
  readonly nonJsonFrames: number
  readonly undecodableFrames: number
  readonly notifications: number
  readonly serverRequests: number
  readonly requestsSent: number
  /** Responses whose id matches no pending request (unknown or duplicate). */
  readonly unknownResponses: number
  /** Responses that arrived after their request had timed out. */
  readonly lateResponses: number
  /** Most frames waiting in the inbound queue at once. */
  readonly inboundHighWater: number
  /** Frames the link skipped for exceeding its size limit (stdio: lines over 64 MiB). */
  readonly oversizedFrames: number
}

/** Per-request options. */
export interface RequestOptions {
  readonly timeoutMs?: number
}

/** Failure of one JSON-RPC request before classification. */
export type JsonRpcRequestError = DisconnectedError | RequestTimeoutError | RpcError

/** A live JSON-RPC connection. */
export interface JsonRpcConnection {
  readonly transport: TransportKind
  /** Sends a request and waits for its answer (or a timeout). Never retried. */
  readonly request: (
    method: string,
    params: unknown,
    options?: RequestOptions,
  ) => Effect.Effect<unknown, JsonRpcRequestError>
  /** Sends a notification. */
  readonly notify: (method: string, params?: unknown) => Effect.Effect<void, DisconnectedError>
  /** Answers a server→client request. */
  readonly respond: (id: RequestId, result: unknown) => Effect.Effect<void, DisconnectedError>
  /** Answers a server→client request with an error. */
  readonly respondError: (
    id: RequestId,
    code: number,
    message: string,
  ) => Effect.Effect<void, DisconnectedError>
  readonly stats: Effect.Effect<JsonRpcStats>
  /** Completes with the close reason once the link is gone. */
  readonly awaitClosed: Effect.Effect<string>
  readonly isClosed: Effect.Effect<boolean>
  /** Closes the link and fails pending requests; idempotent. */
  readonly close: Effect.Effect<void>
}

/** Options for `makeJsonRpcConnection`. */
export interface JsonRpcConnectionOptions<E> {
  readonly transport: TransportKind
  readonly openLink: OpenFrameLink<E>
  /**
   * Receives every notification and server→client request in wire order, with the Clock time it
   * was read. Runs on the reader fiber: it must not block (synchronous work and non-blocking sends only).
   */
  readonly onMessage: (message: IncomingMessage, receivedAtMs: number) => Effect.Effect<void>
  /** Called once, on the reader fiber, when the link closes. */
  readonly onClosed?: (reason: string) => Effect.Effect<void>
  /** Default request timeout (30 s). */
  readonly defaultTimeoutMs?: number
}

interface Pending {
  readonly method: string
  readonly deferred: Deferred.Deferred<unknown, RpcError | DisconnectedError>
}

type Inbound =
  | { readonly _tag: "Frame"; readonly text: string }
  | { readonly _tag: "Closed"; readonly reason: string }

const decodeEnvelope = Schema.decodeUnknownResult(WireEnvelope)
const decodeError = Schema.decodeUnknownResult(WireError)

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text) as unknown)
  } catch {
    return Option.none()
  }
}

/** Opens a link and runs the JSON-RPC core over it; closing the scope closes the connection. */
export const makeJsonRpcConnection = <E>(
  options: JsonRpcConnectionOptions<E>,
): Effect.Effect<JsonRpcConnection, E, Scope.Scope> =>
  Effect.gen(function* () {
    const transport = options.transport
    const defaultTimeoutMs = options.defaultTimeoutMs ?? 30_000
    const inbound = yield* Queue.unbounded<Inbound>()
    const closedReason = yield* Deferred.make<string>()
    const pending = new Map<RequestId, Pending>()
    const timedOut = new Set<RequestId>()
    let nextId = 1
    let closed = false
    let linkClosedReported = false
    const stats = {
      framesReceived: 0,
      nonJsonFrames: 0,
      undecodableFrames: 0,
      notifications: 0,
      serverRequests: 0,
      requestsSent: 0,
      unknownResponses: 0,
      lateResponses: 0,
      inboundHighWater: 0,
    }

    const sink: FrameSink = {
      frame: (text) => {
        Queue.offerUnsafe(inbound, { _tag: "Frame", text })
        const size = Queue.sizeUnsafe(inbound)
        if (size > stats.inboundHighWater) stats.inboundHighWater = size
      },
      closed: (reason) => {
        if (linkClosedReported) return
        linkClosedReported = true
        Queue.offerUnsafe(inbound, { _tag: "Closed", reason })
      },
    }

    const link = yield* options.openLink(sink)

    const failAllPending = (reason: string) => {
      for (const [id, entry] of pending) {
        pending.delete(id)
        Deferred.doneUnsafe(
          entry.deferred,
          Exit.fail(
            new DisconnectedError({
              transport,
              reason,
              method: entry.method,
              outcomeMayBeUnknown: true,
            }),
          ),
        )
      }
    }

    const handleResponse = (id: RequestId, envelope: typeof WireEnvelope.Type) => {
      const entry = pending.get(id)
      if (entry === undefined) {
        if (timedOut.delete(id)) stats.lateResponses++
        else stats.unknownResponses++
        return
      }
      pending.delete(id)
      if (envelope.error !== undefined) {
        const decoded = decodeError(envelope.error)
        const error = Result.isSuccess(decoded)
          ? new RpcError({
              method: entry.method,
              code: decoded.success.code,
              detail: decoded.success.message,
              ...("data" in decoded.success ? { data: decoded.success.data } : {}),
            })
          : new RpcError({
              method: entry.method,
              code: -32603,
              detail: `malformed error member: ${JSON.stringify(envelope.error)}`,
            })
        Deferred.doneUnsafe(entry.deferred, Exit.fail(error))
      } else {
        Deferred.doneUnsafe(entry.deferred, Exit.succeed(envelope.result ?? null))
      }
    }

    const handleFrame = (text: string, receivedAtMs: number): Effect.Effect<void> => {
      stats.framesReceived++
      const json = parseJson(text)
      if (Option.isNone(json)) {
        stats.nonJsonFrames++
        return Effect.void
      }
      const decoded = decodeEnvelope(json.value)
      if (Result.isFailure(decoded)) {
        stats.undecodableFrames++
        return Effect.void
      }
      const envelope = decoded.success
      const id = envelope.id
      if (envelope.method !== undefined) {
        if (id === undefined || id === null) {
          stats.notifications++
          return options.onMessage(
            { _tag: "Notification", method: envelope.method, params: envelope.params },
            receivedAtMs,
          )
        }
        stats.serverRequests++
        return options.onMessage(
          { _tag: "ServerRequest", id, method: envelope.method, params: envelope.params },
          receivedAtMs,
        )
      }
      if (id !== undefined && id !== null && ("result" in envelope || "error" in envelope)) {
        handleResponse(id, envelope)
        return Effect.void
      }
      stats.undecodableFrames++
      return Effect.void
    }

    const shutdown = (reason: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (closed) return Effect.void
        closed = true
        failAllPending(reason)
        // The owner's bookkeeping (state marked closed, streams ended) is done before awaitClosed.
        return Effect.ensuring(
          options.onClosed?.(reason) ?? Effect.void,
          Effect.sync(() => Deferred.doneUnsafe(closedReason, Exit.succeed(reason))),
        )
      })

    const reader = Effect.gen(function* () {
      while (true) {
        const batch = yield* Queue.takeAll(inbound)
        const now = yield* Clock.currentTimeMillis
        for (const item of batch) {
          if (item._tag === "Closed") {
            yield* shutdown(item.reason)
            return
          }
          yield* handleFrame(item.text, now)
        }
      }
    })
    yield* Effect.forkScoped(reader)

    const write = (message: Record<string, unknown>, method: string | undefined) =>
      Effect.suspend(() =>
        closed
          ? Effect.fail(
              new DisconnectedError({
                transport,
                reason: "connection already closed",
                outcomeMayBeUnknown: false,
                ...(method === undefined ? {} : { method }),
              }),
            )
          : link.send(JSON.stringify(message)),
      )

    const request = (
      method: string,
      params: unknown,
      requestOptions?: RequestOptions,
    ): Effect.Effect<unknown, JsonRpcRequestError> =>
      Effect.suspend(() => {
        const id = nextId++
        const deferred = Deferred.makeUnsafe<unknown, RpcError | DisconnectedError>()
        const timeoutMs = requestOptions?.timeoutMs ?? defaultTimeoutMs
        pending.set(id, { method, deferred })
        const message: Record<string, unknown> =
          params === undefined ? { id, method } : { id, method, params }
        return write(message, method).pipe(
          Effect.mapError(
            (e) =>
              new DisconnectedError({
                transport,
                reason: e.reason,
                method,
                outcomeMayBeUnknown: false,
              }),
          ),
          Effect.tap(() => Effect.sync(() => stats.requestsSent++)),
          Effect.andThen(Effect.timeoutOption(Deferred.await(deferred), timeoutMs)),
          Effect.flatMap((answer) => {
            if (Option.isSome(answer)) return Effect.succeed(answer.value)
            pending.delete(id)
            timedOut.add(id)
            return Effect.fail(
              new RequestTimeoutError({ method, timeoutMs, outcomeMayBeUnknown: true }),
            )
          }),
          Effect.ensuring(Effect.sync(() => pending.delete(id))),
        )
      })

    const close = Effect.suspend(() => (closed ? Effect.void : link.close)).pipe(
      Effect.andThen(Effect.suspend(() => (closed ? Effect.void : shutdown("closed by Baton")))),
    )
    yield* Effect.addFinalizer(() => close)

    return {
      transport,
      request,
      notify: (method, params) =>
        write(params === undefined ? { method } : { method, params }, method),
      respond: (id, result) => write({ id, result }, undefined),
      respondError: (id, code, message) => write({ id, error: { code, message } }, undefined),
      stats: Effect.sync(() => ({ ...stats, oversizedFrames: link.oversizedFrames?.() ?? 0 })),
      awaitClosed: Deferred.await(closedReason),
      isClosed: Effect.sync(() => closed),
      close,
    } satisfies JsonRpcConnection
  })

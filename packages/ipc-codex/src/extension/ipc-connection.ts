/**
 * One initialized connection to the extension's IPC router: framing, envelope decoding,
 * request/response correlation, broadcasts and the `initialize` handshake.
 * Guarantees:
 * - every frame is decoded with the envelope schemas before use; undecodable frames and
 *   envelopes are reported as diagnostics and skipped, never thrown;
 * - each request gets a fresh id and at most one outcome: the first response, a timeout on
 *   the injected Clock, or the disconnect; duplicate and unknown responses are reported and
 *   ignored; a late response after a timeout is an unknown response;
 * - every `client-discovery-request` is answered at once with `canHandle: false`;
 * - a fatal framing fault (zero length, over the cap) or the socket's end closes the
 *   connection, fails every pending request with the same {@link IpcDisconnectedError}, and
 *   emits exactly one `Closed` event;
 * - the connection never resends anything.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type { Scope } from "effect"
import {
  decodeIncomingEnvelope,
  INITIALIZING_CLIENT_ID,
  IpcInitializeResult,
  LOCAL_HOST_ID,
} from "./envelope.js"
import type { BroadcastEnvelope, ResponseEnvelope } from "./envelope.js"
import {
  IpcDisconnectedError,
  IpcHandshakeError,
  IpcRequestTimeoutError,
  IpcRouterError,
  NoClientFoundError,
} from "./errors.js"
import type { FrameEncodeError, FrameTooLargeError, IpcRequestError } from "./errors.js"
import { encodeFrame, FrameDecoder } from "./frame-codec.js"
import type { ExtensionMethodVersions } from "./method-versions.js"
import type { IpcSocket } from "./socket-connector.js"

/** Kinds of non-fatal oddities seen on a connection (metadata only). */
export type IpcDiagnosticKind =
  | "invalid-json"
  | "invalid-envelope"
  | "unknown-response"
  | "duplicate-response"
  | "unexpected-request"

/** What a connection reports to its owner, in arrival order. */
export type IpcConnectionEvent =
  | { readonly _tag: "Broadcast"; readonly envelope: BroadcastEnvelope }
  | { readonly _tag: "Diagnostic"; readonly kind: IpcDiagnosticKind; readonly detail: string }
  | { readonly _tag: "Closed"; readonly error: IpcDisconnectedError }

/** Settings of one connection. */
export interface IpcConnectionSettings {
  readonly clientType: string
  readonly versions: ExtensionMethodVersions
  readonly maxFrameBytes: number
  /** How long Baton waits for a response (Rekall: 15 s). */
  readonly requestTimeoutMs: number
  /** The `timeoutMs` put in request envelopes for the router (Rekall: 10 s). */
  readonly routerTimeoutMs: number
  readonly newRequestId: () => string
}

/** Per-request options. */
export interface IpcRequestOptions {
  readonly version: number
  /** Targeted (owner) request: adds envelope `targetClientId` and `hostId: "local"`. */
  readonly targetClientId?: string | undefined
  readonly timeoutMs?: number | undefined
  /** A write: a missing reply means its outcome is unknown. */
  readonly isWrite?: boolean | undefined
  /** Use this request id instead of a fresh one (it must be unique on the connection). */
  readonly requestId?: string | undefined
}

/** A successful response's payload. */
export interface IpcSuccessResponse {
  readonly requestId: string
  readonly result: unknown
  readonly handledByClientId: string | undefined
}

/** One initialized connection. */
export interface IpcConnection {
  readonly clientId: string
  /** Sends a request and waits for its response (see the module guarantees). */
  readonly request: (
    method: string,
    params: unknown,
    options: IpcRequestOptions,
  ) => Effect.Effect<IpcSuccessResponse, IpcRequestError>
  /** Sends a broadcast. */
  readonly broadcast: (
    method: string,
    params: unknown,
    options: { readonly version: number; readonly targetClientIds?: ReadonlyArray<string> },
  ) => Effect.Effect<void, IpcDisconnectedError | FrameTooLargeError | FrameEncodeError>
  /** True once the connection has ended. */
  readonly isClosed: () => boolean
  /** Completes with the reason once the connection ends. */
  readonly closed: Effect.Effect<IpcDisconnectedError>
  /** Closes the connection (pending requests fail with `closed-by-client`). */
  readonly close: Effect.Effect<void>
}

const RECENT_RESPONSE_IDS = 256

const errorText = (error: unknown): string => {
  if (typeof error === "string") return error
  if (error === undefined) return "unknown-error"
  const text = JSON.stringify(error) ?? "unknown-error"
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

const RETRYABLE_ROUTER_ERROR = /timeout|timed out|busy|overload|unavailable|too many/i

/** Maps an error response to a tagged error. */
export const classifyErrorResponse = (
  method: string,
  targetClientId: string | undefined,
  response: ResponseEnvelope,
): NoClientFoundError | IpcRouterError => {
  const text = errorText(response.error)
  if (text === "no-client-found") return new NoClientFoundError({ method, targetClientId })
  return new IpcRouterError({ method, error: text, retryable: RETRYABLE_ROUTER_ERROR.test(text) })
}

/**
 * Starts reading `socket`, performs `initialize`, and returns the connection. Events go to
 * `events`. The reader stops and the socket closes when the scope closes.
 */
export const openIpcConnection = (
  socket: IpcSocket,
  events: Queue.Enqueue<IpcConnectionEvent>,
  settings: IpcConnectionSettings,
): Effect.Effect<IpcConnection, IpcHandshakeError | IpcRequestError, Scope.Scope> =>
  Effect.gen(function* () {
    const pending = new Map<string, Deferred.Deferred<ResponseEnvelope, IpcDisconnectedError>>()
    const recentlyAnswered: Array<string> = []
    const closedWith = yield* Deferred.make<IpcDisconnectedError>()
    let closedError: IpcDisconnectedError | undefined
    let sourceClientId = INITIALIZING_CLIENT_ID
    const decoder = new FrameDecoder(settings.maxFrameBytes)

    const emit = (event: IpcConnectionEvent): void => {
      Queue.offerUnsafe(events, event)
    }

    const finish = (error: IpcDisconnectedError): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (closedError !== undefined) return
        closedError = error
        for (const deferred of pending.values()) yield* Deferred.fail(deferred, error)
        pending.clear()
        yield* Deferred.succeed(closedWith, error)
        emit({ _tag: "Closed", error })
        yield* socket.close
      })

    const write = (
      message: unknown,
    ): Effect.Effect<void, IpcDisconnectedError | FrameTooLargeError | FrameEncodeError> =>
      Effect.gen(function* () {
        if (closedError !== undefined) return yield* closedError
        const frame = encodeFrame(message, settings.maxFrameBytes)
        if (frame._tag === "Failure") return yield* frame.failure
        yield* socket.write(frame.success)
      })

    const rememberAnswered = (requestId: string): void => {
      recentlyAnswered.push(requestId)
      if (recentlyAnswered.length > RECENT_RESPONSE_IDS) recentlyAnswered.shift()
    }

    const dispatch = (message: unknown): Effect.Effect<void> =>
      Effect.gen(function* () {
        const decoded = decodeIncomingEnvelope(message)
        if (decoded._tag === "Failure") {
          emit({
            _tag: "Diagnostic",
            kind: "invalid-envelope",
            detail: decoded.failure.message.replace(/\s+/g, " "),
          })
          return
        }
        const envelope = decoded.success
        switch (envelope.type) {
          case "response": {
            const deferred = pending.get(envelope.requestId)
            if (deferred === undefined) {
              const kind = recentlyAnswered.includes(envelope.requestId)
                ? "duplicate-response"
                : "unknown-response"
              emit({
                _tag: "Diagnostic",
                kind,
                detail: `response ${envelope.requestId} (${envelope.method ?? "?"})`,
              })
              return
            }
            pending.delete(envelope.requestId)
            rememberAnswered(envelope.requestId)
            yield* Deferred.succeed(deferred, envelope)
            return
          }
          case "broadcast":
            emit({ _tag: "Broadcast", envelope })
            return
          case "client-discovery-request":
            yield* write({
              type: "client-discovery-response",
              requestId: envelope.requestId,
              response: { canHandle: false },
            }).pipe(Effect.ignore)
            return
          case "request":
            emit({
              _tag: "Diagnostic",
              kind: "unexpected-request",
              detail: `request ${envelope.method}`,
            })
            return
          case "client-discovery-response":
            emit({
              _tag: "Diagnostic",
              kind: "unexpected-request",
              detail: "client-discovery-response",
            })
            return
        }
      })

    const reader = Effect.gen(function* () {
      for (;;) {
        const chunk = yield* Queue.take(socket.chunks)
        const step = decoder.push(chunk)
        for (const skipped of step.skipped)
          emit({ _tag: "Diagnostic", kind: "invalid-json", detail: skipped.message })
        for (const message of step.messages) yield* dispatch(message)
        if (step.fatal !== undefined) {
          const reason = step.fatal._tag === "FrameEmptyError" ? "frame-empty" : "frame-too-large"
          return yield* new IpcDisconnectedError({ reason, detail: step.fatal.message })
        }
      }
    }).pipe(Effect.catch((error: IpcDisconnectedError) => finish(error)))

    yield* Effect.forkScoped(reader)
    yield* Effect.addFinalizer(() =>
      finish(
        new IpcDisconnectedError({ reason: "closed-by-client", detail: "connection scope closed" }),
      ),
    )

    const request = (
      method: string,
      params: unknown,
      options: IpcRequestOptions,
    ): Effect.Effect<IpcSuccessResponse, IpcRequestError> =>
      Effect.gen(function* () {
        if (closedError !== undefined) return yield* closedError
        const requestId = options.requestId ?? settings.newRequestId()
        const timeoutMs = options.timeoutMs ?? settings.requestTimeoutMs
        const envelope = {
          type: "request",
          requestId,
          sourceClientId,
          method,
          params,
          version: options.version,
          timeoutMs: settings.routerTimeoutMs,
          ...(options.targetClientId === undefined
            ? {}
            : { targetClientId: options.targetClientId, hostId: LOCAL_HOST_ID }),
        }
        const deferred = yield* Deferred.make<ResponseEnvelope, IpcDisconnectedError>()
        pending.set(requestId, deferred)
        const response = yield* write(envelope).pipe(
          Effect.andThen(Deferred.await(deferred)),
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () =>
              Effect.fail(
                new IpcRequestTimeoutError({
                  method,
                  requestId,
                  timeoutMs,
                  outcomeMayBeUnknown: options.isWrite === true,
                }),
              ),
          }),
          Effect.ensuring(
            Effect.sync(() => {
              pending.delete(requestId)
            }),
          ),
        )
        if (response.resultType === "error")
          return yield* classifyErrorResponse(method, options.targetClientId, response)
        return { requestId, result: response.result, handledByClientId: response.handledByClientId }
      })

    const initialized = yield* request(
      "initialize",
      { clientType: settings.clientType },
      {
        version: settings.versions.initialize,
      },
    ).pipe(
      Effect.flatMap((response) =>
        Schema.decodeUnknownEffect(IpcInitializeResult)(response.result).pipe(
          Effect.mapError(
            () => new IpcHandshakeError({ problem: "initialize returned no string clientId" }),
          ),
        ),
      ),
      Effect.catchTag("IpcRouterError", (error) =>
        Effect.fail(new IpcHandshakeError({ problem: error.message })),
      ),
      Effect.catchTag("NoClientFoundError", (error) =>
        Effect.fail(new IpcHandshakeError({ problem: error.message })),
      ),
    )
    sourceClientId = initialized.clientId

    return {
      clientId: initialized.clientId,
      request,
      broadcast: (method, params, options) =>
        write({
          type: "broadcast",
          method,
          params,
          sourceClientId,
          version: options.version,
          ...(options.targetClientIds === undefined
            ? {}
            : { targetClientIds: options.targetClientIds }),
        }),
      isClosed: () => closedError !== undefined,
      closed: Deferred.await(closedWith),
      close: finish(
        new IpcDisconnectedError({ reason: "closed-by-client", detail: "closed by Baton" }),
      ),
    }
  })

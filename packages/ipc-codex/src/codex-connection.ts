/**
 * `CodexConnection`: one initialised app-server connection with typed operations and typed,
 * continuously reduced thread state. Built on the JSON-RPC core, so every transport (daemon,
 * stdio, in-memory, later the extension) behaves the same above the wire.
 *
 * Guarantees: `turn/start` sends only `threadId` and the text input (no overrides, so the thread's
 * settings are inherited); requests are never retried; results are decoded and a shape change is a
 * `ProtocolMismatchError`; server→client requests are never approved (see server-request-policy).
 * Thread state is reduced on the reader fiber as frames arrive, so it is current even when a
 * stream subscriber lags.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { Scope } from "effect"
import type { CodexEvent, UnstampedCodexEvent } from "./codex-event.js"
import { decodeNotification, decodeServerRequest, threadIdOf } from "./codex-event.js"
import type { CodexRequestError, TransportKind } from "./errors.js"
import { DisconnectedError, ProtocolMismatchError } from "./errors.js"
import type {
  ThreadReadParams,
  TurnInterruptParams,
  TurnStartParams,
  ThreadCompactStartParams,
} from "./generated/ts/v2/index.js"
import type { FanOut } from "./fan-out.js"
import { makeFanOut } from "./fan-out.js"
import type { IncomingMessage, JsonRpcStats, OpenFrameLink } from "./json-rpc-connection.js"
import { makeJsonRpcConnection } from "./json-rpc-connection.js"
import type { InitializeResult, ThreadSummary } from "./protocol-schema.js"
import { InitializeResultSchema, ResultSchemas } from "./protocol-schema.js"
import type { RateLimitsRead, RateLimitsState } from "./rate-limits.js"
import { applyRateLimitsRead, applyRateLimitsUpdate } from "./rate-limits.js"
import { classifyRpcError } from "./rpc-error-classification.js"
import type { ServerRequestPolicy } from "./server-request-policy.js"
import { declineAnswer } from "./server-request-policy.js"
import type { ThreadState } from "./thread-state.js"
import {
  applyEvent,
  emptyThreadState,
  recordCompactionRequest,
  seedStatus,
  settleCompactionRequest,
  withRateLimits,
} from "./thread-state.js"

/** What the server said about itself in `initialize`. */
export interface ServerInfo {
  readonly userAgent: string
  /** Server version parsed from `userAgent` (`<client>/<version> (…)`), or null. */
  readonly version: string | null
  readonly codexHome: string | null
  readonly platformFamily: string | null
  readonly platformOs: string | null
}

/** `thread/compact/start` was accepted (`{}`); completion arrives later as thread state. */
export interface CompactionRequested {
  readonly threadId: string
  readonly requestedAtMs: number
  /** State revision recorded just before sending: the compaction turn starts after it. */
  readonly requestRevision: number
}

/** `turn/start` was accepted. */
export interface TurnStarted {
  readonly threadId: string
  readonly turnId: string
}

/** `thread/unsubscribe` outcome. */
export type UnsubscribeStatus = "unsubscribed" | "notSubscribed" | "notLoaded"

/** `account/rateLimits/read` result and the merged state it produced. */
export interface RateLimitsReadResult extends RateLimitsRead {
  readonly state: RateLimitsState
}

/** `account/read` result (only what Baton needs; the account id is never exposed). */
export interface AccountInfo {
  readonly account: {
    readonly type: string
    readonly email: string | null
    readonly planType: string | null
  } | null
  readonly requiresOpenaiAuth: boolean | null
}

/** Filters for `thread/list`; all optional. */
export interface ThreadListQuery {
  readonly cursor?: string
  readonly limit?: number
  readonly sourceKinds?: ReadonlyArray<string>
  readonly cwd?: string
  readonly searchTerm?: string
  readonly archived?: boolean
}

/** One page of `thread/list`. */
export interface ThreadPage {
  readonly threads: ReadonlyArray<ThreadSummary>
  readonly nextCursor: string | null
}

/** Diagnostic counters of one connection. */
export interface ConnectionStats extends JsonRpcStats {
  /** Stream values dropped because a subscriber lagged (state is never lost: it is reduced eagerly). */
  readonly droppedStreamValues: number
  readonly trackedThreads: number
}

/** A live, initialised app-server connection. */
export interface CodexConnection {
  readonly transport: TransportKind
  readonly server: ServerInfo
  /** The current state of a thread (empty if nothing was heard about it). */
  readonly threadState: (threadId: string) => Effect.Effect<ThreadState>
  /** The thread's state now, then after every change; fails with `DisconnectedError` when the connection ends. */
  readonly observeThread: (threadId: string) => Stream.Stream<ThreadState, DisconnectedError>
  /** Every decoded event from now on; fails with `DisconnectedError` when the connection ends. */
  readonly events: Stream.Stream<CodexEvent, DisconnectedError>
  /** `thread/resume` (no overrides, `excludeTurns`): loads the thread here or subscribes to it. */
  readonly resumeThread: (threadId: string) => Effect.Effect<ThreadSummary, CodexRequestError>
  /** `thread/read {threadId}` (no turns): the stored thread, without loading or subscribing. */
  readonly readThread: (threadId: string) => Effect.Effect<ThreadSummary, CodexRequestError>
  /** `thread/unsubscribe`. */
  readonly unsubscribeThread: (
    threadId: string,
  ) => Effect.Effect<UnsubscribeStatus, CodexRequestError>
  /** `thread/compact/start {threadId}`; answers at once, before the compaction runs. */
  readonly compactThread: (
    threadId: string,
  ) => Effect.Effect<CompactionRequested, CodexRequestError>
  /** `turn/start` with one text input and no overrides (inherits the thread's settings). */
  readonly startTurn: (
    threadId: string,
    text: string,
  ) => Effect.Effect<TurnStarted, CodexRequestError>
  /** `turn/interrupt`. */
  readonly interruptTurn: (
    threadId: string,
    turnId: string,
  ) => Effect.Effect<void, CodexRequestError>
  /** `account/rateLimits/read` (no model turn is spent); also resets the merged rate-limit state. */
  readonly readRateLimits: Effect.Effect<RateLimitsReadResult, CodexRequestError>
  /** `account/read`. */
  readonly readAccount: Effect.Effect<AccountInfo, CodexRequestError>
  /** One page of `thread/list`. */
  readonly listThreads: (query?: ThreadListQuery) => Effect.Effect<ThreadPage, CodexRequestError>
  /** Every id in `thread/loaded/list` (all pages). */
  readonly listLoadedThreads: Effect.Effect<ReadonlyArray<string>, CodexRequestError>
  /** The merged rate-limit view (last read plus sparse updates), if any. */
  readonly rateLimits: Effect.Effect<RateLimitsState | null>
  readonly stats: Effect.Effect<ConnectionStats>
  /** Completes with the reason once the connection is gone. */
  readonly awaitClosed: Effect.Effect<string>
  /** Closes the connection; idempotent. Scope closing does the same. */
  readonly close: Effect.Effect<void>
}

/** Options for `makeCodexConnection`. */
export interface CodexConnectionOptions<E> {
  readonly transport: TransportKind
  readonly openLink: OpenFrameLink<E>
  /** What to do with server→client requests (see server-request-policy). */
  readonly serverRequests: ServerRequestPolicy
  /** `clientInfo.version` sent in `initialize`. */
  readonly clientVersion?: string
  /** Default per-request timeout (30 s). */
  readonly requestTimeoutMs?: number
  /** Timeout for the `initialize` answer (15 s). */
  readonly initializeTimeoutMs?: number
  /** Values buffered per stream subscriber before the oldest are dropped (256). */
  readonly subscriberBuffer?: number
  /** Notification methods the server should not send on this connection (defaults: streaming deltas). */
  readonly optOutNotificationMethods?: ReadonlyArray<string>
}

/** Streaming-delta notifications Baton never reads; opting out keeps the socket quiet. */
export const DEFAULT_OPT_OUT_NOTIFICATIONS: ReadonlyArray<string> = [
  "item/agentMessage/delta",
  "item/plan/delta",
  "item/reasoning/summaryTextDelta",
  "item/reasoning/summaryPartAdded",
  "item/reasoning/textDelta",
  "item/commandExecution/outputDelta",
  "item/fileChange/outputDelta",
  "command/exec/outputDelta",
  "process/outputDelta",
]

/** The `clientInfo.name` Baton announces (used by Codex in compliance logs). */
export const CLIENT_NAME = "baton"

const MAX_TRACKED_THREADS = 512
const MAX_LOADED_LIST_PAGES = 100

const parseServerVersion = (userAgent: string): string | null =>
  /^[^/\s]+\/(\d+\.\d+\.\d+[^\s]*)/.exec(userAgent)?.[1] ?? null

/** Opens a link, performs `initialize` / `initialized`, and returns the connection (scoped). */
export const makeCodexConnection = <E>(
  options: CodexConnectionOptions<E>,
): Effect.Effect<CodexConnection, E | CodexRequestError, Scope.Scope> =>
  Effect.gen(function* () {
    const transport = options.transport
    const bufferSize = options.subscriberBuffer ?? 256
    const states = new Map<string, ThreadState>()
    const threadHubs = new Map<string, FanOut<ThreadState, DisconnectedError>>()
    const events = makeFanOut<CodexEvent, DisconnectedError>(bufferSize)
    let rateLimits: RateLimitsState | null = null
    let closedError: DisconnectedError | null = null
    let droppedFromClosedHubs = 0

    const hubFor = (threadId: string) => {
      const existing = threadHubs.get(threadId)
      if (existing !== undefined) return existing
      const hub = makeFanOut<ThreadState, DisconnectedError>(bufferSize)
      if (closedError !== null) hub.end(closedError)
      threadHubs.set(threadId, hub)
      return hub
    }

    const evictIfFull = () => {
      if (states.size < MAX_TRACKED_THREADS) return
      for (const threadId of states.keys()) {
        const hub = threadHubs.get(threadId)
        if (hub === undefined || hub.subscriberCount() === 0) {
          states.delete(threadId)
          if (hub !== undefined) {
            droppedFromClosedHubs += hub.dropped()
            threadHubs.delete(threadId)
          }
          return
        }
      }
    }

    const stateOf = (threadId: string): ThreadState =>
      states.get(threadId) ??
      (closedError === null
        ? emptyThreadState(threadId, rateLimits)
        : { ...emptyThreadState(threadId, rateLimits), closed: true })

    const store = (next: ThreadState) => {
      const previous = states.get(next.threadId)
      if (previous === next) return
      if (previous === undefined) evictIfFull()
      states.set(next.threadId, next)
      threadHubs.get(next.threadId)?.publish(next)
    }

    const applyToState = (event: CodexEvent) => {
      if (event._tag === "RateLimitsUpdated") {
        rateLimits = applyRateLimitsUpdate(rateLimits, event.rateLimits, event.receivedAtMs)
        for (const state of states.values())
          store(withRateLimits(state, rateLimits, event.receivedAtMs))
        return
      }
      const threadId = threadIdOf(event)
      if (threadId === null) return
      store(applyEvent(stateOf(threadId), event))
    }

    const stamp = (event: UnstampedCodexEvent, receivedAtMs: number) =>
      ({ ...event, receivedAtMs }) as CodexEvent

    let respond: ((id: string | number, method: string) => Effect.Effect<void>) | null = null

    const onMessage = (message: IncomingMessage, receivedAtMs: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (message._tag === "Notification") {
          const event = stamp(decodeNotification(message.method, message.params), receivedAtMs)
          applyToState(event)
          events.publish(event)
          return Effect.void
        }
        const handling = options.serverRequests === "decline" ? "declined" : "left-pending"
        const event = stamp(
          decodeServerRequest(message.id, message.method, message.params, handling),
          receivedAtMs,
        )
        applyToState(event)
        events.publish(event)
        return handling === "declined" && respond !== null
          ? respond(message.id, message.method)
          : Effect.void
      })

    const onClosed = (reason: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) =>
        Effect.sync(() => {
          // The last known state stays, marked closed: nothing will update it any more.
          for (const state of states.values())
            if (!state.closed)
              store({ ...state, closed: true, revision: state.revision + 1, updatedAtMs: at })
          closedError = new DisconnectedError({ transport, reason, outcomeMayBeUnknown: false })
          events.end(closedError)
          for (const hub of threadHubs.values()) hub.end(closedError)
        }),
      )

    const rpc = yield* makeJsonRpcConnection({
      transport,
      openLink: options.openLink,
      onMessage,
      onClosed,
      ...(options.requestTimeoutMs === undefined
        ? {}
        : { defaultTimeoutMs: options.requestTimeoutMs }),
    })

    respond = (id, method) => {
      const answer = declineAnswer(method)
      const send =
        answer._tag === "Result"
          ? rpc.respond(id, answer.result)
          : rpc.respondError(id, answer.code, answer.message)
      return Effect.ignore(send)
    }

    const versionRef: { current: string | undefined } = { current: undefined }

    const call = <S extends Schema.Decoder<unknown>>(
      method: string,
      params: unknown,
      schema: S,
      context: { readonly threadId?: string; readonly timeoutMs?: number } = {},
    ): Effect.Effect<S["Type"], CodexRequestError> =>
      rpc
        .request(
          method,
          params,
          context.timeoutMs === undefined ? {} : { timeoutMs: context.timeoutMs },
        )
        .pipe(
          Effect.mapError((error) =>
            error._tag === "RpcError"
              ? classifyRpcError(error, {
                  ...(context.threadId === undefined ? {} : { threadId: context.threadId }),
                  ...(versionRef.current === undefined
                    ? {}
                    : { serverVersion: versionRef.current }),
                })
              : error,
          ),
          Effect.flatMap((raw) => {
            const decoded = Schema.decodeUnknownResult(schema)(raw)
            return Result.isSuccess(decoded)
              ? Effect.succeed(decoded.success)
              : Effect.fail(
                  new ProtocolMismatchError({
                    method,
                    expected: `the ${method} result shape Baton was built against`,
                    seen: `${decoded.failure.message} in ${JSON.stringify(raw).slice(0, 300)}`,
                    ...(versionRef.current === undefined
                      ? {}
                      : { serverVersion: versionRef.current }),
                  }),
                )
          }),
        )

    const initialized = yield* call(
      "initialize",
      {
        clientInfo: {
          name: CLIENT_NAME,
          title: "Baton",
          version: options.clientVersion ?? "0.0.0",
        },
        capabilities: {
          experimentalApi: false,
          requestAttestation: false,
          optOutNotificationMethods:
            options.optOutNotificationMethods ?? DEFAULT_OPT_OUT_NOTIFICATIONS,
        },
      },
      InitializeResultSchema,
      { timeoutMs: options.initializeTimeoutMs ?? 15_000 },
    )
    const server = toServerInfo(initialized)
    versionRef.current = server.version ?? undefined
    yield* rpc.notify("initialized")

    const now = Clock.currentTimeMillis

    const resumeThread = (threadId: string) =>
      Effect.gen(function* () {
        const changesBefore = stateOf(threadId).statusChanges
        const result = yield* call(
          "thread/resume",
          { threadId, excludeTurns: true },
          ResultSchemas["thread/resume"],
          { threadId },
        )
        const at = yield* now
        const current = stateOf(threadId)
        // A status notification that arrived meanwhile is fresher than the answer's snapshot.
        if (result.thread.status !== undefined && current.statusChanges === changesBefore) {
          store(seedStatus(current, result.thread.status, at))
        } else if (!states.has(threadId)) {
          store({ ...current, updatedAtMs: at })
        }
        return result.thread
      })

    const compactThread = (threadId: string) =>
      Effect.gen(function* () {
        const requestedAtMs = yield* now
        const recorded = recordCompactionRequest(stateOf(threadId), requestedAtMs)
        store(recorded)
        const requestRevision = recorded.revision
        const params = { threadId } satisfies ThreadCompactStartParams
        yield* call("thread/compact/start", params, ResultSchemas["thread/compact/start"], {
          threadId,
        }).pipe(
          Effect.tapError((error) =>
            Effect.sync(() => {
              // Only a definite refusal settles the request; a timeout or disconnect leaves it unknown.
              if (error._tag !== "RequestTimeoutError" && error._tag !== "DisconnectedError") {
                store(settleCompactionRequest(stateOf(threadId), requestRevision, "rejected"))
              }
            }),
          ),
        )
        store(settleCompactionRequest(stateOf(threadId), requestRevision, "accepted"))
        return { threadId, requestedAtMs, requestRevision }
      })

    const startTurn = (threadId: string, text: string) => {
      const params = {
        threadId,
        input: [{ type: "text", text, text_elements: [] }],
      } satisfies TurnStartParams
      return call("turn/start", params, ResultSchemas["turn/start"], { threadId }).pipe(
        Effect.map((result): TurnStarted => ({ threadId, turnId: result.turn.id })),
      )
    }

    const interruptTurn = (threadId: string, turnId: string) => {
      const params = { threadId, turnId } satisfies TurnInterruptParams
      return Effect.asVoid(
        call("turn/interrupt", params, ResultSchemas["turn/interrupt"], { threadId }),
      )
    }

    const readRateLimits = Effect.gen(function* () {
      const result = yield* call(
        "account/rateLimits/read",
        undefined,
        ResultSchemas["account/rateLimits/read"],
      )
      const read: RateLimitsRead = {
        // Older servers lack the member: unknown, never "allowed".
        ordinaryUsageAllowed: result.ordinaryUsageAllowed ?? null,
        rateLimits: result.rateLimits,
        rateLimitsByLimitId: result.rateLimitsByLimitId ?? null,
      }
      const at = yield* now
      rateLimits = applyRateLimitsRead(read, at)
      const state = rateLimits
      for (const threadState of states.values()) store(withRateLimits(threadState, state, at))
      return { ...read, state }
    })

    const readAccount = call("account/read", {}, ResultSchemas["account/read"]).pipe(
      Effect.map((result): AccountInfo => ({
        account:
          result.account === undefined || result.account === null
            ? null
            : {
                type: result.account.type,
                email: result.account.email ?? null,
                planType: result.account.planType ?? null,
              },
        requiresOpenaiAuth: result.requiresOpenaiAuth ?? null,
      })),
    )

    const listThreads = (query: ThreadListQuery = {}) =>
      call("thread/list", { ...query }, ResultSchemas["thread/list"]).pipe(
        Effect.map((result): ThreadPage => ({
          threads: result.data,
          nextCursor: result.nextCursor ?? null,
        })),
      )

    const listLoadedThreads = Effect.gen(function* () {
      const ids: Array<string> = []
      let cursor: string | null = null
      for (let page = 0; page < MAX_LOADED_LIST_PAGES; page++) {
        const params: Record<string, unknown> = cursor === null ? {} : { cursor }
        const result = yield* call(
          "thread/loaded/list",
          params,
          ResultSchemas["thread/loaded/list"],
        )
        ids.push(...result.data)
        cursor = result.nextCursor ?? null
        if (cursor === null) break
      }
      return ids
    })

    const connection: CodexConnection = {
      transport,
      server,
      threadState: (threadId) => Effect.sync(() => stateOf(threadId)),
      observeThread: (threadId) =>
        Stream.unwrap(Effect.sync(() => hubFor(threadId).subscribe(() => [stateOf(threadId)]))),
      events: Stream.unwrap(Effect.sync(() => events.subscribe())),
      resumeThread,
      readThread: (threadId) =>
        call("thread/read", { threadId } satisfies ThreadReadParams, ResultSchemas["thread/read"], {
          threadId,
        }).pipe(Effect.map((result) => result.thread)),
      unsubscribeThread: (threadId) =>
        call("thread/unsubscribe", { threadId }, ResultSchemas["thread/unsubscribe"], {
          threadId,
        }).pipe(Effect.map((result) => result.status)),
      compactThread,
      startTurn,
      interruptTurn,
      readRateLimits,
      readAccount,
      listThreads,
      listLoadedThreads,
      rateLimits: Effect.sync(() => rateLimits),
      stats: Effect.map(rpc.stats, (stats) => {
        let dropped = events.dropped() + droppedFromClosedHubs
        for (const hub of threadHubs.values()) dropped += hub.dropped()
        return { ...stats, droppedStreamValues: dropped, trackedThreads: states.size }
      }),
      awaitClosed: rpc.awaitClosed,
      close: rpc.close,
    }
    return connection
  })

const toServerInfo = (result: InitializeResult): ServerInfo => ({
  userAgent: result.userAgent,
  version: parseServerVersion(result.userAgent),
  codexHome: result.codexHome ?? null,
  platformFamily: result.platformFamily ?? null,
  platformOs: result.platformOs ?? null,
})

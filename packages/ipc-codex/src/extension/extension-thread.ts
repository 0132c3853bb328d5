/**
 * A live session on one extension-owned thread: connect (with the endpoint trust checks on
 * every connect), initialize, discover the owner, follow its state stream, recover, and send
 * the owner writes (compact, start turn, interrupt turn). States: Connecting → Discovering →
 * Following → Live, with Recovering between connections and Closed as the only terminal state
 * (see README.md for the table).
 * Guarantees:
 * - the stream filter is exact (method, `sourceClientId` = owner, `hostId` = local,
 *   `conversationId`); a state broadcast from the owner at another version ends the session
 *   with {@link MethodVersionMismatchError} naming the version seen, instead of timing out;
 * - gaps, stray or failing patches drop the state and re-follow (state-stream.ts); a missing
 *   snapshot re-follows once, then counts as a recovery reason;
 * - disconnects, owner departure (`client-status-changed`), `ipc-connection-reset`, missing
 *   snapshots and vanished owners are recovered by reconnect/rediscovery with bounded,
 *   exponentially growing delays; every reason is recorded in `events`; untrusted endpoints,
 *   version mismatches and unsupported state layouts are terminal;
 * - writes are never resent after they may have been delivered: a timeout or disconnect after
 *   sending gives {@link WriteOutcomeUnknownError} (`outcomeMayBeUnknown: true`); only
 *   `no-client-found` (nothing delivered) is retried, after rediscovery, a bounded number of
 *   times; the same owner refusing twice is reported as a probable version mismatch;
 * - all waiting uses the Effect Clock (TestClock in tests); closing the scope unfollows (best
 *   effort) and closes the socket.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Result, Scope } from "effect"
import { randomUUID } from "node:crypto"
import type { ConversationView } from "./conversation-state.js"
import { resolveExtensionEndpoint, sameSocket } from "./endpoint.js"
import type { EndpointEnvironment, IpcFileSystem } from "./endpoint.js"
import {
  ClientStatusChangedParams,
  ConversationRef,
  LOCAL_HOST_ID,
  StreamStateChangedParams,
} from "./envelope.js"
import {
  EndpointReplacedError,
  IpcConnectError,
  IpcDisconnectedError,
  MethodVersionMismatchError,
  RecoveryExhaustedError,
  SnapshotTimeoutError,
  ThreadSessionClosedError,
  WriteNotReadyError,
  WriteOutcomeUnknownError,
  WriteRejectedError,
} from "./errors.js"
import type {
  EndpointError,
  IpcHandshakeError,
  IpcRequestError,
  OwnerNotFoundError,
  StateLayoutError,
  ThreadSessionFatalError,
  ThreadWriteError,
} from "./errors.js"
import { DEFAULT_MAX_FRAME_BYTES } from "./frame-codec.js"
import { openIpcConnection } from "./ipc-connection.js"
import type { IpcConnectionEvent, IpcConnection } from "./ipc-connection.js"
import { extensionMethodVersions } from "./method-versions.js"
import type { ExtensionMethodVersions } from "./method-versions.js"
import { DEFAULT_DISCOVERY_DELAYS_MS, discoverOwner } from "./owner-discovery.js"
import { IpcSocketConnector } from "./socket-connector.js"
import { AWAITING_SNAPSHOT, reduceStream } from "./state-stream.js"
import type { StreamPhase } from "./state-stream.js"
import {
  checkCompactAck,
  checkInterruptAck,
  checkStartTurnAck,
  compactThreadParams,
  interruptTurnParams,
  startTurnParams,
} from "./thread-writes.js"
import type { FollowUpTurnInput, InterruptedTurn, StartedTurn } from "./thread-writes.js"

/** Time budgets, in milliseconds (defaults: Rekall's). */
export interface ExtensionTimeouts {
  readonly connectMs: number
  readonly requestMs: number
  readonly routerTimeoutMs: number
  readonly snapshotMs: number
  /** How long a write waits for a connection with a known owner before giving up unsent. */
  readonly writeReadyMs: number
}

/** Default time budgets: connect 5 s, request 15 s (router 10 s), snapshot 12 s, write-ready 15 s. */
export const DEFAULT_EXTENSION_TIMEOUTS: ExtensionTimeouts = {
  connectMs: 5_000,
  requestMs: 15_000,
  routerTimeoutMs: 10_000,
  snapshotMs: 12_000,
  writeReadyMs: 15_000,
}

/** How recovery retries. */
export interface ExtensionRecoveryPolicy {
  /**
   * Consecutive recoveries without a connection that stayed Live for `stableLiveMs` before giving
   * up (`RecoveryExhaustedError`).
   */
  readonly maxConsecutiveAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** Follow broadcasts sent (initial + re-follows) before a missing snapshot is a recovery reason. */
  readonly snapshotFollowAttempts: number
  /**
   * How long a connection must stay Live to count as recovered (resetting the attempt count and
   * the backoff). A router that drops every connection soon after the snapshot thus exhausts the
   * attempts instead of reconnecting forever at the base delay.
   */
  readonly stableLiveMs: number
}

/**
 * Default recovery: 5 attempts, 250 ms doubling to at most 4 s, 2 follows per snapshot wait, a
 * connection counts as recovered after 10 s Live.
 */
export const DEFAULT_EXTENSION_RECOVERY: ExtensionRecoveryPolicy = {
  maxConsecutiveAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
  snapshotFollowAttempts: 2,
  stableLiveMs: 10_000,
}

/** The delay before recovery attempt `attempt` (1-based): exponential, capped. */
export const recoveryDelayMs = (attempt: number, policy: ExtensionRecoveryPolicy): number =>
  Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1))

/** Options of {@link openExtensionThread}. */
export interface ExtensionThreadOptions {
  readonly conversationId: string
  readonly environment: EndpointEnvironment
  /** `clientType` sent in `initialize` (default "baton"). */
  readonly clientType?: string | undefined
  readonly versionOverrides?: Partial<ExtensionMethodVersions> | undefined
  readonly timeouts?: Partial<ExtensionTimeouts> | undefined
  readonly recovery?: Partial<ExtensionRecoveryPolicy> | undefined
  readonly discoveryDelaysMs?: ReadonlyArray<number> | undefined
  readonly maxFrameBytes?: number | undefined
  readonly newRequestId?: (() => string) | undefined
}

/** Where the session stands. */
export type ExtensionSessionStatus =
  | { readonly _tag: "Connecting"; readonly attempt: number }
  | {
      readonly _tag: "Discovering"
      readonly clientId: string
      /** The next discovery attempt (1-based) and the delay before it. */
      readonly attempt: number
      readonly delayMs: number
    }
  | { readonly _tag: "Following"; readonly clientId: string; readonly ownerId: string }
  | {
      readonly _tag: "Live"
      readonly clientId: string
      readonly ownerId: string
      readonly revision: number
      readonly view: ConversationView
    }
  | {
      readonly _tag: "Recovering"
      readonly attempt: number
      readonly reason: string
      readonly delayMs: number
    }
  | { readonly _tag: "Closed"; readonly error: ThreadSessionFatalError }

/** The Live status. */
export type ExtensionLiveStatus = Extract<ExtensionSessionStatus, { readonly _tag: "Live" }>

/** Kinds of recorded session events. */
export type ExtensionSessionEventKind =
  | "connected"
  | "owner-discovered"
  | "owner-discovery-retry"
  | "owner-changed"
  | "owner-gone"
  | "follow-sent"
  | "unfollow-sent"
  | "snapshot"
  | "resnapshot"
  | "stream-ignored"
  | "diagnostic"
  | "recovering"
  | "closed"
  | "write-sent"
  | "write-retry"
  | "write-result"

/** One recorded event: metadata only (ids, methods, versions, revisions, reasons). */
export interface ExtensionSessionEvent {
  readonly atMs: number
  readonly kind: ExtensionSessionEventKind
  readonly detail: string
}

/** A compact acknowledgement (not completion). */
export interface ExtensionCompactAccepted {
  readonly requestId: string
  readonly ownerId: string
}

/** A started follow-up turn. */
export interface ExtensionTurnStarted extends StartedTurn {
  readonly requestId: string
  readonly ownerId: string
}

/** An interrupt acknowledgement (the owner's `interruptedTurnId`; completion arrives as state). */
export interface ExtensionTurnInterrupted extends InterruptedTurn {
  readonly requestId: string
  readonly ownerId: string
}

/** A live session on one thread. */
export interface ExtensionThread {
  readonly conversationId: string
  /** The current status. */
  readonly status: Effect.Effect<ExtensionSessionStatus>
  /** The current status, then every change. */
  readonly changes: Stream.Stream<ExtensionSessionStatus>
  /** Waits for Live (returns it) or Closed (fails with its error). */
  readonly awaitLive: Effect.Effect<ExtensionLiveStatus, ThreadSessionFatalError>
  /** Recorded events, oldest first (the last 500). */
  readonly events: Effect.Effect<ReadonlyArray<ExtensionSessionEvent>>
  /** Waits for a recorded event (past or future) matching `predicate`. */
  readonly awaitEvent: (
    predicate: (event: ExtensionSessionEvent) => boolean,
  ) => Effect.Effect<ExtensionSessionEvent>
  /** `thread-follower-compact-thread`; success is the acknowledgement, not completion. */
  readonly compact: Effect.Effect<ExtensionCompactAccepted, ThreadWriteError>
  /** `thread-follower-start-turn` inheriting thread settings. */
  readonly startTurn: (
    input: FollowUpTurnInput,
  ) => Effect.Effect<ExtensionTurnStarted, ThreadWriteError>
  /**
   * `thread-follower-interrupt-turn` (`mode: "user-stop"`, `expectedTurnId: turnId`); the same
   * write rules as compact and start turn (never resent once it may have been delivered).
   */
  readonly interruptTurn: (
    turnId: string,
  ) => Effect.Effect<ExtensionTurnInterrupted, ThreadWriteError>
  /** Unfollows (best effort), closes the connection and ends the session. */
  readonly close: Effect.Effect<void>
}

type ControlEvent = {
  readonly _tag: "OwnerChanged"
  readonly ownerId: string
  readonly detail: string
}
type LoopEvent = IpcConnectionEvent | ControlEvent

interface Route {
  readonly connection: IpcConnection
  readonly ownerId: string
  readonly events: Queue.Enqueue<LoopEvent>
}

type ConnectionEnd =
  | EndpointError
  | EndpointReplacedError
  | IpcConnectError
  | IpcHandshakeError
  | IpcRequestError
  | OwnerNotFoundError
  | SnapshotTimeoutError
  | MethodVersionMismatchError
  | StateLayoutError

const MAX_EVENTS = 500
/** Delays before write attempts 2, 3, 4 after `no-client-found` (third-party clients: 0/125/350 ms). */
const WRITE_RETRY_DELAYS_MS: ReadonlyArray<number> = [125, 350, 1_000]
const MAX_WRITE_ATTEMPTS = WRITE_RETRY_DELAYS_MS.length + 1
const SAME_OWNER_REFUSALS_FOR_MISMATCH = 2

const decodeRef = Schema.decodeUnknownResult(ConversationRef)
const decodeStream = Schema.decodeUnknownResult(StreamStateChangedParams)
const decodeClientStatus = Schema.decodeUnknownResult(ClientStatusChangedParams)

const UNTRUSTED_ENDPOINT: ReadonlySet<string> = new Set([
  "EndpointUnsupportedPlatformError",
  "EndpointConfigError",
  "EndpointSymlinkError",
  "EndpointOwnerError",
  "EndpointPermissionError",
  "EndpointKindError",
  "EndpointAccessError",
])

/** Whether a connection end is terminal, given how far the session has got before. */
const isFatal = (
  error: ConnectionEnd,
  progress: { readonly connected: boolean; readonly live: boolean },
): error is Extract<ConnectionEnd, ThreadSessionFatalError> => {
  if (UNTRUSTED_ENDPOINT.has(error._tag)) return true
  if (error._tag === "MethodVersionMismatchError" || error._tag === "StateLayoutError") return true
  if (error._tag === "EndpointMissingError" || error._tag === "IpcConnectError")
    return !progress.connected
  if (error._tag === "OwnerNotFoundError") return !progress.live
  return false
}

const versionInText = (text: string): number | undefined => {
  const match = /version\D{0,12}(\d+)/i.exec(text)
  return match?.[1] === undefined ? undefined : Number(match[1])
}

/**
 * Opens a session on `options.conversationId`. Returns at once; the session connects in the
 * background (use `awaitLive`). It ends when the scope closes or on a terminal error.
 */
export const openExtensionThread = (
  options: ExtensionThreadOptions,
): Effect.Effect<ExtensionThread, never, Scope.Scope | IpcFileSystem | IpcSocketConnector> =>
  Effect.gen(function* () {
    const conversationId = options.conversationId
    const versions = extensionMethodVersions(options.versionOverrides)
    const timeouts: ExtensionTimeouts = { ...DEFAULT_EXTENSION_TIMEOUTS, ...options.timeouts }
    const policy: ExtensionRecoveryPolicy = { ...DEFAULT_EXTENSION_RECOVERY, ...options.recovery }
    const discoveryDelaysMs = options.discoveryDelaysMs ?? DEFAULT_DISCOVERY_DELAYS_MS
    const connector = yield* IpcSocketConnector
    const services = yield* Effect.context<IpcFileSystem>()
    const resolve = resolveExtensionEndpoint(options.environment).pipe(Effect.provide(services))

    const statusRef = yield* SubscriptionRef.make<ExtensionSessionStatus>({
      _tag: "Connecting",
      attempt: 1,
    })
    const log: Array<ExtensionSessionEvent> = []
    const logVersion = yield* SubscriptionRef.make(0)
    let route: Route | undefined
    let lastOwnerId: string | undefined
    let lastProblem = "not connected yet"
    const progress: {
      connected: boolean
      live: boolean
      /** When this connection first reached Live (Clock time). */
      liveSinceMs: number | null
    } = { connected: false, live: false, liveSinceMs: null }

    const record = (kind: ExtensionSessionEventKind, detail: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        const atMs = yield* Clock.currentTimeMillis
        log.push({ atMs, kind, detail })
        if (log.length > MAX_EVENTS) log.shift()
        yield* SubscriptionRef.update(logVersion, (n) => n + 1)
      })

    const setStatus = (status: ExtensionSessionStatus): Effect.Effect<void> =>
      SubscriptionRef.update(statusRef, (current) => (current._tag === "Closed" ? current : status))

    const connectionSettings = {
      clientType: options.clientType ?? "baton",
      versions,
      maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
      requestTimeoutMs: timeouts.requestMs,
      routerTimeoutMs: timeouts.routerTimeoutMs,
      newRequestId: options.newRequestId ?? randomUUID,
    }

    const followOwner = (
      connection: IpcConnection,
      events: Queue.Queue<LoopEvent>,
      ownerId: string,
    ): Effect.Effect<string, ConnectionEnd> =>
      Effect.gen(function* () {
        const follow = (following: boolean) =>
          connection.broadcast(
            "thread-stream-following-changed",
            { hostId: LOCAL_HOST_ID, conversationId, following },
            { version: versions["thread-stream-following-changed"], targetClientIds: [ownerId] },
          )
        const sendFollow = (why: string) =>
          follow(true).pipe(Effect.andThen(record("follow-sent", `to ${ownerId} (${why})`)))
        const expected = versions["thread-stream-state-changed"]
        const versionsSeen = new Set<number>()
        let phase: StreamPhase = AWAITING_SNAPSHOT
        let followsSent = 1
        yield* sendFollow("initial")
        yield* setStatus({ _tag: "Following", clientId: connection.clientId, ownerId })
        let deadline = (yield* Clock.currentTimeMillis) + timeouts.snapshotMs

        const refollow = (why: string) =>
          Effect.gen(function* () {
            yield* setStatus({ _tag: "Following", clientId: connection.clientId, ownerId })
            yield* sendFollow(why)
            deadline = (yield* Clock.currentTimeMillis) + timeouts.snapshotMs
          })

        for (;;) {
          let event: LoopEvent
          if (phase._tag === "AwaitingSnapshot") {
            const remaining = deadline - (yield* Clock.currentTimeMillis)
            const next =
              remaining <= 0
                ? Option.none()
                : yield* Queue.take(events).pipe(Effect.timeoutOption(remaining))
            if (Option.isNone(next)) {
              if (followsSent < policy.snapshotFollowAttempts) {
                followsSent += 1
                yield* refollow("no snapshot yet")
                continue
              }
              return yield* new SnapshotTimeoutError({
                conversationId,
                ownerId,
                timeoutMs: timeouts.snapshotMs,
                expectedVersion: expected,
                versionsSeen: [...versionsSeen],
              })
            }
            event = next.value
          } else {
            event = yield* Queue.take(events)
          }

          switch (event._tag) {
            case "Closed":
              return yield* event.error
            case "Diagnostic":
              yield* record("diagnostic", `${event.kind}: ${event.detail}`)
              continue
            case "OwnerChanged":
              return event.detail
            case "Broadcast":
              break
          }
          const broadcast = event.envelope
          switch (broadcast.method) {
            case "thread-stream-state-changed": {
              const ref = decodeRef(broadcast.params)
              if (ref._tag === "Failure" || ref.success.conversationId !== conversationId) continue
              if (ref.success.hostId !== LOCAL_HOST_ID) {
                yield* record("stream-ignored", `hostId ${ref.success.hostId ?? "missing"}`)
                continue
              }
              if (broadcast.sourceClientId !== ownerId) {
                yield* record(
                  "stream-ignored",
                  `from ${broadcast.sourceClientId ?? "unknown"}, owner is ${ownerId}`,
                )
                continue
              }
              if (broadcast.version !== expected) {
                if (broadcast.version === undefined) {
                  yield* record("stream-ignored", "state broadcast without a version")
                  continue
                }
                return yield* new MethodVersionMismatchError({
                  method: "thread-stream-state-changed",
                  expected,
                  seen: broadcast.version,
                  direction: "broadcast",
                  evidence: `Owner ${ownerId} streams thread ${conversationId} at version ${broadcast.version}.`,
                })
              }
              versionsSeen.add(expected)
              const params = decodeStream(broadcast.params)
              if (params._tag === "Failure") {
                yield* record(
                  "diagnostic",
                  `malformed state change: ${params.failure.message.replace(/\s+/g, " ")}`,
                )
                phase = { _tag: "AwaitingSnapshot", strayPatchRefollowed: true }
                followsSent = 1
                yield* refollow("malformed state change")
                continue
              }
              const step = reduceStream(phase, params.success.change)
              phase = step.phase
              const outcome = step.outcome
              switch (outcome._tag) {
                case "Snapshot":
                case "Patched": {
                  if (phase._tag !== "Live") continue
                  if (outcome._tag === "Snapshot")
                    yield* record("snapshot", `revision ${outcome.revision}`)
                  progress.live = true
                  progress.liveSinceMs ??= yield* Clock.currentTimeMillis
                  yield* setStatus({
                    _tag: "Live",
                    clientId: connection.clientId,
                    ownerId,
                    revision: phase.revision,
                    view: phase.view,
                  })
                  continue
                }
                case "Resnapshot":
                  yield* record("resnapshot", `${outcome.reason}: ${outcome.detail}`)
                  followsSent = 1
                  yield* refollow(outcome.reason)
                  continue
                case "Ignored":
                  yield* record("stream-ignored", outcome.detail)
                  continue
                case "Fatal":
                  return yield* outcome.error
              }
              continue
            }
            case "client-status-changed": {
              const params = decodeClientStatus(broadcast.params)
              if (
                params._tag === "Success" &&
                params.success.status === "disconnected" &&
                params.success.clientId === ownerId
              )
                return `owner ${ownerId} disconnected`
              continue
            }
            case "thread-stream-following-status-requested": {
              const ref = decodeRef(broadcast.params)
              if (ref._tag === "Success" && ref.success.conversationId === conversationId)
                yield* sendFollow("owner asked followers to re-announce")
              continue
            }
            case "ipc-connection-reset":
              return yield* new IpcDisconnectedError({
                reason: "connection-reset",
                detail: "router sent ipc-connection-reset",
              })
            default:
              continue
          }
        }
      }).pipe(
        Effect.onInterrupt(() =>
          connection.isClosed()
            ? Effect.void
            : connection
                .broadcast(
                  "thread-stream-following-changed",
                  { hostId: LOCAL_HOST_ID, conversationId, following: false },
                  {
                    version: versions["thread-stream-following-changed"],
                    targetClientIds: [ownerId],
                  },
                )
                .pipe(Effect.andThen(record("unfollow-sent", `to ${ownerId}`)), Effect.ignore),
        ),
      )

    const runConnection = (attempt: number): Effect.Effect<never, ConnectionEnd, Scope.Scope> =>
      Effect.gen(function* () {
        progress.liveSinceMs = null
        yield* setStatus({ _tag: "Connecting", attempt })
        const endpoint = yield* resolve
        const socket = yield* connector.connect(endpoint.path).pipe(
          Effect.timeoutOrElse({
            duration: timeouts.connectMs,
            orElse: () =>
              Effect.fail(new IpcConnectError({ path: endpoint.path, code: "ETIMEDOUT" })),
          }),
        )
        if (endpoint._tag === "UnixSocket" && !sameSocket(endpoint, yield* resolve))
          return yield* new EndpointReplacedError({ path: endpoint.path })
        const events = yield* Queue.unbounded<LoopEvent>()
        const connection = yield* openIpcConnection(socket, events, connectionSettings)
        progress.connected = true
        yield* record("connected", `client ${connection.clientId} via ${endpoint.path}`)
        for (;;) {
          yield* setStatus({
            _tag: "Discovering",
            clientId: connection.clientId,
            attempt: 1,
            delayMs: 0,
          })
          const ownerId = yield* discoverOwner(connection, conversationId, {
            version: versions["thread-owner-discovery"],
            delaysMs: discoveryDelaysMs,
            previousOwnerId: lastOwnerId,
            onRetry: (attempt, delayMs) =>
              record(
                "owner-discovery-retry",
                `attempt ${attempt} in ${delayMs} ms after no-client-found`,
              ).pipe(
                Effect.andThen(
                  setStatus({
                    _tag: "Discovering",
                    clientId: connection.clientId,
                    attempt,
                    delayMs,
                  }),
                ),
              ),
          })
          if (lastOwnerId !== undefined && lastOwnerId !== ownerId)
            yield* record("owner-changed", `${lastOwnerId} → ${ownerId}`)
          else yield* record("owner-discovered", ownerId)
          lastOwnerId = ownerId
          route = { connection, ownerId, events }
          const gone = yield* followOwner(connection, events, ownerId).pipe(
            Effect.ensuring(
              Effect.sync(() => {
                route = undefined
              }),
            ),
          )
          yield* record("owner-gone", gone)
        }
      })

    const closeWith = (error: ThreadSessionFatalError): Effect.Effect<void> =>
      Effect.gen(function* () {
        const current = yield* SubscriptionRef.get(statusRef)
        if (current._tag === "Closed") return
        yield* record("closed", error.message)
        yield* SubscriptionRef.set(statusRef, { _tag: "Closed", error })
      })

    const mainLoop = Effect.gen(function* () {
      let consecutive = 0
      const reasons: Array<string> = []
      for (;;) {
        const outcome = yield* Effect.scoped(runConnection(consecutive + 1)).pipe(Effect.result)
        route = undefined
        if (outcome._tag === "Success") continue
        const error = outcome.failure
        if (isFatal(error, progress)) return yield* closeWith(error)
        // Only a connection that stayed Live long enough counts as recovered; a flapping one does not.
        const endedAtMs = yield* Clock.currentTimeMillis
        if (
          progress.liveSinceMs !== null &&
          endedAtMs - progress.liveSinceMs >= policy.stableLiveMs
        )
          consecutive = 0
        consecutive += 1
        lastProblem = error.message
        reasons.push(error.message)
        if (reasons.length > 10) reasons.shift()
        if (consecutive > policy.maxConsecutiveAttempts)
          return yield* closeWith(
            new RecoveryExhaustedError({ attempts: consecutive - 1, reasons: [...reasons] }),
          )
        const delayMs = recoveryDelayMs(consecutive, policy)
        yield* record(
          "recovering",
          `attempt ${consecutive} in ${delayMs} ms after ${error._tag}: ${error.message}`,
        )
        yield* setStatus({
          _tag: "Recovering",
          attempt: consecutive,
          reason: error.message,
          delayMs,
        })
        yield* Effect.sleep(delayMs)
      }
    })

    const mainFiber = yield* Effect.forkScoped(mainLoop)
    yield* Effect.addFinalizer(() => closeWith(new ThreadSessionClosedError()))

    const waitFor = <S extends ExtensionSessionStatus>(
      accept: (status: ExtensionSessionStatus) => status is S,
    ): Effect.Effect<Option.Option<S>> =>
      SubscriptionRef.changes(statusRef).pipe(Stream.filter(accept), Stream.runHead)

    const awaitLive: Effect.Effect<ExtensionLiveStatus, ThreadSessionFatalError> = waitFor(
      (s): s is ExtensionLiveStatus | Extract<ExtensionSessionStatus, { _tag: "Closed" }> =>
        s._tag === "Live" || s._tag === "Closed",
    ).pipe(
      Effect.flatMap((found) => {
        if (Option.isNone(found)) return Effect.fail(new ThreadSessionClosedError())
        return found.value._tag === "Live"
          ? Effect.succeed(found.value)
          : Effect.fail(found.value.error)
      }),
    )

    const awaitRoute = (
      method: string,
    ): Effect.Effect<Route, WriteNotReadyError | ThreadSessionFatalError> =>
      Effect.gen(function* () {
        const found = yield* waitFor(
          (s): s is ExtensionSessionStatus =>
            s._tag === "Closed" ||
            ((s._tag === "Following" || s._tag === "Live") &&
              route !== undefined &&
              !route.connection.isClosed()),
        ).pipe(Effect.timeoutOption(timeouts.writeReadyMs))
        const status = Option.flatten(found)
        if (Option.isNone(status) || (status.value._tag !== "Closed" && route === undefined))
          return yield* new WriteNotReadyError({
            method,
            waitedMs: timeouts.writeReadyMs,
            lastProblem,
            outcomeMayBeUnknown: false,
          })
        if (status.value._tag === "Closed") return yield* status.value.error
        const ready = route
        if (ready === undefined)
          return yield* new WriteNotReadyError({
            method,
            waitedMs: 0,
            lastProblem,
            outcomeMayBeUnknown: false,
          })
        return ready
      })

    const write = <A>(
      method:
        | "thread-follower-compact-thread"
        | "thread-follower-start-turn"
        | "thread-follower-interrupt-turn",
      params: unknown,
      check: (result: unknown) => Result.Result<A, string>,
    ): Effect.Effect<
      { readonly value: A; readonly requestId: string; readonly ownerId: string },
      ThreadWriteError
    > =>
      Effect.gen(function* () {
        const version = versions[method]
        let sameOwnerRefusals = 0
        let discovered: string | undefined
        for (let attempt = 1; ; attempt++) {
          const current = yield* awaitRoute(method)
          const target = discovered ?? current.ownerId
          const requestId = connectionSettings.newRequestId()
          yield* record(
            "write-sent",
            `${method} v${version} to ${target} as ${requestId} (attempt ${attempt})`,
          )
          const sent = yield* current.connection
            .request(method, params, { version, targetClientId: target, isWrite: true, requestId })
            .pipe(Effect.result)
          if (sent._tag === "Success") {
            const checked = check(sent.success.result)
            if (checked._tag === "Failure") {
              yield* record("write-result", `${method} acknowledgement unusable`)
              return yield* new WriteRejectedError({
                method,
                problem: checked.failure,
                outcomeMayBeUnknown: true,
              })
            }
            yield* record("write-result", `${method} accepted by ${target}`)
            return { value: checked.success, requestId: sent.success.requestId, ownerId: target }
          }
          const error = sent.failure
          switch (error._tag) {
            case "IpcRequestTimeoutError":
              yield* record(
                "write-result",
                `${method} timed out after ${error.timeoutMs} ms; outcome unknown`,
              )
              return yield* new WriteOutcomeUnknownError({
                method,
                requestId: error.requestId,
                reason: "timeout",
                outcomeMayBeUnknown: true,
              })
            case "IpcDisconnectedError":
              yield* record("write-result", `${method} interrupted by disconnect; outcome unknown`)
              return yield* new WriteOutcomeUnknownError({
                method,
                requestId,
                reason: "disconnected",
                outcomeMayBeUnknown: true,
              })
            case "FrameTooLargeError":
            case "FrameEncodeError":
              return yield* new WriteRejectedError({
                method,
                problem: error.message,
                outcomeMayBeUnknown: false,
              })
            case "IpcRouterError":
              yield* record("write-result", `${method} refused: ${error.error}`)
              if (/version/i.test(error.error))
                return yield* new MethodVersionMismatchError({
                  method,
                  expected: version,
                  seen: versionInText(error.error),
                  direction: "request",
                  evidence: `The router or owner answered "${error.error}".`,
                })
              return yield* new WriteRejectedError({
                method,
                problem: `owner answered "${error.error}"`,
                outcomeMayBeUnknown: false,
              })
            case "NoClientFoundError":
              break
          }
          // no-client-found: nothing was delivered, so rediscovering and retrying is safe.
          if (attempt >= MAX_WRITE_ATTEMPTS)
            return yield* new WriteNotReadyError({
              method,
              waitedMs: 0,
              lastProblem: `no-client-found ${attempt} times`,
              outcomeMayBeUnknown: false,
            })
          const delayMs = WRITE_RETRY_DELAYS_MS[attempt - 1] ?? 0
          yield* record(
            "write-retry",
            `${method}: no-client-found from ${target}; rediscovering in ${delayMs} ms`,
          )
          yield* Effect.sleep(delayMs)
          const found = yield* discoverOwner(current.connection, conversationId, {
            version: versions["thread-owner-discovery"],
            delaysMs: discoveryDelaysMs,
            previousOwnerId: target,
          }).pipe(Effect.result)
          if (found._tag === "Failure") {
            if (found.failure._tag === "OwnerNotFoundError") {
              Queue.offerUnsafe(current.events, {
                _tag: "OwnerChanged",
                ownerId: "",
                detail: `a ${method} write found no owner`,
              })
              return yield* found.failure
            }
            yield* record(
              "write-retry",
              `${method}: rediscovery failed (${found.failure._tag}); waiting for a connection`,
            )
            discovered = undefined
            continue
          }
          if (found.success === target) {
            sameOwnerRefusals += 1
            if (sameOwnerRefusals >= SAME_OWNER_REFUSALS_FOR_MISMATCH)
              return yield* new MethodVersionMismatchError({
                method,
                expected: version,
                seen: undefined,
                direction: "request",
                evidence:
                  `Owner ${target} answers thread-owner-discovery but refused ${method} version ${version} ` +
                  `${sameOwnerRefusals} times with no-client-found (a client declines a version it does not know).`,
              })
            yield* record(
              "write-retry",
              `${method}: ${target} still owns the thread; sending again`,
            )
          } else {
            yield* record(
              "write-retry",
              `${method}: owner changed ${target} → ${found.success}; sending again`,
            )
            Queue.offerUnsafe(current.events, {
              _tag: "OwnerChanged",
              ownerId: found.success,
              detail: `a ${method} write found owner ${found.success}`,
            })
          }
          discovered = found.success
        }
      })

    return {
      conversationId,
      status: SubscriptionRef.get(statusRef),
      changes: SubscriptionRef.changes(statusRef),
      awaitLive,
      events: Effect.sync(() => [...log]),
      awaitEvent: (predicate) =>
        SubscriptionRef.changes(logVersion).pipe(
          Stream.map(() => log.find(predicate)),
          Stream.filter((event): event is ExtensionSessionEvent => event !== undefined),
          Stream.runHead,
          Effect.map(Option.getOrThrow),
        ),
      compact: write(
        "thread-follower-compact-thread",
        compactThreadParams(conversationId),
        checkCompactAck,
      ).pipe(Effect.map(({ requestId, ownerId }) => ({ requestId, ownerId }))),
      startTurn: (input) =>
        write(
          "thread-follower-start-turn",
          startTurnParams(conversationId, input),
          checkStartTurnAck,
        ).pipe(Effect.map(({ value, requestId, ownerId }) => ({ ...value, requestId, ownerId }))),
      interruptTurn: (turnId) =>
        write(
          "thread-follower-interrupt-turn",
          interruptTurnParams(conversationId, turnId),
          checkInterruptAck,
        ).pipe(Effect.map(({ value, requestId, ownerId }) => ({ ...value, requestId, ownerId }))),
      close: Fiber.interrupt(mainFiber).pipe(
        Effect.andThen(closeWith(new ThreadSessionClosedError())),
      ),
    }
  })

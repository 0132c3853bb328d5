/**
 * Chooses how to reach one thread, in order: the VS Code extension that owns it → the daemon, when
 * the thread is loaded there → a private stdio app-server. Returns the choice with a structured
 * reason for every option considered, so callers can show why. Probes are injected; the default
 * extension probe checks the endpoint's trust and asks the router who owns the thread (with the
 * safe `no-client-found` retries). Selection never resumes, follows, compacts or otherwise
 * touches the thread; the chosen option's `openController` does that when the caller runs it.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Scope } from "effect"
import type { CodexBinary } from "./codex-binary.js"
import { discoverCodexBinary } from "./codex-binary.js"
import { invalidThreadId } from "./codex-thread-id.js"
import type { CodexTransportShape } from "./codex-transport.js"
import type { DaemonTransportOptions } from "./daemon-transport.js"
import { connectDaemon, daemonTransport } from "./daemon-transport.js"
import type { InvalidThreadIdError, ThreadNotFoundError } from "./errors.js"
import type { StdioTransportOptions } from "./stdio-transport.js"
import { stdioTransport } from "./stdio-transport.js"
import type { EndpointEnvironment, IpcFileSystem } from "./extension/endpoint.js"
import { nodeEndpointEnvironment, nodeIpcFileSystemLayer } from "./extension/node-file-system.js"
import { nodeIpcSocketConnectorLayer } from "./extension/node-socket-connector.js"
import { discoverExtensionOwner } from "./extension/owner-probe.js"
import type { IpcSocketConnector } from "./extension/socket-connector.js"
import { openExtensionController } from "./extension-controller.js"
import type { ExtensionControllerOptions } from "./extension-controller.js"
import { connectionThreadController } from "./thread-controller.js"
import type { ThreadController, ThreadControllerError } from "./thread-controller.js"

/** The transports the selector can choose. */
export type SelectedTransportKind = "extension" | "daemon" | "stdio"

/** Why one option was chosen or passed over. */
export interface SelectionReason {
  readonly transport: SelectedTransportKind
  readonly verdict: "chosen" | "unavailable" | "not-holding-thread" | "skipped"
  readonly detail: string
}

/** Opens a `ThreadController` on the chosen transport (scoped: closing the scope ends it). */
export type OpenThreadController = Effect.Effect<
  ThreadController,
  ThreadControllerError,
  Scope.Scope
>

/** What an extension probe reports for a thread. */
export type ExtensionProbeResult =
  | {
      readonly available: true
      /** The VS Code client (window) that owns the thread. */
      readonly ownerId: string
      readonly detail: string
      readonly openController: OpenThreadController
    }
  | { readonly available: false; readonly detail: string }

/** Is the thread owned by a live VS Code extension, and how to reach it. */
export type ExtensionProbe = (threadId: string) => Effect.Effect<ExtensionProbeResult>

/** Options of {@link probeExtensionOwner}. */
export interface ExtensionProbeOptions {
  /** Where to look (default: this process's platform, env, home and uid). */
  readonly environment?: EndpointEnvironment
  /** Filesystem and socket services (default: node's). */
  readonly layer?: Layer.Layer<IpcFileSystem | IpcSocketConnector>
  /** Delays before each owner-discovery attempt (default 0/125/350/1000/1500 ms). */
  readonly discoveryDelaysMs?: ReadonlyArray<number>
  /** Session options for the controller the selection opens. */
  readonly session?: ExtensionControllerOptions["session"]
}

/**
 * The default extension probe: endpoint trust checks, then `thread-owner-discovery` with the safe
 * retries, then disconnect. Any refusal or absence is reported as unavailable with its message.
 */
export const probeExtensionOwner =
  (options: ExtensionProbeOptions = {}): ExtensionProbe =>
  (threadId) => {
    const environment = options.environment ?? nodeEndpointEnvironment()
    const layer =
      options.layer ?? Layer.mergeAll(nodeIpcFileSystemLayer, nodeIpcSocketConnectorLayer)
    return discoverExtensionOwner({
      threadId,
      environment,
      ...(options.discoveryDelaysMs === undefined
        ? {}
        : { discoveryDelaysMs: options.discoveryDelaysMs }),
    }).pipe(
      Effect.provide(layer),
      Effect.map((owner): ExtensionProbeResult => ({
        available: true,
        ownerId: owner.ownerId,
        detail: `VS Code client ${owner.ownerId} owns the thread (router at ${owner.endpoint})`,
        openController: openExtensionController({
          threadId,
          environment,
          ...(options.session === undefined ? {} : { session: options.session }),
        }).pipe(Effect.provide(layer)),
      })),
      Effect.catch((error) =>
        Effect.succeed<ExtensionProbeResult>({ available: false, detail: error.message }),
      ),
    )
  }

/** What a daemon probe reports for a thread. */
export type DaemonProbeResult =
  | { readonly running: false; readonly detail: string }
  | {
      readonly running: true
      readonly threadLoaded: boolean
      readonly detail: string
      /** Set when the daemon's `thread/read` says Codex has no such thread (`ThreadNotFoundError`). */
      readonly threadNotFound?: ThreadNotFoundError
    }

/** The reason given when Codex has no thread with this id. */
export const threadNotFoundDetail = (threadId: string, detail: string): string =>
  `thread not found: Codex has no thread ${threadId} (${detail})`

/** Is the daemon up, and is the thread loaded in it? */
export type DaemonProbe = (threadId: string) => Effect.Effect<DaemonProbeResult>

/**
 * The default daemon probe: trust-check and connect, read `thread/loaded/list` (and, for a thread
 * the daemon does not hold, `thread/read` to learn whether Codex has it at all), disconnect.
 */
export const probeDaemon =
  (options: DaemonTransportOptions = {}): DaemonProbe =>
  (threadId) =>
    Effect.scoped(
      Effect.gen(function* () {
        const connection = yield* connectDaemon(options)
        const loaded = yield* connection.listLoadedThreads
        if (loaded.includes(threadId))
          return {
            running: true,
            threadLoaded: true,
            detail: "daemon running; thread in thread/loaded/list",
          } satisfies DaemonProbeResult
        const read = yield* Effect.result(connection.readThread(threadId))
        const notFound =
          read._tag === "Failure" && read.failure._tag === "ThreadNotFoundError"
            ? read.failure
            : null
        return {
          running: true,
          threadLoaded: false,
          detail:
            notFound === null
              ? `daemon running; thread not in thread/loaded/list (${loaded.length} loaded)`
              : `daemon running; ${threadNotFoundDetail(threadId, notFound.detail)}`,
          ...(notFound === null ? {} : { threadNotFound: notFound }),
        } satisfies DaemonProbeResult
      }),
    ).pipe(
      Effect.catch((error): Effect.Effect<DaemonProbeResult> =>
        Effect.succeed({ running: false, detail: error.message }),
      ),
    )

/** What a stdio probe reports: a binary to spawn, or why there is none. */
export type StdioProbe = () => Effect.Effect<
  { readonly binary: CodexBinary } | { readonly binary: null; readonly detail: string }
>

/** The default stdio probe: binary discovery. */
export const probeStdioBinary: StdioProbe = () =>
  discoverCodexBinary().pipe(
    Effect.map((binary) => ({ binary })),
    Effect.catch((error) => Effect.succeed({ binary: null, detail: error.message })),
  )

/** Inputs of `selectTransport`. */
export interface SelectTransportOptions {
  readonly threadId: string
  /** Replaces the default extension probe (`probeExtensionOwner(options.extension)`). */
  readonly extensionProbe?: ExtensionProbe
  readonly extension?: ExtensionProbeOptions
  readonly daemonProbe?: DaemonProbe
  readonly stdioProbe?: StdioProbe
  readonly daemon?: DaemonTransportOptions
  readonly stdio?: StdioTransportOptions
}

/** The selector's answer. */
export interface TransportSelection {
  readonly threadId: string
  /** The app-server transport (daemon, stdio); null for the extension or when nothing can reach the thread. */
  readonly transport: CodexTransportShape | null
  readonly kind: SelectedTransportKind | null
  /** Opens the thread's controller on the chosen transport; null when nothing can reach it. */
  readonly openController: OpenThreadController | null
  /** The VS Code client owning the thread, when the extension was chosen. */
  readonly extensionOwnerId: string | null
  readonly reasons: ReadonlyArray<SelectionReason>
  /** Why no transport can reach the thread whatever runs: not a thread id, or no such thread. */
  readonly threadError?: InvalidThreadIdError | ThreadNotFoundError
}

/**
 * Picks extension owner → daemon-loaded → stdio for a thread. A running daemon that does not hold
 * the thread still leads to stdio: if some other process holds it, stdio's `thread/resume` reports
 * `ActiveWriterError` rather than guessing here. A value that is not a thread id is refused before
 * any probe runs, and a thread the running daemon says Codex does not have selects nothing; both
 * set `threadError`.
 */
export const selectTransport = (
  options: SelectTransportOptions,
): Effect.Effect<TransportSelection> =>
  Effect.gen(function* () {
    const { threadId } = options
    const reasons: Array<SelectionReason> = []
    const invalid = invalidThreadId(threadId)
    if (invalid !== null) {
      for (const transport of ["extension", "daemon", "stdio"] as const)
        reasons.push({ transport, verdict: "unavailable", detail: invalid.message })
      return {
        threadId,
        transport: null,
        kind: null,
        openController: null,
        extensionOwnerId: null,
        reasons,
        threadError: invalid,
      }
    }
    const viaConnection = (transport: CodexTransportShape): OpenThreadController =>
      Effect.flatMap(transport.connect, (connection) =>
        connectionThreadController(connection, threadId),
      )
    const done = (
      kind: SelectedTransportKind | null,
      transport: CodexTransportShape | null,
      openController: OpenThreadController | null = transport === null
        ? null
        : viaConnection(transport),
      extensionOwnerId: string | null = null,
    ): TransportSelection => ({
      threadId,
      transport,
      kind,
      openController,
      extensionOwnerId,
      reasons,
    })

    const extension = yield* (options.extensionProbe ?? probeExtensionOwner(options.extension))(
      threadId,
    )
    if (extension.available) {
      reasons.push({ transport: "extension", verdict: "chosen", detail: extension.detail })
      reasons.push({
        transport: "daemon",
        verdict: "skipped",
        detail: "the extension owns the thread",
      })
      reasons.push({
        transport: "stdio",
        verdict: "skipped",
        detail: "the extension owns the thread",
      })
      return done("extension", null, extension.openController, extension.ownerId)
    }
    reasons.push({ transport: "extension", verdict: "unavailable", detail: extension.detail })

    const daemon = yield* (options.daemonProbe ?? probeDaemon(options.daemon))(threadId)
    if (daemon.running && daemon.threadLoaded) {
      reasons.push({ transport: "daemon", verdict: "chosen", detail: daemon.detail })
      reasons.push({
        transport: "stdio",
        verdict: "skipped",
        detail: "the daemon holds the thread (a second process would hit the single-writer rule)",
      })
      return done("daemon", daemonTransport(options.daemon))
    }
    reasons.push({
      transport: "daemon",
      verdict: daemon.running ? "not-holding-thread" : "unavailable",
      detail: daemon.detail,
    })
    if (daemon.running && daemon.threadNotFound !== undefined) {
      const notFound = daemon.threadNotFound
      reasons.push({
        transport: "stdio",
        verdict: "unavailable",
        detail: threadNotFoundDetail(threadId, notFound.detail),
      })
      return { ...done(null, null), threadError: notFound }
    }

    const stdio = yield* (options.stdioProbe ?? probeStdioBinary)()
    if (stdio.binary === null) {
      reasons.push({ transport: "stdio", verdict: "unavailable", detail: stdio.detail })
      return done(null, null)
    }
    reasons.push({
      transport: "stdio",
      verdict: "chosen",
      detail: `private app-server from ${stdio.binary.path} (${stdio.binary.source}: ${stdio.binary.reason}${stdio.binary.version === null ? "" : `, ${stdio.binary.version}`})`,
    })
    return done("stdio", stdioTransport({ ...options.stdio, binary: stdio.binary }))
  })

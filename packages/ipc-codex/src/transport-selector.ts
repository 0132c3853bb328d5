/**
 * Chooses how to reach one thread, in order: the VS Code extension that owns it → the daemon, when
 * the thread is loaded there → a private stdio app-server. Returns the choice with a structured
 * reason for every option considered, so callers can show why. Probes are injected; the extension
 * probe defaults to "not wired yet" until the extension transport lands. Selection never resumes,
 * compacts or otherwise touches the thread.
 */
import { Effect } from "effect"
import type { CodexBinary } from "./codex-binary.js"
import { discoverCodexBinary } from "./codex-binary.js"
import type { CodexTransportShape } from "./codex-transport.js"
import type { DaemonTransportOptions } from "./daemon-transport.js"
import { connectDaemon, daemonTransport } from "./daemon-transport.js"
import type { StdioTransportOptions } from "./stdio-transport.js"
import { stdioTransport } from "./stdio-transport.js"

/** The transports the selector can choose. */
export type SelectedTransportKind = "extension" | "daemon" | "stdio"

/** Why one option was chosen or passed over. */
export interface SelectionReason {
  readonly transport: SelectedTransportKind
  readonly verdict: "chosen" | "unavailable" | "not-holding-thread" | "skipped"
  readonly detail: string
}

/** What an extension probe reports for a thread. */
export type ExtensionProbeResult =
  | { readonly available: true; readonly transport: CodexTransportShape; readonly detail: string }
  | { readonly available: false; readonly detail: string }

/** Hook for the VS Code extension transport: is the thread owned by a live extension, and how to reach it. */
export type ExtensionProbe = (threadId: string) => Effect.Effect<ExtensionProbeResult>

/** Default extension probe until the extension transport is wired in. */
export const extensionNotWired: ExtensionProbe = () =>
  Effect.succeed({ available: false, detail: "not available: extension transport not wired yet" })

/** What a daemon probe reports for a thread. */
export type DaemonProbeResult =
  | { readonly running: false; readonly detail: string }
  | { readonly running: true; readonly threadLoaded: boolean; readonly detail: string }

/** Is the daemon up, and is the thread loaded in it? */
export type DaemonProbe = (threadId: string) => Effect.Effect<DaemonProbeResult>

/** The default daemon probe: trust-check and connect, read `thread/loaded/list`, disconnect. */
export const probeDaemon =
  (options: DaemonTransportOptions = {}): DaemonProbe =>
  (threadId) =>
    Effect.scoped(
      Effect.gen(function* () {
        const connection = yield* connectDaemon(options)
        const loaded = yield* connection.listLoadedThreads
        return loaded.includes(threadId)
          ? {
              running: true,
              threadLoaded: true,
              detail: "daemon running; thread in thread/loaded/list",
            }
          : {
              running: true,
              threadLoaded: false,
              detail: `daemon running; thread not in thread/loaded/list (${loaded.length} loaded)`,
            }
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
  readonly extensionProbe?: ExtensionProbe
  readonly daemonProbe?: DaemonProbe
  readonly stdioProbe?: StdioProbe
  readonly daemon?: DaemonTransportOptions
  readonly stdio?: StdioTransportOptions
}

/** The selector's answer. */
export interface TransportSelection {
  readonly threadId: string
  /** null when no transport can reach the thread. */
  readonly transport: CodexTransportShape | null
  readonly kind: SelectedTransportKind | null
  readonly reasons: ReadonlyArray<SelectionReason>
}

/**
 * Picks extension owner → daemon-loaded → stdio for a thread. A running daemon that does not hold
 * the thread still leads to stdio: if some other process holds it, stdio's `thread/resume` reports
 * `ActiveWriterError` rather than guessing here.
 */
export const selectTransport = (
  options: SelectTransportOptions,
): Effect.Effect<TransportSelection> =>
  Effect.gen(function* () {
    const { threadId } = options
    const reasons: Array<SelectionReason> = []
    const done = (
      kind: SelectedTransportKind | null,
      transport: CodexTransportShape | null,
    ): TransportSelection => ({ threadId, transport, kind, reasons })

    const extension = yield* (options.extensionProbe ?? extensionNotWired)(threadId)
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
      return done("extension", extension.transport)
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

/**
 * `probeThread`: a read-only report on how Baton could reach one thread and what it would find —
 * the transports with a reason each (the selector), the owner, the thread's status, its context
 * tokens and window, rate limits and the binary's protocol compatibility. What it may do: trust
 * checks, owner discovery, following an extension-owned thread for one snapshot, `thread/read`
 * and `account/rateLimits/read` over the daemon (or a private stdio app-server when no daemon is
 * up), reading the rollout's tail, and the cached compatibility probe. What it never does:
 * resume, subscribe to, compact or start a turn on the thread. Unreachable parts are findings in
 * the report, not failures.
 */
import * as Effect from "effect/Effect"
import type { CodexBinary } from "./codex-binary.js"
import { discoverCodexBinary } from "./codex-binary.js"
import type { CodexConnection } from "./codex-connection.js"
import { invalidThreadId } from "./codex-thread-id.js"
import { probeCompatibility } from "./compatibility.js"
import type { DaemonTransportOptions } from "./daemon-transport.js"
import { connectDaemon } from "./daemon-transport.js"
import type { ThreadNotFoundError, TransportKind } from "./errors.js"
import { readRolloutTokenUsage } from "./rollout-token-usage.js"
import type { StdioTransportOptions } from "./stdio-transport.js"
import { connectStdio } from "./stdio-transport.js"
import type { ThreadState } from "./thread-state.js"
import type {
  DaemonProbe,
  ExtensionProbe,
  ExtensionProbeOptions,
  SelectedTransportKind,
  SelectionReason,
} from "./transport-selector.js"
import {
  probeDaemon,
  probeExtensionOwner,
  selectTransport,
  threadNotFoundDetail,
} from "./transport-selector.js"

/** One transport option and why it can or cannot be used. */
export interface ProbeTransportLine {
  readonly transport: SelectedTransportKind
  readonly verdict: SelectionReason["verdict"]
  readonly available: boolean
  readonly detail: string
}

/** The probe's findings; plain JSON data with a stable shape. */
export interface ThreadProbeReport {
  readonly threadId: string
  /** The transport Baton would use, or null when none can reach the thread. */
  readonly selected: SelectedTransportKind | null
  readonly transports: ReadonlyArray<ProbeTransportLine>
  readonly owner: {
    readonly kind: "extension" | "daemon" | "none"
    /** The VS Code client id when the extension owns the thread. */
    readonly clientId: string | null
    readonly detail: string
  }
  readonly thread: {
    /** `idle`, `active`, `notLoaded`, `systemError`, … or null when unknown. */
    readonly status: string | null
    readonly activeFlags: ReadonlyArray<string>
    readonly pendingRequests: number | null
    readonly source: "extension" | "daemon" | "stdio" | null
    readonly detail: string
  }
  readonly context: {
    /** Current context occupancy (last usage's total tokens). */
    readonly tokens: number | null
    readonly window: number | null
    readonly source: "extension" | "rollout" | null
    readonly detail: string
  }
  readonly rateLimits: {
    readonly status: "read" | "not-signed-in" | "unavailable"
    readonly via: "daemon" | "stdio" | null
    readonly ordinaryUsageAllowed: boolean | null
    readonly primaryUsedPercent: number | null
    readonly secondaryUsedPercent: number | null
    readonly detail: string
  }
  readonly compatibility: {
    readonly status: "ok" | "incompatible" | "unknown"
    readonly binary: {
      readonly path: string
      readonly source: string
      readonly version: string | null
    } | null
    readonly fromCache: boolean | null
    readonly failedChecks: ReadonlyArray<string>
    readonly detail: string
  }
}

/** Options of {@link probeThread}. */
export interface ThreadProbeOptions {
  readonly threadId: string
  readonly extension?: ExtensionProbeOptions
  readonly daemon?: DaemonTransportOptions
  /** For the private app-server used when no daemon runs (env, cwd). */
  readonly stdio?: Omit<StdioTransportOptions, "binary">
  /** Where the compatibility probe caches its result; null skips the compatibility check. */
  readonly compatibilityCacheDir: string | null
  /** Injected probes (tests); default to the real ones. */
  readonly extensionProbe?: ExtensionProbe
  readonly daemonProbe?: DaemonProbe
  readonly discoverBinary?: Effect.Effect<CodexBinary, { readonly message: string }>
  /** How long to wait for an extension snapshot (default 15 s). */
  readonly snapshotTimeoutMs?: number
}

type ThreadFacts = Pick<ThreadProbeReport, "thread" | "context">

/** What `thread/read` found, and the refusal when Codex has no such thread. */
interface AppServerFacts {
  readonly facts: ThreadFacts
  readonly notFound: ThreadNotFoundError | null
}

const unknownThread = (detail: string): ThreadProbeReport["thread"] => ({
  status: null,
  activeFlags: [],
  pendingRequests: null,
  source: null,
  detail,
})
const unknownContext = (detail: string): ThreadProbeReport["context"] => ({
  tokens: null,
  window: null,
  source: null,
  detail,
})

const factsFromState = (state: ThreadState): ThreadFacts => ({
  thread: {
    status: state.status.unknownType ?? state.status.type,
    activeFlags: state.status.activeFlags,
    pendingRequests: state.pendingServerRequests.length,
    source: "extension",
    detail: "from the owner's conversation state",
  },
  context:
    state.tokenUsage === null
      ? unknownContext("the owner's state has no token usage yet")
      : {
          tokens: state.tokenUsage.last.totalTokens,
          window: state.tokenUsage.modelContextWindow,
          source: "extension",
          detail: "latestTokenUsageInfo of the owner's state",
        },
})

/** thread/read over an app-server connection, then the rollout's last token count. */
const factsFromAppServer = (
  connection: CodexConnection,
  threadId: string,
  via: "daemon" | "stdio",
): Effect.Effect<AppServerFacts> =>
  connection.readThread(threadId).pipe(
    Effect.flatMap((thread) =>
      Effect.gen(function* () {
        const status: ThreadProbeReport["thread"] = {
          status: thread.status === undefined ? null : thread.status.type,
          activeFlags: thread.status?.activeFlags ?? [],
          pendingRequests: null,
          source: via,
          detail: `thread/read over the ${via === "daemon" ? "daemon" : "private app-server"}`,
        }
        const path = thread.path ?? null
        if (path === null)
          return { thread: status, context: unknownContext("thread/read gave no rollout path") }
        const usage = yield* readRolloutTokenUsage(path).pipe(Effect.result)
        if (usage._tag === "Failure")
          return { thread: status, context: unknownContext(usage.failure.message) }
        if (usage.success === null || usage.success.lastTotalTokens === null)
          return { thread: status, context: unknownContext("the rollout records no token usage") }
        return {
          thread: status,
          context: {
            tokens: usage.success.lastTotalTokens,
            window: usage.success.modelContextWindow,
            source: "rollout",
            detail: `last token_count in ${path}`,
          },
        } satisfies ThreadFacts
      }),
    ),
    Effect.map((facts): AppServerFacts => ({ facts, notFound: null })),
    Effect.catch((error) =>
      Effect.succeed<AppServerFacts>({
        facts: {
          thread: unknownThread(
            error._tag === "ThreadNotFoundError"
              ? `Codex does not know this thread (${error.detail})`
              : error.message,
          ),
          context: unknownContext("no thread to read"),
        },
        notFound: error._tag === "ThreadNotFoundError" ? error : null,
      }),
    ),
  )

const rateLimitsFrom = (
  connection: CodexConnection,
  via: "daemon" | "stdio",
): Effect.Effect<ThreadProbeReport["rateLimits"]> =>
  connection.readRateLimits.pipe(
    Effect.map((read): ThreadProbeReport["rateLimits"] => ({
      status: "read",
      via,
      ordinaryUsageAllowed: read.ordinaryUsageAllowed,
      primaryUsedPercent: read.rateLimits.primary?.usedPercent ?? null,
      secondaryUsedPercent: read.rateLimits.secondary?.usedPercent ?? null,
      detail: "account/rateLimits/read",
    })),
    Effect.catch((error) =>
      Effect.succeed<ThreadProbeReport["rateLimits"]>({
        status: error._tag === "NotAuthenticatedError" ? "not-signed-in" : "unavailable",
        via,
        ordinaryUsageAllowed: null,
        primaryUsedPercent: null,
        secondaryUsedPercent: null,
        detail: error._tag === "NotAuthenticatedError" ? "not signed in" : error.message,
      }),
    ),
  )

const noRateLimits = (detail: string): ThreadProbeReport["rateLimits"] => ({
  status: "unavailable",
  via: null,
  ordinaryUsageAllowed: null,
  primaryUsedPercent: null,
  secondaryUsedPercent: null,
  detail,
})

const compatibilityOf = (
  binary: CodexBinary | null,
  binaryDetail: string,
  cacheDir: string | null,
): Effect.Effect<ThreadProbeReport["compatibility"]> => {
  if (binary === null)
    return Effect.succeed({
      status: "unknown",
      binary: null,
      fromCache: null,
      failedChecks: [],
      detail: binaryDetail,
    })
  const described = { path: binary.path, source: binary.source, version: binary.version }
  if (cacheDir === null)
    return Effect.succeed({
      status: "unknown",
      binary: described,
      fromCache: null,
      failedChecks: [],
      detail: "compatibility check skipped",
    })
  return probeCompatibility({ binary: binary.path, cacheDir }).pipe(
    Effect.map((probe): ThreadProbeReport["compatibility"] => ({
      status: probe.report.ok ? "ok" : "incompatible",
      binary: described,
      fromCache: probe.fromCache,
      failedChecks: probe.report.checks.filter((c) => !c.ok).map((c) => c.id),
      detail: probe.report.ok
        ? `every protocol check passed (${binary.source}: ${binary.reason})`
        : `${probe.report.checks.filter((c) => !c.ok).length} protocol checks failed`,
    })),
    Effect.catch((error) =>
      Effect.succeed<ThreadProbeReport["compatibility"]>({
        status: "unknown",
        binary: described,
        fromCache: null,
        failedChecks: [],
        detail: error.message,
      }),
    ),
  )
}

/** The report for a value that is not a thread id: nothing is spawned or connected to. */
const invalidThreadReport = (threadId: string, detail: string): ThreadProbeReport => ({
  threadId,
  selected: null,
  transports: (["extension", "daemon", "stdio"] as const).map((transport) => ({
    transport,
    verdict: "unavailable" as const,
    available: false,
    detail,
  })),
  owner: { kind: "none", clientId: null, detail },
  thread: unknownThread(detail),
  context: unknownContext(detail),
  rateLimits: noRateLimits(detail),
  compatibility: {
    status: "unknown",
    binary: null,
    fromCache: null,
    failedChecks: [],
    detail: `not checked: ${detail}`,
  },
})

/**
 * Probes one thread read-only and reports what Baton could do with it. A value that is not a
 * thread id is reported at once (`InvalidThreadIdError`'s message on every line, nothing spawned);
 * a thread Codex has no rollout for is `selected: null` with the stdio line saying so.
 */
export const probeThread = (options: ThreadProbeOptions): Effect.Effect<ThreadProbeReport> =>
  Effect.gen(function* () {
    const { threadId } = options
    const invalid = invalidThreadId(threadId)
    if (invalid !== null) return invalidThreadReport(threadId, invalid.message)
    const found = yield* (options.discoverBinary ?? discoverCodexBinary()).pipe(Effect.result)
    const binary = found._tag === "Success" ? found.success : null
    const binaryDetail = found._tag === "Success" ? "" : found.failure.message
    const selection = yield* selectTransport({
      threadId,
      extensionProbe: options.extensionProbe ?? probeExtensionOwner(options.extension),
      daemonProbe: options.daemonProbe ?? probeDaemon(options.daemon),
      stdioProbe: () =>
        Effect.succeed(binary === null ? { binary: null, detail: binaryDetail } : { binary }),
      ...(options.daemon === undefined ? {} : { daemon: options.daemon }),
    })
    const transports = selection.reasons.map((r): ProbeTransportLine => ({
      ...r,
      available: r.verdict !== "unavailable",
    }))
    const daemonUp = selection.reasons.some(
      (r) =>
        r.transport === "daemon" && (r.verdict === "chosen" || r.verdict === "not-holding-thread"),
    )

    let extensionFacts: ThreadFacts | null = null
    if (selection.kind === "extension" && selection.openController !== null) {
      const open = selection.openController
      extensionFacts = yield* Effect.scoped(
        Effect.flatMap(open, (controller) => Effect.ensuring(controller.state, controller.close)),
      ).pipe(
        Effect.timeout(options.snapshotTimeoutMs ?? 15_000),
        Effect.map(factsFromState),
        Effect.catch((error) =>
          Effect.succeed<ThreadFacts>({
            thread: unknownThread(`following the owner failed: ${error.message}`),
            context: unknownContext("no snapshot from the owner"),
          }),
        ),
      )
    }

    // One app-server connection for thread/read and the rate-limit read: the daemon when it runs,
    // else a private stdio app-server (it never resumes the thread).
    const helper: { readonly via: "daemon" | "stdio"; readonly kind: TransportKind } | null =
      daemonUp
        ? { via: "daemon", kind: "daemon" }
        : binary === null
          ? null
          : { via: "stdio", kind: "stdio" }
    const appServer: {
      readonly facts: ThreadFacts
      readonly notFound: ThreadNotFoundError | null
      readonly rateLimits: ThreadProbeReport["rateLimits"]
    } =
      helper === null
        ? {
            facts: extensionFacts ?? {
              thread: unknownThread("no daemon and no codex binary to read the thread with"),
              context: unknownContext("no daemon and no codex binary"),
            },
            notFound: null,
            rateLimits: noRateLimits(binaryDetail || "no daemon and no codex binary"),
          }
        : yield* Effect.scoped(
            Effect.gen(function* () {
              const connection: CodexConnection =
                helper.via === "daemon"
                  ? yield* connectDaemon(options.daemon ?? {})
                  : yield* connectStdio({ ...options.stdio, binary: binary! })
              const read =
                extensionFacts === null
                  ? yield* factsFromAppServer(connection, threadId, helper.via)
                  : { facts: extensionFacts, notFound: null }
              const rateLimits = yield* rateLimitsFrom(connection, helper.via)
              return { ...read, rateLimits }
            }),
          ).pipe(
            Effect.catch((error) =>
              Effect.succeed({
                facts: extensionFacts ?? {
                  thread: unknownThread(error.message),
                  context: unknownContext(error.message),
                },
                notFound: null,
                rateLimits: noRateLimits(error.message),
              }),
            ),
          )

    const owner: ThreadProbeReport["owner"] =
      selection.kind === "extension"
        ? {
            kind: "extension",
            clientId: selection.extensionOwnerId,
            detail: "a VS Code window owns the thread",
          }
        : selection.kind === "daemon"
          ? { kind: "daemon", clientId: null, detail: "loaded in the app-server daemon" }
          : {
              kind: "none",
              clientId: null,
              detail: "not owned by a VS Code window nor loaded in the daemon",
            }

    // A private app-server cannot reach a thread Codex has no rollout for.
    const notFound = selection.kind === "stdio" ? appServer.notFound : null
    return {
      threadId,
      selected: notFound === null ? selection.kind : null,
      transports:
        notFound === null
          ? transports
          : transports.map((line) =>
              line.transport === "stdio"
                ? {
                    ...line,
                    verdict: "unavailable" as const,
                    available: false,
                    detail: threadNotFoundDetail(threadId, notFound.detail),
                  }
                : line,
            ),
      owner,
      thread: appServer.facts.thread,
      context: appServer.facts.context,
      rateLimits: appServer.rateLimits,
      compatibility: yield* compatibilityOf(binary, binaryDetail, options.compatibilityCacheDir),
    }
  })

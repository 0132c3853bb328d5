/**
 * A scriptable fake Codex app-server speaking the real JSON-RPC wire (JSON text frames, no
 * `jsonrpc` member, `emittedAtMs` extras) behind an in-memory link. It exists for the faults the
 * real binary cannot produce on demand (codex-app-server.md §12): ordering errors, active writer,
 * compaction lifecycles that fail / never finish / race an auto-compaction, token usage before or
 * after completion, `modelContextWindow: null`, status flapping, `systemError`,
 * `ActiveTurnNotSteerable`, `-32001` bursts, rate-limit read variants and sparse updates, `error`
 * notifications, approval requests and their resolution, and transport faults. Several clients may
 * connect at once; notifications and server→client requests go to every initialised client, as
 * the 0.169.0 daemon does. Scripts advance one step per macrotask.
 */
import { parseCodexUuid } from "./codex-uuid-parse.js"
import type { AcceptInMemoryLink, InMemoryServerEnd } from "./in-memory-link.js"

/** A thread the fake knows. */
export interface FakeThreadOptions {
  readonly id: string
  /** Initial status (default idle). */
  readonly status?: { readonly type: string; readonly activeFlags?: ReadonlyArray<string> }
  /** Another process holds the writer: `thread/resume` fails with `-32600 … active writer`. */
  readonly activeWriterElsewhere?: boolean
  /** Listed by `thread/loaded/list` (default true). */
  readonly loaded?: boolean
  /** `last.totalTokens` before any turn (default 50 000). */
  readonly lastTotalTokens?: number
  /**
   * The thread's source kind (default `cli`). `thread/list` without `sourceKinds` lists only
   * `cli` and `vscode` threads, as the real server does, so an `exec` thread needs the filter.
   */
  readonly source?: string
}

/** How a requested compaction plays out. */
export interface CompactionScript {
  /** `never`: the item starts and nothing follows. */
  readonly outcome: "completed" | "failed" | "interrupted" | "never"
  /** Where the compaction turn's `thread/tokenUsage/updated` lands. */
  readonly tokenUsage:
    "before-item-completed" | "after-item-completed" | "after-turn-completed" | "none"
  /** A spontaneous auto-compaction turn right before or right after the requested one. */
  readonly autoCompaction: "none" | "before" | "after"
  /** Also send the deprecated `thread/compacted`. */
  readonly emitThreadCompacted: boolean
  /** `last.totalTokens` reported after compaction. */
  readonly lastTokensAfter: number
}

/** How `account/rateLimits/read` answers. */
export type RateLimitsReadScript =
  | {
      readonly kind: "ok"
      /** Omitted from the answer when undefined (older servers). */
      readonly ordinaryUsageAllowed?: boolean | null
      readonly primaryUsedPercent?: number
      readonly secondaryUsedPercent?: number
    }
  | { readonly kind: "notAuthenticated" }

/** Options of `makeFakeAppServer`. */
export interface FakeAppServerOptions {
  readonly threads?: ReadonlyArray<FakeThreadOptions>
  /** Sent in token usage; `"missing"` omits the member (default 258 400). */
  readonly modelContextWindow?: number | null | "missing"
  readonly compaction?: Partial<CompactionScript>
  readonly rateLimitsRead?: RateLimitsReadScript
  /** Server version in the `initialize` userAgent (default 0.169.0). */
  readonly version?: string
  /** Page size of `thread/loaded/list` (default: one page). */
  readonly loadedListPageSize?: number
}

/** A request the fake received. */
export interface ReceivedRequest {
  readonly clientId: number
  readonly id: string | number | null
  readonly method: string
  readonly params: unknown
}

/** A client's answer to a server→client request. */
export interface ServerRequestAnswer {
  readonly clientId: number
  readonly requestId: string | number
  readonly result?: unknown
  readonly error?: unknown
}

type Json = Record<string, unknown>

type Answer =
  | { readonly result: unknown }
  | { readonly error: { readonly code: number; readonly message: string } }
  | null

interface Session {
  readonly clientId: number
  readonly end: InMemoryServerEnd
  initialized: boolean
}

interface FakeThread {
  readonly id: string
  status: { type: string; activeFlags?: ReadonlyArray<string> }
  activeWriterElsewhere: boolean
  loaded: boolean
  lastTotalTokens: number
  cumulativeTokens: number
  activeTurn: { readonly id: string; readonly kind: "user" | "compact" } | null
  readonly steps: Array<() => void>
  running: boolean
  readonly source: string
  /** Clients that resumed the thread and have not unsubscribed. */
  readonly subscribers: Set<number>
  /** Inputs steered into the running turn, emitted as user messages before it ends. */
  readonly steered: Array<string>
}

/** The fake server: its link acceptor, fault controls and observations. */
export interface FakeAppServer {
  /** Pass to `inMemoryLink` (or use `fakeTransport`). */
  readonly accept: AcceptInMemoryLink
  /** Every request received, in order. */
  readonly received: ReadonlyArray<ReceivedRequest>
  /** Text of every accepted `turn/start`, with its raw params. */
  readonly turnInputs: ReadonlyArray<{
    readonly threadId: string
    readonly text: string
    readonly params: unknown
  }>
  /** Answers clients gave to server→client requests. */
  readonly serverRequestAnswers: ReadonlyArray<ServerRequestAnswer>
  readonly clientCount: () => number
  /** Adds or replaces a thread. */
  readonly addThread: (thread: FakeThreadOptions) => void
  /** Changes how the next compactions play out. */
  readonly scriptCompaction: (script: Partial<CompactionScript>) => void
  readonly scriptRateLimitsRead: (script: RateLimitsReadScript) => void
  /** The next `count` requests (any method but `initialize`) fail with `-32001`. */
  readonly overloadNext: (count: number) => void
  /** Requests for `method` are never answered (to provoke timeouts). */
  readonly silence: (method: string) => void
  /** The next request for `method` gets this error answer. */
  readonly failNext: (
    method: string,
    error: { readonly code: number; readonly message: string },
  ) => void
  /** The next request for `method` gets this (possibly malformed) result. */
  readonly resultNext: (method: string, result: unknown) => void
  /** Marks the thread as held by another process (or not). */
  readonly setActiveWriterElsewhere: (threadId: string, held: boolean) => void
  /** Emits `thread/status/changed`. */
  readonly setStatus: (
    threadId: string,
    status: { readonly type: string; readonly activeFlags?: ReadonlyArray<string> },
  ) => void
  /** Sends a server→client request (approval by default) to every client; returns its id. */
  readonly requestFromServer: (threadId: string, method?: string, extra?: Json) => number
  /** Sends `serverRequest/resolved` and clears the waiting flag. */
  readonly resolveServerRequest: (threadId: string, requestId: number) => void
  /** Emits an `error` notification. */
  readonly emitError: (
    threadId: string,
    options: {
      readonly message?: string
      readonly codexErrorInfo?: unknown
      readonly willRetry: boolean
      readonly turnId?: string
    },
  ) => void
  /** Emits a (possibly sparse) `account/rateLimits/updated`. */
  readonly emitRateLimits: (snapshot: Json) => void
  /** Emits `thread/tokenUsage/updated`. */
  readonly emitTokenUsage: (
    threadId: string,
    turnId: string,
    lastTotalTokens: number,
    modelContextWindow?: number | null | "missing",
  ) => void
  /** Emits any notification. */
  readonly emitNotification: (method: string, params?: unknown) => void
  /** Sends a raw frame to every client (for malformed input). */
  readonly emitRawFrame: (frame: string) => void
  /** Sends a response for an id nobody asked for. */
  readonly answerUnknownId: () => void
  /** The next response is sent twice. */
  readonly duplicateNextResponse: () => void
  /** Closes every client link (a crash or restart). */
  readonly disconnectAll: (reason?: string) => void
  /** Resolves once no thread has scripted steps left. */
  readonly settled: () => Promise<void>
}

const DEFAULT_COMPACTION: CompactionScript = {
  outcome: "completed",
  tokenUsage: "before-item-completed",
  autoCompaction: "none",
  emitThreadCompacted: false,
  lastTokensAfter: 8_000,
}

/** Creates a fake app-server. */
export const makeFakeAppServer = (options: FakeAppServerOptions = {}): FakeAppServer => {
  const version = options.version ?? "0.169.0"
  const sessions = new Set<Session>()
  const threads = new Map<string, FakeThread>()
  const received: Array<ReceivedRequest> = []
  const turnInputs: Array<{ threadId: string; text: string; params: unknown }> = []
  const answers: Array<ServerRequestAnswer> = []
  const silenced = new Set<string>()
  const scripted = new Map<string, Array<Answer>>()
  let compaction: CompactionScript = { ...DEFAULT_COMPACTION, ...options.compaction }
  let rateLimitsRead: RateLimitsReadScript = options.rateLimitsRead ?? { kind: "notAuthenticated" }
  let overloadRemaining = 0
  let duplicateNext = false
  let nextClientId = 1
  let nextServerRequestId = 0
  let counter = 0
  const settleWaiters: Array<() => void> = []
  const enqueue = (method: string, answer: Answer) => {
    const queue = scripted.get(method) ?? []
    queue.push(answer)
    scripted.set(method, queue)
  }

  const uid = (prefix: string) => `${prefix}-${(++counter).toString().padStart(4, "0")}`
  const nowMs = () => Date.now()
  const contextWindow = () =>
    options.modelContextWindow === undefined ? 258_400 : options.modelContextWindow

  const addThread = (t: FakeThreadOptions) => {
    threads.set(t.id, {
      id: t.id,
      status: t.status ?? { type: "idle" },
      activeWriterElsewhere: t.activeWriterElsewhere ?? false,
      loaded: t.loaded ?? true,
      lastTotalTokens: t.lastTotalTokens ?? 50_000,
      cumulativeTokens: t.lastTotalTokens ?? 50_000,
      activeTurn: null,
      steps: [],
      running: false,
      source: t.source ?? "cli",
      subscribers: new Set(),
      steered: [],
    })
  }
  for (const t of options.threads ?? []) addThread(t)

  const sendTo = (session: Session, message: Json) => session.end.send(JSON.stringify(message))
  const broadcast = (method: string, params?: unknown) => {
    const message: Json =
      params === undefined ? { method } : { method, params, emittedAtMs: nowMs() }
    for (const s of sessions) if (s.initialized) sendTo(s, message)
  }

  const checkSettled = () => {
    for (const t of threads.values()) if (t.running || t.steps.length > 0) return
    for (const resolve of settleWaiters.splice(0)) resolve()
  }

  const runSteps = (thread: FakeThread) => {
    if (thread.running) return
    thread.running = true
    const tick = () => {
      const step = thread.steps.shift()
      if (step === undefined) {
        thread.running = false
        checkSettled()
        return
      }
      step()
      setImmediate(tick)
    }
    setImmediate(tick)
  }
  const schedule = (thread: FakeThread, steps: ReadonlyArray<() => void>) => {
    thread.steps.push(...steps)
    runSteps(thread)
  }

  const setStatus = (
    threadId: string,
    status: { type: string; activeFlags?: ReadonlyArray<string> },
  ) => {
    const thread = threads.get(threadId)
    if (thread !== undefined) thread.status = status
    broadcast("thread/status/changed", {
      threadId,
      status:
        status.type === "active"
          ? { type: "active", activeFlags: status.activeFlags ?? [] }
          : { type: status.type },
    })
  }

  const turnObject = (id: string, status: string, error: unknown = null) => ({
    id,
    rootTurnId: id,
    items: [],
    itemsView: "notLoaded",
    status,
    error,
    startedAt: Math.floor(nowMs() / 1000),
    completedAt: status === "inProgress" ? null : Math.floor(nowMs() / 1000),
    durationMs: null,
  })

  const breakdown = (total: number) => ({
    totalTokens: total,
    inputTokens: Math.max(0, total - 100),
    cachedInputTokens: 0,
    cacheWriteInputTokens: 0,
    outputTokens: Math.min(100, total),
    reasoningOutputTokens: 0,
  })

  const tokenUsageParams = (
    thread: FakeThread,
    turnId: string,
    window: number | null | "missing" = contextWindow(),
  ) => ({
    threadId: thread.id,
    turnId,
    tokenUsage: {
      total: breakdown(thread.cumulativeTokens),
      last: breakdown(thread.lastTotalTokens),
      ...(window === "missing" ? {} : { modelContextWindow: window }),
    },
  })

  const item = (thread: FakeThread, turnId: string, phase: "started" | "completed", value: Json) =>
    broadcast(`item/${phase}`, {
      item: value,
      threadId: thread.id,
      turnId,
      ...(phase === "started" ? { startedAtMs: nowMs() } : { completedAtMs: nowMs() }),
    })

  const userTurnSteps = (
    thread: FakeThread,
    turnId: string,
    text: string,
  ): ReadonlyArray<() => void> => {
    const userItem = {
      type: "userMessage",
      id: uid("item"),
      content: [{ type: "text", text, text_elements: [] }],
    }
    const agentItem = { type: "agentMessage", id: uid("msg"), text: `reply to ${text}` }
    return [
      () => setStatus(thread.id, { type: "active", activeFlags: [] }),
      () =>
        broadcast("turn/started", { threadId: thread.id, turn: turnObject(turnId, "inProgress") }),
      () => item(thread, turnId, "started", userItem),
      () => item(thread, turnId, "completed", userItem),
      () => item(thread, turnId, "started", agentItem),
      () => item(thread, turnId, "completed", agentItem),
      () => {
        thread.lastTotalTokens += 1_000
        thread.cumulativeTokens += thread.lastTotalTokens
        broadcast("thread/tokenUsage/updated", tokenUsageParams(thread, turnId))
      },
      () =>
        broadcast("account/rateLimits/updated", {
          rateLimits: {
            limitId: "codex",
            primary: { usedPercent: 12, windowDurationMins: 300, resetsAt: null },
            secondary: null,
          },
        }),
      () => {
        for (const steeredText of thread.steered.splice(0)) {
          const steeredItem = {
            type: "userMessage",
            id: uid("item"),
            content: [{ type: "text", text: steeredText, text_elements: [] }],
          }
          item(thread, turnId, "started", steeredItem)
          item(thread, turnId, "completed", steeredItem)
        }
      },
      () => setStatus(thread.id, { type: "idle" }),
      () => {
        thread.activeTurn = null
        broadcast("turn/completed", { threadId: thread.id, turn: turnObject(turnId, "completed") })
      },
    ]
  }

  /** How 0.169 ends a running turn on request: idle first, then `turn/completed` (interrupted). */
  const interruptSteps = (thread: FakeThread, turnId: string): Array<() => void> => [
    () => setStatus(thread.id, { type: "idle" }),
    () => {
      thread.activeTurn = null
      broadcast("turn/completed", { threadId: thread.id, turn: turnObject(turnId, "interrupted") })
    },
  ]

  const compactionTurnSteps = (
    thread: FakeThread,
    script: CompactionScript,
    auto: boolean,
  ): ReadonlyArray<() => void> => {
    const turnId = uid(auto ? "auto-turn" : "compact-turn")
    const itemId = uid("compaction")
    const compactionItem = { type: "contextCompaction", id: itemId }
    const usage = () => {
      thread.lastTotalTokens = script.lastTokensAfter
      thread.cumulativeTokens += script.lastTokensAfter
      broadcast("thread/tokenUsage/updated", tokenUsageParams(thread, turnId))
    }
    const finish =
      (status: string, error: unknown = null) =>
      () => {
        thread.activeTurn = null
        broadcast("turn/completed", {
          threadId: thread.id,
          turn: turnObject(turnId, status, error),
        })
      }
    const steps: Array<() => void> = [
      () => {
        thread.activeTurn = { id: turnId, kind: auto ? "user" : "compact" }
        setStatus(thread.id, { type: "active", activeFlags: [] })
      },
      () =>
        broadcast("turn/started", { threadId: thread.id, turn: turnObject(turnId, "inProgress") }),
      () => item(thread, turnId, "started", compactionItem),
    ]
    if (script.tokenUsage === "before-item-completed" && script.outcome === "completed")
      steps.push(usage)
    switch (script.outcome) {
      case "never":
        return steps
      case "failed":
        steps.push(
          () =>
            broadcast("error", {
              error: {
                message: "compaction failed",
                codexErrorInfo: "other",
                additionalDetails: null,
              },
              willRetry: false,
              threadId: thread.id,
              turnId,
            }),
          () => setStatus(thread.id, { type: "idle" }),
          finish("failed", {
            message: "compaction failed",
            codexErrorInfo: "other",
            additionalDetails: null,
          }),
        )
        return steps
      case "interrupted":
        steps.push(() => setStatus(thread.id, { type: "idle" }), finish("interrupted"))
        return steps
      case "completed":
        steps.push(() => item(thread, turnId, "completed", compactionItem))
        if (script.tokenUsage === "after-item-completed") steps.push(usage)
        if (script.emitThreadCompacted)
          steps.push(() => broadcast("thread/compacted", { threadId: thread.id, turnId }))
        steps.push(() => setStatus(thread.id, { type: "idle" }), finish("completed"))
        if (script.tokenUsage === "after-turn-completed") steps.push(usage)
        return steps
    }
  }

  const autoScript = (): CompactionScript => ({
    ...DEFAULT_COMPACTION,
    lastTokensAfter: compaction.lastTokensAfter,
  })

  const rateLimitSnapshot = (primary: number, secondary: number | undefined) => ({
    limitId: "codex",
    limitName: null,
    normalModelSlug: null,
    primary: {
      usedPercent: primary,
      windowDurationMins: 300,
      resetsAt: Math.floor(nowMs() / 1000) + 3_600,
    },
    secondary:
      secondary === undefined
        ? null
        : {
            usedPercent: secondary,
            windowDurationMins: 10_080,
            resetsAt: Math.floor(nowMs() / 1000) + 86_400,
          },
    credits: null,
    individualLimit: null,
    spendControlReached: null,
    planType: "plus",
    rateLimitReachedType: null,
  })

  const invalid = (message: string): Answer => ({ error: { code: -32600, message } })

  const THREAD_METHODS = new Set([
    "thread/resume",
    "thread/read",
    "thread/unsubscribe",
    "thread/compact/start",
    "turn/start",
    "turn/interrupt",
  ])

  const handle = (session: Session, method: string, params: Json): Answer => {
    const rawThreadId = typeof params["threadId"] === "string" ? params["threadId"] : undefined
    let threadId = rawThreadId
    if (rawThreadId !== undefined && THREAD_METHODS.has(method) && !threads.has(rawThreadId)) {
      // Registered ids are taken as they are (readable tests); any other id is parsed like 0.169.
      const parsed = parseCodexUuid(rawThreadId)
      if (parsed._tag === "Invalid")
        return invalid(
          `invalid ${method === "thread/resume" ? "session" : "thread"} id: ${parsed.error}`,
        )
      threadId = parsed.id
    }
    const thread = threadId === undefined ? undefined : threads.get(threadId)
    switch (method) {
      case "thread/resume": {
        if (threadId === undefined) return invalid("Invalid request: missing field `threadId`")
        if (thread === undefined) return invalid(`no rollout found for thread id ${threadId}`)
        if (thread.activeWriterElsewhere)
          return invalid(`thread ${threadId} already has an active writer`)
        thread.loaded = true
        thread.subscribers.add(session.clientId)
        const t = thread
        setImmediate(() => {
          setStatus(t.id, t.status)
          broadcast(
            "thread/tokenUsage/updated",
            tokenUsageParams(t, t.activeTurn?.id ?? uid("turn")),
          )
        })
        return {
          result: {
            thread: {
              id: thread.id,
              preview: "",
              status: thread.status,
              cwd: "/fake",
              modelProvider: "mock",
              cliVersion: version,
            },
            model: "mock-model",
          },
        }
      }
      case "thread/read":
        if (threadId === undefined) return invalid("Invalid request: missing field `threadId`")
        // 0.169 says "not loaded" for an id it has no rollout for; a stored thread reads fine.
        if (thread === undefined) return invalid(`thread not loaded: ${threadId}`)
        return {
          result: {
            thread: {
              id: thread.id,
              preview: "",
              status: thread.loaded ? thread.status : { type: "notLoaded" },
              cwd: "/fake",
              path: null,
              modelProvider: "mock",
              cliVersion: version,
            },
          },
        }
      case "thread/unsubscribe":
        if (threadId === undefined) return invalid("Invalid request: missing field `threadId`")
        if (thread === undefined || !thread.loaded) return { result: { status: "notLoaded" } }
        return {
          result: {
            status: thread.subscribers.delete(session.clientId) ? "unsubscribed" : "notSubscribed",
          },
        }
      case "thread/compact/start": {
        if (threadId === undefined) return invalid("Invalid request: missing field `threadId`")
        if (thread === undefined || !thread.loaded) return invalid(`thread not found: ${threadId}`)
        const script = compaction
        // 0.169 does not wait for a running regular turn: it ends it (interrupted), then compacts.
        const running = thread.activeTurn?.kind === "user" ? thread.activeTurn.id : null
        if (running !== null) thread.steps.length = 0
        const steps = [
          ...(running === null ? [] : interruptSteps(thread, running)),
          ...(script.autoCompaction === "before"
            ? compactionTurnSteps(thread, autoScript(), true)
            : []),
          ...compactionTurnSteps(thread, script, false),
          ...(script.autoCompaction === "after" && script.outcome !== "never"
            ? compactionTurnSteps(thread, autoScript(), true)
            : []),
        ]
        // Steps start on a later macrotask, after the `{}` answer (a microtask) is delivered.
        schedule(thread, steps)
        return { result: {} }
      }
      case "turn/start": {
        if (threadId === undefined) return invalid("Invalid request: missing field `threadId`")
        if (thread === undefined || !thread.loaded) return invalid(`thread not found: ${threadId}`)
        if (thread.activeTurn?.kind === "compact") {
          return {
            error: {
              code: -32603,
              message: "failed to submit turn input: ActiveTurnNotSteerable { turn_kind: Compact }",
            },
          }
        }
        const input = Array.isArray(params["input"]) ? (params["input"] as ReadonlyArray<Json>) : []
        const text = input.map((i) => (typeof i["text"] === "string" ? i["text"] : "")).join("")
        turnInputs.push({ threadId, text, params })
        if (thread.activeTurn !== null) {
          // 0.169 steers input given while a regular turn runs into that turn and answers with it.
          thread.steered.push(text)
          return { result: { turn: turnObject(thread.activeTurn.id, "inProgress") } }
        }
        const turnId = uid("turn")
        thread.activeTurn = { id: turnId, kind: "user" }
        schedule(thread, userTurnSteps(thread, turnId, text))
        return { result: { turn: turnObject(turnId, "inProgress") } }
      }
      case "turn/interrupt": {
        if (threadId === undefined) return invalid("Invalid request: missing field `threadId`")
        if (thread === undefined || !thread.loaded) return invalid(`thread not found: ${threadId}`)
        if (thread.activeTurn === null) return invalid("no active turn to interrupt")
        thread.steps.length = 0
        schedule(thread, interruptSteps(thread, thread.activeTurn.id))
        return { result: {} }
      }
      case "account/rateLimits/read": {
        if (rateLimitsRead.kind === "notAuthenticated")
          return invalid("codex account authentication required to read rate limits")
        const snapshot = rateLimitSnapshot(
          rateLimitsRead.primaryUsedPercent ?? 40,
          rateLimitsRead.secondaryUsedPercent,
        )
        return {
          result: {
            ...(rateLimitsRead.ordinaryUsageAllowed === undefined
              ? {}
              : { ordinaryUsageAllowed: rateLimitsRead.ordinaryUsageAllowed }),
            rateLimits: snapshot,
            rateLimitsByLimitId: { codex: snapshot },
            rateLimitResetCredits: null,
            accountId: "acct-secret",
            rateLimitUpsell: null,
          },
        }
      }
      case "account/read":
        return { result: { account: null, userId: null, requiresOpenaiAuth: false } }
      case "thread/list": {
        // Like 0.169: interactive sources by default, limit clamped to at least 1 (default 25),
        // an opaque `<time>|<id>` cursor after the last thread of a full page.
        const kinds = Array.isArray(params["sourceKinds"])
          ? (params["sourceKinds"] as ReadonlyArray<unknown>)
          : ["cli", "vscode"]
        const listed = [...threads.values()].filter((t) => kinds.includes(t.source))
        const cursor = params["cursor"]
        let start = 0
        if (typeof cursor === "string") {
          const after = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\|(.+)$/.exec(cursor)?.[1]
          const index = after === undefined ? -1 : listed.findIndex((t) => t.id === after)
          if (after === undefined) return invalid(`invalid cursor: ${cursor}`)
          start = index + 1
        }
        const limit = typeof params["limit"] === "number" ? Math.max(1, params["limit"]) : 25
        const page = listed.slice(start, start + limit)
        const last = page.at(-1)
        return {
          result: {
            data: page.map((t) => ({
              id: t.id,
              preview: "",
              status: session.initialized && t.loaded ? t.status : { type: "notLoaded" },
              cliVersion: version,
              source: t.source,
            })),
            nextCursor:
              last !== undefined && start + limit < listed.length
                ? `${new Date(nowMs()).toISOString().slice(0, 19)}Z|${last.id}`
                : null,
          },
        }
      }
      case "thread/loaded/list": {
        const ids = [...threads.values()].filter((t) => t.loaded).map((t) => t.id)
        const pageSize = options.loadedListPageSize ?? ids.length
        const start = typeof params["cursor"] === "string" ? Number(params["cursor"]) : 0
        const end = start + Math.max(1, pageSize)
        return {
          result: {
            data: ids.slice(start, end),
            nextCursor: end < ids.length ? String(end) : null,
          },
        }
      }
      default:
        return invalid(`Invalid request: unknown variant \`${method}\``)
    }
  }

  const onRequest = (session: Session, id: string | number, method: string, params: Json) => {
    received.push({ clientId: session.clientId, id, method, params })
    const reply = (answer: Answer) => {
      if (answer === null) return
      const message = { id, ...answer }
      sendTo(session, message)
      if (duplicateNext) {
        duplicateNext = false
        sendTo(session, message)
      }
    }
    if (method === "initialize") {
      if (session.initialized) return reply(invalid("Already initialized"))
      session.initialized = true
      const clientInfo = (params["clientInfo"] ?? {}) as Json
      const name = typeof clientInfo["name"] === "string" ? clientInfo["name"] : "client"
      return reply({
        result: {
          userAgent: `${name}/${version} (Fake; x86_64)`,
          codexHome: "/fake/codex-home",
          platformFamily: "unix",
          platformOs: "linux",
        },
      })
    }
    if (!session.initialized) return reply(invalid("Not initialized"))
    if (overloadRemaining > 0) {
      overloadRemaining--
      return reply({ error: { code: -32001, message: "Server overloaded; retry later." } })
    }
    if (silenced.has(method)) return
    const next = scripted.get(method)?.shift()
    if (next !== undefined) return reply(next)
    reply(handle(session, method, params))
  }

  const accept: AcceptInMemoryLink = (end) => {
    const session: Session = { clientId: nextClientId++, end, initialized: false }
    sessions.add(session)
    return {
      onFrame: (frame) => {
        let message: Json
        try {
          message = JSON.parse(frame) as Json
        } catch {
          return
        }
        const id = message["id"] as string | number | undefined
        const method = message["method"]
        const params = (
          typeof message["params"] === "object" && message["params"] !== null
            ? message["params"]
            : {}
        ) as Json
        if (typeof method === "string" && id !== undefined) onRequest(session, id, method, params)
        else if (typeof method === "string")
          received.push({ clientId: session.clientId, id: null, method, params })
        else if (id !== undefined)
          answers.push({
            clientId: session.clientId,
            requestId: id,
            ...("result" in message ? { result: message["result"] } : {}),
            ...("error" in message ? { error: message["error"] } : {}),
          })
      },
      onClose: () => {
        sessions.delete(session)
        for (const t of threads.values()) t.subscribers.delete(session.clientId)
      },
    }
  }

  return {
    accept,
    received,
    turnInputs,
    serverRequestAnswers: answers,
    clientCount: () => sessions.size,
    addThread,
    scriptCompaction: (script) => {
      compaction = { ...compaction, ...script }
    },
    scriptRateLimitsRead: (script) => {
      rateLimitsRead = script
    },
    overloadNext: (count) => {
      overloadRemaining = count
    },
    silence: (method) => silenced.add(method),
    failNext: (method, error) => enqueue(method, { error: { ...error } }),
    resultNext: (method, result) => enqueue(method, { result }),
    setActiveWriterElsewhere: (threadId, held) => {
      const thread = threads.get(threadId)
      if (thread !== undefined) thread.activeWriterElsewhere = held
    },
    setStatus,
    requestFromServer: (threadId, method = "item/commandExecution/requestApproval", extra = {}) => {
      const id = nextServerRequestId++
      const thread = threads.get(threadId)
      const turnId = thread?.activeTurn?.id ?? "turn-none"
      const flag =
        method === "item/tool/requestUserInput" ? "waitingOnUserInput" : "waitingOnApproval"
      setStatus(threadId, { type: "active", activeFlags: [flag] })
      for (const s of sessions) {
        if (s.initialized)
          sendTo(s, {
            method,
            id,
            params: { threadId, turnId, itemId: uid("item"), startedAtMs: nowMs(), ...extra },
          })
      }
      return id
    },
    resolveServerRequest: (threadId, requestId) => {
      broadcast("serverRequest/resolved", { threadId, requestId })
      const thread = threads.get(threadId)
      setStatus(
        threadId,
        thread?.activeTurn === null || thread === undefined
          ? { type: "idle" }
          : { type: "active", activeFlags: [] },
      )
    },
    emitError: (threadId, e) =>
      broadcast("error", {
        error: {
          message: e.message ?? "error",
          codexErrorInfo: e.codexErrorInfo ?? null,
          additionalDetails: null,
        },
        willRetry: e.willRetry,
        threadId,
        turnId: e.turnId ?? threads.get(threadId)?.activeTurn?.id ?? "turn-none",
      }),
    emitRateLimits: (snapshot) => broadcast("account/rateLimits/updated", { rateLimits: snapshot }),
    emitTokenUsage: (threadId, turnId, lastTotalTokens, window) => {
      const thread = threads.get(threadId)
      if (thread === undefined) return
      thread.lastTotalTokens = lastTotalTokens
      thread.cumulativeTokens += lastTotalTokens
      broadcast(
        "thread/tokenUsage/updated",
        tokenUsageParams(thread, turnId, window ?? contextWindow()),
      )
    },
    emitNotification: (method, params) => broadcast(method, params),
    emitRawFrame: (frame) => {
      for (const s of sessions) s.end.send(frame)
    },
    answerUnknownId: () => {
      for (const s of sessions) sendTo(s, { id: 987_654, result: {} })
    },
    duplicateNextResponse: () => {
      duplicateNext = true
    },
    disconnectAll: (reason = "server closed the connection") => {
      for (const s of [...sessions]) s.end.close(reason)
    },
    settled: () =>
      new Promise<void>((resolve) => {
        settleWaiters.push(resolve)
        checkSettled()
      }),
  }
}

/**
 * Harness for the compaction worker on the VS Code extension IPC path. `runWorker` drives a
 * `ThreadController` from `openExtensionController`, connected over a real unix socket to the
 * fake router of `@baton/ipc-codex/testing`; the journal lives in a real temp directory.
 *
 * Guarantees:
 * - time is a TestClock whose pending sleeps are tracked, so a scenario moves the clock exactly to
 *   the deadline of the timer it means (idle debounce, a budget, the cancel poll, a reconnect
 *   delay) once that timer is armed: no wall-clock sleeps, no guessing how far to move;
 * - waits for IO (socket frames, journal writes) yield event-loop turns without moving the clock,
 *   bounded by a wall-clock guard that fails the test with the job's status;
 * - the owner window is scripted by the test (`ScriptedOwner`): it answers the compact and
 *   start-turn requests after checking them the way Rekall's fake router does (violations are
 *   collected, not thrown) and publishes every state change as a snapshot or as a patch batch;
 * - the job is anchored like the schedule path must anchor it: `threadUserBoundary` of the
 *   controller's state at schedule time.
 */
import { existsSync } from "node:fs"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { isDeepStrictEqual } from "node:util"
import { bindHandoff } from "@baton/handoff"
import type { BoundHandoff, Handoff } from "@baton/handoff"
import { openExtensionController } from "@baton/ipc-codex"
import type {
  ExtensionControllerOptions,
  IpcFileSystem,
  IpcSocketConnector,
  ThreadController,
  ThreadState,
} from "@baton/ipc-codex"
import {
  FakeExtensionRouter,
  conversationStateFixture,
  dropConnection,
  fakeRouterEnvironment,
  nodeIpcLayer,
  replyWith,
  withholdReply,
} from "@baton/ipc-codex/testing"
import type { ConversationFixture, JsonObject, ReplyAction } from "@baton/ipc-codex/testing"
import {
  Journal,
  ProcessProbe,
  isTerminalStatus,
  journalLayer,
  journalPaths,
  nodeJournalFileSystemLayer,
  runWorker,
  threadUserBoundary,
} from "@baton/compaction"
import type {
  EventLogEntry,
  HistoryEntry,
  JournalFileSystem,
  JobRecord,
  JobSettings,
  JobStatus,
  ScheduleResult,
  StoredJob,
  WorkerError,
} from "@baton/compaction"
import { Clock, Context, Duration, Effect, Fiber, Layer } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"

export const THREAD = "thread-1"
export const JOB = "job-0001"
export const SUMMARY = "Parser ported; secret-free summary"
export const NEXT_STEP = "Run the e2e suite and stop"
export const PRESERVE = "src/parser.ts keeps the new grammar"
export const CONTINUATION_TURN = "resumed-turn"
export const COMPACT = "thread-follower-compact-thread"
export const START_TURN = "thread-follower-start-turn"
/**
 * The idle debounce every job here gets (pinned, so its timer is told apart from every other
 * sleep in play: cancel poll 500 ms, heartbeat 10 s, reconnect delay, budgets in minutes).
 */
export const DEBOUNCE_MS = 250
/** The cancel-marker poll of `runWorker` (default). */
export const CANCEL_POLL_MS = 500
/** The session's reconnect delay here (unlike any other sleep in play). */
export const RECONNECT_MS = 40

/** How long a wait for IO may take before the test fails (wall clock; never moves TestClock). */
const GUARD_MS = 15_000

// ---------------------------------------------------------------------------------------------
// TestClock with tracked sleeps
// ---------------------------------------------------------------------------------------------

/** A sleep that has been armed and has not ended yet. */
interface PendingSleep {
  readonly seq: number
  readonly ms: number
  readonly deadline: number
}

/** Every sleep armed on the clock, numbered in arming order. */
class SleepTracker {
  readonly pending = new Set<PendingSleep>()
  seq = 0
}

/** Provides a Clock that is the outer TestClock with its sleeps recorded in `tracker`. */
const trackedClockLayer = (tracker: SleepTracker): Layer.Layer<never> =>
  Layer.effectContext(
    Effect.map(Clock.clockWith(Effect.succeed), (clock) => {
      const base = clock as TestClock.TestClock
      const tracked: TestClock.TestClock = {
        currentTimeMillisUnsafe: () => base.currentTimeMillisUnsafe(),
        currentTimeMillis: base.currentTimeMillis,
        currentTimeNanosUnsafe: () => base.currentTimeNanosUnsafe(),
        currentTimeNanos: base.currentTimeNanos,
        monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
        monotonicTimeNanos: base.monotonicTimeNanos,
        sleep: (duration) =>
          Effect.suspend(() => {
            const ms = Duration.toMillis(duration)
            const entry = { seq: ++tracker.seq, ms, deadline: base.currentTimeMillisUnsafe() + ms }
            tracker.pending.add(entry)
            return base.sleep(duration).pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  tracker.pending.delete(entry)
                }),
              ),
            )
          }),
        adjust: (duration) => base.adjust(duration),
        setTime: (timestamp) => base.setTime(timestamp),
        withLive: (effect) => base.withLive(effect),
      }
      return Context.make(Clock.Clock, tracked)
    }),
  )

// ---------------------------------------------------------------------------------------------
// The owner window
// ---------------------------------------------------------------------------------------------

/** One JSON Patch-like operation as the extension streams it. */
interface StatePatch {
  readonly op: "add" | "replace" | "remove"
  readonly path: ReadonlyArray<string | number>
  readonly value?: unknown
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The patches that turn `before` into `after`: per key for objects, per index plus appends (`-`)
 * for arrays that did not shrink, a replace otherwise.
 */
const jsonPatches = (
  before: unknown,
  after: unknown,
  path: ReadonlyArray<string | number> = [],
): ReadonlyArray<StatePatch> => {
  if (isDeepStrictEqual(before, after)) return []
  if (isPlainObject(before) && isPlainObject(after)) {
    const removed = Object.keys(before)
      .filter((key) => !(key in after))
      .map((key): StatePatch => ({ op: "remove", path: [...path, key] }))
    const changed = Object.keys(after).flatMap((key) =>
      key in before
        ? jsonPatches(before[key], after[key], [...path, key])
        : [{ op: "add" as const, path: [...path, key], value: after[key] }],
    )
    return [...removed, ...changed]
  }
  if (Array.isArray(before) && Array.isArray(after) && after.length >= before.length)
    return [
      ...before.flatMap((item, index) => jsonPatches(item, after[index], [...path, index])),
      ...after
        .slice(before.length)
        .map((value): StatePatch => ({ op: "add", path: [...path, "-"], value })),
    ]
  return [{ op: "replace", path, value: after }]
}

interface ItemJson {
  id: string
  type: string
  completed?: boolean
  content?: ReadonlyArray<unknown>
}

interface TurnJson {
  turnId: string
  turnStartedAtMs?: number
  status: string
  params?: Record<string, unknown>
  items: Array<ItemJson>
}

/** The parts of the extension's `conversationState` the owner changes. */
export interface ConversationJson {
  threadRuntimeStatus: { type: string; activeFlags?: Array<string> }
  requests: Array<unknown>
  unconfirmedTurnSubmissions: Array<unknown>
  turns: Array<TurnJson>
  latestTokenUsageInfo?: {
    last: { totalTokens?: number; inputTokens?: number }
    total: { totalTokens?: number }
    modelContextWindow: number | null
  } | null
  [key: string]: unknown
}

/** Token usage after the compaction: numbers, or the telemetry removed, or left as it was. */
export type UsageAfter =
  { readonly tokens: number; readonly window?: number | null } | "missing" | "unchanged"

/** How the owner answers `thread-follower-compact-thread`. */
export type CompactReply = "ack" | "withhold" | "disconnect"
/** How the owner answers `thread-follower-start-turn`. */
export type StartTurnReply = "turn" | "bad-ack" | "withhold" | "disconnect"

/** What a correct continuation must carry. */
interface ContinuationExpectations {
  readonly jobId: string
  readonly handoffPath: string
  readonly nextStep: string
  readonly preserve: string
}

const userTextItems = (id: string, text: string): Array<ItemJson> => [
  { id, type: "userMessage", content: [{ type: "text", text }] },
]

/**
 * The owner window of the thread, scripted by the test. It answers the two writes after checking
 * them (like Rekall's fake router), and publishes state changes as snapshots or patch batches.
 */
export class ScriptedOwner {
  /** What was wrong with a request the owner received (must stay empty). */
  readonly violations: Array<string> = []
  /** The continuation texts received, in order. */
  readonly continuationTexts: Array<string> = []
  publish: "snapshots" | "patches"
  onCompact: CompactReply = "ack"
  onStartTurn: StartTurnReply = "turn"
  /** What the owner published: full snapshots and patch batches (re-follow snapshots excluded). */
  readonly published = { snapshots: 0, patchBatches: 0 }
  /** The next patch batch claims a base revision behind the held one (a missed broadcast). */
  gapNext = false
  /** Set once the job is scheduled: what the continuation must contain. */
  expectations: ContinuationExpectations | null = null
  private compactions = 0
  private clockMs = 1_000

  constructor(
    readonly router: FakeExtensionRouter,
    publish: "snapshots" | "patches",
  ) {
    this.publish = publish
    router.onRequest(COMPACT, (request) => this.compactRequested(request))
    router.onRequest(START_TURN, (request) => this.startTurnRequested(request))
  }

  /** A copy of the state the owner holds now. */
  get state(): ConversationJson {
    return structuredClone(this.router.state) as ConversationJson
  }

  /** Changes the state and publishes it (snapshot or the patches between the two states). */
  async update(change: (state: ConversationJson) => void): Promise<void> {
    const next = this.state
    change(next)
    if (this.publish === "snapshots") {
      this.published.snapshots += 1
      return this.router.sendSnapshot(next)
    }
    const patches = jsonPatches(this.router.state, next)
    this.router.state = next
    this.published.patchBatches += 1
    const gap = this.gapNext
    this.gapNext = false
    await this.router.sendPatches(patches, gap ? { baseRevision: this.router.revision - 1 } : {})
  }

  /** The user sends a new message: a new turn, the thread active. */
  newUserTurn(turnId: string, text: string): Promise<void> {
    return this.update((s) => {
      s.threadRuntimeStatus = { type: "active" }
      s.turns.push({
        turnId,
        turnStartedAtMs: this.nextMs(),
        status: "inProgress",
        params: { threadId: THREAD, input: [{ type: "text", text, text_elements: [] }] },
        items: userTextItems(`${turnId}-message`, text),
      })
    })
  }

  /** The user steers the latest user turn (a `steeringUserMessage` item is added). */
  steer(text: string): Promise<void> {
    return this.update((s) => {
      const user = s.turns.find((t) => t.turnId === "user-turn")
      user?.items.push({
        id: "steer-1",
        type: "steeringUserMessage",
        content: [{ type: "text", text }],
      })
    })
  }

  /** The user stops the latest user turn (`interrupted`), and the thread goes idle. */
  stopUserTurn(): Promise<void> {
    return this.update((s) => {
      s.threadRuntimeStatus = { type: "idle" }
      for (const t of s.turns) if (t.turnId === "user-turn") t.status = "interrupted"
    })
  }

  /** Sets the runtime status (no user input involved). */
  setStatus(type: "idle" | "active"): Promise<void> {
    return this.update((s) => {
      s.threadRuntimeStatus = { type }
    })
  }

  /** The compaction turn starts (a new turn with a contextCompaction item not yet completed). */
  startCompaction(): Promise<void> {
    this.compactions += 1
    const n = this.compactions
    return this.update((s) => {
      s.threadRuntimeStatus = { type: "active" }
      s.turns.push({
        turnId: `compact-turn-${n}`,
        turnStartedAtMs: this.nextMs(),
        status: "inProgress",
        params: { input: [] },
        items: [{ id: `compaction-item-${n}`, type: "contextCompaction", completed: false }],
      })
    })
  }

  /** The running compaction completes; the usage after it and the idleness are the test's. */
  finishCompaction(after: UsageAfter, options: { readonly idle?: boolean } = {}): Promise<void> {
    const turnId = `compact-turn-${this.compactions}`
    return this.update((s) => {
      const turn = s.turns.find((t) => t.turnId === turnId)
      if (turn !== undefined) {
        turn.status = "completed"
        for (const item of turn.items) if (item.type === "contextCompaction") item.completed = true
      }
      if (options.idle !== false) s.threadRuntimeStatus = { type: "idle" }
      if (after === "missing") delete s.latestTokenUsageInfo
      else if (after !== "unchanged") setUsage(s, after.tokens, after.window)
    })
  }

  /** New token usage telemetry. */
  usage(tokens: number, window: number | null = 100_000): Promise<void> {
    return this.update((s) => {
      setUsage(s, tokens, window)
    })
  }

  /** The continuation turn runs (our text as its user message) and, unless told, completes. */
  async runContinuation(end: "completed" | "never" = "completed"): Promise<void> {
    const text = this.continuationTexts.at(-1) ?? ""
    await this.update((s) => {
      s.threadRuntimeStatus = { type: "active" }
      s.turns.push({
        turnId: CONTINUATION_TURN,
        turnStartedAtMs: this.nextMs(),
        status: "inProgress",
        params: {
          threadId: THREAD,
          clientUserMessageId: this.expectations?.jobId,
          input: [{ type: "text", text, text_elements: [] }],
        },
        items: userTextItems("continuation-message", text),
      })
    })
    if (end === "never") return
    await this.update((s) => {
      s.threadRuntimeStatus = { type: "idle" }
      for (const t of s.turns) if (t.turnId === CONTINUATION_TURN) t.status = end
    })
  }

  private nextMs(): number {
    this.clockMs += 1_000
    return this.clockMs
  }

  private check(method: string, what: string, ok: boolean): void {
    if (!ok) this.violations.push(`${method}: ${what}`)
  }

  private checkEnvelope(method: string, request: JsonObject, version: number): void {
    this.check(method, `version ${String(request["version"])}`, request["version"] === version)
    this.check(
      method,
      `targetClientId ${String(request["targetClientId"])} is not the owner ${String(this.router.ownerId)}`,
      request["targetClientId"] === this.router.ownerId,
    )
    this.check(method, "hostId is not local", request["hostId"] === "local")
  }

  private compactRequested(request: JsonObject): ReplyAction {
    const state = this.state
    this.checkEnvelope(COMPACT, request, 2)
    this.check(
      COMPACT,
      "params are not exactly {conversationId}",
      isDeepStrictEqual(request["params"], { conversationId: THREAD }),
    )
    this.check(
      COMPACT,
      "sent while the thread is active",
      state.threadRuntimeStatus.type === "idle",
    )
    this.check(COMPACT, "sent with a pending request", state.requests.length === 0)
    switch (this.onCompact) {
      case "ack":
        return replyWith({ ok: true })
      case "withhold":
        return withholdReply
      case "disconnect":
        return dropConnection
    }
  }

  private startTurnRequested(request: JsonObject): ReplyAction {
    const state = this.state
    this.checkEnvelope(START_TURN, request, 3)
    const params = request["params"] as {
      readonly conversationId?: unknown
      readonly turnStart?: {
        readonly request?: {
          readonly threadId?: unknown
          readonly clientUserMessageId?: unknown
          readonly input?: ReadonlyArray<{
            type?: unknown
            text?: unknown
            text_elements?: unknown
          }>
        }
        readonly context?: unknown
      }
    }
    const turnStart = params.turnStart
    const inner = turnStart?.request
    const input = inner?.input ?? []
    const text = typeof input[0]?.text === "string" ? input[0].text : ""
    this.continuationTexts.push(text)
    this.check(START_TURN, "conversationId", params.conversationId === THREAD)
    this.check(
      START_TURN,
      "params carry more than {conversationId, turnStart: {request, context}}",
      isDeepStrictEqual(Object.keys(params).sort(), ["conversationId", "turnStart"]) &&
        isDeepStrictEqual(Object.keys(turnStart ?? {}).sort(), ["context", "request"]),
    )
    // Only these three: no model, approval, sandbox or effort override.
    this.check(
      START_TURN,
      "request carries more than threadId, clientUserMessageId and input",
      isDeepStrictEqual(Object.keys(inner ?? {}).sort(), [
        "clientUserMessageId",
        "input",
        "threadId",
      ]),
    )
    this.check(START_TURN, "threadId", inner?.threadId === THREAD)
    this.check(
      START_TURN,
      "context is not exactly {inheritThreadSettings: true}",
      isDeepStrictEqual(turnStart?.context, { inheritThreadSettings: true }),
    )
    this.check(
      START_TURN,
      "input is not one text element",
      input.length === 1 &&
        input[0]?.type === "text" &&
        isDeepStrictEqual(input[0]?.text_elements, []),
    )
    const want = this.expectations
    if (want === null) this.check(START_TURN, "no continuation was expected", false)
    else {
      this.check(
        START_TURN,
        "clientUserMessageId is not the job id",
        inner?.clientUserMessageId === want.jobId,
      )
      for (const [what, needle] of [
        ["the job id", want.jobId],
        ["nextStep", want.nextStep],
        ["preserve[0]", want.preserve],
        ["the handoff path", want.handoffPath],
      ] as const)
        this.check(START_TURN, `text lacks ${what}`, text.includes(needle))
    }
    const compaction = state.turns.find((t) => t.turnId === `compact-turn-${this.compactions}`)
    this.check(
      START_TURN,
      "sent before the compaction completed",
      compaction?.items.every((i) => i.type !== "contextCompaction" || i.completed === true) ??
        false,
    )
    this.check(
      START_TURN,
      "sent while the thread is active",
      state.threadRuntimeStatus.type === "idle",
    )
    switch (this.onStartTurn) {
      case "turn":
        return replyWith({ result: { turn: { id: CONTINUATION_TURN, status: "inProgress" } } })
      case "bad-ack":
        return replyWith({ ok: true })
      case "withhold":
        return withholdReply
      case "disconnect":
        return dropConnection
    }
  }
}

const setUsage = (state: ConversationJson, tokens: number, window: number | null = 100_000) => {
  state.latestTokenUsageInfo = {
    last: { totalTokens: tokens, inputTokens: 1 },
    total: { totalTokens: 250_000 + tokens },
    modelContextWindow: window,
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

/** Which handoff the job gets. */
export type HandoffKind = "resume" | "no-resume" | "none"

/** The handoff given for a kind (null: none). */
export const handoffOf = (kind: HandoffKind): Handoff | null =>
  kind === "none"
    ? null
    : {
        summary: SUMMARY,
        preserve: [PRESERVE],
        discard: [],
        nextStep: NEXT_STEP,
        resume: kind === "resume",
      }

type Env =
  Scope.Scope | IpcFileSystem | IpcSocketConnector | Journal | JournalFileSystem | ProcessProbe

/** What a scenario script can do. */
export interface ScenarioContext {
  readonly router: FakeExtensionRouter
  readonly owner: ScriptedOwner
  readonly controller: ThreadController
  readonly dir: string
  /** The job the helpers look at (the latest scheduled). */
  readonly jobId: () => string
  /** The job as stored now. */
  readonly job: Effect.Effect<JobRecord, never, Journal>
  /** Yields event-loop turns (never moving the clock) until `check` holds. */
  readonly until: (check: () => boolean, what: string) => Effect.Effect<void, never, Journal>
  /** Like `until`, on the stored job. */
  readonly untilJob: (
    check: (job: JobRecord) => boolean,
    what: string,
  ) => Effect.Effect<JobRecord, never, Journal>
  /** Like `until`, on the controller's current thread state. */
  readonly untilState: (
    check: (state: ThreadState) => boolean,
    what: string,
  ) => Effect.Effect<void, never, Journal>
  /** Waits until the stored job is in one of `statuses`. */
  readonly untilStatus: (
    ...statuses: ReadonlyArray<JobStatus>
  ) => Effect.Effect<JobRecord, never, Journal>
  /** A mark in the arming order of sleeps: `fire` and `expire` only take sleeps armed after it. */
  readonly mark: () => number
  /**
   * Waits until a sleep of `ms` is armed (after the last fired one, or after `since`), then moves
   * the clock exactly to its deadline.
   */
  readonly fire: (ms: number, what: string, since?: number) => Effect.Effect<void, never, Journal>
  /**
   * Budget expiry: waits for the `ms` timer, moves the clock to 1 ms before its deadline, lets the
   * worker run, records the status, then moves the last millisecond and waits for a terminal.
   */
  readonly expire: (
    ms: number,
    what: string,
    since?: number,
  ) => Effect.Effect<{ readonly statusBefore: JobStatus; readonly job: JobRecord }, never, Journal>
  /** Runs a promise-returning owner or router step. */
  readonly io: <A>(step: () => Promise<A>) => Effect.Effect<A>
  readonly requests: (method: string) => ReadonlyArray<JsonObject>
  /** Schedules a job anchored on the controller's current state. */
  readonly schedule: (
    jobId: string,
    kind: HandoffKind,
    settings?: Partial<JobSettings>,
  ) => Effect.Effect<
    { readonly result: ScheduleResult; readonly bound: BoundHandoff | null },
    never,
    Journal
  >
  /** Forks the worker on a job. */
  readonly startWorker: (
    jobId: string,
  ) => Effect.Effect<Fiber.Fiber<StoredJob, WorkerError>, never, Env>
  /** Waits (no clock moves) for the worker to end and returns the job as stored. */
  readonly finish: (
    fiber: Fiber.Fiber<StoredJob, WorkerError>,
  ) => Effect.Effect<JobRecord, never, Journal>
  /** The job's files, the lock and the thread's history. */
  readonly artifacts: (jobId: string) => Effect.Effect<JobArtifacts, never, Journal>
}

/** Everything a finished job left behind. */
export interface JobArtifacts {
  readonly job: JobRecord
  readonly entries: ReadonlyArray<EventLogEntry>
  readonly history: ReadonlyArray<HistoryEntry>
  /** Raw text of the job record, its event log and the thread index. */
  readonly files: { readonly job: string; readonly events: string; readonly index: string }
  readonly handoffText: string | null
  readonly handoffPath: string
  readonly lockExists: boolean
}

const macrotask = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

const readText = (file: string) => Effect.promise(() => readFile(file, "utf8"))

const probe = Layer.succeed(ProcessProbe, {
  selfPid: 4242,
  isAlive: () => Effect.succeed(true),
  startTimeMs: () => Effect.succeed(null),
})

/** Options of {@link withExtensionThread}. */
export interface ExtensionThreadOptions {
  /** The owner's conversation at the start (Rekall's fixture: idle, 90 000 / 100 000 tokens). */
  readonly initial?: ConversationFixture
  readonly publish?: "snapshots" | "patches"
  readonly session?: ExtensionControllerOptions["session"]
}

/**
 * Starts a fake router and a temp journal, opens the extension controller, runs `body`, and
 * removes everything afterwards.
 */
export const withExtensionThread = async <A>(
  options: ExtensionThreadOptions,
  body: (ctx: ScenarioContext) => Effect.Effect<A, unknown, Env>,
): Promise<A> => {
  const router = await FakeExtensionRouter.start({
    conversationId: THREAD,
    state: conversationStateFixture({ id: THREAD, ...options.initial }),
  })
  const dir = await mkdtemp(join(tmpdir(), "baton-jobs-"))
  const tracker = new SleepTracker()
  const owner = new ScriptedOwner(router, options.publish ?? "snapshots")
  try {
    const program = Effect.gen(function* () {
      // Marks the TestClock as driven, so it never warns about a test that does not adjust it.
      yield* TestClock.adjust(0)
      const journal = yield* Journal
      const controller = yield* openExtensionController({
        threadId: THREAD,
        environment: fakeRouterEnvironment(router),
        session: {
          discoveryDelaysMs: [0],
          ...options.session,
          recovery: {
            baseDelayMs: RECONNECT_MS,
            maxDelayMs: RECONNECT_MS,
            ...options.session?.recovery,
          },
        },
      })
      let currentJob = JOB
      let lastFired = 0
      const readJob = (jobId: string) => Effect.orDie(journal.readJob(THREAD, jobId))
      const describe = () =>
        Effect.map(Effect.exit(journal.readJob(THREAD, currentJob)), (exit) =>
          exit._tag === "Success" ? exit.value.job.status : "no job",
        )
      const poll = (check: Effect.Effect<boolean, never, Journal>, what: string) =>
        Effect.gen(function* () {
          const started = Date.now()
          for (;;) {
            if (yield* check) return
            if (Date.now() - started > GUARD_MS) {
              const status = yield* describe()
              const methods = router.received.map((r) => String(r.envelope["method"])).join(", ")
              return yield* Effect.die(
                new Error(
                  `waited ${GUARD_MS} ms for ${what}; job is ${status}; router saw: ${methods}; armed: ${[...tracker.pending].map((p) => `${p.ms} ms #${p.seq}`).join(", ")} (${tracker.seq} in all)`,
                ),
              )
            }
            yield* macrotask
          }
        })
      const untilJob = (check: (job: JobRecord) => boolean, what: string) =>
        Effect.gen(function* () {
          let seen: JobRecord | undefined
          yield* poll(
            Effect.map(readJob(currentJob), (stored) => {
              seen = stored.job
              return check(stored.job)
            }),
            what,
          )
          return seen!
        })
      const armed = (ms: number, since: number) =>
        [...tracker.pending]
          .filter((s) => s.ms === ms && s.seq > since)
          .sort((a, b) => a.deadline - b.deadline)[0]
      const awaitArmed = (ms: number, what: string, since: number) =>
        Effect.gen(function* () {
          yield* poll(
            Effect.sync(() => armed(ms, since) !== undefined),
            `the ${ms} ms timer (${what})`,
          )
          return armed(ms, since)!
        })
      const ctx: ScenarioContext = {
        router,
        owner,
        controller,
        dir: journal.dir,
        jobId: () => currentJob,
        job: Effect.map(
          Effect.suspend(() => readJob(currentJob)),
          (s) => s.job,
        ),
        until: (check, what) => poll(Effect.sync(check), what),
        untilState: (check, what) => poll(Effect.map(controller.state, check), what),
        untilJob,
        untilStatus: (...statuses) =>
          untilJob((job) => statuses.includes(job.status), `status ${statuses.join(" | ")}`),
        mark: () => tracker.seq,
        fire: (ms, what, since) =>
          Effect.gen(function* () {
            const sleep = yield* awaitArmed(ms, what, since ?? lastFired)
            lastFired = sleep.seq
            const now = yield* Clock.currentTimeMillis
            yield* TestClock.adjust(Math.max(0, sleep.deadline - now))
          }),
        expire: (ms, what, since) =>
          Effect.gen(function* () {
            const sleep = yield* awaitArmed(ms, what, since ?? lastFired)
            lastFired = sleep.seq
            const now = yield* Clock.currentTimeMillis
            yield* TestClock.adjust(sleep.deadline - now - 1)
            for (let i = 0; i < 200; i++) yield* macrotask
            const statusBefore = (yield* readJob(currentJob)).job.status
            yield* TestClock.adjust(1)
            const job = yield* untilJob((j) => isTerminalStatus(j.status), `${what} to expire`)
            return { statusBefore, job }
          }),
        io: (step) => Effect.promise(step),
        requests: (method) => router.requests(method),
        schedule: (jobId, kind, settings) =>
          Effect.gen(function* () {
            const handoff = handoffOf(kind)
            const bound =
              handoff === null
                ? null
                : yield* Effect.orDie(
                    bindHandoff({
                      threadId: THREAD,
                      jobId,
                      handoff,
                      createdAt: "2025-01-31T12:00:00.000Z",
                    }),
                  )
            // The anchor comes from the same view the worker reads, as the schedule path must take it.
            const anchor = threadUserBoundary(yield* controller.state).fingerprint
            const result = yield* Effect.orDie(
              journal.schedule({
                job: {
                  jobId,
                  threadId: THREAD,
                  userFingerprint: anchor,
                  resume: kind === "resume",
                  handoffDigest: bound?.digest ?? null,
                  settings: { idleDebounceMs: DEBOUNCE_MS, ...settings },
                },
                handoff: bound,
              }),
            )
            currentJob = result.stored.job.jobId
            owner.expectations = {
              jobId: currentJob,
              handoffPath: journalPaths(journal.dir, THREAD).handoff(currentJob),
              nextStep: NEXT_STEP,
              preserve: PRESERVE,
            }
            return { result, bound }
          }),
        startWorker: (jobId) =>
          Effect.forkChild(runWorker({ threadId: THREAD, jobId, controller })),
        finish: (fiber) =>
          Effect.gen(function* () {
            yield* poll(
              Effect.sync(() => fiber.pollUnsafe() !== undefined),
              "the worker to end",
            )
            return (yield* Effect.orDie(Fiber.join(fiber))).job
          }),
        artifacts: (jobId) =>
          Effect.gen(function* () {
            const paths = journalPaths(journal.dir, THREAD)
            const stored = yield* readJob(jobId)
            const { entries } = yield* Effect.orDie(journal.readEvents(THREAD, jobId))
            const { history } = yield* Effect.orDie(journal.inspect(THREAD))
            const handoffPath = paths.handoff(jobId)
            return {
              job: stored.job,
              entries,
              history,
              files: {
                job: yield* readText(paths.job(jobId)),
                events: yield* readText(paths.events(jobId)),
                index: yield* readText(paths.index),
              },
              handoffText: existsSync(handoffPath) ? yield* readText(handoffPath) : null,
              handoffPath,
              lockExists: existsSync(paths.lock),
            }
          }),
      }
      return yield* body(ctx)
    })
    return await Effect.runPromise(
      program.pipe(
        Effect.scoped,
        Effect.provide(trackedClockLayer(tracker)),
        Effect.provide(
          Layer.mergeAll(
            journalLayer(dir).pipe(Layer.provideMerge(nodeJournalFileSystemLayer)),
            probe,
            nodeIpcLayer,
            TestClock.layer(),
          ),
        ),
      ),
    )
  } finally {
    await router.close()
    await rm(dir, { recursive: true, force: true })
  }
}

/** Options of {@link runScenario}: one job, scheduled, run, driven by `script`. */
export interface ScenarioOptions extends ExtensionThreadOptions {
  readonly handoff: HandoffKind
  readonly settings?: Partial<JobSettings>
  readonly compactReply?: CompactReply
  readonly startTurnReply?: StartTurnReply
  /** Runs after scheduling, before the worker starts. */
  readonly beforeWorker?: (ctx: ScenarioContext) => Effect.Effect<void, unknown, Env>
  /** Drives the job to its end (the worker is then awaited without moving the clock). */
  readonly script: (ctx: ScenarioContext) => Effect.Effect<void, unknown, Env>
  /** Runs after the worker ended (e.g. let the session reconnect and check nothing is resent). */
  readonly afterWorker?: (ctx: ScenarioContext) => Effect.Effect<void, unknown, Env>
}

/** What one scenario left behind. */
export interface ScenarioResult extends JobArtifacts {
  readonly bound: BoundHandoff | null
  readonly router: FakeExtensionRouter
  readonly owner: ScriptedOwner
}

/** Runs one job on the extension path from scheduling to its end. */
export const runScenario = (options: ScenarioOptions): Promise<ScenarioResult> =>
  withExtensionThread(options, (ctx) =>
    Effect.gen(function* () {
      ctx.owner.onCompact = options.compactReply ?? "ack"
      ctx.owner.onStartTurn = options.startTurnReply ?? "turn"
      const { bound } = yield* ctx.schedule(JOB, options.handoff, options.settings)
      if (options.beforeWorker !== undefined) yield* options.beforeWorker(ctx)
      const fiber = yield* ctx.startWorker(JOB)
      yield* options.script(ctx)
      yield* ctx.finish(fiber)
      if (options.afterWorker !== undefined) yield* options.afterWorker(ctx)
      const artifacts = yield* ctx.artifacts(JOB)
      return { ...artifacts, bound, router: ctx.router, owner: ctx.owner }
    }),
  )

// ---------------------------------------------------------------------------------------------
// The common flows
// ---------------------------------------------------------------------------------------------

/** Stable idle → the compaction request → the owner starts the compaction turn. */
export const requestCompaction = (ctx: ScenarioContext) =>
  Effect.gen(function* () {
    yield* ctx.fire(DEBOUNCE_MS, "idle debounce")
    yield* ctx.until(() => ctx.requests(COMPACT).length === 1, "the compaction request")
    yield* ctx.untilStatus("compaction_accepted")
    yield* ctx.io(() => ctx.owner.startCompaction())
    yield* ctx.untilStatus("compacting")
  })

/** The whole compaction, ending with `after` as the token usage. */
export const compaction = (
  ctx: ScenarioContext,
  after: UsageAfter = { tokens: 10_000 },
  options: { readonly idle?: boolean } = {},
) =>
  Effect.gen(function* () {
    yield* requestCompaction(ctx)
    yield* ctx.io(() => ctx.owner.finishCompaction(after, options))
  })

/** Stable idle after the compaction → the continuation request → the owner runs the turn. */
export const continuation = (ctx: ScenarioContext) =>
  Effect.gen(function* () {
    yield* ctx.untilStatus("resume_idle_settling")
    yield* ctx.fire(DEBOUNCE_MS, "resume idle debounce")
    yield* ctx.until(() => ctx.requests(START_TURN).length === 1, "the continuation request")
    yield* ctx.untilStatus("continuation_running")
    yield* ctx.io(() => ctx.owner.runContinuation())
  })

/** Resume end to end: compaction with `after`, then the continuation. */
export const compactAndContinue = (ctx: ScenarioContext, after: UsageAfter = { tokens: 10_000 }) =>
  Effect.gen(function* () {
    yield* compaction(ctx, after)
    yield* continuation(ctx)
  })

/**
 * The runners of `baton recall …`: index (with a progress bar, --watch and --background),
 * search, recent, grep, expand, step, status, prune, forget and vacuum over @baton/recall-index.
 * Guarantees: loaded only when a recall command runs; read commands never create the index
 * (a missing or empty one gives "nothing indexed yet" with where transcripts were looked for,
 * exit 0 — exit 1 for expand, step and forget, which name a session or project that is then not
 * found); domain errors come back as tagged failures for `failure-report.ts` (exit 1), bad
 * flags as usage errors (exit 2); `--json` prints exactly one object on stdout; `--background`
 * returns at once, leaving a detached child that takes the indexer lock and logs to
 * `<data dir>/recall-index.log`; `--watch` stops cleanly on Ctrl-C (the lock is released).
 */
import { existsSync, statSync } from "node:fs"
import { constants as osConstants, getPriority, homedir, setPriority } from "node:os"
import { dirname, join } from "node:path"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import {
  checkGrepInput,
  checkSearchInput,
  compileFilters,
  embedForIndex,
  EmbedderRetryNotices,
  embedderConfigFromEnvironment,
  emptyIndexFacts,
  makeDirectory,
  embedderSelection,
  embedderFromConfig,
  embedderFromEnvironment,
  embeddingForSearch,
  withIndexedDimensions,
  expandAround,
  forgetSessions,
  grepRecordsIsolated,
  RecallNotFoundError,
  indexTranscripts,
  makeVectorSearchWorker,
  ONE_SHOT_HOLD_BYTES,
  nodeIndexerProcessLayer,
  nodeRepositoryFiles,
  nodeTranscriptFileSystemLayer,
  RecallStorageError,
  pruneDeleted,
  RECALL_DATABASE_FILE,
  recordEmbedderSetupFailure,
  RELATIVE_DATA_DIR_REASON,
  recallDatabaseLayer,
  recallStatus,
  recentSessions,
  repositoryRootOf,
  searchRecall,
  step,
  transcriptRoots,
  vacuumIndex,
} from "@baton/recall-index"
import { activeFingerprint } from "@baton/recall-index/prewarm"
import type {
  ConfiguredEmbedding,
  EmbedBacklogReport,
  Embedder,
  EmbedderConfigError,
  EmbedderError,
  IndexerProcess,
  IndexRunReport,
  RecallDatabase,
  RecallFilters,
  RecallQueryError,
  RecallStatus,
  Reranker,
  TranscriptFileSystem,
  TurnViewOptions,
} from "@baton/recall-index"
import { resolveDataDir } from "./baton-paths.js"
import type { CliIo } from "./cli-io.js"
import type { CommandOutcome, CommandRunner, Invocation, TaggedFailure } from "./command-spec.js"
import { cliUsageError } from "./errors.js"
import { describeFailure } from "./failure-report.js"
import {
  filterFlags,
  forgetFlags,
  has,
  integerFlag,
  sourceFlag,
  stringFlag,
} from "./recall-flags.js"
import type { Decoded, FilterFlags } from "./recall-flags.js"
import { heapPacer } from "./heap-collector.js"
import { progressWriter, terminalColumns } from "./recall-progress.js"
import {
  appliedFilters,
  counted,
  failureLines,
  renderGrep,
  renderIndexSummary,
  renderMissingScope,
  renderScopeFile,
  renderNothingIndexed,
  renderRecent,
  renderSearch,
  renderStatus,
  renderVacuum,
  renderWindow,
  sourceName,
  vectorUnavailable,
} from "./recall-report.js"
import type { EmptyIndexReport } from "./recall-report.js"
import { inertLine } from "./terminal-text.js"
import {
  BACKGROUND_ENV,
  backgroundArgs,
  backgroundStarted,
  openRecallLog,
  RECALL_LOG_FILE,
  spawnBackgroundIndex,
} from "./recall-background.js"

export { RECALL_LOG_FILE } from "./recall-background.js"

type Services = RecallDatabase | TranscriptFileSystem | IndexerProcess

interface Context {
  readonly io: CliIo
  readonly json: boolean
  readonly homeDir: string
  readonly dataDir: string
  /** `BATON_DATA_DIR` is relative: every recall command refuses it (`refusedDataDir`). */
  readonly relativeDataDir: boolean
  readonly databasePath: string
  readonly environment: { readonly env: CliIo["env"]; readonly homeDir: string }
}

const contextOf = (invocation: Invocation, io: CliIo): Context => {
  const homeDir = homedir()
  const resolved = resolveDataDir(io.env, homeDir)
  const dataDir = resolved.path
  return {
    io,
    json: has(invocation, "json"),
    homeDir,
    dataDir,
    relativeDataDir: resolved.relative === true,
    databasePath: join(dataDir, RECALL_DATABASE_FILE),
    environment: { env: io.env, homeDir },
  }
}

const completed = (exitCode: 0 | 1 | 130 = 0): CommandOutcome => ({ _tag: "Completed", exitCode })
const failed = (ctx: Context, error: TaggedFailure): CommandOutcome => ({
  _tag: "Failed",
  error,
  json: ctx.json,
})
/**
 * The library's own input checks, run before the index is opened: bad input is refused (exit 2)
 * whether or not an index exists yet, instead of "nothing indexed" and exit 0.
 */
const refusedInput = (
  ctx: Context,
  check: Effect.Effect<unknown, RecallQueryError>,
): CommandOutcome | undefined => {
  const result = Effect.runSync(Effect.result(check))
  return result._tag === "Failure" ? failed(ctx, result.failure) : undefined
}
/** One JSON object on stdout; `ok` is false when the command exits non-zero (default true). */
const printJson = (ctx: Context, value: Record<string, unknown>, ok = true): void =>
  ctx.io.stdout(`${JSON.stringify({ ok, ...value })}\n`)

const layers = (ctx: Context) =>
  Layer.mergeAll(
    recallDatabaseLayer({ dataDir: ctx.dataDir }),
    nodeTranscriptFileSystemLayer,
    nodeIndexerProcessLayer,
  )

/** Runs `effect` against the index; a tagged failure becomes a `Failed` outcome. */
const runIndexed = async <A>(
  ctx: Context,
  effect: Effect.Effect<A, TaggedFailure, Services>,
  signal?: AbortSignal,
): Promise<
  { readonly _tag: "Done"; readonly value: A } | { readonly _tag: "Stopped" } | CommandOutcome
> => {
  const exit = await Effect.runPromiseExit(
    effect.pipe(Effect.provide(layers(ctx))),
    signal === undefined ? undefined : { signal },
  )
  if (Exit.isSuccess(exit)) return { _tag: "Done", value: exit.value }
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "Stopped" }
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") return failed(ctx, failure.value)
  throw Cause.squash(exit.cause)
}

/** Unwraps a decoded flag set or returns the usage failure. */
const decoded = <A>(ctx: Context, d: Decoded<A>): A | CommandOutcome =>
  d._tag === "Ok" ? d.value : failed(ctx, d.error)
const isOutcome = (value: unknown): value is CommandOutcome =>
  typeof value === "object" &&
  value !== null &&
  "_tag" in value &&
  ((value as { _tag: string })._tag === "Completed" ||
    (value as { _tag: string })._tag === "Failed")

/**
 * Why the index holds no session, for the "nothing indexed yet" note: the transcripts on disk
 * now (discovery reads each file's head, so this runs only for an empty index) and, when the
 * index exists, whether an indexer runs now and which files failed (`status` when the caller
 * already has it).
 */
const emptyIndexReport = async (ctx: Context, status?: RecallStatus): Promise<EmptyIndexReport> => {
  const indexed = existsSync(ctx.databasePath)
  let known = status
  if (known === undefined && indexed) {
    const read = await runIndexed(ctx, recallStatus())
    if (read._tag === "Done") known = read.value
  }
  const facts = await Effect.runPromise(
    emptyIndexFacts(ctx.environment, known).pipe(Effect.provide(nodeTranscriptFileSystemLayer)),
  )
  return { ...facts, databasePath: ctx.databasePath, indexed }
}

/**
 * Prints the "nothing indexed yet" note (or, with `--json`, `json` and the facts), exit 0. With
 * `notFound` — a command that looks up what the user named (a session to expand, step through
 * or forget) — the lookup failed: its error line then the note go to stderr (under `--json`,
 * `ok: false` with the error beside the same facts), exit 1.
 */
const printNothingIndexed = async (
  ctx: Context,
  json: Record<string, unknown>,
  status?: RecallStatus,
  notFound?: NotFound,
): Promise<CommandOutcome> => {
  const facts = await emptyIndexReport(ctx, status)
  const failure = notFound === undefined ? undefined : describeFailure(notFound)
  if (ctx.json) {
    printJson(
      ctx,
      {
        ...json,
        empty: true,
        transcripts: facts.transcripts,
        ...(facts.indexing === null ? {} : { indexing: facts.indexing }),
        ...(failure === undefined ? {} : { error: failure.json }),
      },
      failure === undefined,
    )
  } else if (failure === undefined) ctx.io.stdout(renderNothingIndexed(facts))
  else ctx.io.stderr(failure.text + renderNothingIndexed(facts))
  return completed(failure === undefined ? 0 : 1)
}

/** What a command that looks up a named session or project could not find. */
type NotFound = RecallNotFoundError | ProjectNotFound

/** `forget --project` matched no session (the CLI's twin of `RecallNotFoundError`). */
interface ProjectNotFound {
  readonly _tag: "RecallNotFoundError"
  readonly repositoryRoot: string
  readonly message: string
}

const noSession = (sessionId: string, turnId: string | null, why: string): RecallNotFoundError =>
  new RecallNotFoundError({ sessionId, turnId, message: `no session ${sessionId} ${why}` })

/**
 * For a read that found nothing: the index's status when it holds no session at all, so the
 * command says why (as search does) instead of "no match"; undefined when it holds sessions.
 */
const emptyIndexStatus = async (ctx: Context): Promise<RecallStatus | undefined> => {
  const read = await runIndexed(ctx, recallStatus())
  return read._tag === "Done" && read.value.empty ? read.value : undefined
}

/**
 * Whether a file stands where the data directory or one of its parents should be: an index run
 * could not create it, so "nothing indexed yet, run 'baton recall index'" would send the user
 * to a command that fails.
 */
const fileInTheWay = (dir: string): boolean => {
  for (let at = dir; ; at = dirname(at)) {
    try {
      return !statSync(at).isDirectory()
    } catch {
      if (dirname(at) === at) return false
    }
  }
}

/**
 * A relative `BATON_DATA_DIR` fails every recall command as a data directory that cannot be
 * used (exit 1), before anything reads or creates it.
 */
const refusedDataDir = (ctx: Context): CommandOutcome | undefined =>
  ctx.relativeDataDir
    ? failed(
        ctx,
        new RecallStorageError({
          operation: "create-directory",
          path: ctx.dataDir,
          reason: RELATIVE_DATA_DIR_REASON,
        }),
      )
    : undefined

/**
 * For read commands: the "nothing indexed yet" outcome when there is no index file — a failure
 * (exit 1) for one that looks up what the user named (`notFound`).
 */
const whenNoIndex = async (
  ctx: Context,
  notFound?: () => NotFound,
): Promise<CommandOutcome | undefined> => {
  const refused = refusedDataDir(ctx)
  if (refused !== undefined) return refused
  if (existsSync(ctx.databasePath)) return undefined
  if (fileInTheWay(ctx.dataDir))
    return failed(
      ctx,
      new RecallStorageError({
        operation: "create-directory",
        path: ctx.dataDir,
        reason: "ENOTDIR",
      }),
    )
  const roots = transcriptRoots(ctx.environment)
  return printNothingIndexed(
    ctx,
    { indexed: false, databasePath: ctx.databasePath, roots },
    undefined,
    notFound?.(),
  )
}

/** The filters `filters` apply, in words (see `appliedFilters`); "" when none. */
const searchedWith = (filters: RecallFilters): string =>
  Effect.runSync(
    compileFilters(filters, Date.now()).pipe(
      Effect.map((c) =>
        appliedFilters({
          source: filters.source ?? null,
          scopeRoot: c.scopeRoot ?? null,
          startDate: c.range?.startDate ?? null,
          endDate: c.range?.endDate ?? null,
          timezone: c.timezone,
        }),
      ),
      // The command itself ran with these filters, so they compile; if not, say nothing.
      Effect.orElseSucceed(() => ""),
    ),
  )

/**
 * Whether `--scope` names a directory that does not exist here: the command still runs, and says
 * so (`scopeMissing` in --json whenever a scope is given, a note in text).
 */
const scopeFacts = (
  flags: FilterFlags,
): { readonly json: { readonly scopeMissing?: boolean }; readonly note: string } => {
  if (flags.scopeDir === undefined) return { json: {}, note: "" }
  let missing: boolean
  try {
    // A file scopes to the project that holds it (as its directory would); say which was meant.
    if (!statSync(flags.scopeDir).isDirectory())
      return { json: { scopeMissing: false }, note: renderScopeFile(flags.scopeDir) }
    missing = false
  } catch (error) {
    // Only a path that is not there is missing; one we may not look into may well exist.
    const code = (error as NodeJS.ErrnoException).code
    missing = code === "ENOENT" || code === "ENOTDIR"
  }
  return {
    json: { scopeMissing: missing },
    note: missing ? renderMissingScope(flags.scopeDir) : "",
  }
}

const toFilters = (flags: FilterFlags): RecallFilters => ({
  ...(flags.source === undefined ? {} : { source: flags.source }),
  ...(flags.scopeDir === undefined ? {} : { scopeCwd: repositoryRootOf(flags.scopeDir) }),
  ...(flags.onDate === undefined ? {} : { onDate: flags.onDate }),
  ...(flags.startDate === undefined ? {} : { startDate: flags.startDate }),
  ...(flags.endDate === undefined ? {} : { endDate: flags.endDate }),
  ...(flags.timezone === undefined ? {} : { timezone: flags.timezone }),
  ...(flags.excludeHeadless === true ? { excludeHeadless: true } : {}),
})

/**
 * The configured embedder and reranker; a configuration problem is reported, not fatal to search.
 * `forSearch`: an OpenAI-compatible model whose vectors the index holds takes their length from
 * the index instead of a probe call (one request per search, not two).
 */
const configuredEmbedding = async (
  ctx: Context,
  forSearch = false,
  quiet = false,
): Promise<{
  readonly embedding?: ConfiguredEmbedding
  readonly problem?: EmbedderError | EmbedderConfigError
}> => {
  const indexed = (): string | undefined => {
    try {
      return existsSync(ctx.databasePath) ? activeFingerprint(ctx.databasePath) : undefined
    } catch {
      return undefined
    }
  }
  const exit = await Effect.runPromiseExit(
    forSearch
      ? embedderConfigFromEnvironment(ctx.io.env).pipe(
          Effect.map((config) =>
            config._tag === "OpenAiCompatible" ? withIndexedDimensions(config, indexed()) : config,
          ),
          Effect.flatMap(embedderFromConfig),
        )
      : // An index run's dimension probe retries like its embedding calls, and says so.
        embedderFromEnvironment(ctx.io.env).pipe(
          Effect.provideService(EmbedderRetryNotices, retryNotices(quiet, ctx.io.stderr)),
        ),
  )
  if (Exit.isSuccess(exit)) return { embedding: exit.value }
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") return { problem: failure.value }
  throw Cause.squash(exit.cause)
}

/**
 * Where an index run announces a retry of its embedding server (one line each, on stderr, so
 * `--json` stays one document on stdout); nothing under --quiet.
 */
const retryNotices =
  (quiet: boolean, write: (text: string) => void) =>
  (line: string): void => {
    if (!quiet) write(`baton: ${line}\n`)
  }

const closeEmbedder = async (embedder: Embedder | undefined): Promise<void> => {
  if (embedder?.close !== undefined) await Effect.runPromise(embedder.close())
}

// ---------------------------------------------------------------------------------------------
// index

/**
 * Lowers this thread's scheduling priority to below normal (nice 10 on Unix) unless it is lower
 * already; threads it starts later (USE-lite's worker) inherit it, so a background refresh
 * yields the CPU to the agent's own work. Gives the priority reached, or undefined where the
 * platform refuses.
 */
const lowerPriority = (): number | undefined => {
  try {
    const below = osConstants.priority.PRIORITY_BELOW_NORMAL
    if (getPriority() < below) setPriority(below)
    return getPriority()
  } catch {
    return undefined
  }
}

const startBackground = (ctx: Context, invocation: Invocation): CommandOutcome => {
  const logPath = join(ctx.dataDir, RECALL_LOG_FILE)
  const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))
  try {
    makeDirectory(ctx.dataDir, 0o700)
  } catch (error) {
    // The data directory cannot be made (a file in the way, no permission): the same message
    // a foreground run gives.
    return failed(
      ctx,
      new RecallStorageError({
        operation: "create-directory",
        path: ctx.dataDir,
        reason: reason(error),
      }),
    )
  }
  let log: number
  try {
    log = openRecallLog(ctx.dataDir)
  } catch (error) {
    // The directory is there but the log cannot be written (read-only, the disk full).
    return failed(
      ctx,
      new RecallStorageError({ operation: "write", path: logPath, reason: reason(error) }),
    )
  }
  let pid: number | undefined
  try {
    pid = spawnBackgroundIndex(ctx.io, backgroundArgs(invocation), log)
  } catch (error) {
    return failed(
      ctx,
      new RecallStorageError({ operation: "write", path: logPath, reason: reason(error) }),
    )
  }
  return backgroundStarted(ctx.io, invocation, pid, logPath)
}

interface RunResult {
  readonly report: IndexRunReport
  readonly embedding: EmbedBacklogReport | null
  readonly embeddingNote: string | null
  readonly embeddingFailed: boolean
}

const indexOnce = async (
  ctx: Context,
  invocation: Invocation,
  sources: ReadonlyArray<"claude" | "codex"> | undefined,
  embedding: ConfiguredEmbedding | undefined,
  setupFailure: EmbedderError | EmbedderConfigError | undefined,
  showProgress: boolean,
  signal: AbortSignal | undefined,
): Promise<RunResult | { readonly _tag: "Stopped" } | CommandOutcome> => {
  const progress = progressWriter(
    showProgress,
    ctx.io.stderr,
    () => Date.now(),
    () => terminalColumns(process.stderr.columns, ctx.io.env),
  )
  const startedAt = Date.now()
  let filesTotal = 0
  let turns = 0
  const pace = heapPacer()
  const indexed = await runIndexed(
    ctx,
    indexTranscripts({
      environment: ctx.environment,
      repositoryFiles: nodeRepositoryFiles,
      ...(sources === undefined ? {} : { sources }),
      onProgress: (event) => {
        if (event._tag === "Planned") filesTotal = event.toIndex
        else if (event._tag === "FileIndexed" || event._tag === "SliceIndexed") {
          pace(event.bytes)
          turns = event.turns
          progress.update({
            phase: "indexing",
            filesDone: event.done,
            filesTotal,
            turns,
            startedAt,
          })
        } else if (
          event._tag === "BuildingLexicalIndex" ||
          event._tag === "BuildingLookupIndexes"
        ) {
          // Drawn at once: the build takes seconds on a large index and sends no progress.
          progress.update({ phase: "building-indexes", filesTotal })
        } else if (event._tag === "FileFailed") {
          progress.update({
            phase: "indexing",
            filesDone: event.done,
            filesTotal,
            turns,
            startedAt,
          })
        }
      },
    }),
    signal,
  )
  progress.done()
  if (indexed._tag !== "Done") return indexed
  const report = indexed.value
  if (setupFailure !== undefined && !has(invocation, "no-embed")) {
    // Recorded once the words are in, so `recall status` shows it (also after a background run).
    await runIndexed(ctx, recordEmbedderSetupFailure(setupFailure))
    return {
      report,
      embedding: null,
      embeddingNote: embeddingFailedNote(setupFailure.message),
      embeddingFailed: true,
    }
  }
  if (embedding?.embedder === undefined || has(invocation, "no-embed")) {
    return { report, embedding: null, embeddingNote: null, embeddingFailed: false }
  }
  // `auto` picks its embedder from the size of the index this run left (and falls back to the
  // static table when USE-lite cannot run).
  const embedStart = Date.now()
  const embedded = await runIndexed(
    ctx,
    embedForIndex(embedding, {
      onProgress: (p) =>
        progress.update({
          phase: "embedding",
          done: p.done,
          total: p.total,
          startedAt: embedStart,
        }),
      onVectorConversion: (vectors) => progress.update({ phase: "converting-vectors", vectors }),
    }).pipe(
      Effect.provideService(
        EmbedderRetryNotices,
        retryNotices(has(invocation, "quiet"), (text) => progress.note(text.replace(/\n$/, ""))),
      ),
      Effect.result,
    ),
    signal,
  )
  progress.done()
  if (embedded._tag === "Stopped" || embedded._tag === "Completed" || embedded._tag === "Failed") {
    return embedded
  }
  const result = embedded.value
  if (result._tag === "Success") {
    return {
      report,
      embedding: result.success?.report ?? null,
      embeddingNote: result.success?.fallback ?? null,
      embeddingFailed: false,
    }
  }
  const reason =
    "message" in result.failure &&
    typeof result.failure.message === "string" &&
    result.failure.message !== ""
      ? result.failure.message
      : "reason" in result.failure
        ? String(result.failure.reason)
        : result.failure._tag
  return {
    report,
    embedding: null,
    embeddingNote: embeddingFailedNote(reason),
    embeddingFailed: result.failure._tag !== "IndexBusyError",
  }
}

/** The index run's note when embedding failed (`reason` as the error says it, no class name). */
const embeddingFailedNote = (reason: string): string =>
  `Embedding failed (${reason}); the texts not embedded yet are found by words only until a run embeds them.`

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer)
      resolve()
    }
    // The listener goes with the sleep: `--watch` sleeps on one signal between all its rounds.
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", wake)
      resolve()
    }, ms)
    signal.addEventListener("abort", wake, { once: true })
  })

/** Runs `baton recall index`. */
export const runRecallIndex: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const source = decoded(ctx, sourceFlag(invocation))
  if (isOutcome(source)) return source
  const refused = refusedDataDir(ctx)
  if (refused !== undefined) return refused
  const interval = decoded(ctx, integerFlag(invocation, "interval", 10, 1, 86_400))
  if (isOutcome(interval)) return interval
  if (!has(invocation, "watch") && stringFlag(invocation, "interval") !== undefined)
    return failed(ctx, cliUsageError("--interval needs --watch", "baton recall index"))
  // A detached watcher would run unseen until killed; --watch belongs in a terminal or a service.
  if (has(invocation, "background") && has(invocation, "watch") && io.env[BACKGROUND_ENV] !== "1")
    return failed(
      ctx,
      cliUsageError(
        "--background runs one index pass; run --watch in a terminal or under a service manager",
        "baton recall index",
      ),
    )
  if (has(invocation, "background") && io.env[BACKGROUND_ENV] !== "1") {
    return startBackground(ctx, invocation)
  }
  const background = io.env[BACKGROUND_ENV] === "1"
  const quiet = has(invocation, "quiet")
  if (background) {
    const priority = lowerPriority()
    if (priority !== undefined && !quiet && !ctx.json)
      io.stdout(`Indexing in the background at low priority (nice ${priority}).\n`)
  }
  const progressSetting = io.env["BATON_PROGRESS"]
  const showProgress =
    progressSetting === "1" ||
    (progressSetting !== "0" && process.stderr.isTTY === true && !ctx.json && !quiet)
  const configured = has(invocation, "no-embed") ? {} : await configuredEmbedding(ctx, false, quiet)
  // An embedder that cannot be set up — its settings incomplete (a key missing in the hook's
  // environment), or its first request failing (an endpoint's dimension probe) — does not stop
  // the words from being indexed: the run indexes, records the failure for `recall status`, then
  // reports the embedding as failed.
  const setupFailure = configured.problem
  const sources = source === undefined ? undefined : [source]

  const controller = new AbortController()
  const watch = has(invocation, "watch")
  // Ctrl-C or SIGTERM stops the run between writes (what was written stays, as after a kill) and
  // says so; a second signal ends the process at once.
  const stop = () => {
    if (controller.signal.aborted) process.exit(130)
    controller.abort()
  }
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
  try {
    let runs = 0
    for (;;) {
      const result = await indexOnce(
        ctx,
        invocation,
        sources,
        configured.embedding,
        setupFailure,
        showProgress && runs === 0,
        controller.signal,
      )
      runs += 1
      if ("_tag" in result) {
        if (result._tag === "Stopped") {
          if (watch) break
          return interruptedRun(ctx)
        }
        if (
          result._tag === "Failed" &&
          result.error._tag === "IndexBusyError" &&
          (background || watch)
        ) {
          // Another indexer is on it: nothing to do for a background refresh.
          if (!quiet && !ctx.json)
            io.stdout(
              `${(result.error as { message?: string }).message ?? "another indexer is running"}; nothing to do.\n`,
            )
          if (!watch) return completed(0)
        } else return result
      } else {
        const outcome = reportRun(ctx, result, quiet, watch, runs)
        if (!watch) return outcome
      }
      if (controller.signal.aborted) break
      await sleep(interval * 1000, controller.signal)
      if (controller.signal.aborted) break
    }
    if (!quiet && !ctx.json) io.stderr("Stopped watching.\n")
    return completed(0)
  } finally {
    process.off("SIGINT", stop)
    process.off("SIGTERM", stop)
    // Every embedder a run may have started: the configured one and, for `auto`, USE-lite
    // (closing one that never ran is a no-op).
    await closeEmbedder(configured.embedding?.embedder)
    await closeEmbedder(configured.embedding?.pick?.("use-lite").embedder)
  }
}

/** What was said when Ctrl-C or SIGTERM stopped a one-shot index run: exit 130, as a shell would. */
const INTERRUPTED_RUN_MESSAGE =
  "stopped by a signal: what was written so far is kept; run 'baton recall index' again to finish"

const interruptedRun = (ctx: Context): CommandOutcome => {
  if (ctx.json)
    ctx.io.stdout(
      `${JSON.stringify({ ok: false, error: { _tag: "Interrupted", message: INTERRUPTED_RUN_MESSAGE } })}\n`,
    )
  // (The progress bar ends its line when the run stops.)
  else ctx.io.stderr(`baton: ${INTERRUPTED_RUN_MESSAGE}\n`)
  return completed(130)
}

const reportRun = (
  ctx: Context,
  result: RunResult,
  quiet: boolean,
  watch: boolean,
  runs: number,
): CommandOutcome => {
  const { report } = result
  const roots = transcriptRoots(ctx.environment)
  const empty = report.discovered === 0
  const exitCode = result.embeddingFailed || report.failed.length > 0 ? 1 : 0
  if (ctx.json) {
    // `ok` follows the exit code: an index run whose embedding or a file failed is not ok.
    printJson(
      ctx,
      {
        index: report,
        embedding: result.embedding,
        embeddingNote: result.embeddingNote,
        empty,
        databasePath: ctx.databasePath,
        roots,
      },
      exitCode === 0,
    )
    return completed(exitCode)
  }
  const changed =
    report.indexedNew +
    report.appended +
    report.rewritten +
    report.reparsed +
    report.moved +
    report.markedMissing +
    (result.embedding?.embedded ?? 0)
  if (watch && runs > 1 && changed === 0 && exitCode === 0) return completed(0)
  if (quiet && exitCode === 0) return completed(0)
  const prefix = watch ? `${new Date().toISOString()} ` : ""
  if (empty && report.failed.length === 0) {
    ctx.io.stdout(
      prefix +
        renderNothingIndexed({
          roots,
          missingRoots: report.missingRoots,
          databasePath: ctx.databasePath,
          indexed: true,
          transcripts: 0,
          indexing: null,
          failing: 0,
          forgotten: 0,
          reason: "none-found",
        }),
    )
  } else {
    ctx.io.stdout(prefix + renderIndexSummary(report, result.embedding, result.embeddingNote))
  }
  return completed(exitCode)
}

// ---------------------------------------------------------------------------------------------
// search, recent, grep

/** Runs `baton recall search <query>`. */
export const runRecallSearch: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const filters = decoded(ctx, filterFlags(invocation, io.cwd))
  if (isOutcome(filters)) return filters
  const k = decoded(ctx, integerFlag(invocation, "limit", 10, 1, 100))
  if (isOutcome(k)) return k
  const perSession = decoded(ctx, integerFlag(invocation, "per-session", 3, 1, 100))
  if (isOutcome(perSession)) return perSession
  if (has(invocation, "lexical-only") && has(invocation, "vector-only")) {
    return failed(
      ctx,
      cliUsageError("give --lexical-only or --vector-only, not both", "baton recall search"),
    )
  }
  const refused = refusedInput(
    ctx,
    checkSearchInput(
      { query: invocation.positionals[0] ?? "", k, perSession, ...toFilters(filters) },
      Date.now(),
    ),
  )
  if (refused !== undefined) return refused
  const none = await whenNoIndex(ctx)
  if (none !== undefined) return none
  const lexicalOnly = has(invocation, "lexical-only")
  const singleArm = lexicalOnly || has(invocation, "vector-only")
  // The vector arm runs in a worker thread, started now (it opens the database while this
  // thread loads the embedder, embeds the query and runs the lexical arm); it streams the
  // vector codes instead of holding them (ONE_SHOT_HOLD_BYTES), which keeps the call's memory
  // flat at millions of chunks. Without an embedder (BATON_EMBEDDER=none, or a configuration
  // that cannot be used) there is no vector arm.
  const config = Effect.runSync(Effect.result(embedderConfigFromEnvironment(ctx.io.env)))
  const vectorWorker =
    lexicalOnly || config._tag === "Failure" || config.success._tag === "None"
      ? undefined
      : makeVectorSearchWorker({ holding: { holdBytes: ONE_SHOT_HOLD_BYTES } })
  if (vectorWorker !== undefined) Effect.runSync(vectorWorker.warm(ctx.databasePath))
  const configured = await configuredEmbedding(ctx, true)
  let embedder: Embedder | undefined
  try {
    const result = await runIndexed(
      ctx,
      Effect.gen(function* () {
        // `auto` searches the space the index was last embedded in.
        const embedding =
          configured.embedding === undefined
            ? undefined
            : yield* embeddingForSearch(configured.embedding)
        embedder = embedding?.embedder
        const reranker: Reranker | undefined = embedding?.reranker
        return yield* searchRecall(
          {
            query: invocation.positionals[0] ?? "",
            k,
            perSession,
            ...toFilters(filters),
            ...(lexicalOnly
              ? { arms: ["lexical"] }
              : has(invocation, "vector-only")
                ? { arms: ["vector"] }
                : {}),
          },
          {
            ...(embedder === undefined || lexicalOnly ? {} : { embedder }),
            // One arm alone is measured alone: no reranker and no conversation context on top.
            ...(reranker === undefined || singleArm ? {} : { reranker }),
            ...(embedding === undefined
              ? {}
              : {
                  expandQuery: embedding.expandQuery,
                  fusion: singleArm ? { ...embedding.fusion, context: 0 } : embedding.fusion,
                }),
            ...(vectorWorker === undefined ? {} : { vectorWorker }),
            ...(configured.embedding === undefined ? {} : { configured: configured.embedding }),
          },
        )
      }),
    )
    if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
    const search =
      configured.problem === undefined
        ? result.value
        : {
            ...result.value,
            degraded: [
              result.value.degraded,
              `embedder configuration: ${configured.problem.message ?? configured.problem._tag}`,
            ]
              .filter((x) => x !== null)
              .join("; "),
            // An embedder is configured; it could not be set up (the note says why).
            arms: {
              ...result.value.arms,
              vector: {
                ...result.value.arms.vector,
                skipped:
                  result.value.arms.vector.skipped === "no embedder configured"
                    ? "embedder configuration"
                    : result.value.arms.vector.skipped,
              },
            },
          }
    const scope = scopeFacts(filters)
    if (search.indexEmpty) return await printNothingIndexed(ctx, { ...search, ...scope.json })
    // --vector-only asks for the one arm that could not run: a failed request, not "no hits".
    const unavailable = has(invocation, "vector-only")
      ? vectorUnavailable(
          search,
          configured.problem === undefined
            ? undefined
            : (configured.problem.message ?? configured.problem._tag),
        )
      : null
    if (unavailable !== null) {
      if (ctx.json)
        printJson(
          ctx,
          {
            ...search,
            ...scope.json,
            error: { _tag: "VectorSearchUnavailable", message: unavailable },
          },
          false,
        )
      else io.stderr(`baton: ${inertLine(unavailable)}\n${scope.note}`)
      return completed(1)
    }
    if (ctx.json) printJson(ctx, { ...search, ...scope.json })
    else io.stdout(renderSearch(search) + scope.note)
    return completed(0)
  } finally {
    await closeEmbedder(embedder)
    if (vectorWorker !== undefined) await Effect.runPromise(vectorWorker.close())
  }
}

/** Runs `baton recall recent`. */
export const runRecallRecent: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const filters = decoded(ctx, filterFlags(invocation, io.cwd))
  if (isOutcome(filters)) return filters
  const limit = decoded(ctx, integerFlag(invocation, "limit", 10, 1, 200))
  if (isOutcome(limit)) return limit
  const refused = refusedInput(ctx, compileFilters(toFilters(filters), Date.now()))
  if (refused !== undefined) return refused
  const none = await whenNoIndex(ctx)
  if (none !== undefined) return none
  const result = await runIndexed(
    ctx,
    recentSessions({
      ...toFilters(filters),
      limit,
      includeSubagents: has(invocation, "subagents"),
    }),
  )
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  // An index that holds no session says why, in text and in --json (search's fields).
  const empty = result.value.length === 0 ? await emptyIndexStatus(ctx) : undefined
  const scope = scopeFacts(filters)
  if (empty !== undefined)
    return printNothingIndexed(
      ctx,
      { sessions: result.value, indexEmpty: true, ...scope.json },
      empty,
    )
  if (ctx.json) printJson(ctx, { sessions: result.value, indexEmpty: false, ...scope.json })
  else io.stdout(renderRecent(result.value, searchedWith(toFilters(filters))) + scope.note)
  return completed(0)
}

/** Runs `baton recall grep <pattern>`. */
export const runRecallGrep: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const filters = decoded(ctx, filterFlags(invocation, io.cwd))
  if (isOutcome(filters)) return filters
  const limit = decoded(ctx, integerFlag(invocation, "limit", 100, 1, 1000))
  if (isOutcome(limit)) return limit
  const session = stringFlag(invocation, "session")
  const input = {
    pattern: invocation.positionals[0] ?? "",
    regex: has(invocation, "regex"),
    caseSensitive: has(invocation, "case-sensitive"),
    includeDuplicates: has(invocation, "all-records"),
    limit,
    ...toFilters(filters),
    ...(session === undefined ? {} : { sessionId: session }),
  }
  const refused = refusedInput(ctx, checkGrepInput(input, Date.now()))
  if (refused !== undefined) return refused
  const none = await whenNoIndex(ctx)
  if (none !== undefined) return none
  const result = await runIndexed(ctx, grepRecordsIsolated(input))
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  const empty = result.value.hits.length === 0 ? await emptyIndexStatus(ctx) : undefined
  const scope = scopeFacts(filters)
  if (empty !== undefined)
    return printNothingIndexed(ctx, { ...result.value, indexEmpty: true, ...scope.json }, empty)
  if (ctx.json) printJson(ctx, { ...result.value, indexEmpty: false, ...scope.json })
  else io.stdout(renderGrep(result.value, searchedWith(toFilters(filters))) + scope.note)
  return completed(0)
}

// ---------------------------------------------------------------------------------------------
// expand, step

const viewOptions = (invocation: Invocation): TurnViewOptions => {
  const timezone = stringFlag(invocation, "timezone")
  return {
    ...(timezone === undefined ? {} : { timezone }),
    ...(has(invocation, "full")
      ? {
          recordChars: 4000,
          textChars: 20_000,
          maxRecords: 200,
          recordKinds: [
            "tool-call",
            "tool-output",
            "reasoning",
            "compaction",
            "harness",
            "metadata",
          ],
        }
      : {}),
  }
}

/** Runs `baton recall expand <session> <turn>`. */
export const runRecallExpand: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const before = decoded(ctx, integerFlag(invocation, "before", 2, 0, 50))
  if (isOutcome(before)) return before
  const after = decoded(ctx, integerFlag(invocation, "after", 2, 0, 50))
  if (isOutcome(after)) return after
  const sessionId = invocation.positionals[0] ?? ""
  const turnId = invocation.positionals[1] ?? ""
  const none = await whenNoIndex(ctx, () =>
    noSession(sessionId, turnId, "to expand: nothing is indexed yet"),
  )
  if (none !== undefined) return none
  const result = await runIndexed(
    ctx,
    expandAround({
      sessionId,
      turnId,
      before,
      after,
      ...viewOptions(invocation),
    }),
  )
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  if (ctx.json) printJson(ctx, { ...result.value })
  else io.stdout(renderWindow(result.value, "(no turns)"))
  return completed(0)
}

/** Runs `baton recall step <session> <turn> [next|prev]`. */
export const runRecallStep: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  // `step <session> [turn] [direction]`: a second word that is a direction means no turn (turn
  // ids are uuids or `codex:…`, never these words).
  const [sessionId = "", second, third] = invocation.positionals
  // `step <session> next prev`: a direction where the turn goes, then another word.
  if (third !== undefined && (second === "next" || second === "prev"))
    return failed(
      ctx,
      cliUsageError(
        `unexpected argument '${third.slice(0, 20)}' after the direction '${second}': give 'step <session> [turn] [next|prev]'`,
        "baton recall step",
      ),
    )
  const directionOnly = second === "next" || second === "prev"
  const turnId = directionOnly ? undefined : second
  const direction = (directionOnly ? second : third) ?? "next"
  if (direction !== "next" && direction !== "prev") {
    return failed(
      ctx,
      cliUsageError(
        `direction must be next or prev, not '${direction.slice(0, 20)}'`,
        "baton recall step",
      ),
    )
  }
  const count = decoded(ctx, integerFlag(invocation, "count", 1, 1, 20))
  if (isOutcome(count)) return count
  const none = await whenNoIndex(ctx, () =>
    noSession(sessionId, turnId ?? null, "to step through: nothing is indexed yet"),
  )
  if (none !== undefined) return none
  const result = await runIndexed(
    ctx,
    step({
      sessionId,
      turnId,
      direction,
      count,
      ...viewOptions(invocation),
    }),
  )
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  if (ctx.json) printJson(ctx, { ...result.value })
  else {
    io.stdout(
      renderWindow(
        result.value,
        direction === "next" ? "(end of the session)" : "(start of the session)",
      ),
    )
  }
  return completed(0)
}

// ---------------------------------------------------------------------------------------------
// status, prune, forget, vacuum

/** Runs `baton recall status`. */
export const runRecallStatus: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const none = await whenNoIndex(ctx)
  if (none !== undefined) return none
  const result = await runIndexed(
    ctx,
    Effect.all({
      status: recallStatus({ environment: ctx.environment }),
      // What the next index run embeds with: for `auto`, its choice at the index's size now.
      embedder: embedderSelection(ctx.io.env),
    }),
  )
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  const { status, embedder } = result.value
  if (status.empty) {
    const outcome = await printNothingIndexed(ctx, { ...status, embedder }, status)
    const failures = failureLines(status)
    if (!ctx.json && failures.length > 0) io.stdout(`${failures.join("\n")}\n`)
    return outcome
  }
  if (ctx.json) printJson(ctx, { ...status, embedder })
  else io.stdout(renderStatus(status, embedder))
  return completed(0)
}

/** Runs `baton recall prune`. */
export const runRecallPrune: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const none = await whenNoIndex(ctx)
  if (none !== undefined) return none
  const result = await runIndexed(ctx, pruneDeleted())
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  if (ctx.json) printJson(ctx, { removed: result.value })
  else
    io.stdout(
      result.value.files === 0
        ? "Nothing to prune: the index keeps no history of deleted transcripts.\n"
        : `Pruned ${counted(result.value.sessions, "session")} of ${counted(result.value.files, "deleted transcript")}.\n`,
    )
  return completed(0)
}

/** Runs `baton recall vacuum`. */
export const runRecallVacuum: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const none = await whenNoIndex(ctx)
  if (none !== undefined) return none
  if (!ctx.json) io.stderr("Rewriting the recall index to give back free space…\n")
  const result = await runIndexed(ctx, vacuumIndex())
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  if (ctx.json) printJson(ctx, { vacuum: result.value })
  else io.stdout(renderVacuum(result.value))
  return completed(0)
}

/** Runs `baton recall forget`. */
export const runRecallForget: CommandRunner = async (invocation, io) => {
  const ctx = contextOf(invocation, io)
  const choice = decoded(ctx, forgetFlags(invocation, io.cwd))
  if (isOutcome(choice)) return choice
  const target =
    choice._tag === "Project"
      ? {
          _tag: "Project" as const,
          repoRoot: repositoryRootOf(choice.dir),
          ...(choice.source === undefined ? {} : { source: choice.source }),
        }
      : choice
  // A session id or project that matches nothing is most likely mistyped: say so (exit 1), as
  // expand and step do.
  const of = target._tag === "All" || target.source === undefined ? "" : sourceName(target.source)
  const notFound = (why: string): NotFound =>
    target._tag === "Project"
      ? {
          _tag: "RecallNotFoundError",
          repositoryRoot: target.repoRoot,
          message: `no ${of === "" ? "" : `${of} `}sessions of the repository ${target.repoRoot} ${why}; nothing was forgotten`,
        }
      : noSession(
          target._tag === "Session" ? target.sessionId : "",
          null,
          `${of === "" ? "" : `of ${of} `}${why}; nothing was forgotten`,
        )
  const none = await whenNoIndex(
    ctx,
    target._tag === "All" ? undefined : () => notFound("in the index: nothing is indexed yet"),
  )
  if (none !== undefined) return none
  const result = await runIndexed(ctx, forgetSessions(target))
  if (result._tag !== "Done") return result._tag === "Stopped" ? completed(1) : result
  if (target._tag !== "All" && result.value.sessions === 0)
    return failed(
      ctx,
      notFound(
        target._tag === "Session"
          ? "in the index ('baton recall recent' lists sessions)"
          : "in the index ('baton recall recent' lists sessions and their projects)",
      ),
    )
  if (ctx.json)
    printJson(ctx, {
      removed: result.value,
      ...(target._tag === "Project" ? { repositoryRoot: target.repoRoot } : {}),
    })
  else {
    const forgot = `Forgot ${counted(result.value.sessions, "session")}`
    const leftOut = `${counted(result.value.files, "transcript")} left out of later index runs`
    io.stdout(
      target._tag === "All"
        ? `${forgot} (the index is empty; the next 'baton recall index' reads the history again).\n`
        : target._tag === "Project"
          ? `${forgot} of the repository ${target.repoRoot} (its worktrees and subdirectories included); ${leftOut}.\n`
          : `${forgot} (${leftOut}).\n`,
    )
  }
  return completed(0)
}

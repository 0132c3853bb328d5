// Shared setup for the compaction end-to-end tests: the mock model's script, Baton's environment,
// scheduling through the public API with the real node services (real detached worker processes),
// and waiting on the journal.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import type { JobSettings, ScheduleReport, StoredJob } from "@baton/compaction"
import {
  cancelCompaction,
  compactionStatus,
  Journal,
  journalLayer,
  nodeCompactionLayer,
  nodeJournalFileSystemLayer,
  scheduleCompaction,
} from "@baton/compaction"
import type {
  CodexDaemon,
  CodexDaemonConnection,
  CodexHome,
  MockResponsesServer,
  RecordedRequest,
} from "@baton/testkit"
import {
  createCodexHome,
  handlerReply,
  isCompactionRequest,
  resolveCodexBinary,
  startCodexDaemon,
  startMockResponses,
  textReply,
  userTexts,
} from "@baton/testkit"
import { Effect, Layer } from "effect"

/** Tokens the mock reports for an ordinary turn: 150 k of a 258.4 k window (58 %). */
export const CONTEXT_TOKENS = 150_000
export const SUMMARY = "SUMMARY: parser ported; tests pending"

/** A handoff the agent would write. */
export const handoff = (resume: boolean) => ({
  summary: "Ported the parser to the new grammar; the e2e suite is the only thing left.",
  preserve: ["PRESERVE-1 src/parser.ts keeps the new grammar", "PRESERVE-2 no API change"],
  discard: ["old benchmark logs"],
  nextStep: resume ? "NEXT-STEP run pnpm test:e2e and report" : "",
  resume,
})

/**
 * The mock model: compaction requests get a short summary (or a huge one for threads whose
 * history mentions BIG-SUMMARY, so Codex's own estimate of the compacted context is large);
 * "HOLD-<ms>" turns are answered after that delay; everything else is acknowledged with
 * CONTEXT_TOKENS of usage.
 */
export const scriptedReply = (request: RecordedRequest) => {
  const texts = userTexts(request.body)
  if (isCompactionRequest(request)) {
    const big = texts.some((t) => t.includes("BIG-SUMMARY"))
    return textReply(big ? `${SUMMARY} ${"lorem ipsum dolor sit amet ".repeat(40_000)}` : SUMMARY, {
      usage: { inputTokens: CONTEXT_TOKENS, outputTokens: 400 },
    })
  }
  const last = texts.at(-1) ?? ""
  const hold = /HOLD-(\d+)/.exec(last)
  return textReply(`ack: ${last.slice(0, 40)}`, {
    usage: { inputTokens: CONTEXT_TOKENS, outputTokens: 100 },
    ...(hold?.[1] === undefined ? {} : { delayMs: Number(hold[1]) }),
  })
}

/** Requests the mock received for one thread (by the `thread-id` header). */
export const requestsOf = (all: ReadonlyArray<RecordedRequest>, threadId: string) =>
  all.filter((r) => r.kind === "responses" && r.headers["thread-id"] === threadId)

export const compactionRequests = (all: ReadonlyArray<RecordedRequest>, threadId: string) =>
  requestsOf(all, threadId).filter(isCompactionRequest)

/** Requests whose last user text is Baton's continuation for `jobId`. */
export const continuationRequests = (
  all: ReadonlyArray<RecordedRequest>,
  threadId: string,
  jobId: string,
) =>
  requestsOf(all, threadId).filter(
    (r) =>
      !isCompactionRequest(r) &&
      (userTexts(r.body).at(-1) ?? "").includes(`Baton automatic continuation for job ${jobId}`),
  )

/** Baton's side: a journal directory and the environment its worker processes get. */
export interface BatonSide {
  readonly jobsDir: string
  readonly env: Record<string, string>
  readonly cwd: string
  readonly schedule: (
    threadId: string,
    options?: {
      readonly handoff?: unknown
      readonly settings?: Partial<JobSettings>
      readonly env?: Record<string, string>
      readonly awaitWorkerMs?: number
    },
  ) => Promise<ScheduleReport>
  readonly status: (threadId: string) => ReturnType<typeof statusOf>
  readonly cancel: (threadId: string, jobId: string) => ReturnType<typeof cancelOf>
  readonly readJob: (threadId: string, jobId: string) => Promise<StoredJob>
  readonly readEvents: (threadId: string, jobId: string) => Promise<string>
  /** Polls the journal (every 50 ms, up to `timeoutMs`) until the job satisfies `predicate`. */
  readonly waitForJob: (
    threadId: string,
    jobId: string,
    predicate: (job: StoredJob["job"]) => boolean,
    timeoutMs?: number,
  ) => Promise<StoredJob>
  readonly dispose: () => Promise<void>
}

const statusOf = (env: Record<string, string>, cwd: string, threadId: string) =>
  Effect.runPromise(
    compactionStatus(threadId).pipe(Effect.provide(nodeCompactionLayer({ env, cwd }))),
  )

const cancelOf = (env: Record<string, string>, cwd: string, threadId: string, jobId: string) =>
  Effect.runPromise(
    cancelCompaction(threadId, jobId).pipe(Effect.provide(nodeCompactionLayer({ env, cwd }))),
  )

/** Creates Baton's journal for a Codex home; workers reach Codex through that home. */
export const batonSide = async (home: CodexHome): Promise<BatonSide> => {
  const root = await mkdtemp(path.join(tmpdir(), "baton-compaction-e2e-"))
  const jobsDir = path.join(root, "jobs")
  const env: Record<string, string> = {
    ...home.env,
    BATON_JOBS_DIR: jobsDir,
    BATON_CODEX_BINARY: resolveCodexBinary().native ?? "",
  }
  const cwd = home.workdir
  const journal = journalLayer(jobsDir).pipe(Layer.provideMerge(nodeJournalFileSystemLayer))
  const readJob = (threadId: string, jobId: string) =>
    Effect.runPromise(Journal.use((j) => j.readJob(threadId, jobId)).pipe(Effect.provide(journal)))
  return {
    jobsDir,
    env,
    cwd,
    schedule: (threadId, options = {}) =>
      Effect.runPromise(
        scheduleCompaction({
          threadId,
          handoff: options.handoff ?? null,
          ...(options.settings === undefined ? {} : { settings: options.settings }),
          ...(options.awaitWorkerMs === undefined ? {} : { awaitWorkerMs: options.awaitWorkerMs }),
        }).pipe(Effect.provide(nodeCompactionLayer({ env: { ...env, ...options.env }, cwd }))),
      ),
    status: (threadId) => statusOf(env, cwd, threadId),
    cancel: (threadId, jobId) => cancelOf(env, cwd, threadId, jobId),
    readJob,
    readEvents: async (threadId, jobId) => {
      const { readFile } = await import("node:fs/promises")
      return readFile(path.join(jobsDir, threadId, `${jobId}.events.jsonl`), "utf8")
    },
    waitForJob: async (threadId, jobId, predicate, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs
      let last: StoredJob | undefined
      while (Date.now() < deadline) {
        last = await readJob(threadId, jobId)
        if (predicate(last.job)) return last
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(
        `job ${jobId} did not reach the expected state in ${timeoutMs} ms; last: ${last?.job.status} ${last?.job.reason ?? ""} ${last?.job.detail ?? ""}`,
      )
    },
    dispose: () => rm(root, { recursive: true, force: true }),
  }
}

/** True once the process is gone. */
export const processGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

/** Waits (≤ timeoutMs) for a process to exit. */
export const waitForExit = async (pid: number, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!processGone(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still running after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The mock model, a Codex home with its daemon, the user's daemon client, and Baton's side. */
export interface DaemonRig {
  readonly mock: MockResponsesServer
  readonly home: CodexHome
  readonly daemon: CodexDaemon
  readonly owner: CodexDaemonConnection
  readonly baton: BatonSide
  readonly dispose: () => Promise<void>
}

/** Starts a daemon rig on the scripted mock; `dispose` stops everything it started. */
export const startDaemonRig = async (): Promise<DaemonRig> => {
  const mock = await startMockResponses({ defaultReply: handlerReply(scriptedReply) })
  const home = await createCodexHome({ mock })
  const daemon = await startCodexDaemon(home)
  const owner = await daemon.connect()
  const baton = await batonSide(home)
  return {
    mock,
    home,
    daemon,
    owner,
    baton,
    dispose: async () => {
      await owner.close().catch(() => undefined)
      await daemon.dispose().catch(() => undefined)
      await home.dispose().catch(() => undefined)
      await mock.close().catch(() => undefined)
      await baton.dispose().catch(() => undefined)
    },
  }
}

#!/usr/bin/env node
// Continuation delay of a compaction job run by `runWorker` on the real codex 0.169.0 app-server,
// printed as markdown tables (run: pnpm --filter @baton/compaction bench).
// - Codex: the pinned binary from @baton/testkit, the loopback mock model (`startMockResponses`)
//   in an isolated `createCodexHome`; nothing leaves the machine.
// - Each run: a fresh thread with two turns at high mock usage (created beforehand, outside the
//   timing), a job scheduled in a temp jobs directory on the real node file system with a
//   `resume: true` handoff bound by `bindHandoff`, and `runWorker` in-process over a
//   `ThreadController` (`connectionThreadController`). It runs to `resumed` (the continuation turn
//   is followed to its end).
// - Rows: the stdio app-server (one process reused, one thread per run) with the default idle
//   debounce and with `idleDebounceMs` 50; the daemon transport (`startCodexDaemon` +
//   `connectDaemon`) with the default debounce. An outcomes table lists runs that did not resume.
// - Headline numbers come from the job record (Effect Clock = real clock, whole ms). The
//   decomposition comes from timing wrappers around the Journal service and the controller's
//   `startTurn` (performance.now): nothing in the worker is changed.
// Uses dist/ (build first). No assertions: numbers only. Every process and temp dir is removed at
// the end, on failure and on SIGINT/SIGTERM too. Env: BENCH_RUNS (default 20, per row),
// BENCH_EXTRA_DEBOUNCE_MS (stdio rows besides the default, default "50"; e.g. "50,250"),
// BENCH_DAEMON_RUNS (default BENCH_RUNS; 0 skips the daemon row), BENCH_RUN_TIMEOUT_MS (60000).
import { mkdtemp, rm } from "node:fs/promises"
import { arch, cpus, platform, tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { bindHandoff } from "@baton/handoff"
import {
  connectDaemon,
  connectStdio,
  connectionThreadController,
  discoverCodexBinary,
  nodeBinaryHost,
} from "@baton/ipc-codex"
import {
  createCodexHome,
  handlerReply,
  isCompactionRequest,
  resolveCodexBinary,
  startCodexAppServer,
  startCodexDaemon,
  startMockResponses,
  textReply,
} from "@baton/testkit"
import {
  defaultJobSettings,
  Journal,
  JournalFileSystem,
  jobMetrics,
  makeJournal,
  nodeJournalFileSystem,
  nodeProcessProbeLayer,
  runWorker,
} from "../dist/index.js"

const RUNS = Number(process.env.BENCH_RUNS ?? 20)
const DAEMON_RUNS = Number(process.env.BENCH_DAEMON_RUNS ?? RUNS)
const RUN_TIMEOUT_MS = Number(process.env.BENCH_RUN_TIMEOUT_MS ?? 60_000)
// Stdio rows besides the default debounce, to show the trade-off (comma-separated ms).
const EXTRA_DEBOUNCES_MS = (process.env.BENCH_EXTRA_DEBOUNCE_MS ?? "50")
  .split(",")
  .filter((v) => v.trim() !== "")
  .map(Number)

// Mock usage: every ordinary turn reports 180k input tokens (70 % of the 258 400 window Codex
// assumes for an unknown model), so compaction is worth it; after compaction Codex reports its own
// estimate of the compacted context, which leaves headroom under the 0.6 threshold.
const TURN_USAGE = { inputTokens: 180_000, outputTokens: 120 }
const reply = (request) =>
  isCompactionRequest(request)
    ? textReply("BENCH-SUMMARY: parser ported, tests pending", {
        usage: { inputTokens: 180_000, outputTokens: 300 },
      })
    : textReply("ack", { usage: TURN_USAGE })

// ---------------------------------------------------------------------------------------------
// Statistics and output

// Nearest rank: with 20 samples p95 is the 19th smallest, not the maximum.
const quantile = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]
const summary = (samples) => {
  const s = samples.filter((v) => typeof v === "number" && Number.isFinite(v)).sort((a, b) => a - b)
  return { n: s.length, p50: quantile(s, 0.5), p95: quantile(s, 0.95), max: s.at(-1) }
}
const fmt = (v) => (v === undefined ? "—" : v < 10 ? v.toFixed(2) : v.toFixed(1))

// ---------------------------------------------------------------------------------------------
// Instrumentation: timing wrappers, never a change of behaviour.

/** Wraps a Journal so every call is timed; `calls` gets {op, what, start, end}. */
const timedJournal = (journal, calls) => {
  const timed = (op, what, effect) =>
    Effect.suspend(() => {
      const start = performance.now()
      return Effect.ensuring(
        effect,
        Effect.sync(() => calls.push({ op, what, start, end: performance.now() })),
      )
    })
  return {
    ...journal,
    saveJob: (job, revision) => timed("saveJob", job.status, journal.saveJob(job, revision)),
    appendEvent: (threadId, jobId, entry) =>
      timed(
        "appendEvent",
        entry.to ?? entry.messageType ?? entry.kind,
        journal.appendEvent(threadId, jobId, entry),
      ),
    // The worker coalesces log lines: one append per flush, labelled with every state it logs.
    appendEvents: (threadId, jobId, entries) =>
      timed(
        "appendEvent",
        entries.map((e) => e.to ?? e.messageType ?? e.kind).join(","),
        journal.appendEvents(threadId, jobId, entries),
      ),
    readHandoff: (threadId, jobId) =>
      timed("readHandoff", "handoff", journal.readHandoff(threadId, jobId)),
    isCancelRequested: (threadId, jobId) =>
      timed("isCancelRequested", "cancel", journal.isCancelRequested(threadId, jobId)),
  }
}

/** Wraps a controller so `startTurn` (the turn/start round trip) is timed. */
const timedController = (controller, calls) => ({
  ...controller,
  startTurn: (input) =>
    Effect.suspend(() => {
      const start = performance.now()
      return Effect.ensuring(
        controller.startTurn(input),
        Effect.sync(() =>
          calls.push({ op: "startTurn", what: "rpc", start, end: performance.now() }),
        ),
      )
    }),
})

/**
 * The delay window on the high-resolution timeline, from "turn end observed" (the transition to
 * waiting_for_resume_idle is logged) to the end of the turn/start round trip, split into parts
 * that add up to the whole.
 */
const decompose = (calls) => {
  const logs = (what) => (c) => c.op === "appendEvent" && c.what.split(",").includes(what)
  // Last ones: if idle was lost while settling, the debounce that counted is the final one.
  const turnEnd = calls.find(logs("waiting_for_resume_idle"))
  const settling = calls.findLast((c) => c.op === "saveJob" && c.what === "resume_idle_settling")
  const handoff = calls.findLast((c) => c.op === "readHandoff")
  const preSend = calls.find(logs("continuation_requested"))
  const send = calls.find((c) => c.op === "startTurn")
  if ([turnEnd, settling, handoff, preSend, send].includes(undefined)) return null
  const from = turnEnd.start
  const to = send.end
  const writes = calls.filter((c) => c.op === "saveJob" || c.op === "appendEvent")
  const within = (a, b) => writes.filter((c) => c.start >= a && c.end <= b)
  const ms = (list) => list.reduce((sum, c) => sum + (c.end - c.start), 0)
  // The debounce timer is armed once the flush that made resume_idle_settling durable is done.
  const before = within(from, settling.end)
  const after = within(preSend.start, send.start)
  const debounce = handoff.start - settling.end
  const verify = handoff.end - handoff.start + (preSend.start - handoff.end)
  const rpc = send.end - send.start
  const total = to - from
  const journalBefore = ms(before)
  const journalAfter = ms(after)
  return {
    total,
    debounce,
    verify,
    rpc,
    journalBefore,
    journalAfter,
    writesBefore: before.length,
    writesAfter: after.length,
    other: total - debounce - verify - rpc - journalBefore - journalAfter,
  }
}

// ---------------------------------------------------------------------------------------------
// One job

const handoffFor = (threadId, jobId) =>
  bindHandoff({
    threadId,
    jobId,
    handoff: {
      summary: "Parser ported to the new grammar; the e2e suite is next.",
      preserve: ["src/parser.ts keeps the new grammar"],
      discard: ["the abandoned regex approach"],
      nextStep: "Run the e2e suite and report failures.",
      resume: true,
    },
    createdAt: new Date().toISOString(),
  })

/** Schedules one job on `threadId` in `jobsDir` and runs it to its end; returns the stored record. */
const runJob = async ({ connection, threadId, jobId, jobsDir, settings }) => {
  const calls = []
  const journal = timedJournal(makeJournal(jobsDir, nodeJournalFileSystem), calls)
  const layer = Layer.mergeAll(
    Layer.succeed(Journal, journal),
    Layer.succeed(JournalFileSystem, nodeJournalFileSystem),
    nodeProcessProbeLayer,
  )
  const program = Effect.gen(function* () {
    const handoff = yield* handoffFor(threadId, jobId)
    yield* journal.schedule({
      job: {
        jobId,
        threadId,
        // As the schedule path does: no anchor, the worker's first look at the thread is it.
        userFingerprint: "",
        resume: true,
        handoffDigest: handoff.digest,
        settings,
      },
      handoff,
    })
    const controller = yield* Effect.acquireRelease(
      connectionThreadController(connection, threadId),
      (c) => c.close,
    )
    return yield* runWorker({
      threadId,
      jobId,
      controller: timedController(controller, calls),
    })
  })
  const fiber = Effect.runFork(
    Effect.scoped(program).pipe(Effect.timeout(RUN_TIMEOUT_MS), Effect.provide(layer)),
  )
  inFlight = fiber
  try {
    const stored = await Effect.runPromise(Fiber.join(fiber))
    return { job: stored.job, calls }
  } finally {
    inFlight = null
  }
}

// ---------------------------------------------------------------------------------------------
// Rows

const rows = [] // { config, samples, outcomes }

const measureRow = async ({ config, connection, threads, jobsDir, settings }) => {
  const samples = {
    fromTurnEnd: [],
    fromItem: [],
    compaction: [],
    total: [],
    window: [],
    debounce: [],
    verify: [],
    rpc: [],
    journalBefore: [],
    journalAfter: [],
    other: [],
    saveJob: [],
    appendEvent: [],
    tokensBefore: [],
    tokensAfter: [],
    reclaimedPct: [],
  }
  const writeCounts = new Set()
  const outcomes = new Map()
  const count = (outcome) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
  for (const [i, threadId] of threads.entries()) {
    if (stopping) break
    const jobId = `bench-${config.key}-${String(i + 1).padStart(3, "0")}`
    try {
      const { job, calls } = await runJob({ connection, threadId, jobId, jobsDir, settings })
      count(
        job.status === "resumed"
          ? "resumed"
          : `${job.status} (${job.resumeSkipReason ?? job.reason ?? "?"})`,
      )
      if (job.status !== "resumed" || job.continuationAcceptedAt === null) continue
      const m = jobMetrics(job)
      samples.fromTurnEnd.push(job.continuationAcceptedAt - job.compactionTurnEndedAt)
      samples.fromItem.push(m.continuationDelayMs)
      samples.compaction.push(m.compactionDurationMs)
      samples.total.push(job.endedAt - job.workerStartedAt)
      samples.tokensBefore.push(m.tokensBefore)
      samples.tokensAfter.push(m.tokensAfter)
      samples.reclaimedPct.push(m.reclaimedFraction === null ? null : m.reclaimedFraction * 100)
      const parts = decompose(calls)
      if (parts === null) continue
      samples.window.push(parts.total)
      samples.debounce.push(parts.debounce)
      samples.verify.push(parts.verify)
      samples.rpc.push(parts.rpc)
      samples.journalBefore.push(parts.journalBefore)
      samples.journalAfter.push(parts.journalAfter)
      samples.other.push(parts.other)
      writeCounts.add(`${parts.writesBefore} + ${parts.writesAfter}`)
      for (const c of calls)
        if (c.op === "saveJob" || c.op === "appendEvent") samples[c.op].push(c.end - c.start)
    } catch (error) {
      count(`error: ${error?._tag ?? error?.name ?? "Error"}`)
    }
  }
  rows.push({ config, samples, outcomes, writeCounts, runs: threads.length })
}

// ---------------------------------------------------------------------------------------------
// Threads: created before the measurement with the testkit's own client (two turns each).

const createThreads = async (client, count) => {
  const ids = []
  for (let i = 0; i < count && !stopping; i++) {
    const { threadId } = await client.startThread()
    await client.runTurn(threadId, `port the parser, step ${i}.1`)
    await client.runTurn(threadId, `port the parser, step ${i}.2`)
    ids.push(threadId)
  }
  return ids
}

// ---------------------------------------------------------------------------------------------
// Main, with cleanup of every process and temp dir whatever happens.

const cleanups = []
let stopping = false
/** The job running now; interrupted first, so nothing writes to the jobs dir once it is removed. */
let inFlight = null
let cleaning = null
const cleanup = () => {
  stopping = true
  cleaning ??= (async () => {
    if (inFlight !== null) await Effect.runPromise(Fiber.interrupt(inFlight)).catch(() => undefined)
    for (const step of cleanups.splice(0).reverse()) await step().catch(() => undefined)
  })()
  return cleaning
}
for (const signal of ["SIGINT", "SIGTERM"])
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130))
  })

/** Opens a scoped resource whose scope the cleanup closes (idempotent if closed earlier). */
const openScoped = async (effect) => {
  const scope = await Effect.runPromise(Scope.make())
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  cleanups.push(close)
  return { value: await Effect.runPromise(Scope.provide(effect, scope)), close }
}

let skipped = null
const started = performance.now()
try {
  if (resolveCodexBinary().native === undefined) skipped = "no native binary for this platform"
} catch (error) {
  skipped = String(error?.message ?? error)
}

if (skipped === null) {
  try {
    const mock = await startMockResponses({ defaultReply: handlerReply(reply) })
    cleanups.push(() => mock.close())
    const home = await createCodexHome({ mock })
    cleanups.push(() => home.dispose())
    const jobsDir = await mkdtemp(join(tmpdir(), "baton-bench-jobs-"))
    cleanups.push(() => rm(jobsDir, { recursive: true, force: true }))
    const debounceDefault = defaultJobSettings.idleDebounceMs

    // Stdio: threads written to disk by a throwaway app-server, then loaded by Baton's own one.
    {
      const creator = await startCodexAppServer({ home })
      cleanups.push(() => creator.dispose())
      const threads = await createThreads(creator, RUNS * (1 + EXTRA_DEBOUNCES_MS.length))
      await creator.dispose()
      const binary = await Effect.runPromise(
        discoverCodexBinary({
          ...nodeBinaryHost(),
          env: { BATON_CODEX_BINARY: resolveCodexBinary().native },
        }),
      )
      const { value: stdio, close } = await openScoped(
        connectStdio({ binary, env: home.env, cwd: home.workdir }),
      )
      for (const debounce of [debounceDefault, ...EXTRA_DEBOUNCES_MS])
        await measureRow({
          config: { key: `stdio-${debounce}`, transport: "stdio", debounce },
          connection: stdio,
          threads: threads.splice(0, RUNS),
          jobsDir,
          settings: debounce === debounceDefault ? {} : { idleDebounceMs: debounce },
        })
      await close()
    }

    // Daemon: threads started in the daemon by the testkit client, then driven over connectDaemon.
    if (DAEMON_RUNS > 0 && !stopping) {
      const daemon = await startCodexDaemon(home)
      cleanups.push(() => daemon.dispose())
      const creator = await daemon.connect()
      cleanups.push(() => creator.close())
      const threads = await createThreads(creator, DAEMON_RUNS)
      await creator.close()
      const { value: connection, close } = await openScoped(
        connectDaemon({ codexHome: home.codexHome }),
      )
      await measureRow({
        config: {
          key: `daemon-${debounceDefault}`,
          transport: "daemon",
          debounce: debounceDefault,
        },
        connection,
        threads,
        jobsDir,
        settings: {},
      })
      await close()
    }
    const outbound = mock.outboundAttempts()
    if (outbound.length > 0)
      console.error(`warning: Codex tried to reach: ${JSON.stringify(outbound)}`)
  } catch (error) {
    console.error(`bench aborted: ${error?.stack ?? error}`)
    process.exitCode = 1
  } finally {
    await cleanup()
  }
}

// ---------------------------------------------------------------------------------------------
// Tables

const label = (c) =>
  `${c.transport}, debounce ${c.debounce} ms${c.debounce === defaultJobSettings.idleDebounceMs ? " (default)" : ""}`
const elapsedS = ((performance.now() - started) / 1000).toFixed(0)
console.log(
  `\n### @baton/compaction: continuation delay (codex 0.169.0, node ${process.version}, ${platform()}-${arch()}, ${cpus().length} CPUs, ${elapsedS} s)\n`,
)
if (skipped !== null) {
  console.log(`(skipped: the pinned codex from @baton/testkit is not usable: ${skipped})`)
} else {
  console.log("| configuration | measurement | n | p50 (ms) | p95 (ms) | max (ms) |")
  console.log("|---|---|---:|---:|---:|---:|")
  const lines = [
    ["fromTurnEnd", "**continuation delay**: compaction turn ended → continuation accepted"],
    ["fromItem", "continuation delay from compaction item completed (`jobMetrics`)"],
    ["compaction", "compaction duration: request → item completed"],
    ["total", "total job: worker started → continuation turn ended"],
    ["window", "delay window, high resolution (turn end logged → `turn/start` answered)"],
    ["debounce", "↳ idle debounce (timer armed → fired)"],
    ["verify", "↳ handoff verify (read + verify + render)"],
    ["rpc", "↳ `turn/start` round trip"],
    ["journalBefore", "↳ journal writes before the debounce is armed"],
    ["journalAfter", "↳ journal writes after it fired, before the send"],
    ["other", "↳ other (queue, timers, transitions)"],
    ["saveJob", "one job save (read, decode, temp file + fsync, rename, dir fsync), all saves"],
    ["appendEvent", "one event-log append (one or more lines, append + fsync), all appends"],
  ]
  for (const { config, samples } of rows)
    for (const [key, name] of lines) {
      const s = summary(samples[key])
      console.log(
        `| ${label(config)} | ${name} | ${s.n} | ${fmt(s.p50)} | ${fmt(s.p95)} | ${fmt(s.max)} |`,
      )
    }
  console.log(
    "\n| configuration | runs | outcomes | journal writes in the window (before + after the debounce) |",
  )
  console.log("|---|---:|---|---|")
  for (const { config, outcomes, runs, writeCounts } of rows)
    console.log(
      `| ${label(config)} | ${runs} | ${[...outcomes].map(([o, n]) => `${o}: ${n}`).join(", ")} | ${[...writeCounts].join(", ") || "—"} |`,
    )
  console.log("\nThe ↳ rows split the high-resolution delay window into parts that add up to it.")
  console.log("\n| configuration | metric (real token usage) | n | p50 | min | max |")
  console.log("|---|---|---:|---:|---:|---:|")
  for (const { config, samples } of rows)
    for (const [key, name] of [
      ["tokensBefore", "tokens before (last turn's context)"],
      ["tokensAfter", "tokens after (Codex's estimate of the compacted context)"],
      ["reclaimedPct", "reclaimed (%)"],
    ]) {
      const values = samples[key].filter((v) => v !== null).sort((a, b) => a - b)
      const p50 = values[Math.floor(values.length / 2)]
      console.log(
        `| ${label(config)} | ${name} | ${values.length} | ${fmt(p50)} | ${fmt(values[0])} | ${fmt(values.at(-1))} |`,
      )
    }
}

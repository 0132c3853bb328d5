/**
 * `baton wake …`: the runners behind wake-command-spec.ts. Each builds the job store over the real
 * file system at `$BATON_WAKE_DIR` (else `$CODEX_HOME/baton/wake`), runs one operation of
 * @baton/wake, and prints a text report (or one JSON object with `--json`). Failures come back
 * as tagged errors for failure-report.ts. `watch` runs the watcher in this process with the real
 * adapters: a private `codex app-server` for quota reads (never a thread, never a model call),
 * rollouts for passive signals, detached process groups for continuations.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import { homedir, hostname, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as ipc from "@baton/ipc-codex"
import * as wake from "@baton/wake"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { resolveCodexHome } from "./baton-paths.js"
import type { CliIo } from "./cli-io.js"
import type { CommandOutcome, CommandRunner, Invocation, TaggedFailure } from "./command-spec.js"
import { cliUsageError, inputUnreadableError } from "./errors.js"
import { inertLine } from "./terminal-text.js"
import { readInputText } from "./handoff-input.js"
import {
  jsonLine,
  renderListText,
  renderCheckpointNotes,
  renderStatusText,
  renderWatcherEventText,
} from "./wake-report.js"

type Failed = Extract<CommandOutcome, { _tag: "Failed" }>

const done: CommandOutcome = { _tag: "Completed", exitCode: 0 }

const isJson = (invocation: Invocation) => invocation.flags["json"] === true

const flag = (invocation: Invocation, name: string): string | undefined => {
  const value = invocation.flags[name]
  return typeof value === "string" ? value : undefined
}

/** The wake directory, store and file system for this invocation. */
const wakeContext = (io: CliIo) => {
  const wakeDir = wake.wakeDirectory({
    BATON_WAKE_DIR: io.env["BATON_WAKE_DIR"],
    CODEX_HOME:
      io.env["CODEX_HOME"] === undefined || io.env["CODEX_HOME"] === ""
        ? undefined
        : resolveCodexHome(io.env, homedir(), io.cwd).path,
    HOME: io.env["HOME"] ?? homedir(),
  })
  const fs = wake.nodeWakeFileSystemFor({ BATON_WAKE_DIR: io.env["BATON_WAKE_DIR"] })
  return {
    wakeDir,
    fs,
    store: wake.makeJobStore(wakeDir, fs, process.pid, {
      holderProbe: wake.nodeContinuationProcesses.isAlive,
    }),
  }
}

/** The watcher lock when its watcher runs (pid and start time checked, as the takeover does). */
const liveWatcher = (fs: wake.WakeFileSystemShape, wakeDir: string) =>
  Effect.runPromise(
    wake.readLiveWatcherLock(fs, wakeDir, hostname(), wake.nodeContinuationProcesses.isAlive),
  )

/** Runs an Effect; a tagged failure becomes the command's Failed outcome. */
const attempt = async <A>(
  program: Effect.Effect<A, TaggedFailure>,
  json: boolean,
): Promise<{ readonly _tag: "Ok"; readonly value: A } | Failed> => {
  const result = await Effect.runPromise(Effect.result(program))
  return Result.isSuccess(result)
    ? { _tag: "Ok", value: result.success }
    : { _tag: "Failed", error: result.failure, json }
}

const resolveJob = async (
  invocation: Invocation,
  io: CliIo,
  command: string,
): Promise<{ readonly _tag: "Ok"; readonly value: string } | Failed> => {
  const { store } = wakeContext(io)
  const json = isJson(invocation)
  const resolved = await attempt(wake.resolveJobId(store, invocation.positionals[0], io.env), json)
  if (resolved._tag === "Failed") return resolved
  if (resolved.value === null)
    return {
      _tag: "Failed",
      json,
      error: cliUsageError(
        "no job given: pass the job id (or run inside a continuation or a Codex thread that owns a job)",
        `baton wake ${command}`,
      ),
    }
  return { _tag: "Ok", value: resolved.value }
}

const positiveInt = (value: string | undefined): number | null | undefined => {
  if (value === undefined) return undefined
  return /^\d{1,9}$/.test(value) && Number(value) > 0 ? Number(value) : null
}

/** `baton wake create`. */
export const runWakeCreate: CommandRunner = async (invocation, io) => {
  const json = isJson(invocation)
  const usage = (problem: string): Failed => ({
    _tag: "Failed",
    json,
    error: cliUsageError(problem, "baton wake create"),
  })
  const delivery = flag(invocation, "delivery") ?? "new_thread"
  if (!(wake.deliveryModes as ReadonlyArray<string>).includes(delivery))
    return usage(`--delivery must be one of ${wake.deliveryModes.join(", ")}`)
  const maxGenerations = positiveInt(flag(invocation, "max-generations"))
  const maxHours = positiveInt(flag(invocation, "max-hours"))
  if (maxGenerations === null) return usage("--max-generations must be a positive integer")
  if (maxHours === null) return usage("--max-hours must be a positive integer")
  const model = flag(invocation, "model")
  if (model !== undefined && !wake.isValidModel(model))
    return usage(
      `--model ${JSON.stringify(model.slice(0, 80))} is not a model name: a letter or digit, then letters, digits, '.', '_', ':' or '-' (at most 128)`,
    )
  const effort = flag(invocation, "effort")
  if (effort !== undefined && !wake.isValidReasoningEffort(effort))
    return usage(
      `--effort ${JSON.stringify(effort.slice(0, 80))} is not a reasoning effort: ${wake.REASONING_EFFORT_RULE}`,
    )
  const thread = flag(invocation, "thread") ?? io.env["CODEX_THREAD_ID"] ?? null
  const { store, fs } = wakeContext(io)
  const cwd = flag(invocation, "cwd")
  const created = await attempt(
    wake.createJob(store, fs, {
      objective: flag(invocation, "objective") ?? null,
      threadId: thread === "" ? null : thread,
      cwd: cwd === undefined ? io.cwd : resolve(io.cwd, cwd),
      model: flag(invocation, "model") ?? null,
      reasoningEffort: flag(invocation, "effort") ?? null,
      delivery: delivery as wake.DeliveryMode,
      bounds: {
        ...(maxGenerations === undefined ? {} : { maxGenerations }),
        ...(maxHours === undefined ? {} : { maxWallClockMs: maxHours * 3_600_000 }),
      },
      idSuffix: randomBytes(4).toString("hex"),
    }),
    json,
  )
  if (created._tag === "Failed") return created
  const { stored, alreadyExists } = created.value
  const paths = store.paths(stored.job.jobId)
  io.stdout(
    json
      ? jsonLine({
          jobId: stored.job.jobId,
          state: stored.job.state,
          alreadyExists,
          checkpointPath: paths.checkpoint,
          capsulePath: paths.capsule,
          jobDir: paths.dir,
        })
      : [
          `${alreadyExists ? "existing" : "created"} ${stored.job.jobId} (${stored.job.state})`,
          `  fill the checkpoint: ${paths.checkpoint}`,
          `  then: baton wake arm ${stored.job.jobId}`,
          "",
        ].join("\n"),
  )
  return done
}

const reportTransition = (
  invocation: Invocation,
  io: CliIo,
  verb: string,
  stored: wake.StoredJob,
  extra: Readonly<Record<string, unknown>> = {},
) => {
  io.stdout(
    isJson(invocation)
      ? jsonLine({ jobId: stored.job.jobId, state: stored.job.state, ...extra })
      : `${verb} ${stored.job.jobId}: ${stored.job.state}${Object.entries(extra)
          .map(([k, v]) => `, ${k} ${String(v)}`)
          .join("")}\n`,
  )
  return done
}

/** `baton wake arm`. */
export const runWakeArm: CommandRunner = async (invocation, io) => {
  const job = await resolveJob(invocation, io, "arm")
  if (job._tag === "Failed") return job
  const { store, fs } = wakeContext(io)
  const armed = await attempt(wake.armJob(store, job.value), isJson(invocation))
  if (armed._tag === "Failed") return armed
  const running = (await liveWatcher(fs, store.wakeDir)) !== null
  if (!running && !isJson(invocation))
    io.stderr(
      "note: no wake watcher runs, so nothing resumes this job until one does; start one with 'baton wake watch --detach'\n",
    )
  return reportTransition(invocation, io, "armed", armed.value.stored, { watcherRunning: running })
}

/** `baton wake pause`. */
export const runWakePause: CommandRunner = async (invocation, io) => {
  const job = await resolveJob(invocation, io, "pause")
  if (job._tag === "Failed") return job
  const { store } = wakeContext(io)
  const reason = flag(invocation, "reason") ?? "waiting for the user"
  const paused = await attempt(wake.pauseJob(store, job.value, reason), isJson(invocation))
  if (paused._tag === "Failed") return paused
  return reportTransition(invocation, io, "paused", paused.value.stored)
}

/** `baton wake complete`. */
export const runWakeComplete: CommandRunner = async (invocation, io) => {
  const job = await resolveJob(invocation, io, "complete")
  if (job._tag === "Failed") return job
  const { store } = wakeContext(io)
  const completed = await attempt(wake.completeJob(store, job.value), isJson(invocation))
  if (completed._tag === "Failed") return completed
  return reportTransition(invocation, io, "completed", completed.value.stored)
}

/** `baton wake stop`. */
export const runWakeStop: CommandRunner = async (invocation, io) => {
  const job = await resolveJob(invocation, io, "stop")
  if (job._tag === "Failed") return job
  const { store } = wakeContext(io)
  const reason = flag(invocation, "reason") ?? "stopped by the user"
  const stopped = await attempt(
    wake.stopJob(store, wake.nodeContinuationProcesses, job.value, reason),
    isJson(invocation),
  )
  if (stopped._tag === "Failed") return stopped
  return reportTransition(invocation, io, "stopped", stopped.value.stored, {
    runTerminated: stopped.value.terminated,
  })
}

/** The note on secrets masked in the capsule (none: empty). */
const masked = (count: number): string =>
  count === 0
    ? ""
    : `; ${count} likely secret(s) masked in the capsule (checkpoint.md keeps them as written)`

/** `baton wake refresh`. */
export const runWakeRefresh: CommandRunner = async (invocation, io) => {
  const job = await resolveJob(invocation, io, "refresh")
  if (job._tag === "Failed") return job
  const { store } = wakeContext(io)
  const projected = await attempt(
    wake.retryWhileBusy(store.refreshCapsule(job.value)),
    isJson(invocation),
  )
  if (projected._tag === "Failed") return projected
  const { capsule, stored, report } = projected.value
  io.stdout(
    isJson(invocation)
      ? jsonLine({
          jobId: stored.job.jobId,
          ready: stored.job.memory.ready,
          capsuleBytes: capsule.bytes,
          clipped: capsule.clipped.map((c) => c.section),
          missingSections: report.missing,
          maskedSecrets: capsule.maskedSecrets,
        })
      : `refreshed ${stored.job.jobId}: capsule ${capsule.bytes} bytes, ${stored.job.memory.ready ? "ready" : "not ready"}${capsule.clipped.length > 0 ? `, clipped: ${capsule.clipped.map((c) => c.section).join(", ")}` : ""}${masked(capsule.maskedSecrets)}\n`,
  )
  return done
}

/** `baton wake checkpoint`. */
export const runWakeCheckpoint: CommandRunner = async (invocation, io) => {
  const json = isJson(invocation)
  const job = await resolveJob(invocation, io, "checkpoint")
  if (job._tag === "Failed") return job
  const { store } = wakeContext(io)
  const file = flag(invocation, "file")
  if (file === undefined) {
    const text = await attempt(store.readCheckpoint(job.value), json)
    if (text._tag === "Failed") return text
    const path = store.paths(job.value).checkpoint
    if (text.value === null)
      return { _tag: "Failed", json, error: inputUnreadableError(path, "checkpoint.md is missing") }
    io.stdout(json ? jsonLine({ jobId: job.value, path, text: text.value }) : text.value)
    return done
  }
  const input = await readInputText(file, io)
  if (input._tag === "Failure") return { _tag: "Failed", json, error: input.failure }
  const written = await attempt(wake.writeJobCheckpoint(store, job.value, input.success), json)
  if (written._tag === "Failed") return written
  const { stored, problems } = written.value
  // Missing, unknown, aliased and duplicated sections are reported, never dropped silently.
  const notes = wake.checkpointNotes(input.success)
  io.stdout(
    json
      ? jsonLine({
          jobId: job.value,
          ready: stored.job.memory.ready,
          capsuleBytes: stored.job.memory.capsuleBytes,
          problems,
          notes,
          maskedSecrets: stored.job.memory.maskedSecrets ?? 0,
        })
      : `checkpoint written for ${job.value}; capsule ${stored.job.memory.capsuleBytes ?? "—"} bytes, ${problems.length === 0 ? "ready" : `not ready: ${inertLine(problems.join("; "))}`}${masked(stored.job.memory.maskedSecrets ?? 0)}\n${renderCheckpointNotes(notes)}`,
  )
  return done
}

/** Whether the capsule `baton wake capsule` printed is fresh, and what to do when it is not. */
const capsuleFreshnessLine = (freshness: wake.CapsuleFreshness): string =>
  freshness.capsuleModified
    ? "capsule: stale — edited by hand; 'baton wake refresh' rewrites it"
    : freshness.checkpointNewerThanCapsule
      ? "capsule: stale — checkpoint.md changed since it was projected; run 'baton wake refresh'"
      : "capsule: fresh — projected from the current checkpoint.md"

/** `baton wake capsule`. */
export const runWakeCapsule: CommandRunner = async (invocation, io) => {
  const json = isJson(invocation)
  const job = await resolveJob(invocation, io, "capsule")
  if (job._tag === "Failed") return job
  const { store, fs } = wakeContext(io)
  const status = await attempt(store.memoryStatus(job.value), json)
  if (status._tag === "Failed") return status
  const path = store.paths(job.value).capsule
  const text = await Effect.runPromise(Effect.orElseSucceed(fs.readText(path), () => null))
  if (text === null)
    return {
      _tag: "Failed",
      json,
      error: inputUnreadableError(path, "memory-capsule.md is missing"),
    }
  io.stdout(
    json
      ? jsonLine({
          jobId: job.value,
          path,
          bytes: status.value.capsuleBytes,
          ready: status.value.stored.job.memory.ready,
          ...status.value.freshness,
          text,
        })
      : text,
  )
  // stdout stays the capsule itself (pipeable); the freshness verdict goes to stderr.
  if (!json) io.stderr(`${capsuleFreshnessLine(status.value.freshness)}\n`)
  return done
}

/** `baton wake status`. */
export const runWakeStatus: CommandRunner = async (invocation, io) => {
  const json = isJson(invocation)
  const { store, fs } = wakeContext(io)
  const resolved = await attempt(wake.resolveJobId(store, invocation.positionals[0], io.env), json)
  if (resolved._tag === "Failed") return resolved
  if (resolved.value === null) {
    const all = await attempt(
      Effect.all([
        wake.listJobs(store),
        wake.readLiveWatcherLock(
          fs,
          store.wakeDir,
          hostname(),
          wake.nodeContinuationProcesses.isAlive,
        ),
      ]),
      json,
    )
    if (all._tag === "Failed") return all
    const [{ jobs, unreadable, orphanJobDirs, tornTempFiles }, watcher] = all.value
    const running = watcher !== null
    io.stdout(
      json
        ? jsonLine({
            jobs,
            unreadable,
            orphanJobDirs,
            tornTempFiles,
            watcher: { running, pid: watcher?.pid ?? null },
          })
        : `${renderListText(jobs, unreadable, { orphanJobDirs, tornTempFiles })}watcher: ${running ? `running (pid ${watcher?.pid})` : "not running"}\n`,
    )
    return done
  }
  const report = await attempt(
    wake.jobStatus(store, fs, resolved.value, {
      host: hostname(),
      probe: wake.nodeContinuationProcesses.isAlive,
    }),
    json,
  )
  if (report._tag === "Failed") return report
  // What checkpoint.md's sections look like (never its text): empty when it cannot be read.
  const checkpointText = await Effect.runPromise(
    Effect.orElseSucceed(store.readCheckpoint(report.value.jobId), () => null),
  )
  const notes = checkpointText === null ? [] : wake.checkpointNotes(checkpointText)
  io.stdout(
    json
      ? jsonLine({
          status: { ...report.value, memory: { ...report.value.memory, notes } },
        })
      : renderStatusText(report.value, notes),
  )
  return done
}

/** `baton wake list`. */
export const runWakeList: CommandRunner = async (invocation, io) => {
  const json = isJson(invocation)
  const { store } = wakeContext(io)
  const listed = await attempt(wake.listJobs(store), json)
  if (listed._tag === "Failed") return listed
  const { jobs, unreadable, orphanJobDirs, tornTempFiles } = listed.value
  io.stdout(
    json
      ? jsonLine({ jobs, unreadable, orphanJobDirs, tornTempFiles })
      : renderListText(jobs, unreadable, { orphanJobDirs, tornTempFiles }),
  )
  return done
}

const LimitsSchema = Schema.Struct(
  Object.fromEntries(
    Object.keys(wake.defaultWatcherLimits).map((key) => [
      key,
      Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0))),
    ]),
  ) as Record<keyof wake.WatcherLimits, Schema.optionalKey<Schema.Number>>,
)

const shellQuote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`

/** The command continuations use to run this very Baton (absolute node and script paths). */
const batonCommandLine = (): string =>
  `${shellQuote(process.execPath)} ${shellQuote(fileURLToPath(new URL("./bin.js", import.meta.url)))}`

const selfStartTicks = async (): Promise<number | null> => {
  try {
    return wake.parseProcStat(await readFile("/proc/self/stat", "utf8"))?.startTicks ?? null
  } catch {
    return null
  }
}

/**
 * Where a quota-reading `codex app-server` starts: the Codex home, or the temporary directory
 * while it does not exist yet (Codex creates it on first use). A missing working directory made
 * the spawn fail with "spawn …/codex ENOENT", which read as a missing binary.
 */
const spawnDirectory = (codexHome: string): string => (existsSync(codexHome) ? codexHome : tmpdir())

const detachWatcher = async (invocation: Invocation, io: CliIo): Promise<CommandOutcome> => {
  const json = isJson(invocation)
  const { store, fs } = wakeContext(io)
  const current = await liveWatcher(fs, store.wakeDir)
  if (current !== null) {
    io.stdout(
      json
        ? jsonLine({ started: false, watcherPid: current.pid })
        : `a wake watcher already runs (pid ${current.pid})\n`,
    )
    return done
  }
  // The directory and the log the detached watcher writes: a failure here is the command's.
  const made = await Effect.runPromise(
    Effect.result(fs.ensureDir(store.wakeDir, wake.WAKE_DIR_MODE)),
  )
  if (made._tag === "Failure") return { _tag: "Failed", json, error: made.failure }
  const { open } = await import("node:fs/promises")
  const logFile = join(store.wakeDir, "watcher.log")
  let log: Awaited<ReturnType<typeof open>>
  try {
    log = await open(logFile, "a", 0o600)
  } catch (cause) {
    const error = cause as NodeJS.ErrnoException
    return {
      _tag: "Failed",
      json,
      error: new wake.WakeIoError({
        path: logFile,
        operation: "open (watcher log)",
        code: error.code ?? "UNKNOWN",
        detail: error.message,
      }),
    }
  }
  const args = [fileURLToPath(new URL("./bin.js", import.meta.url)), "wake", "watch"]
  for (const name of ["max-concurrent", "limits"]) {
    const value = flag(invocation, name)
    if (value !== undefined) args.push(`--${name}`, value)
  }
  const logStart = (await log.stat()).size
  const child = spawn(process.execPath, args, {
    cwd: io.cwd,
    env: { ...io.env },
    stdio: ["ignore", log.fd, log.fd],
    detached: true,
  })
  let exited: number | null | undefined
  child.once("exit", (code) => (exited = code))
  child.unref()
  await log.close()
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  for (let i = 0; i < 50 && exited === undefined; i++) {
    const lock = await Effect.runPromise(
      Effect.orElseSucceed(wake.readWatcherLock(fs, store.wakeDir), () => null),
    )
    if (lock !== null && lock.pid === child.pid) break
    await pause(100)
  }
  // A watcher that cannot run (no codex binary, say) exits at once, sometimes after taking the
  // lock: give it a moment before calling it started.
  if (exited === undefined) await pause(500)
  if (exited !== undefined) {
    const { readFile } = await import("node:fs/promises")
    const said = (await readFile(logFile).catch(() => Buffer.alloc(0)))
      .subarray(logStart)
      .toString("utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
      .slice(-3)
      .join(" | ")
    const error: TaggedFailure & Record<string, unknown> = {
      _tag: "WatcherExited",
      exitCode: exited,
      log: logFile,
      message:
        `the wake watcher exited at once (code ${exited ?? "?"})` +
        (said === "" ? "" : `: ${said}`) +
        `; see ${logFile}, fix the cause ('baton wake doctor' checks the setup), then start it again`,
    }
    return { _tag: "Failed", json, error }
  }
  io.stdout(
    json
      ? jsonLine({ started: true, watcherPid: child.pid ?? null, log: logFile })
      : `wake watcher started (pid ${child.pid ?? "?"}); log: ${logFile}\n`,
  )
  return done
}

/** How long `watch --stop` waits for the watcher to release its lock after SIGTERM. */
const STOP_WAIT_MS = 10_000

/** `baton wake watch --stop`: SIGTERM to this host's live watcher, then wait for its lock to go. */
const stopWatcher = async (invocation: Invocation, io: CliIo): Promise<CommandOutcome> => {
  const json = isJson(invocation)
  const { store, fs } = wakeContext(io)
  const current = await liveWatcher(fs, store.wakeDir)
  if (current === null) {
    io.stdout(json ? jsonLine({ stopped: false, watcherPid: null }) : "no wake watcher runs\n")
    return done
  }
  const failed = (message: string): CommandOutcome => {
    const error: TaggedFailure & Record<string, unknown> = {
      _tag: "WatcherNotStopped",
      watcherPid: current.pid,
      host: current.host,
      message,
    }
    return { _tag: "Failed", json, error }
  }
  if (current.host !== hostname())
    return failed(
      `the wake watcher runs on ${current.host} (pid ${current.pid}), not on this host: stop it there`,
    )
  try {
    process.kill(current.pid, "SIGTERM")
  } catch (error) {
    // Gone between the read and the signal: that is stopped.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH")
      return failed(
        `cannot signal the wake watcher (pid ${current.pid}): ${(error as Error).message}`,
      )
  }
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  for (let waited = 0; waited < STOP_WAIT_MS; waited += 100) {
    const still = await liveWatcher(fs, store.wakeDir)
    if (still === null || still.pid !== current.pid) {
      io.stdout(
        json
          ? jsonLine({ stopped: true, watcherPid: current.pid })
          : `wake watcher stopped (pid ${current.pid})\n`,
      )
      return done
    }
    await pause(100)
  }
  return failed(
    `the wake watcher (pid ${current.pid}) still holds its lock ${STOP_WAIT_MS / 1000} s after SIGTERM: see ${join(store.wakeDir, "watcher.log")}, or end it with 'kill -9 ${current.pid}'`,
  )
}

/** `baton wake watch`. */
export const runWakeWatch: CommandRunner = async (invocation, io) => {
  const json = isJson(invocation)
  const usage = (problem: string): Failed => ({
    _tag: "Failed",
    json,
    error: cliUsageError(problem, "baton wake watch"),
  })
  const detach = invocation.flags["detach"] === true
  if (invocation.flags["stop"] === true) {
    const other = ["detach", "once", "max-concurrent", "limits"].find(
      (name) => invocation.flags[name] !== undefined,
    )
    if (other !== undefined)
      return usage(`--stop does not combine with --${other}: run 'baton wake watch --stop' alone`)
    return stopWatcher(invocation, io)
  }
  if (detach && invocation.flags["once"] === true)
    return usage(
      "--once and --detach do not combine: run 'baton wake watch --once' in the foreground, or --detach alone",
    )
  let limits: Partial<wake.WatcherLimits> = {}
  const limitsText = flag(invocation, "limits")
  if (limitsText !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(limitsText)
    } catch {
      return usage("--limits must be a JSON object of millisecond numbers")
    }
    const decoded = Schema.decodeUnknownResult(LimitsSchema)(parsed, {
      onExcessProperty: "error",
    })
    if (Result.isFailure(decoded))
      return usage(
        `--limits: ${decoded.failure.message.slice(0, 300)} (known keys: ${Object.keys(wake.defaultWatcherLimits).join(", ")})`,
      )
    limits = decoded.success
  }
  const maxConcurrent = positiveInt(flag(invocation, "max-concurrent"))
  if (maxConcurrent === null) return usage("--max-concurrent must be a positive integer")
  if (maxConcurrent !== undefined) limits = { ...limits, maxConcurrentRuns: maxConcurrent }
  if (detach) return detachWatcher(invocation, io)

  const { store, fs } = wakeContext(io)
  const codexHome = resolveCodexHome(io.env, homedir(), io.cwd).path
  const binary = await attempt(
    ipc.discoverCodexBinary({ ...ipc.nodeBinaryHost(), env: io.env }),
    json,
  )
  if (binary._tag === "Failed") return binary
  const env = { ...io.env }
  const stdio = ipc.connectStdio({ binary: binary.value, env, cwd: spawnDirectory(codexHome) })
  const layer = Layer.mergeAll(
    Layer.succeed(wake.WakeFileSystem, fs),
    Layer.succeed(wake.JobStore, store),
    wake.codexQuotaReaderLayer(stdio),
    wake.rolloutThreadSignalsLayer(codexHome),
    wake.nodeContinuationProcessesLayer,
    Layer.succeed(
      wake.CheckpointChannel,
      wake.makeDaemonCheckpointChannel(ipc.connectDaemon({ codexHome })),
    ),
    Layer.succeed(
      wake.SameThreadTurns,
      wake.makeDaemonSameThreadTurns(ipc.connectDaemon({ codexHome })),
    ),
  )
  const print = (event: wake.WatcherEvent) =>
    json ? io.stdout(`${JSON.stringify(event)}\n`) : io.stderr(renderWatcherEventText(event))
  const program = Effect.scoped(
    wake.runWatcher({
      identity: { pid: process.pid, startTicks: await selfStartTicks(), host: hostname() },
      codexBinary: binary.value.path,
      batonCommand: batonCommandLine(),
      baseEnv: env,
      limits,
      once: invocation.flags["once"] === true,
      onEvent: print,
    }),
  ).pipe(Effect.provide(layer))
  const fiber = Effect.runFork(program)
  const stop = () => {
    void Effect.runPromise(Fiber.interrupt(fiber))
  }
  process.once("SIGTERM", stop)
  process.once("SIGINT", stop)
  const exit = await Effect.runPromise(Fiber.await(fiber))
  process.off("SIGTERM", stop)
  process.off("SIGINT", stop)
  if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return done
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") return { _tag: "Failed", json, error: failure.value }
  throw Cause.squash(exit.cause)
}

const check = (status: "ok" | "warn" | "fail", name: string, detail: string) => ({
  status,
  name,
  detail,
})

/** `baton wake doctor`. */
export const runWakeDoctor: CommandRunner = async (invocation, io) => {
  const json = isJson(invocation)
  const { wakeDir, store, fs } = wakeContext(io)
  const codexHome = resolveCodexHome(io.env, homedir(), io.cwd).path
  const checks: Array<ReturnType<typeof check>> = []
  const mode = await Effect.runPromise(Effect.orElseSucceed(fs.mode(wakeDir), () => null))
  checks.push(
    mode === null
      ? check("warn", "wake directory", `${wakeDir} does not exist yet (created by the first job)`)
      : (mode & 0o077) === 0
        ? check("ok", "wake directory", `${wakeDir} (private)`)
        : check(
            "fail",
            "wake directory",
            `${wakeDir} is readable by others (mode ${mode.toString(8)})`,
          ),
  )
  if (mode !== null) {
    // A real write probe, written and synced like a job lock (an empty file would still fit on a
    // full disk): a read-only mount, a directory not ours or a full disk fails every change later.
    const probe = join(wakeDir, `.doctor-write-probe-${process.pid}`)
    const written = await Effect.runPromise(
      Effect.result(
        Effect.andThen(fs.createExclusive(probe, `${"-".repeat(255)}\n`, 0o600), fs.remove(probe)),
      ),
    )
    if (Result.isFailure(written)) {
      const code = written.failure.code
      checks.push(
        check(
          "fail",
          "wake directory writable",
          code === "ENOSPC" || code === "EDQUOT"
            ? `${wakeDir} cannot be written (${code}: the disk holding it is ${code === "EDQUOT" ? "over your quota" : "full"}): jobs cannot be created or changed, nor paused or stopped; free some space on it, or set BATON_WAKE_DIR to a directory on another disk`
            : `${wakeDir} cannot be written (${code}): jobs cannot be created or changed; fix its permissions or set BATON_WAKE_DIR`,
        ),
      )
    }
  }
  const binary = await Effect.runPromise(
    Effect.result(ipc.discoverCodexBinary({ ...ipc.nodeBinaryHost(), env: io.env })),
  )
  if (Result.isFailure(binary)) checks.push(check("fail", "codex binary", binary.failure.message))
  else {
    checks.push(
      check(
        "ok",
        "codex binary",
        `${binary.success.path} (${binary.success.version ?? "version unknown"}; ${binary.success.reason})`,
      ),
    )
    const reading = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(
          wake.makeCodexQuotaReader(
            ipc.connectStdio({
              binary: binary.success,
              env: { ...io.env },
              cwd: spawnDirectory(codexHome),
            }),
          ),
          (reader) => Effect.ensuring(reader.read, reader.close),
        ),
      ),
    )
    checks.push(
      reading._tag === "Read"
        ? check(
            reading.allowed === null ? "warn" : "ok",
            "quota read",
            `account/rateLimits/read works; ordinaryUsageAllowed ${String(reading.allowed)}${reading.allowed === null ? " (not validated for this account: continuations will not launch)" : ""}`,
          )
        : reading._tag === "SignedOut"
          ? check(
              "warn",
              "quota read",
              "not signed in with ChatGPT: no usage-allowed signal, so continuations never launch (pressure is read passively from rollouts)",
            )
          : check("fail", "quota read", reading.detail),
    )
  }
  const lock = await liveWatcher(fs, wakeDir)
  checks.push(
    lock !== null
      ? check("ok", "watcher", `running (pid ${lock.pid} on ${lock.host})`)
      : check(
          "warn",
          "watcher",
          "not running (unsupervised): start it with 'baton wake watch --detach'",
        ),
  )
  const listed = await Effect.runPromise(Effect.result(wake.listJobs(store)))
  if (Result.isSuccess(listed)) {
    const counts: Record<string, number> = {}
    for (const job of listed.success.jobs) counts[job.state] = (counts[job.state] ?? 0) + 1
    checks.push(
      listed.success.unreadable.length > 0
        ? check(
            "fail",
            "jobs",
            `${listed.success.unreadable.length} unreadable: ${listed.success.unreadable.map((u) => u.jobId).join(", ")}`,
          )
        : check(
            "ok",
            "jobs",
            Object.entries(counts)
              .map(([state, n]) => `${n} ${state}`)
              .join(", ") || "none",
          ),
    )
  } else checks.push(check("fail", "jobs", listed.failure.message))
  checks.push(
    check(
      "ok",
      "continuation mode",
      "cli_continuation_only: a continuation is a new `codex exec` thread reading the capsule, not a wake of the original conversation",
    ),
  )
  const failed = checks.some((c) => c.status === "fail")
  io.stdout(
    json
      ? `${JSON.stringify({ ok: !failed, checks })}\n`
      : `${checks.map((c) => `${c.status.padEnd(4)}  ${c.name}: ${c.detail}`).join("\n")}\n`,
  )
  return { _tag: "Completed", exitCode: failed ? 1 : 0 }
}

/**
 * Test support for the wake end-to-end tests: an isolated Codex home signed in with a simulated
 * ChatGPT account (the mock answers `/backend-api/wham/usage`), a `baton` shim on PATH that runs
 * the built CLI, the real `baton wake watch` as a child process (its JSON event lines collected),
 * and helpers to read jobs through @baton/wake's public store. Everything runs against loopback
 * mocks; every process is killed on dispose.
 */
import { spawn } from "node:child_process"
import { chmod, mkdir, readFile, readdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  createCodexHome,
  functionCallReply,
  resolveCodexBinary,
  spawnProcess,
  startCodexDaemon,
  startMockResponses,
  usageAllowanceAnswer,
} from "@baton/testkit"
import type {
  CodexDaemon,
  CodexHome,
  MockBackendAnswer,
  MockRateLimits,
  MockResponsesServer,
  MockStreamReply,
  TestProcess,
} from "@baton/testkit"
import type { JobRecord } from "@baton/wake"
import { makeJobStore, nodeContinuationProcesses, nodeWakeFileSystem } from "@baton/wake"
import { Effect } from "effect"

/** The built CLI. */
export const cliBin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))

/** The simulated ChatGPT account (the mock's usage answer must name both to be validated). */
export const ACCOUNT_ID = "acct-wake-e2e"
export const USER_ID = "user-wake-e2e"

/** The backend usage answer that makes `ordinaryUsageAllowed` read `allowed` (null: not validated). */
export const usageAnswer = (allowed: boolean | null): MockBackendAnswer =>
  usageAllowanceAnswer(allowed, { accountId: ACCOUNT_ID, userId: USER_ID })

/**
 * An `exec_command` call that runs without a login shell (so the PATH shim stays visible), waiting
 * up to two minutes for the command (a blocked command keeps the continuation running).
 */
export const shell = (
  cmd: string,
  options: { readonly usedPercent?: number } = {},
): MockStreamReply => {
  const rateLimits: MockRateLimits | undefined =
    options.usedPercent === undefined
      ? undefined
      : {
          primary: {
            usedPercent: options.usedPercent,
            windowMinutes: 300,
            resetAt: Math.floor(Date.now() / 1000) + 3_600,
          },
        }
  return functionCallReply(
    "exec_command",
    { cmd, login: false, yield_time_ms: 120_000 },
    rateLimits === undefined ? {} : { rateLimits },
  )
}

/** A checkpoint ready to arm. */
export const READY_CHECKPOINT = [
  "# Wake checkpoint",
  "",
  "## Objective",
  "Write hello.txt with the greeting for the release notes.",
  "",
  "## Current position",
  "- The workspace is empty; nothing written yet.",
  "",
  "## Next actions",
  "1. Write hello.txt containing the word hi.",
  "2. Mark the wake job complete.",
  "",
].join("\n")

/** One collected watcher process. */
export interface WatcherProcess {
  readonly process: TestProcess
  /** JSON event lines seen so far. */
  readonly events: () => ReadonlyArray<Record<string, unknown>>
  /** Non-JSON stdout (e.g. the final `{ok:false}` object is JSON too). */
  readonly stdout: () => string
  readonly waitForEvent: (
    predicate: (event: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ) => Promise<Record<string, unknown>>
}

/** What `baton …` printed. */
export interface BatonResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The rig. */
export interface WakeRig {
  readonly mock: MockResponsesServer
  readonly home: CodexHome
  readonly wakeDir: string
  /** Environment for the watcher, the CLI and the original session. */
  readonly env: Record<string, string>
  readonly readJob: (jobId: string) => Promise<JobRecord>
  readonly jobIds: () => Promise<ReadonlyArray<string>>
  /** Changes a job through the store (lock + compare-and-set), as any other writer would. */
  readonly modifyJob: (jobId: string, change: (job: JobRecord) => JobRecord) => Promise<void>
  readonly startWatcher: (limits?: Record<string, number>) => WatcherProcess
  readonly baton: (args: ReadonlyArray<string>, input?: string) => Promise<BatonResult>
  /**
   * Creates, fills and arms a job owned by `threadId` in the workdir; returns its id. `createArgs`
   * go to `baton wake create` (e.g. `["--delivery", "original_thread"]`).
   */
  readonly armedJob: (threadId: string, createArgs?: ReadonlyArray<string>) => Promise<string>
  /**
   * Starts the real `codex app-server daemon` in the rig's home with the rig's environment (so
   * turns it runs see the `baton` shim on PATH); stopped and cleaned up on dispose.
   */
  readonly startDaemon: () => Promise<CodexDaemon>
  dispose(): Promise<void>
}

/** Fast cadence for tests: reads every second at most, runs checked every 200 ms. */
export const FAST_LIMITS = {
  monitorReadMs: 1_000,
  waitMinMs: 500,
  waitMaxMs: 1_000,
  waitUnknownMs: 1_000,
  tailMs: 200,
  idleMs: 1_000,
  stopGraceMs: 1_000,
}

/** Polls `check` every 100 ms until it returns a value other than undefined. */
export const waitFor = async <A>(
  what: string,
  check: () => Promise<A | undefined> | A | undefined,
  timeoutMs = 30_000,
  lastSeen: () => Promise<string> | string = () => "",
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: Error | undefined
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      last = error instanceof Error ? error : new Error(JSON.stringify(error))
    }
    if (Date.now() > deadline) {
      const seen = await lastSeen()
      throw new Error(
        `waited ${timeoutMs} ms for ${what}${last === undefined ? "" : ` (${last.message})`}${seen === "" ? "" : `; last seen: ${seen}`}`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Whether a pid runs (and is not a zombie). */
export const isRunning = async (pid: number): Promise<boolean> => {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

/** Builds the rig: mock (usage answer `initial`), signed-in home, shim, env. */
export const wakeRig = async (
  options: {
    readonly initialUsage?: boolean | null
    readonly providerOptions?: Readonly<Record<string, string | number | boolean>>
  } = {},
): Promise<WakeRig> => {
  const mock = await startMockResponses({ whamUsage: usageAnswer(options.initialUsage ?? true) })
  const home = await createCodexHome({
    mock,
    chatgptAuth: { accountId: ACCOUNT_ID, userId: USER_ID },
    ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions }),
  })
  const wakeDir = join(home.codexHome, "baton", "wake")
  await mkdir(wakeDir, { recursive: true, mode: 0o700 })
  const shimDir = join(home.root, "bin")
  await mkdir(shimDir, { recursive: true })
  const shim = join(shimDir, "baton")
  await writeFile(shim, `#!/bin/sh\nexec "${process.execPath}" "${cliBin}" "$@"\n`)
  await chmod(shim, 0o755)
  const native = resolveCodexBinary().native
  if (native === undefined) throw new Error("the pinned codex has no native binary here")
  const env: Record<string, string> = {
    ...home.env,
    PATH: `${shimDir}:${home.env["PATH"] ?? "/usr/bin:/bin"}`,
    BATON_WAKE_DIR: wakeDir,
    BATON_CODEX_BINARY: native,
  }
  const store = makeJobStore(wakeDir, nodeWakeFileSystem, process.pid, {
    holderProbe: nodeContinuationProcesses.isAlive,
  })
  const watchers: Array<TestProcess> = []
  const daemons: Array<CodexDaemon> = []

  const baton = (args: ReadonlyArray<string>, input = "") =>
    new Promise<BatonResult>((resolve, reject) => {
      const child = spawn(process.execPath, [cliBin, ...args], {
        env,
        cwd: home.workdir,
        stdio: ["pipe", "pipe", "pipe"],
      })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr }))
      child.stdin.end(input)
    })

  const startWatcher = (limits: Record<string, number> = FAST_LIMITS): WatcherProcess => {
    const process_ = spawnProcess(process.execPath, {
      args: [cliBin, "wake", "watch", "--json", "--limits", JSON.stringify(limits)],
      cwd: home.workdir,
      env,
    })
    watchers.push(process_)
    const events: Array<Record<string, unknown>> = []
    let out = ""
    let partial = ""
    process_.child.stdout?.setEncoding("utf8")
    process_.child.stdout?.on("data", (chunk: string) => {
      out += chunk
      const lines = (partial + chunk).split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) {
        try {
          events.push(JSON.parse(line) as Record<string, unknown>)
        } catch {
          // not a JSON line
        }
      }
    })
    return {
      process: process_,
      events: () => events,
      stdout: () => out,
      waitForEvent: (predicate, timeoutMs = 30_000) =>
        waitFor("a watcher event", () => events.find(predicate), timeoutMs),
    }
  }

  const readJob = async (jobId: string) => (await Effect.runPromise(store.read(jobId))).job
  const jobIds = () => Effect.runPromise(store.list())

  const armedJob = async (threadId: string, createArgs: ReadonlyArray<string> = []) => {
    const created = await baton([
      "wake",
      "create",
      "--thread",
      threadId,
      "--objective",
      "Write hello.txt",
      ...createArgs,
      "--json",
    ])
    if (created.code !== 0) throw new Error(`create failed: ${created.stdout}${created.stderr}`)
    const jobId = (JSON.parse(created.stdout) as { jobId: string }).jobId
    const written = await baton(
      ["wake", "checkpoint", jobId, "--file", "-", "--json"],
      READY_CHECKPOINT,
    )
    if (written.code !== 0) throw new Error(`checkpoint failed: ${written.stdout}${written.stderr}`)
    const armed = await baton(["wake", "arm", jobId, "--json"])
    if (armed.code !== 0) throw new Error(`arm failed: ${armed.stdout}${armed.stderr}`)
    return jobId
  }

  return {
    mock,
    home,
    wakeDir,
    env,
    readJob,
    jobIds,
    modifyJob: async (jobId, change) => {
      await Effect.runPromise(store.modify(jobId, change))
    },
    startWatcher,
    baton,
    armedJob,
    startDaemon: async () => {
      const daemon = await startCodexDaemon({ ...home, env })
      daemons.push(daemon)
      return daemon
    },
    dispose: async () => {
      for (const watcher of watchers) await watcher.stop(500).catch(() => undefined)
      for (const daemon of daemons) await daemon.dispose().catch(() => undefined)
      await home.dispose()
      await mock.close()
    },
  }
}

/** The meta files under a job's runs directory. */
export const runMetas = async (wakeDir: string, jobId: string) => {
  const dir = join(wakeDir, "jobs", jobId, "runs")
  const names = (await readdir(dir).catch(() => [] as Array<string>)).filter((n) =>
    n.endsWith(".meta.json"),
  )
  return Promise.all(
    names
      .sort()
      .map(
        async (name) =>
          JSON.parse(await readFile(join(dir, name), "utf8")) as Record<string, unknown>,
      ),
  )
}

/**
 * Node implementations of the compaction services, and one layer that wires them for the CLI and
 * the MCP server: the journal on disk (`BATON_JOBS_DIR` or `$CODEX_HOME/tools/baton/jobs`), the
 * process probe, job ids, and a launcher that starts `worker-main.js` as a detached process
 * (its own process group, stdin closed, stderr appended to the job's `worker.log`), so the worker
 * outlives the agent turn and the MCP server that scheduled it.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, openSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { JobIds, WorkerLauncher } from "./compaction-service.js"
import type { JobIdsShape, WorkerLauncherShape } from "./compaction-service.js"
import { WorkerLaunchError } from "./errors.js"
import { nodeProcessProbeLayer } from "./job-lock.js"
import type { ProcessProbe } from "./job-lock.js"
import {
  JournalFileSystem,
  nodeJournalFileSystem,
  refusingJournalFileSystem,
} from "./journal-file-system.js"
import {
  journalLayer,
  jobsDirectory,
  JOURNAL_FILE_MODE,
  journalPaths,
  relativeJobsDirError,
} from "./journal.js"
import type { Journal } from "./journal.js"

/** The worker process entry shipped with this package (`node <path> <threadId> <jobId>`). */
export const workerEntryPath: string = fileURLToPath(new URL("./worker-main.js", import.meta.url))

/** Job ids: `job-<base-36 time>-<8 hex>`, sortable by creation and safe as file names. */
export const nodeJobIds: JobIdsShape = {
  next: Effect.sync(() => `job-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`),
}

/** Options of `nodeWorkerLauncher`. */
export interface NodeWorkerLauncherOptions {
  /** Executable and leading arguments (default: this Node and `workerEntryPath`). */
  readonly command?: readonly [string, ...Array<string>]
  /** Environment of the worker (default: this process's). `BATON_JOBS_DIR` is set to the journal. */
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly cwd?: string
}

/** Starts the worker detached, its stderr in the job's `worker.log`. */
export const nodeWorkerLauncher = (
  options: NodeWorkerLauncherOptions = {},
): WorkerLauncherShape => ({
  launch: ({ threadId, jobId, dir }) =>
    Effect.callback<{ readonly pid: number }, WorkerLaunchError>((resume) => {
      const [file, ...lead] = options.command ?? [process.execPath, workerEntryPath]
      const commandText = [file, ...lead].join(" ")
      let log: number
      try {
        log = openSync(journalPaths(dir, threadId).workerLog(jobId), "a", JOURNAL_FILE_MODE)
      } catch (error) {
        resume(Effect.fail(new WorkerLaunchError({ command: commandText, detail: String(error) })))
        return
      }
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries(options.env ?? process.env))
        if (v !== undefined) env[k] = v
      env["BATON_JOBS_DIR"] = dir
      const child = spawn(file, [...lead, threadId, jobId], {
        detached: true,
        stdio: ["ignore", log, log],
        env,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      })
      closeSync(log)
      child.once("error", (error) =>
        resume(Effect.fail(new WorkerLaunchError({ command: commandText, detail: error.message }))),
      )
      child.once("spawn", () => {
        child.unref()
        resume(Effect.succeed({ pid: child.pid ?? -1 }))
      })
    }),
})

/**
 * Layer: the real file system for the journal under `env`, or one refusing every operation when
 * `BATON_JOBS_DIR` is relative.
 */
export const nodeJournalFileSystemLayerFor = (env: {
  readonly BATON_JOBS_DIR?: string | undefined
}): Layer.Layer<JournalFileSystem> => {
  const refused = relativeJobsDirError(env)
  return Layer.succeed(
    JournalFileSystem,
    refused === null ? nodeJournalFileSystem : refusingJournalFileSystem(refused),
  )
}

/** Options of `nodeCompactionLayer`. */
export interface NodeCompactionLayerOptions {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd?: string
  readonly launcher?: NodeWorkerLauncherOptions
}

/** Every service the compaction operations need, on this machine. */
export const nodeCompactionLayer = (
  options: NodeCompactionLayerOptions,
): Layer.Layer<Journal | JournalFileSystem | ProcessProbe | WorkerLauncher | JobIds> =>
  Layer.mergeAll(
    journalLayer(jobsDirectory(options.env)).pipe(
      Layer.provideMerge(nodeJournalFileSystemLayerFor(options.env)),
    ),
    nodeProcessProbeLayer,
    Layer.succeed(
      WorkerLauncher,
      nodeWorkerLauncher({
        env: options.env,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...options.launcher,
      }),
    ),
    Layer.succeed(JobIds, nodeJobIds),
  )

/**
 * The process port of the launcher: spawn a continuation as the leader of its own process group
 * with stdout and stderr going straight to files (so its output survives the watcher), learn its
 * exit from the exit event (Node reaps it: no zombie is ever taken for a live run), tell whether
 * a pid recorded earlier is still that process (pid plus start time; a zombie counts as gone), and
 * signal its whole group. The Node adapter reads `/proc/<pid>/stat` on Linux and falls back to
 * `kill(pid, 0)` elsewhere. The in-memory twin scripts exits for tests. Adapters hold no job rules.
 */
import { spawn } from "node:child_process"
import { open, readFile, stat } from "node:fs/promises"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { LaunchError } from "./errors.js"

/** What to spawn. */
export interface SpawnSpec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** Receives stdout (appended, 0600). */
  readonly stdoutFile: string
  /** Receives stderr (appended, 0600). */
  readonly stderrFile: string
}

/** How a process ended. */
export interface ProcessExit {
  readonly code: number | null
  readonly signal: string | null
}

/** A spawned continuation. */
export interface SpawnedProcess {
  readonly pid: number
  /** Start time in clock ticks since boot (Linux), null where unknown. */
  readonly startTicks: number | null
  /** Completes when the process exits (from its exit event). */
  readonly exit: Effect.Effect<ProcessExit>
}

/** The process operations the launcher and the stop command need. */
export interface ContinuationProcessesShape {
  readonly spawn: (spec: SpawnSpec) => Effect.Effect<SpawnedProcess, LaunchError>
  /** True while `pid` runs and (when known) started at `startTicks`; a zombie is not alive. */
  readonly isAlive: (pid: number, startTicks: number | null) => Effect.Effect<boolean>
  /** Signals the process group led by `pid` if it is still that process; false when gone. */
  readonly signalGroup: (
    pid: number,
    startTicks: number | null,
    signal: "SIGTERM" | "SIGKILL",
  ) => Effect.Effect<boolean>
  /** Size of a file in bytes (output growth for the silence watchdog); null when missing. */
  readonly fileSize: (file: string) => Effect.Effect<number | null>
}

/** The continuation process service. */
export class ContinuationProcesses extends Context.Service<
  ContinuationProcesses,
  ContinuationProcessesShape
>()("@baton/wake/ContinuationProcesses") {}

/** Parses `/proc/<pid>/stat`: state letter and start time (field 22). */
export const parseProcStat = (
  text: string,
): { readonly state: string; readonly startTicks: number } | null => {
  const close = text.lastIndexOf(")")
  if (close === -1) return null
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/)
  const state = fields[0]
  const start = Number(fields[19])
  return state === undefined || !Number.isFinite(start) ? null : { state, startTicks: start }
}

const procStat = async (pid: number) => {
  try {
    return parseProcStat(await readFile(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return null
  }
}

const aliveByKill = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const isAliveNode = async (pid: number, startTicks: number | null): Promise<boolean> => {
  if (process.platform === "linux") {
    const facts = await procStat(pid)
    if (facts === null) return false
    if (facts.state === "Z" || facts.state === "X" || facts.state === "x") return false
    return startTicks === null || facts.startTicks === startTicks
  }
  return aliveByKill(pid)
}

/** The real processes (Node `child_process`). */
export const nodeContinuationProcesses: ContinuationProcessesShape = {
  spawn: (spec) =>
    Effect.gen(function* () {
      const command = `${spec.command} ${spec.args[0] ?? ""}`.trim()
      const files = yield* Effect.tryPromise({
        try: async () => {
          const out = await open(spec.stdoutFile, "a", 0o600)
          const err = await open(spec.stderrFile, "a", 0o600).catch(async (error: unknown) => {
            await out.close()
            throw error
          })
          return { out, err }
        },
        catch: (error) =>
          new LaunchError({ command, reason: `cannot open run log: ${String(error)}` }),
      })
      const exited = yield* Deferred.make<ProcessExit>()
      const spawned = yield* Effect.callback<number, LaunchError>((resume) => {
        let child
        try {
          child = spawn(spec.command, [...spec.args], {
            cwd: spec.cwd,
            env: { ...spec.env },
            stdio: ["ignore", files.out.fd, files.err.fd],
            detached: true,
          })
        } catch (error) {
          resume(Effect.fail(new LaunchError({ command, reason: String(error) })))
          return
        }
        let started = false
        child.once("error", (error) => {
          if (!started) resume(Effect.fail(new LaunchError({ command, reason: error.message })))
        })
        child.once("spawn", () => {
          started = true
          resume(Effect.succeed(child.pid ?? -1))
        })
        child.once("exit", (code, signal) => {
          Deferred.doneUnsafe(exited, Effect.succeed({ code, signal }))
        })
      }).pipe(
        Effect.ensuring(
          Effect.promise(async () => {
            await files.out.close()
            await files.err.close()
          }),
        ),
      )
      const facts =
        process.platform === "linux" ? yield* Effect.promise(() => procStat(spawned)) : null
      return { pid: spawned, startTicks: facts?.startTicks ?? null, exit: Deferred.await(exited) }
    }),
  isAlive: (pid, startTicks) => Effect.promise(() => isAliveNode(pid, startTicks)),
  signalGroup: (pid, startTicks, signal) =>
    Effect.promise(async () => {
      if (!(await isAliveNode(pid, startTicks))) return false
      try {
        process.kill(-pid, signal)
        return true
      } catch {
        try {
          process.kill(pid, signal)
          return true
        } catch {
          return false
        }
      }
    }),
  fileSize: (file) =>
    Effect.promise(async () => {
      try {
        return (await stat(file)).size
      } catch {
        return null
      }
    }),
}

/** Layer: the real processes. */
export const nodeContinuationProcessesLayer: Layer.Layer<ContinuationProcesses> = Layer.succeed(
  ContinuationProcesses,
  nodeContinuationProcesses,
)

/** A spawned fake process the test controls. */
export interface FakeProcess {
  readonly spec: SpawnSpec
  readonly pid: number
  /** Ends the process (as its exit event would). */
  readonly exit: (exit: ProcessExit) => Effect.Effect<void>
  readonly signals: ReadonlyArray<string>
  readonly alive: () => boolean
}

/** The in-memory twin: spawns nothing; every process stays alive until the test ends it or a signal does. */
export const makeFakeContinuationProcesses = (
  options: { readonly failSpawn?: string } = {},
): ContinuationProcessesShape & {
  readonly spawned: ReadonlyArray<FakeProcess>
  readonly sizes: Map<string, number>
} => {
  const spawned: Array<FakeProcess> = []
  const sizes = new Map<string, number>()
  let nextPid = 40_000
  const find = (pid: number) => spawned.find((p) => p.pid === pid)
  return {
    spawned,
    sizes,
    spawn: (spec) =>
      Effect.gen(function* () {
        if (options.failSpawn !== undefined)
          return yield* new LaunchError({ command: spec.command, reason: options.failSpawn })
        const exited = yield* Deferred.make<ProcessExit>()
        const pid = nextPid++
        const signals: Array<string> = []
        let alive = true
        const exit = (value: ProcessExit) =>
          Effect.suspend(() => {
            alive = false
            return Deferred.succeed(exited, value)
          }).pipe(Effect.asVoid)
        spawned.push({ spec, pid, exit, signals, alive: () => alive })
        return { pid, startTicks: pid * 10, exit: Deferred.await(exited) }
      }),
    isAlive: (pid, startTicks) =>
      Effect.sync(() => {
        const p = find(pid)
        return p !== undefined && p.alive() && (startTicks === null || startTicks === pid * 10)
      }),
    signalGroup: (pid, startTicks, signal) =>
      Effect.suspend(() => {
        const p = find(pid)
        if (p === undefined || !p.alive() || (startTicks !== null && startTicks !== pid * 10))
          return Effect.succeed(false)
        ;(p.signals as Array<string>).push(signal)
        return Effect.as(p.exit({ code: null, signal }), true)
      }),
    fileSize: (file) => Effect.sync(() => sizes.get(file) ?? null),
  }
}

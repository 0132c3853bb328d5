/**
 * Stdio transport: a private `codex app-server` child process speaking JSONL on stdin/stdout, for
 * threads no other process holds. Stderr is kept apart in a bounded tail. The child runs in its
 * own process group; closing the scope ends stdin, then signals the whole group (TERM, then KILL
 * after a grace period) and waits for the exit, so no process or zombie is left behind. Being the
 * only client, Baton declines server→client requests here (see server-request-policy). A second
 * process resuming a thread another holds gets `ActiveWriterError` from the shared classifier.
 */
import type { ChildProcess, ChildProcessWithoutNullStreams } from "node:child_process"
import { spawn } from "node:child_process"
import * as Effect from "effect/Effect"
import type { Scope } from "effect"
import type { CodexBinary, BinaryHost } from "./codex-binary.js"
import { discoverCodexBinary } from "./codex-binary.js"
import type { CodexConnection } from "./codex-connection.js"
import { makeCodexConnection } from "./codex-connection.js"
import type { CodexTransportShape } from "./codex-transport.js"
import type { CodexConnectError } from "./errors.js"
import { SpawnError } from "./errors.js"
import type { FrameLink, OpenFrameLink } from "./json-rpc-connection.js"
import { jsonlFrameLink } from "./jsonl-link.js"
import type { ServerRequestPolicy } from "./server-request-policy.js"

/** Options of the stdio transport. */
export interface StdioTransportOptions {
  /** The binary to run; discovered (env, PATH, VS Code extension) when absent. */
  readonly binary?: CodexBinary
  /** Discovery host (tests). */
  readonly host?: BinaryHost
  /** Extra arguments after `app-server` (e.g. `-c key=value`). */
  readonly args?: ReadonlyArray<string>
  /** Child environment (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly cwd?: string
  /** Bytes of stderr kept (default 64 KiB, most recent). */
  readonly stderrLimitBytes?: number
  /** Default `decline`: nobody else can answer on a private server. */
  readonly serverRequests?: ServerRequestPolicy
  /** Grace before TERM and before KILL when closing (default 2 s each). */
  readonly killGraceMs?: number
  readonly requestTimeoutMs?: number
  /** Timeout for the `initialize` answer (default 15 s). */
  readonly initializeTimeoutMs?: number
  readonly clientVersion?: string
}

/** A stdio connection plus its process facts. */
export interface StdioConnection extends CodexConnection {
  readonly binary: CodexBinary
  readonly pid: number
  /** The most recent stderr output (bounded). */
  readonly stderrTail: () => string
}

/** A bounded tail of a text stream. */
const boundedTail = (limit: number) => {
  let text = ""
  return {
    push: (chunk: string) => {
      text += chunk
      if (text.length > limit) text = text.slice(text.length - limit)
    },
    read: () => text,
  }
}

/**
 * The lines of a process's stderr that say why it stopped: from its `Error:` line (Codex's
 * fatal errors) up to the stack backtrace, else the last lines that are not backtrace frames;
 * terminal escapes removed; at most 5 lines, joined with " | ".
 */
export const stderrSummary = (text: string): string => {
  const lines = text
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
  const frame = (line: string) => /^\d+: /.test(line) || /^at /.test(line)
  const fatal = lines.findIndex((line) => /^Error: /.test(line))
  if (fatal === -1)
    return lines
      .filter((line) => !frame(line) && line !== "Stack backtrace:")
      .slice(-5)
      .join(" | ")
  const rest = lines.slice(fatal)
  const end = rest.findIndex((line) => line === "Stack backtrace:" || frame(line))
  return (end === -1 ? rest : rest.slice(0, end)).slice(0, 5).join(" | ")
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  if (child.pid === undefined || exited(child)) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    child.kill(signal)
  }
}

/** Waits for the child to exit: stdin EOF first, then TERM to its group, then KILL. */
const stopProcess = (child: ChildProcess, graceMs: number): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (exited(child)) return resume(Effect.void)
    const timers: Array<NodeJS.Timeout> = []
    child.once("exit", () => {
      for (const t of timers) clearTimeout(t)
      resume(Effect.void)
    })
    child.stdin?.end()
    timers.push(setTimeout(() => killGroup(child, "SIGTERM"), graceMs))
    timers.push(setTimeout(() => killGroup(child, "SIGKILL"), graceMs * 2))
  })

interface SpawnedLink {
  readonly child: ChildProcess
  readonly stderrTail: () => string
}

const openStdioLink = (
  binary: CodexBinary,
  options: StdioTransportOptions,
  onSpawn: (spawned: SpawnedLink) => void,
): OpenFrameLink<SpawnError> => {
  const command = `${binary.path} app-server`
  const graceMs = options.killGraceMs ?? 2_000
  return (sink) =>
    Effect.acquireRelease(
      Effect.callback<{ readonly child: ChildProcess; readonly link: FrameLink }, SpawnError>(
        (resume) => {
          const stderr = boundedTail(options.stderrLimitBytes ?? 64 * 1024)
          let child: ChildProcessWithoutNullStreams
          try {
            child = spawn(binary.path, ["app-server", ...(options.args ?? [])], {
              stdio: ["pipe", "pipe", "pipe"],
              detached: true,
              env: { ...(options.env ?? process.env) },
              ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
            })
          } catch (error) {
            resume(Effect.fail(new SpawnError({ command, reason: String(error) })))
            return
          }
          let started = false
          child.once("error", (error) => {
            if (!started) resume(Effect.fail(new SpawnError({ command, reason: error.message })))
          })
          child.once("spawn", () => {
            started = true
            child.stderr?.setEncoding("utf8")
            child.stderr?.on("data", (chunk: string) => stderr.push(chunk))
            // Close is reported from the process's 'close' (after exit and stdio end) so it can say why.
            const link = jsonlFrameLink({
              transport: "stdio",
              input: child.stdout,
              output: child.stdin,
              sink: { frame: sink.frame, closed: () => undefined },
            })
            // Whatever the leader's fate, nothing of its group may outlive it (tool shells, helpers).
            child.once("exit", () => {
              try {
                if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
              } catch {
                // The group is already empty.
              }
            })
            child.once("close", (code, signal) => {
              const tail = stderrSummary(stderr.read())
              sink.closed(
                `codex app-server exited (${signal ?? `code ${code}`})${tail === "" ? "" : `; stderr: ${tail}`}`,
              )
            })
            onSpawn({ child, stderrTail: stderr.read })
            resume(Effect.succeed({ child, link }))
          })
        },
      ),
      ({ child }) => stopProcess(child, graceMs),
    ).pipe(Effect.map(({ link }) => link))
}

/** Spawns `codex app-server` and returns an initialised connection (scoped: closing stops the process). */
export const connectStdio = (
  options: StdioTransportOptions = {},
): Effect.Effect<StdioConnection, CodexConnectError, Scope.Scope> =>
  Effect.gen(function* () {
    const binary = options.binary ?? (yield* discoverCodexBinary(options.host))
    let spawned: SpawnedLink | null = null
    const connection = yield* makeCodexConnection({
      transport: "stdio",
      openLink: openStdioLink(binary, options, (s) => {
        spawned = s
      }),
      serverRequests: options.serverRequests ?? "decline",
      ...(options.requestTimeoutMs === undefined
        ? {}
        : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.initializeTimeoutMs === undefined
        ? {}
        : { initializeTimeoutMs: options.initializeTimeoutMs }),
      ...(options.clientVersion === undefined ? {} : { clientVersion: options.clientVersion }),
    })
    const process_ = spawned as SpawnedLink | null
    return {
      ...connection,
      binary,
      pid: process_?.child.pid ?? -1,
      stderrTail: () => process_?.stderrTail() ?? "",
    }
  })

/** The stdio transport as a `CodexTransport`. */
export const stdioTransport = (options: StdioTransportOptions = {}): CodexTransportShape => ({
  kind: "stdio",
  endpoint:
    options.binary === undefined
      ? "codex app-server (binary discovered on connect)"
      : `${options.binary.path} app-server`,
  connect: connectStdio(options),
})

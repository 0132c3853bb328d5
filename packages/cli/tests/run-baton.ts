/**
 * Test support: runs the built `dist/bin.js` as a child process and collects its output.
 * Guarantees: the child gets exactly the environment given (plus nothing inherited), and the
 * call resolves with the exit code even if the process is killed.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** Absolute path of the built CLI entry. */
export const batonBin = fileURLToPath(new URL("../dist/bin.js", import.meta.url))

/** What a run printed and how it exited. */
export interface BatonRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `node dist/bin.js ...args` with `env` (only) and optional stdin text. */
export const runBaton = (
  args: readonly string[],
  options: {
    readonly env?: Record<string, string>
    readonly input?: string
    readonly cwd?: string
  } = {},
): Promise<BatonRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [batonBin, ...args], {
      env: options.env ?? { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "" },
      cwd: options.cwd ?? process.cwd(),
      stdio: ["pipe", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    // A child may stop reading early (an input cap): that is its answer, not a test error.
    child.stdin.on("error", () => undefined)
    child.stdin.end(options.input ?? "")
  })

/** A `dist/bin.js` child still running: its output so far, and its exit. */
export interface StartedBaton {
  readonly child: ReturnType<typeof spawn>
  /** Everything it printed so far. */
  readonly output: () => { readonly stdout: string; readonly stderr: string }
  /** Resolves with the exit code once it ends. */
  readonly exited: Promise<number | null>
  /** Waits (up to `timeoutMs`) until its stdout or stderr matches `pattern`; true when it did. */
  readonly waitFor: (
    stream: "stdout" | "stderr",
    pattern: RegExp,
    timeoutMs?: number,
  ) => Promise<boolean>
}

/** Starts `node dist/bin.js ...args` with `env` (only), without waiting for it to end. */
export const startBaton = (args: readonly string[], env: Record<string, string>): StartedBaton => {
  const child = spawn(process.execPath, [batonBin, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  })
  const out = { stdout: "", stderr: "" }
  child.stdout.setEncoding("utf8").on("data", (c: string) => (out.stdout += c))
  child.stderr.setEncoding("utf8").on("data", (c: string) => (out.stderr += c))
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
  const waitFor = async (stream: "stdout" | "stderr", pattern: RegExp, timeoutMs = 60_000) => {
    const until = Date.now() + timeoutMs
    while (!pattern.test(out[stream]) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20))
    return pattern.test(out[stream])
  }
  return { child, output: () => ({ ...out }), exited, waitFor }
}

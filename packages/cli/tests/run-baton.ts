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

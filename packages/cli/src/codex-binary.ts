/**
 * Finds the Codex binary (`$BATON_CODEX_BINARY`, then `PATH`) and asks it for its version.
 * Guarantees: `codexVersion` never hangs — after the timeout the whole process group is killed
 * and the call resolves even if a grandchild still holds the pipes; it never throws.
 */
import { spawn } from "node:child_process"
import { constants } from "node:fs"
import { access, stat } from "node:fs/promises"
import { delimiter, join } from "node:path"

/** Where a Codex binary was found, or why none was usable. */
export type CodexLocation =
  | {
      readonly _tag: "Found"
      readonly path: string
      readonly source: "BATON_CODEX_BINARY" | "PATH"
    }
  | {
      readonly _tag: "Unusable"
      readonly path: string
      readonly source: "BATON_CODEX_BINARY"
      readonly reason: string
    }
  | { readonly _tag: "NotFound" }

/** What `codex --version` said, or how it failed. */
export type CodexVersionProbe =
  | { readonly _tag: "Version"; readonly text: string }
  | { readonly _tag: "TimedOut"; readonly afterMs: number }
  | { readonly _tag: "Failed"; readonly reason: string }

const executableProblem = async (path: string): Promise<string | undefined> => {
  try {
    const info = await stat(path)
    if (!info.isFile()) return "not a regular file"
    await access(path, constants.X_OK)
    return undefined
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT") return "no such file"
    if (code === "EACCES") return "not executable"
    return error instanceof Error ? error.message : String(error)
  }
}

const candidateNames = (
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform,
): string[] =>
  platform === "win32"
    ? ["", ...(env["PATHEXT"] ?? ".EXE;.CMD;.BAT").split(";")].map(
        (extension) => `codex${extension.toLowerCase()}`,
      )
    : ["codex"]

/** Looks for Codex: `$BATON_CODEX_BINARY` if set (and then only there), else each `PATH` directory. */
export const locateCodex = async (
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): Promise<CodexLocation> => {
  const configured = env["BATON_CODEX_BINARY"]
  if (configured !== undefined && configured !== "") {
    const problem = await executableProblem(configured)
    return problem === undefined
      ? { _tag: "Found", path: configured, source: "BATON_CODEX_BINARY" }
      : { _tag: "Unusable", path: configured, source: "BATON_CODEX_BINARY", reason: problem }
  }
  const directories = (env["PATH"] ?? "").split(delimiter).filter((directory) => directory !== "")
  for (const directory of directories) {
    for (const name of candidateNames(env, platform)) {
      const path = join(directory, name)
      if ((await executableProblem(path)) === undefined)
        return { _tag: "Found", path, source: "PATH" }
    }
  }
  return { _tag: "NotFound" }
}

const firstLine = (text: string): string =>
  (text.split(/\r?\n/).find((line) => line.trim() !== "") ?? "").trim().slice(0, 200)

/** Runs `<path> --version` and returns its first output line; gives up after `timeoutMs`. */
export const codexVersion = (
  path: string,
  options: { readonly timeoutMs: number; readonly env?: NodeJS.ProcessEnv },
): Promise<CodexVersionProbe> =>
  new Promise((settle) => {
    let settled = false
    const finish = (probe: CodexVersionProbe): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      settle(probe)
    }
    const posix = process.platform !== "win32"
    const child = spawn(path, ["--version"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: options.env ?? process.env,
      detached: posix,
      windowsHide: true,
    })
    const timer = setTimeout(() => {
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
        else child.kill("SIGKILL")
      } catch {
        // Already gone: nothing left to kill.
      }
      child.stdout.destroy()
      child.stderr.destroy()
      finish({ _tag: "TimedOut", afterMs: options.timeoutMs })
    }, options.timeoutMs)
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", (error) => finish({ _tag: "Failed", reason: error.message }))
    child.on("close", (code, signal) => {
      const line = firstLine(stdout) || firstLine(stderr)
      if (code === 0 && line !== "") finish({ _tag: "Version", text: line })
      else if (code === 0) finish({ _tag: "Failed", reason: "printed nothing" })
      else
        finish({
          _tag: "Failed",
          reason: `exited with ${signal ?? `code ${String(code)}`}${line ? `: ${line}` : ""}`,
        })
    })
  })

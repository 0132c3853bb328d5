/**
 * Finds the `codex` binary for a private stdio app-server, and says which one and why:
 * `BATON_CODEX_BINARY` (must be an executable file; no silent fallback when it is wrong), then the
 * first executable `codex` on PATH, then the newest VS Code extension's bundled binary
 * (`~/.vscode/extensions/openai.chatgpt-<version>-*` and `~/.vscode-server/...`,
 * `bin/<platform>/codex`). Every rejected candidate is reported. File-system and process access go
 * through an injected `BinaryHost`. `probeCodexVersion` never hangs and never fails: after its
 * timeout it kills the whole process group and returns even if a grandchild still holds the pipes.
 */
import { spawn } from "node:child_process"
import { constants } from "node:fs"
import { access, readdir, stat } from "node:fs/promises"
import { homedir } from "node:os"
import { delimiter, isAbsolute, join } from "node:path"
import * as Effect from "effect/Effect"
import { CodexBinaryNotFoundError } from "./errors.js"

/** Where the binary came from. */
export type CodexBinarySource = "env" | "path" | "vscode-extension"

/** A discovered binary: its path, origin, version (`codex --version`) and the reason it was chosen. */
export interface CodexBinary {
  readonly path: string
  readonly source: CodexBinarySource
  readonly version: string | null
  readonly reason: string
}

/** What discovery may look at. */
export interface BinaryHost {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly homedir: string
  readonly platform: NodeJS.Platform
  readonly arch: string
  readonly isExecutableFile: (path: string) => Effect.Effect<boolean>
  /** Entry names of a directory; empty when it does not exist. */
  readonly listDirectory: (path: string) => Effect.Effect<ReadonlyArray<string>>
  /** The version printed by `<path> --version`, or null. */
  readonly readVersion: (path: string) => Effect.Effect<string | null>
}

/** What `<path> --version` said (its first non-empty output line), or how it failed. */
export type CodexVersionProbe =
  | { readonly _tag: "Version"; readonly text: string }
  | { readonly _tag: "TimedOut"; readonly afterMs: number }
  | { readonly _tag: "Failed"; readonly reason: string }

/** Environment variable that pins the binary. */
export const CODEX_BINARY_ENV = "BATON_CODEX_BINARY"

/** Parses `codex-cli 0.169.0` (or any text containing a semver) into `0.169.0`. */
export const parseCodexVersion = (text: string): string | null =>
  /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(text)?.[1] ?? null

const firstLine = (text: string): string =>
  (text.split(/\r?\n/).find((line) => line.trim() !== "") ?? "").trim().slice(0, 200)

/**
 * Runs `<path> --version` in its own process group. After `timeoutMs`, or when interrupted, it
 * SIGKILLs the group and stops reading, so a grandchild holding the pipes cannot keep it waiting.
 */
export const probeCodexVersion = (
  path: string,
  options: { readonly timeoutMs: number; readonly env?: NodeJS.ProcessEnv },
): Effect.Effect<CodexVersionProbe> =>
  Effect.callback<CodexVersionProbe>((resume) => {
    let settled = false
    const finish = (probe: CodexVersionProbe): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.succeed(probe))
    }
    const posix = process.platform !== "win32"
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(path, ["--version"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: options.env ?? process.env,
        detached: posix,
        windowsHide: true,
      })
    } catch (error) {
      settled = true
      resume(
        Effect.succeed({
          _tag: "Failed",
          reason: error instanceof Error ? error.message : String(error),
        }),
      )
      return
    }
    const killGroup = (): void => {
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
        else child.kill("SIGKILL")
      } catch {
        // Already gone: nothing left to kill.
      }
      child.stdout?.destroy()
      child.stderr?.destroy()
    }
    const timer = setTimeout(() => {
      killGroup()
      finish({ _tag: "TimedOut", afterMs: options.timeoutMs })
    }, options.timeoutMs)
    let stdout = ""
    let stderr = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
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
    return Effect.sync(() => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      killGroup()
    })
  })

/** How long `nodeBinaryHost`'s `readVersion` waits for `codex --version`. */
const VERSION_TIMEOUT_MS = 10_000

/** The real host: this process's environment, file system and a bounded `codex --version`. */
export const nodeBinaryHost = (): BinaryHost => ({
  env: process.env,
  homedir: homedir(),
  platform: process.platform,
  arch: process.arch,
  isExecutableFile: (path) =>
    Effect.promise(async () => {
      try {
        const info = await stat(path)
        if (!info.isFile()) return false
        await access(path, constants.X_OK)
        return true
      } catch {
        return false
      }
    }),
  listDirectory: (path) => Effect.promise(() => readdir(path).catch(() => [] as Array<string>)),
  readVersion: (path) =>
    Effect.map(probeCodexVersion(path, { timeoutMs: VERSION_TIMEOUT_MS }), (probe) =>
      probe._tag === "Version" ? parseCodexVersion(probe.text) : null,
    ),
})

const executableNames = (platform: NodeJS.Platform) =>
  platform === "win32" ? ["codex.exe", "codex.cmd"] : ["codex"]

/** The extension's `bin/<dir>` name for a platform (`linux-x86_64`, `macos-aarch64`, `windows-x86_64`, …). */
export const extensionPlatformDir = (platform: NodeJS.Platform, arch: string): string => {
  const os = platform === "darwin" ? "macos" : platform === "win32" ? "windows" : platform
  const cpu = arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : arch
  return `${os}-${cpu}`
}

const compareVersions = (a: string, b: string): number => {
  const pa = a.split(".").map(Number)
  const pb = b.split(".").map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

const EXTENSION_ROOTS = [
  ".vscode/extensions",
  ".vscode-server/extensions",
  ".vscode-insiders/extensions",
  ".vscode-server-insiders/extensions",
]

/** Finds the binary to spawn, or fails listing everything that was tried. */
export const discoverCodexBinary = (
  host: BinaryHost = nodeBinaryHost(),
): Effect.Effect<CodexBinary, CodexBinaryNotFoundError> =>
  Effect.gen(function* () {
    const searched: Array<string> = []
    const found = (path: string, source: CodexBinarySource, reason: string) =>
      Effect.map(host.readVersion(path), (version): CodexBinary => ({
        path,
        source,
        version,
        reason,
      }))

    const pinned = host.env[CODEX_BINARY_ENV]
    if (pinned !== undefined && pinned !== "") {
      if (isAbsolute(pinned) && (yield* host.isExecutableFile(pinned)))
        return yield* found(pinned, "env", `${CODEX_BINARY_ENV} is set`)
      return yield* new CodexBinaryNotFoundError({
        searched: [
          `${CODEX_BINARY_ENV}=${pinned}: ${isAbsolute(pinned) ? "not an executable file" : "not an absolute path"} (no fallback while it is set)`,
        ],
      })
    }

    const pathKey = Object.keys(host.env).find((k) => k.toUpperCase() === "PATH")
    const pathValue = pathKey === undefined ? "" : (host.env[pathKey] ?? "")
    const separator = host.platform === "win32" ? ";" : delimiter
    for (const dir of pathValue.split(separator)) {
      if (dir === "") continue
      if (!isAbsolute(dir)) {
        searched.push(`PATH entry ${dir}: not absolute, skipped`)
        continue
      }
      for (const name of executableNames(host.platform)) {
        const candidate = join(dir, name)
        if (yield* host.isExecutableFile(candidate))
          return yield* found(candidate, "path", `first executable codex on PATH (${dir})`)
      }
    }
    searched.push("PATH: no executable codex")

    const platformDir = extensionPlatformDir(host.platform, host.arch)
    const extensions: Array<{ readonly dir: string; readonly version: string }> = []
    for (const root of EXTENSION_ROOTS) {
      const rootDir = join(host.homedir, root)
      for (const entry of yield* host.listDirectory(rootDir)) {
        const version = /^openai\.chatgpt-(\d+(?:\.\d+)*)/.exec(entry)?.[1]
        if (version !== undefined) extensions.push({ dir: join(rootDir, entry), version })
      }
    }
    if (extensions.length === 0)
      searched.push(
        `VS Code extensions: no openai.chatgpt-* under ~/{${EXTENSION_ROOTS.join(",")}}`,
      )
    extensions.sort((a, b) => compareVersions(b.version, a.version))
    for (const extension of extensions) {
      const binDirs = [
        platformDir,
        ...(yield* host.listDirectory(join(extension.dir, "bin"))).filter((d) => d !== platformDir),
      ]
      for (const binDir of binDirs) {
        for (const name of executableNames(host.platform)) {
          const candidate = join(extension.dir, "bin", binDir, name)
          if (yield* host.isExecutableFile(candidate)) {
            return yield* found(
              candidate,
              "vscode-extension",
              `newest VS Code extension openai.chatgpt-${extension.version} (no codex on PATH)`,
            )
          }
        }
      }
      searched.push(`${extension.dir}: no executable bin/*/codex`)
    }
    return yield* new CodexBinaryNotFoundError({ searched })
  })

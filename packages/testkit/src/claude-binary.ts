/**
 * Locates the pinned native Claude Code binary installed as a devDependency of this package:
 * `@anthropic-ai/claude-code/bin/claude.exe` (its postinstall copies the platform binary there),
 * else the platform package it would have copied from. `BATON_CLAUDE_BINARY` overrides both.
 * Never downloads anything and never falls back to a `claude` on PATH.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** The resolved binary and the version its wrapper package declares. */
export interface ClaudeBinary {
  readonly path: string
  readonly version: string
}

/** Env var that points the testkit at another Claude Code binary. */
export const CLAUDE_BINARY_ENV = "BATON_CLAUDE_BINARY"

const MAGICS = [
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0xcf, 0xfa, 0xed, 0xfe], // Mach-O 64
  [0xca, 0xfe, 0xba, 0xbe], // Mach-O universal
  [0x4d, 0x5a], // PE
]

const isNative = (path: string): boolean => {
  if (!existsSync(path)) return false
  const head = Buffer.alloc(4)
  const fd = openSync(path, "r")
  try {
    readSync(fd, head, 0, 4, 0)
  } finally {
    closeSync(fd)
  }
  return MAGICS.some((magic) => magic.every((byte, index) => head[index] === byte))
}

let cached: ClaudeBinary | undefined

/** Resolves (once) the native binary; throws a descriptive error when it is not installed. */
export const resolveClaudeBinary = (): ClaudeBinary => {
  if (cached !== undefined) return cached
  const require = createRequire(import.meta.url)
  let manifestPath: string
  try {
    manifestPath = require.resolve("@anthropic-ai/claude-code/package.json")
  } catch (error) {
    throw new Error(
      `@anthropic-ai/claude-code is not installed for @baton/testkit (run pnpm install): ${String(error)}`,
      { cause: error },
    )
  }
  const version = (JSON.parse(readFileSync(manifestPath, "utf8")) as { version: string }).version
  const override = process.env[CLAUDE_BINARY_ENV]
  if (override !== undefined && override.length > 0) {
    cached = { path: override, version }
    return cached
  }
  const tried: Array<string> = []
  const wrapped = join(dirname(manifestPath), "bin", "claude.exe")
  tried.push(wrapped)
  if (isNative(wrapped)) {
    cached = { path: wrapped, version }
    return cached
  }
  const fromWrapper = createRequire(manifestPath)
  const binName = process.platform === "win32" ? "claude.exe" : "claude"
  for (const suffix of [
    `${process.platform}-${process.arch}`,
    `${process.platform}-${process.arch}-musl`,
  ]) {
    try {
      const platformManifest = fromWrapper.resolve(
        `@anthropic-ai/claude-code-${suffix}/package.json`,
      )
      const candidate = join(dirname(platformManifest), binName)
      tried.push(candidate)
      if (isNative(candidate)) {
        cached = { path: candidate, version }
        return cached
      }
    } catch {
      tried.push(`@anthropic-ai/claude-code-${suffix} (not installed)`)
    }
  }
  throw new Error(
    `no native Claude Code ${version} binary found; tried ${tried.join(", ")}; set ${CLAUDE_BINARY_ENV} to override`,
  )
}

/**
 * Locates the pinned `@openai/codex` devDependency of this package. Codex is run the way its npm
 * install runs it: `node <pkg>/bin/codex.js …`, which resolves the platform package and execve()s
 * the native binary (so the pid we hold is Codex itself). Never looks at a global install.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** Where the pinned Codex lives. */
export interface CodexBinary {
  /** The Node executable running the launcher script. */
  readonly node: string
  /** `@openai/codex/bin/codex.js`. */
  readonly script: string
  /** The platform's native binary, when its optional package is installed. */
  readonly native: string | undefined
  /** `version` of the resolved `@openai/codex` package. */
  readonly version: string
}

const targetTriple = (): string | undefined => {
  const table: Record<string, string> = {
    "linux-x64": "x86_64-unknown-linux-musl",
    "linux-arm64": "aarch64-unknown-linux-musl",
    "darwin-x64": "x86_64-apple-darwin",
    "darwin-arm64": "aarch64-apple-darwin",
  }
  return table[`${process.platform}-${process.arch}`]
}

let cached: CodexBinary | undefined

/** Resolves the pinned Codex from this package's dependencies; throws a descriptive error. */
export const resolveCodexBinary = (): CodexBinary => {
  if (cached !== undefined) return cached
  const require = createRequire(import.meta.url)
  let packageJson: string
  try {
    packageJson = require.resolve("@openai/codex/package.json")
  } catch (error) {
    throw new Error(
      `@baton/testkit: cannot resolve @openai/codex (a devDependency of @baton/testkit); run pnpm install. ${String(error)}`,
      { cause: error },
    )
  }
  const manifest = JSON.parse(readFileSync(packageJson, "utf8")) as {
    version: string
    bin: { codex: string }
  }
  const root = dirname(packageJson)
  let native: string | undefined
  const triple = targetTriple()
  if (triple !== undefined) {
    try {
      const platformJson = createRequire(packageJson).resolve(
        `@openai/codex-${process.platform}-${process.arch}/package.json`,
      )
      native = join(dirname(platformJson), "vendor", triple, "bin", "codex")
    } catch {
      native = undefined
    }
  }
  cached = {
    node: process.execPath,
    script: join(root, manifest.bin.codex),
    native,
    version: manifest.version,
  }
  return cached
}

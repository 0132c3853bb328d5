// What each published package's tarball holds, as `npm pack` lists it from the built tree: its
// README, package.json, compiled `dist/` files (and recall's `assets/`), every `exports` and `bin`
// target — and nothing meant only for this repository: no compiled tests, no README example
// files (those are type-checked here, not API).
import { execFile } from "node:child_process"
import { readFile, readdir } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const run = promisify(execFile)
const packagesDir = fileURLToPath(new URL("../../", import.meta.url))

interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly bin?: Record<string, string>
  readonly exports?: Record<string, string | Record<string, string>>
}

const published = async (): Promise<Array<{ dir: string; manifest: Manifest }>> => {
  const all = await Promise.all(
    (await readdir(packagesDir)).map(async (name) => {
      const dir = join(packagesDir, name)
      const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as Manifest
      return { dir, manifest }
    }),
  )
  return all.filter((p) => p.manifest.private !== true)
}

const packedFiles = async (dir: string): Promise<Array<string>> => {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: dir,
    maxBuffer: 16 << 20,
  })
  const [report] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>
  return report!.files.map((f) => f.path)
}

const targets = (manifest: Manifest): Array<string> => [
  ...Object.values(manifest.bin ?? {}),
  ...Object.values(manifest.exports ?? {}).flatMap((t) =>
    typeof t === "string" ? [t] : Object.values(t),
  ),
]

describe("published package files", () => {
  it("ship the API and nothing meant only for this repository", async () => {
    const packages = await published()
    expect(packages.map((p) => p.manifest.name)).toContain("@baton/cli")
    const lists = await Promise.all(packages.map((p) => packedFiles(p.dir)))
    for (const [i, { manifest }] of packages.entries()) {
      const files = lists[i]!
      const stray = files.filter(
        (f) =>
          !(f === "README.md" || f === "package.json" || /^(dist|assets)\//.test(f)) ||
          /\.test\.|(^|\/)readme-example\./.test(f),
      )
      expect({ name: manifest.name, stray }).toEqual({ name: manifest.name, stray: [] })
      const missing = targets(manifest)
        .map((t) => t.replace(/^\.\//, ""))
        .filter((t) => !files.includes(t))
      expect({ name: manifest.name, missing }).toEqual({ name: manifest.name, missing: [] })
    }
  }, 60_000)
})

// Guards the cold-start budget: the modules `dist/bin.js` loads before any command runs (its
// static import graph) may be only its own files, node: builtins and modules of constants that
// import nothing (grep's time limits, printed in its help) — effect, the MCP SDK, better-sqlite3
// and the domain packages must arrive through a command's dynamic import().
import { readFile } from "node:fs/promises"
import { builtinModules } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const distDir = fileURLToPath(new URL("../dist/", import.meta.url))
const staticImport = /^\s*(?:import|export)\s(?:[^"';]*?\sfrom\s)?["']([^"']+)["']/gm

const staticGraph = async (entry: string): Promise<{ files: string[]; external: string[] }> => {
  const files: string[] = []
  const external = new Set<string>()
  const queue = [entry]
  while (queue.length > 0) {
    const file = queue.shift()!
    if (files.includes(file)) continue
    files.push(file)
    const source = await readFile(file, "utf8")
    for (const match of source.matchAll(staticImport)) {
      const specifier = match[1]!
      if (specifier.startsWith(".")) queue.push(join(dirname(file), specifier))
      else external.add(specifier)
    }
  }
  return { files, external: [...external] }
}

describe("bin.js cold start", () => {
  it("statically imports only its own small modules and node builtins", async () => {
    const { files, external } = await staticGraph(join(distDir, "bin.js"))
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))
    const constants = ["@baton/recall-index/grep-limits"]
    expect(external.filter((specifier) => !builtins.has(specifier))).toEqual(constants)
    for (const specifier of constants) {
      const graph = await staticGraph(fileURLToPath(import.meta.resolve(specifier)))
      expect(graph.files, specifier).toHaveLength(1)
      expect(graph.external, specifier).toEqual([])
    }
    const names = files.map((file) => file.slice(distDir.length)).sort()
    expect(names).toContain("argv-parser.js")
    expect(names).not.toContain("doctor-command.js")
    expect(names).not.toContain("handoff-command.js")
    expect(names).not.toContain("mcp-command.js")
    expect(names).not.toContain("codex-probe-command.js")
  })
})

describe("recall search's early start", () => {
  it("loads no effect and no index module before it starts USE-lite", async () => {
    const entry = await staticGraph(join(distDir, "recall-search-entry.js"))
    expect(entry.files.map((file) => file.slice(distDir.length))).not.toContain("recall-command.js")
    const prewarm = fileURLToPath(import.meta.resolve("@baton/recall-index/prewarm"))
    const { files, external } = await staticGraph(prewarm)
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))
    expect(external.filter((specifier) => !builtins.has(specifier))).toEqual([])
    expect(files.map((file) => file.split("/dist/")[1]).sort()).toEqual([
      "data-directory.js",
      "embedders/use-lite-pool.js",
      "use-lite-prewarm.js",
      // Stops the pool's workers; node builtins only.
      "worker-stop.js",
    ])
  })
})

describe("recall index --background's early start (the plugins' SessionStart hook)", () => {
  it("loads no effect and no index module to start the background run", async () => {
    const { files, external } = await staticGraph(join(distDir, "recall-background.js"))
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))
    expect(external.filter((specifier) => !builtins.has(specifier))).toEqual([])
    const names = files.map((file) => file.slice(distDir.length))
    expect(names).not.toContain("recall-command.js")
  })
})

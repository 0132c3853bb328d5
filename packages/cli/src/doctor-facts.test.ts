import { chmod, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gatherDoctorFacts } from "./doctor-facts.js"
import type { DoctorProbes } from "./doctor-facts.js"

let root = ""
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "baton-doctor-facts-"))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

const probes = (env: Record<string, string>): DoctorProbes => ({
  env: { PATH: "", ...env },
  cwd: root,
  home: join(root, "home"),
  codexTimeoutMs: 2000,
  probeVectorStore: () =>
    Promise.resolve({
      _tag: "Available",
      sqliteVersion: "3.53.2",
      vecVersion: "v0.1.9",
      fts5: true,
    }),
  probeEmbedder: (env) =>
    Promise.resolve({
      _tag: "Selected",
      choice: env["BATON_EMBEDDER"] ?? "auto",
      endpoint: undefined,
      model: undefined,
      voyageKeySet: false,
      staticTable: undefined,
    }),
  probeRecallIndex: (dataDir) =>
    Promise.resolve({ _tag: "Missing", path: join(dataDir, "recall-index.db") }),
})

describe.skipIf(process.platform === "win32")("gatherDoctorFacts", () => {
  it("reads directory modes and never creates missing directories", async () => {
    const data = join(root, "data")
    await mkdir(data, { mode: 0o700 })
    await chmod(data, 0o755)
    const codexHome = join(root, "codex-home")
    await mkdir(codexHome)
    const before = await readdir(root)
    const facts = await gatherDoctorFacts(probes({ BATON_DATA_DIR: data, CODEX_HOME: codexHome }))
    expect(facts.dataDir).toMatchObject({
      _tag: "Present",
      path: data,
      mode: 0o755,
      source: "$BATON_DATA_DIR",
    })
    expect(facts.jobsDir).toMatchObject({
      _tag: "Missing",
      path: join(codexHome, "tools", "baton", "jobs"),
      nearestExisting: codexHome,
    })
    expect(facts.codexHome).toMatchObject({ exists: true, isDirectory: true })
    expect(facts.claudeConfig).toMatchObject({ path: join(root, "home", ".claude"), exists: false })
    expect(await readdir(root)).toEqual(before)
    expect(await readdir(codexHome)).toEqual([])
  })

  it("finds baton and claude on PATH, and a data directory under a link to nothing", async () => {
    const bin = join(root, "path-bin")
    await mkdir(bin)
    await writeFile(join(bin, "baton"), "#!/bin/sh\n")
    await chmod(join(bin, "baton"), 0o755)
    await writeFile(join(bin, "claude"), "not executable")
    const link = join(root, "dangling")
    await symlink(join(root, "nowhere"), link)
    const facts = await gatherDoctorFacts(
      probes({ PATH: bin, BATON_DATA_DIR: join(link, "baton") }),
    )
    expect(facts.batonOnPath).toBe(join(bin, "baton"))
    expect(facts.claudeOnPath).toBeUndefined()
    expect(facts.dataDir).toMatchObject({
      _tag: "DanglingLink",
      link,
      target: join(root, "nowhere"),
    })
  })

  it("reports a file where a directory belongs", async () => {
    const file = join(root, "not-a-dir")
    await writeFile(file, "x")
    const facts = await gatherDoctorFacts(probes({ BATON_JOBS_DIR: file }))
    expect(facts.jobsDir).toMatchObject({ _tag: "NotADirectory", path: file })
  })

  it("finds codex on PATH and reads its version", async () => {
    const bin = join(root, "bin")
    await mkdir(bin)
    await writeFile(join(bin, "codex"), "#!/bin/sh\necho 'codex-cli 7.7.7'\n")
    await chmod(join(bin, "codex"), 0o755)
    const facts = await gatherDoctorFacts(probes({ PATH: bin }))
    expect(facts.codex).toMatchObject({
      _tag: "Found",
      path: join(bin, "codex"),
      source: "path",
      version: { _tag: "Version", text: "codex-cli 7.7.7" },
    })
  })

  it("reports an unusable BATON_CODEX_BINARY without falling back to PATH", async () => {
    const missing = join(root, "no-codex")
    const facts = await gatherDoctorFacts(probes({ BATON_CODEX_BINARY: missing }))
    expect(facts.codex).toMatchObject({ _tag: "Unusable", path: missing })
  })

  it("reports a hanging codex --version as timed out", async () => {
    const bin = join(root, "hang-bin")
    await mkdir(bin)
    await writeFile(join(bin, "codex"), "#!/bin/sh\nsleep 30 &\nsleep 30\n")
    await chmod(join(bin, "codex"), 0o755)
    const started = Date.now()
    const facts = await gatherDoctorFacts({
      ...probes({ PATH: [bin, "/usr/bin", "/bin"].join(":") }),
      codexTimeoutMs: 300,
    })
    expect(facts.codex).toMatchObject({ _tag: "Found", version: { _tag: "TimedOut" } })
    expect(Date.now() - started).toBeLessThan(3000)
  })

  // /sys refuses mkdir even to root, whose access() check passes on permission bits there.
  it.skipIf(process.platform !== "linux")(
    "tries a real create: a data directory under /sys cannot be created",
    async () => {
      const facts = await gatherDoctorFacts(probes({ BATON_DATA_DIR: "/sys/baton" }))
      expect(facts.dataDir).toMatchObject({
        _tag: "Missing",
        path: "/sys/baton",
        nearestExisting: "/sys",
        creatable: false,
        refusal: expect.stringMatching(/^E[A-Z]+$/),
      })
    },
  )

  it("creates nothing when it tries a write: the test directory is removed", async () => {
    const parent = join(root, "probe-parent")
    await mkdir(parent)
    const facts = await gatherDoctorFacts(probes({ BATON_DATA_DIR: join(parent, "baton") }))
    expect(facts.dataDir).toMatchObject({ _tag: "Missing", creatable: true })
    expect(facts.dataDir).not.toHaveProperty("refusal")
    expect(await readdir(parent)).toEqual([])
  })

  it("reads Claude Code's MCP needs-auth cache for Baton's server, leniently", async () => {
    const config = join(root, "claude-config")
    await mkdir(config)
    const cache = join(config, "mcp-needs-auth-cache.json")
    const read = async () =>
      (await gatherDoctorFacts(probes({ CLAUDE_CONFIG_DIR: config }))).claudeMcpNeedsAuth
    expect(await read()).toEqual({ _tag: "Absent", path: cache })
    // What Claude Code left in the sweep once reconnected.
    await writeFile(cache, "{}")
    expect(await read()).toEqual({ _tag: "Read", path: cache, batonKeys: [] })
    await writeFile(
      cache,
      JSON.stringify({
        "plugin:baton:baton": { timestamp: 1 },
        "plugin:other:x": { timestamp: 2 },
      }),
    )
    expect(await read()).toEqual({ _tag: "Read", path: cache, batonKeys: ["plugin:baton:baton"] })
    await writeFile(cache, JSON.stringify(["baton"]))
    expect(await read()).toEqual({ _tag: "Read", path: cache, batonKeys: ["baton"] })
    await writeFile(cache, "{not json")
    expect(await read()).toEqual({ _tag: "Unreadable", path: cache, reason: "not valid JSON" })
    await writeFile(cache, "42")
    expect(await read()).toMatchObject({ _tag: "Unreadable", path: cache })
  })

  it("asks the embedder probe with the environment it was given", async () => {
    const facts = await gatherDoctorFacts(probes({ BATON_EMBEDDER: "use-lite" }))
    expect(facts.embedder).toMatchObject({ _tag: "Selected", choice: "use-lite" })
  })
})

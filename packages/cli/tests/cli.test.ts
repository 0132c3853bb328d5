import { spawn } from "node:child_process"
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir, userInfo } from "node:os"
import { dirname, join } from "node:path"
import { handoffDigest, parseHandoffJsonResult } from "@baton/handoff"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { batonBin, runBaton } from "./run-baton.js"

let root = ""
const file = (name: string): string => join(root, name)

const secretKey = "sk-proj-abc123def456ghi789jkl012"
const validHandoff = {
  summary: "Built the baton CLI; doctor and handoff commands pass their tests.",
  preserve: ["packages/cli/src/bin.ts is the entry", "exit codes: 0 ok, 1 failed, 2 usage"],
  nextStep: "Wire recall into doctor",
  resume: true,
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "baton-cli-e2e-"))
  await writeFile(file("valid.json"), `${JSON.stringify(validHandoff, null, 2)}\n`)
  await writeFile(file("invalid.json"), JSON.stringify({ preserve: [], resume: true }))
  await writeFile(
    file("secret.json"),
    JSON.stringify({ summary: `deploy key is ${secretKey}`, resume: false }),
  )
  await writeFile(
    file("oversized.json"),
    JSON.stringify({ summary: "x".repeat(40_000), resume: false }),
  )
  await writeFile(file("malformed.json"), '{"summary": "unterminated')
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

describe("baton (built dist/bin.js)", () => {
  it("--version prints the package version", async () => {
    const manifest = JSON.parse(
      await readFile(new URL("../package.json", import.meta.url), "utf8"),
    ) as {
      version: string
    }
    const run = await runBaton(["--version"])
    expect(run).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: "" })
  })

  it("--help lists the commands; every command has --help", async () => {
    const help = await runBaton(["--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/doctor[\s\S]*handoff[\s\S]*mcp/)
    for (const command of [
      ["doctor"],
      ["handoff"],
      ["handoff", "validate"],
      ["handoff", "hash"],
      ["codex"],
      ["codex", "probe"],
      ["mcp"],
    ]) {
      const run = await runBaton([...command, "--help"])
      expect(run.code, command.join(" ")).toBe(0)
      expect(run.stdout).toContain(`Usage\n  baton ${command.join(" ")}`)
    }
  })

  it("exits 2 with one line for an unknown command or flag, pointing at --help", async () => {
    const command = await runBaton(["frobnicate"])
    expect(command.code).toBe(2)
    expect(command.stdout).toBe("")
    expect(command.stderr).toBe(
      "baton: unknown command 'frobnicate' for 'baton' (expected one of: doctor, handoff, codex, compact, recall, wake, mcp) (see 'baton --help')\n",
    )
    const flag = await runBaton(["doctor", "--frobnicate"])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toBe(
      "baton: unknown flag '--frobnicate' for 'baton doctor' (see 'baton doctor --help')\n",
    )
    // Asked for JSON, the same failure is a JSON object on stdout.
    const asJson = await runBaton(["recall", "search", "--frobnicate", "--json"])
    expect(asJson).toMatchObject({ code: 2, stderr: "" })
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      ok: false,
      error: {
        _tag: "CliUsageError",
        problem:
          "unknown flag '--frobnicate' for 'baton recall search' (text that starts with '-' goes after '--': baton recall search -- '--frobnicate')",
      },
    })
    // After "--", --json is an argument, not the flag.
    expect((await runBaton(["recall", "grep", "--bad", "--", "--json"])).stdout).toBe("")
  })
})

describe("baton in a working directory that was deleted", () => {
  // A removed git worktree or temporary directory: `process.cwd()` throws in the child.
  const inDeletedDirectory = (args: readonly string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(
        "/bin/sh",
        ["-c", 'mkdir -p "$D" && cd "$D" && rmdir "$D" && exec "$NODE" "$BIN" "$@"', "sh", ...args],
        { env: { ...env, D: join(root, "gone"), NODE: process.execPath, BIN: batonBin } },
      )
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c))
      child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })

  it("runs what does not need it, and a relative path fails with one line", async () => {
    const env = {
      PATH: process.env["PATH"] ?? "",
      HOME: root,
      BATON_DATA_DIR: join(root, "gone-data"),
    }
    const version = await inDeletedDirectory(["--version"], env)
    expect(version).toMatchObject({ code: 0, stderr: "" })
    const status = await inDeletedDirectory(["recall", "status", "--json"], env)
    expect(status.stderr).toBe("")
    expect(status.code).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: true })
    const relative = await inDeletedDirectory(["handoff", "validate", "handoff.json"], env)
    expect(relative.code).toBe(1)
    expect(relative.stderr).toContain("handoff.json")
    expect(relative.stderr).not.toMatch(/uv_cwd|\n\s+at /)
    expect(relative.stderr.trim().split("\n")).toHaveLength(1)
  })
})

describe("baton doctor --json", () => {
  it("reports directory modes, a missing jobs dir, and a fake codex on PATH — and creates nothing", async () => {
    const home = file("home")
    const data = file("data")
    const codexHome = file("codex-home")
    const bin = file("bin")
    await mkdir(home)
    await mkdir(data)
    await chmod(data, 0o755)
    await mkdir(codexHome)
    await mkdir(bin)
    await writeFile(join(bin, "codex"), "#!/bin/sh\necho 'codex-cli 0.42.0'\n")
    await chmod(join(bin, "codex"), 0o755)

    const run = await runBaton(["doctor", "--json"], {
      env: { HOME: home, PATH: bin, BATON_DATA_DIR: data, CODEX_HOME: codexHome },
    })
    expect(run.stderr).toBe("")
    const report = JSON.parse(run.stdout) as {
      ok: boolean
      checks: Array<{
        id: string
        status: string
        summary: string
        detail: string
        hint: string | null
      }>
    }
    const check = (id: string) => report.checks.find((c) => c.id === id)
    expect(report.checks.map((c) => c.id)).toEqual([
      "node",
      "baton-command",
      "data-dir",
      "recall-index",
      "jobs-dir",
      "codex-home",
      "claude-config",
      "claude-binary",
      "codex-binary",
      "vector-store",
      "embedder",
    ])
    for (const c of report.checks)
      expect(Object.keys(c).sort()).toEqual(["detail", "hint", "id", "status", "summary"])
    expect(check("node")?.status).toBe("ok")
    expect(check("data-dir")).toMatchObject({
      status: "warn",
      summary: `${data} — not private (0755)`,
    })
    expect(check("jobs-dir")).toMatchObject({
      status: "ok",
      summary: `${join(codexHome, "tools", "baton", "jobs")} — not created yet`,
      detail: "will be created 0700 on first use (from $CODEX_HOME)",
    })
    expect(check("baton-command")).toMatchObject({
      status: "warn",
      summary: "baton is not on PATH",
    })
    expect(check("recall-index")).toMatchObject({ status: "ok", summary: "no index yet" })
    expect(check("codex-home")?.status).toBe("ok")
    expect(check("claude-config")).toMatchObject({
      status: "warn",
      summary: `${join(home, ".claude")} — not found`,
    })
    expect(check("codex-binary")).toMatchObject({
      status: "ok",
      summary: "codex-cli 0.42.0 (source: PATH)",
      detail: join(bin, "codex"),
    })
    expect(check("vector-store")?.status).toBe("ok")
    // The real probe: no BATON_EMBEDDER means the offline default, and its word table loads.
    expect(check("embedder")).toMatchObject({
      status: "ok",
      summary: expect.stringMatching(/^embedded, offline: auto/) as unknown,
      detail: expect.stringMatching(
        /^nothing leaves this machine; word table embedded\/use-static-\d+@/,
      ) as unknown,
    })
    expect(report.ok).toBe(true)
    expect(run.code).toBe(0)
    expect(await readdir(codexHome)).toEqual([])
    expect(await readdir(home)).toEqual([])
  })

  // `HOME= baton …` made every default path relative to the working directory (a hook run in a
  // project dropped `.local/share/baton` into it); an empty HOME now counts as unset.
  it("an empty HOME is the account's home: no path is relative to the working directory", async () => {
    const cwd = file("empty-home-cwd")
    await mkdir(cwd)
    const run = await runBaton(["doctor", "--json"], { env: { HOME: "", PATH: "" }, cwd })
    const report = JSON.parse(run.stdout) as { checks: Array<{ id: string; summary: string }> }
    const home = userInfo().homedir
    for (const id of ["data-dir", "jobs-dir", "codex-home", "claude-config"]) {
      const summary = report.checks.find((c) => c.id === id)?.summary ?? ""
      expect(summary.startsWith(`${home}/`)).toBe(true)
    }
    expect(await readdir(cwd)).toEqual([])
  })

  it("fails the recall-index check for a damaged index, and leaves the file as it was", async () => {
    const data = file("damaged-data")
    await mkdir(data, { mode: 0o700 })
    const garbage = Buffer.from("this is not a SQLite database, just bytes ".repeat(200))
    await writeFile(join(data, "recall-index.db"), garbage)
    const run = await runBaton(["doctor", "--json"], {
      env: { HOME: file("home"), PATH: "", BATON_DATA_DIR: data },
    })
    const report = JSON.parse(run.stdout) as {
      checks: Array<{ id: string; status: string; summary: string; detail: string }>
    }
    expect(report.checks.find((c) => c.id === "recall-index")).toMatchObject({
      status: "fail",
      summary: `${join(data, "recall-index.db")} — cannot be used`,
      detail: expect.stringContaining("is damaged (") as unknown,
    })
    expect(run.code).toBe(1)
    expect((await readFile(join(data, "recall-index.db"))).equals(garbage)).toBe(true)
    expect(await readdir(data)).toEqual(["recall-index.db"])
  })

  it("exits 1 when a check fails (BATON_CODEX_BINARY names a missing file)", async () => {
    const run = await runBaton(["doctor", "--json"], {
      env: { HOME: file("home"), PATH: "", BATON_CODEX_BINARY: file("no-codex-here") },
    })
    const report = JSON.parse(run.stdout) as {
      ok: boolean
      checks: Array<{ id: string; status: string }>
    }
    expect(report.ok).toBe(false)
    expect(report.checks.find((c) => c.id === "codex-binary")?.status).toBe("fail")
    expect(run.code).toBe(1)
  })

  it("fails the embedder check when BATON_EMBEDDER names a provider it cannot use", async () => {
    const run = await runBaton(["doctor", "--json"], {
      env: { HOME: file("home"), PATH: "", BATON_EMBEDDER: "voyage" },
    })
    const report = JSON.parse(run.stdout) as {
      checks: Array<{ id: string; status: string; summary: string; hint: string | null }>
    }
    expect(report.checks.find((c) => c.id === "embedder")).toMatchObject({
      status: "fail",
      summary: "BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY",
      hint: "Fix VOYAGE_API_KEY, or unset BATON_EMBEDDER for the offline embedded default",
    })
    expect(run.code).toBe(1)
  })

  it("prints an aligned text report without --json", async () => {
    const run = await runBaton(["doctor"], { env: { HOME: file("home"), PATH: "" } })
    expect(run.stdout).toMatch(/^baton \S+ doctor — \d+ ok, \d+ warn, \d+ fail\n\n/)
    expect(run.stdout).toMatch(/^warn {2}codex-binary {3}codex not found$/m)
    expect(run.stdout).toMatch(/^ {21}hint: /m)
  })
})

describe("baton compact: bad settings and ids are bad usage (exit 2) naming the flag", () => {
  const thread = "019a0000-0000-7000-8000-00000000000a"
  const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
    [["--headroom", "2"], "--headroom must be between 0 and 1"],
    [["--headroom", "abc"], "--headroom needs a decimal number"],
    [["--idle-debounce-ms", "1.5"], "--idle-debounce-ms must be a whole number of milliseconds"],
    [["--idle-debounce-ms", "-5"], "--idle-debounce-ms must be a whole number of milliseconds"],
    [["--compaction-ms", "0x10"], "--compaction-ms needs a decimal number"],
    [
      ["--idle-wait-ms", "99999999999999999999"],
      "--idle-wait-ms is too large: at most 604800000 ms (7 days)",
    ],
    [["--continuation-ms", "604800001"], "--continuation-ms is too large"],
  ]
  for (const [flags, message] of cases)
    it(`schedule ${flags.join(" ")}`, async () => {
      const run = await runBaton(["compact", "schedule", thread, ...flags], {
        env: { PATH: "", HOME: file("home"), BATON_JOBS_DIR: file("jobs-usage") },
      })
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`baton: ${message}`)
      expect(run.stderr).not.toContain("headroomThreshold")
    })

  it("a schedule whose worker cannot reach the thread fails (exit 1, ok:false) with the cause", async () => {
    const env = {
      PATH: "",
      HOME: file("home"),
      CODEX_HOME: file("codex-home-missing"),
      BATON_JOBS_DIR: file("jobs-unreachable"),
      BATON_CODEX_BINARY: "/nonexistent/codex",
    }
    const run = await runBaton(["compact", "schedule", thread], { env })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("baton: ScheduleFailed:")
    expect(run.stderr).toContain("BATON_CODEX_BINARY=/nonexistent/codex")
    expect(run.stdout).not.toContain("End this turn")
    const json = await runBaton(["compact", "schedule", thread, "--json"], { env })
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { _tag: "ScheduleFailed" } })
  }, 60_000)

  it("cancel with a job id that is not an id", async () => {
    const run = await runBaton(["compact", "cancel", thread, "../../x"], {
      env: { PATH: "", HOME: file("home"), BATON_JOBS_DIR: file("jobs-usage") },
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("'../../x' is not a job id")
  })
})

describe("baton handoff validate", () => {
  it("accepts a valid handoff and prints size, limit and digest", async () => {
    const run = await runBaton(["handoff", "validate", file("valid.json")])
    const digest = expectedDigest(await readFile(file("valid.json"), "utf8"))
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(
      new RegExp(
        `^OK: valid handoff, \\d+ of 32000 bytes \\(canonical JSON\\), sha256 ${digest}\\n$`,
      ),
    )
    const json = await runBaton(["handoff", "validate", "--json", file("valid.json")])
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      valid: true,
      limitBytes: 32000,
      sha256: digest,
    })
  })

  it("reads stdin for -", async () => {
    const run = await runBaton(["handoff", "validate", "-"], {
      input: JSON.stringify(validHandoff),
    })
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^OK: valid handoff/)
  })

  it("caps stdin and devices at 8 MiB with the same clear error as files (exit 1)", async () => {
    for (const command of ["validate", "hash"]) {
      const run = await runBaton(["handoff", command, "-"], { input: " ".repeat(9 * 1024 * 1024) })
      expect(run.code).toBe(1)
      expect(run.stderr).toBe("baton: cannot read '<stdin>': larger than 8388608 bytes\n")
    }
    const device = await runBaton(["handoff", "validate", "/dev/zero"])
    expect(device.code).toBe(1)
    expect(device.stderr).toBe("baton: cannot read '/dev/zero': larger than 8388608 bytes\n")
  })

  it("refuses invalid UTF-8 and repeated keys instead of accepting a changed handoff (exit 1)", async () => {
    await writeFile(
      file("latin1.json"),
      Buffer.concat([
        Buffer.from('{"summary":"caf'),
        Buffer.from([0xe9]),
        Buffer.from('","resume":false}'),
      ]),
    )
    const latin1 = await runBaton(["handoff", "validate", file("latin1.json")])
    expect(latin1.code).toBe(1)
    expect(latin1.stderr).toMatch(/^baton: HandoffInvalid: .*UTF-8/)
    const dup = await runBaton(["handoff", "hash", "-"], {
      input: '{"summary":"s","resume":true,"resume":false}',
    })
    expect(dup.code).toBe(1)
    expect(dup.stderr).toMatch(/^baton: HandoffInvalid: .*must not repeat a key/)
  })

  it("rejects a schema violation naming the field and rule (exit 1)", async () => {
    const run = await runBaton(["handoff", "validate", file("invalid.json")])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toBe("baton: HandoffInvalid: Invalid handoff: summary is required.\n")
    const json = await runBaton(["handoff", "validate", file("invalid.json"), "--json"])
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "HandoffInvalid", path: "summary", rule: "is required" },
    })
  })

  it("rejects a secret naming the field and kind, never echoing the secret", async () => {
    const run = await runBaton(["handoff", "validate", file("secret.json")])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      /^baton: HandoffContainsSecret: Handoff refused: summary contains an OpenAI API key\./,
    )
    const json = await runBaton(["handoff", "validate", file("secret.json"), "--json"])
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      error: {
        _tag: "HandoffContainsSecret",
        findings: [{ path: "summary", kind: "openai-api-key" }],
      },
    })
    for (const output of [run.stdout, run.stderr, json.stdout, json.stderr])
      expect(output).not.toContain("abc123def456")
  })

  it("rejects an oversized handoff with its size and the limit", async () => {
    const run = await runBaton(["handoff", "validate", file("oversized.json")])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      /^baton: HandoffTooLarge: Handoff is 40\d{3} bytes of canonical JSON \(UTF-8\); the limit is 32000 bytes\./,
    )
  })

  it("rejects malformed JSON with its position", async () => {
    const run = await runBaton(["handoff", "validate", file("malformed.json")])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      /^baton: HandoffInvalid: Invalid handoff: the top-level value must be valid JSON: .* at line 1, column \d+\.\n$/,
    )
  })

  it("names a missing file (exit 1) and a missing argument (exit 2)", async () => {
    const missing = await runBaton(["handoff", "validate", "no-such-handoff.json"], { cwd: root })
    expect(missing).toEqual({
      code: 1,
      stdout: "",
      stderr: "baton: cannot read 'no-such-handoff.json': no such file\n",
    })
    const usage = await runBaton(["handoff", "validate"])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toBe(
      "baton: missing <file> for 'baton handoff validate' (see 'baton handoff validate --help')\n",
    )
  })
})

describe("baton handoff hash", () => {
  it("prints the library's digest of the canonical encoding", async () => {
    const digest = expectedDigest(await readFile(file("valid.json"), "utf8"))
    expect(await runBaton(["handoff", "hash", file("valid.json")])).toEqual({
      code: 0,
      stdout: `${digest}\n`,
      stderr: "",
    })
    const json = await runBaton(["handoff", "hash", "--json", "-"], {
      input: JSON.stringify(validHandoff),
    })
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, sha256: digest })
  })

  it("validates before hashing", async () => {
    const run = await runBaton(["handoff", "hash", file("secret.json")])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^baton: HandoffContainsSecret: /)
  })
})

const expectedDigest = (text: string): string => {
  const result = parseHandoffJsonResult(text)
  if (result._tag !== "Success") throw new Error("fixture should be valid")
  return handoffDigest(result.success)
}

describe("baton codex probe", () => {
  const THREAD = "019a1b2c-3d4e-7f00-8000-000000000001"

  it("needs a thread id: the argument or CODEX_THREAD_ID, never guessed (exit 2)", async () => {
    const none = await runBaton(["codex", "probe"])
    expect(none.code).toBe(2)
    expect(none.stderr).toBe(
      "baton: no thread id: pass one, or run inside Codex where CODEX_THREAD_ID is set (see 'baton codex probe --help')\n",
    )
    const bad = await runBaton(["codex", "probe", "latest", "--json"])
    expect(bad.code).toBe(2)
    expect(JSON.parse(bad.stdout)).toMatchObject({
      ok: false,
      error: {
        _tag: "CliUsageError",
        message: expect.stringContaining("'latest' is not a Codex thread id"),
      },
    })
    const badEnv = await runBaton(["codex", "probe"], {
      env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent", CODEX_THREAD_ID: "abc" },
    })
    expect(badEnv.code).toBe(2)
    expect(badEnv.stderr).toContain("'abc' (from CODEX_THREAD_ID) is not a Codex thread id")
  })

  it("reports a thread nothing can reach as a finding (exit 0), from CODEX_THREAD_ID, and creates nothing in CODEX_HOME", async () => {
    const dir = await mkdtemp(join(tmpdir(), "baton-cli-probe-"))
    try {
      const env = {
        PATH: dirname(process.execPath),
        HOME: join(dir, "home"),
        CODEX_HOME: join(dir, "codex-home"),
        BATON_DATA_DIR: join(dir, "data"),
        CODEX_THREAD_ID: THREAD,
      }
      const json = await runBaton(["codex", "probe", "--json"], { env })
      expect(json.code).toBe(0)
      const report = JSON.parse(json.stdout) as Record<string, unknown>
      expect(report).toMatchObject({
        ok: true,
        threadId: THREAD,
        selected: null,
        owner: { kind: "none", clientId: null },
        thread: { status: null },
        context: { tokens: null, window: null },
        rateLimits: { status: "unavailable" },
        compatibility: { status: "unknown", binary: null },
      })
      expect(Object.keys(report)).toEqual([
        "ok",
        "threadId",
        "selected",
        "transports",
        "owner",
        "thread",
        "context",
        "rateLimits",
        "compatibility",
      ])
      const text = await runBaton(["codex", "probe", THREAD], { env })
      expect(text.code).toBe(0)
      expect(text.stdout).toContain("transport      none can reach this thread")
      expect(text.stdout).toMatch(/ {2}extension +unavailable — No Codex extension IPC socket at /)
      await expect(readdir(env.CODEX_HOME)).rejects.toThrow(/ENOENT/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

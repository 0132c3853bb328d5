// `baton wake …` through the built dist/bin.js, on a private wake directory: the job commands,
// their refusals and usage errors, and one watcher pass with no jobs (no Codex needed).
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { resolveCodexBinary } from "@baton/testkit"
import { runBaton } from "./run-baton.js"

let root = ""
let env: Record<string, string> = {}

const CHECKPOINT = [
  "# Wake checkpoint",
  "",
  "## Objective",
  "Port the parser to the new grammar.",
  "",
  "## Next actions",
  "1. Run the parser tests and fix the two failures.",
  "",
].join("\n")

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "baton-wake-cli-"))
  await mkdir(join(root, "work"))
  env = {
    PATH: process.env["PATH"] ?? "",
    HOME: root,
    BATON_WAKE_DIR: join(root, "wake"),
    CODEX_HOME: join(root, "codex"),
    BATON_CODEX_BINARY: "/bin/true",
  }
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

const baton = (args: ReadonlyArray<string>, input?: string, extra: Record<string, string> = {}) =>
  runBaton(["wake", ...args], {
    env: { ...env, ...extra },
    cwd: join(root, "work"),
    ...(input === undefined ? {} : { input }),
  })

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>

describe("baton wake (built dist/bin.js)", () => {
  it("create → checkpoint → arm → status → pause → re-arm → complete; refusals name the state", async () => {
    const thread = "019a0000-0000-7000-8000-0000000000aa"
    const created = await baton([
      "create",
      "--objective",
      "Port the parser",
      "--thread",
      thread,
      "--json",
    ])
    expect(created.code).toBe(0)
    const job = json(created.stdout)
    expect(job).toMatchObject({ ok: true, state: "draft", alreadyExists: false })
    const jobId = job["jobId"] as string
    expect(jobId).toMatch(/^wake-\d{8}-\d{6}-[0-9a-f]{8}$/)
    expect((await stat(join(root, "wake"))).mode & 0o777).toBe(0o700)

    // Same thread again: the open job, not a second one.
    const again = await baton(["create", "--objective", "x", "--json"], undefined, {
      CODEX_THREAD_ID: thread,
    })
    expect(json(again.stdout)).toMatchObject({ jobId, alreadyExists: true })

    const early = await baton(["arm", jobId, "--json"])
    expect(early.code).toBe(1)
    expect(json(early.stdout)).toMatchObject({ ok: false, error: { _tag: "CheckpointNotReady" } })

    const written = await baton(["checkpoint", jobId, "--file", "-", "--json"], CHECKPOINT)
    expect(json(written.stdout)).toMatchObject({ ok: true, ready: true, problems: [] })
    expect(await readFile(join(root, "wake", "jobs", jobId, "checkpoint.md"), "utf8")).toBe(
      CHECKPOINT,
    )

    const armed = await baton(["arm", jobId])
    expect(armed.code).toBe(0)
    expect(armed.stdout).toContain("monitoring")
    // A hint, not an error: `baton: ` starts only the lines of a command that failed.
    expect(armed.stderr).toMatch(/^note: no wake watcher runs, .*'baton wake watch --detach'\n$/)

    // The job of the current thread is found without an id.
    const status = await baton(["status", "--json"], undefined, { CODEX_THREAD_ID: thread })
    expect(json(status.stdout)).toMatchObject({
      status: { jobId, state: "monitoring", deliveryLabel: "cli_continuation_only" },
    })
    const text = await baton(["status", jobId])
    expect(text.stdout).toContain("cli_continuation_only")
    expect(text.stdout).toContain("capsule        ready")

    const capsule = await baton(["capsule", jobId])
    expect(capsule.stdout.startsWith("# WAKE_MEMORY_CAPSULE_V1")).toBe(true)
    expect(capsule.stdout).toContain("Run the parser tests")

    const paused = await baton(["pause", jobId, "--reason", "need the API key", "--json"])
    expect(json(paused.stdout)).toMatchObject({ state: "waiting_user" })
    const rearmed = await baton(["arm", "--json"], undefined, { BATON_WAKE_JOB_ID: jobId })
    expect(json(rearmed.stdout)).toMatchObject({ jobId, state: "monitoring" })

    const completed = await baton(["complete", jobId, "--json"])
    expect(json(completed.stdout)).toMatchObject({ state: "completed" })
    const refused = await baton(["stop", jobId, "--json"])
    expect(refused.code).toBe(1)
    expect(json(refused.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "JobRefused", state: "completed" },
    })

    const list = await baton(["list", "--json"])
    expect((json(list.stdout)["jobs"] as Array<{ jobId: string }>).map((j) => j.jobId)).toContain(
      jobId,
    )
  }, 120_000)

  it("checkpoint: headings at another level than `## ` are named; unknown and missing sections are reported by checkpoint and status", async () => {
    const created = await baton(["create", "--objective", "Headings", "--json"], undefined, {
      CODEX_THREAD_ID: "019a0000-0000-7000-8000-0000000000ab",
    })
    const jobId = json(created.stdout)["jobId"] as string
    const hashes = "# Objective\nFinish the upload.\n\n### Next actions\n1. Retry it.\n"
    const wrong = await baton(["checkpoint", jobId, "--file", "-", "--json"], hashes)
    const problems = json(wrong.stdout)["problems"] as Array<string>
    expect(problems).toEqual([
      "Objective is empty: found `# Objective`, but sections use `## ` headings (`## Objective`)",
      "Next actions is empty: found `### Next actions`, but sections use `## ` headings (`## Next actions`)",
    ])
    const text = await baton(["checkpoint", jobId, "--file", "-"], hashes)
    expect(text.stdout).toContain("note: found `# Objective`: not a section heading")
    const extra = `${CHECKPOINT}\n## Notes\n\nan unknown section\n`
    const noted = await baton(["checkpoint", jobId, "--file", "-", "--json"], extra)
    expect(json(noted.stdout)).toMatchObject({ ready: true, problems: [] })
    const notes = json(noted.stdout)["notes"] as Array<string>
    expect(notes).toContain("unknown sections (kept in checkpoint.md, not in the capsule): Notes")
    expect(notes.some((n) => n.startsWith("missing sections: Current position"))).toBe(true)
    const status = await baton(["status", jobId, "--json"])
    expect(json(status.stdout)).toMatchObject({ status: { memory: { notes } } })
    const statusText = await baton(["status", jobId])
    expect(statusText.stdout).toContain("  note           unknown sections")
    expect(statusText.stdout).toContain("(provenance only; never resumed)")
  }, 60_000)

  it("status: an original_thread job's thread is not called 'never resumed'", async () => {
    const created = await baton(
      ["create", "--objective", "Same thread", "--delivery", "original_thread", "--json"],
      undefined,
      { CODEX_THREAD_ID: "019a0000-0000-7000-8000-0000000000ac" },
    )
    const jobId = json(created.stdout)["jobId"] as string
    const status = await baton(["status", jobId])
    expect(status.stdout).not.toContain("never resumed")
    expect(status.stdout).toContain("continuations run on it as new turns when it is idle")
  }, 60_000)

  it("usage errors exit 2 and say what to pass", async () => {
    const noJob = await baton(["complete"])
    expect(noJob.code).toBe(2)
    expect(noJob.stderr).toContain("no job given")
    const badDelivery = await baton(["create", "--delivery", "telepathy"])
    expect(badDelivery.code).toBe(2)
    const badLimits = await baton(["watch", "--once", "--limits", '{"tailMs":"soon"}'])
    expect(badLimits.code).toBe(2)
    expect(badLimits.stderr).toContain("--limits")
    const unknownLimit = await baton(["watch", "--once", "--limits", '{"nope":1}'])
    expect(unknownLimit.code).toBe(2)
    expect(unknownLimit.stderr).toContain("nope")
    const onceDetached = await baton(["watch", "--once", "--detach"])
    expect(onceDetached.code).toBe(2)
    expect(onceDetached.stderr).toContain("--once and --detach")
    const badModel = await baton(["create", "--objective", "x", "--model", "-x y"])
    expect(badModel.code).toBe(2)
    expect(badModel.stderr).toContain("--model")
    const badId = await baton(["status", "../../etc"])
    expect(badId.code).toBe(2)
    expect(badId.stderr).toContain('job id "../../etc" is not valid')
  }, 60_000)

  it("parallel creates for one thread (separate processes) make one job", async () => {
    const thread = "019a0000-0000-7000-8000-0000000000bb"
    const runs = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        baton(["create", "--objective", `race ${i}`, "--thread", thread, "--json"]),
      ),
    )
    const answers = runs.map((r) => json(r.stdout))
    expect(new Set(answers.map((a) => a["jobId"])).size).toBe(1)
    expect(answers.filter((a) => a["alreadyExists"] === false)).toHaveLength(1)
    await baton(["stop", String(answers[0]?.["jobId"])])
  }, 60_000)

  it("create refuses a --cwd that is a file, an unknown --effort and a bad --thread", async () => {
    const file = join(root, "work", "afile")
    await writeFile(file, "x")
    const cwdFile = await baton(["create", "--objective", "x", "--cwd", file, "--json"])
    expect(cwdFile.code).toBe(2)
    expect(json(cwdFile.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "InvalidJobSetting", field: "cwd" },
    })
    const effort = await baton(["create", "--objective", "x", "--effort", "minimal"])
    expect(effort.code).toBe(2)
    expect(effort.stderr).toContain("low, medium, high, xhigh, max, ultra")
    const thread = await baton(["create", "--objective", "x", "--thread", "bad id", "--json"])
    // A value the argument cannot take: bad usage, as the README's exit-code table says.
    expect(thread.code).toBe(2)
    expect(json(thread.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "InvalidJobSetting", field: "thread id" },
    })
  }, 60_000)

  // A relative directory was resolved against each process's working directory: the watcher, the
  // MCP server and a terminal each kept jobs of their own.
  it("a relative BATON_WAKE_DIR or BATON_JOBS_DIR is refused, naming it, and nothing is created", async () => {
    const cwd = join(root, "relative-cwd")
    await mkdir(cwd)
    const wakeRun = await runBaton(["wake", "create", "--objective", "x", "--json"], {
      env: { ...env, BATON_WAKE_DIR: "rel/wake" },
      cwd,
    })
    expect(wakeRun.code).toBe(1)
    expect(json(wakeRun.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "WakeIo", code: "ERELATIVE", path: "rel/wake" },
    })
    const compactRun = await runBaton(
      ["compact", "status", "019a0000-0000-7000-8000-0000000000cc"],
      { env: { ...env, BATON_JOBS_DIR: "rel/jobs" }, cwd },
    )
    expect(compactRun.code).toBe(1)
    expect(compactRun.stderr).toContain("BATON_JOBS_DIR is a relative path: give an absolute path")
    expect(await readdir(cwd)).toEqual([])
  }, 60_000)

  // It used to end in "unexpected error … please report this bug" (the directory's failure was
  // ignored, then opening the log inside it threw).
  it("watch --detach names a file standing where the wake directory must be", async () => {
    const blocker = join(root, "work", "wake-is-a-file")
    await writeFile(blocker, "x")
    const detached = await baton(["watch", "--detach", "--json"], undefined, {
      BATON_WAKE_DIR: blocker,
    })
    expect(detached.code).toBe(1)
    expect(json(detached.stdout)).toMatchObject({
      ok: false,
      error: { _tag: "WakeIo", code: "ENOTDIR", path: blocker },
    })
    const text = await baton(["watch", "--detach"], undefined, { BATON_WAKE_DIR: blocker })
    expect(text.code).toBe(1)
    expect(text.stderr).toContain(`${blocker} is not a directory`)
    expect(text.stderr).not.toContain("report this bug")
  }, 60_000)

  // The app-server was started in the Codex home; while that did not exist the spawn failed with
  // "spawn …/codex ENOENT", which read as a missing binary.
  it("doctor reads the quota with a real codex before its home exists", async () => {
    // No CODEX_HOME: the default ~/.codex, which a new machine does not have yet.
    const home = join(root, "fresh-home")
    await mkdir(home)
    const doctor = await runBaton(["wake", "doctor", "--json"], {
      env: {
        PATH: env["PATH"] ?? "",
        HOME: home,
        BATON_WAKE_DIR: join(root, "wake"),
        BATON_CODEX_BINARY: resolveCodexBinary().native ?? resolveCodexBinary().script,
      },
      cwd: join(root, "work"),
    })
    const checks = json(doctor.stdout)["checks"] as Array<{ name: string; detail: string }>
    const quota = checks.find((c) => c.name === "quota read")
    expect(quota?.detail).toContain("not signed in")
    expect(quota?.detail).not.toContain("ENOENT")
  }, 60_000)

  it("capsule says fresh or stale; secrets are masked in the capsule; a pause reason prints inert; completed jobs refuse a checkpoint", async () => {
    const created = await baton(["create", "--objective", "x", "--json"])
    const jobId = json(created.stdout)["jobId"] as string
    const secret = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
    const withSecret = CHECKPOINT.replace("new grammar.", `new grammar with token ${secret}.`)
    const written = await baton(["checkpoint", jobId, "--file", "-"], withSecret)
    expect(written.stdout).toContain("1 likely secret(s) masked")
    const dir = join(root, "wake", "jobs", jobId)
    expect(await readFile(join(dir, "checkpoint.md"), "utf8")).toContain(secret)
    expect(await readFile(join(dir, "memory-capsule.md"), "utf8")).not.toContain(secret)
    const fresh = await baton(["capsule", jobId])
    expect(fresh.stdout).not.toContain(secret)
    expect(fresh.stderr).toContain("capsule: fresh")
    await writeFile(join(dir, "checkpoint.md"), `${CHECKPOINT}\n## Blockers\nnone\n`)
    expect((await baton(["capsule", jobId])).stderr).toContain("capsule: stale")
    await baton(["refresh", jobId])
    expect((await baton(["arm", jobId])).code).toBe(0)
    await baton(["pause", jobId, "--reason", "line one\nline two \u001b[31mred"])
    const status = await baton(["status", jobId])
    expect(status.stdout).toContain("line one\\nline two \\x1b[31mred")
    expect(status.stdout).not.toContain("\u001b")
    await baton(["complete", jobId])
    const late = await baton(["checkpoint", jobId, "--file", "-", "--json"], CHECKPOINT)
    expect(late.code).toBe(1)
    expect(json(late.stdout)).toMatchObject({ ok: false, error: { _tag: "JobRefused" } })
  }, 60_000)

  it("a killed watcher's lock (lease still current) reads as not running at once: status, doctor, arm, watch --detach", async () => {
    const dir = join(root, "dead-watcher")
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const dead = spawnSync(process.execPath, ["-e", ""]).pid
    const now = Date.now()
    await writeFile(
      join(dir, "watcher.lock"),
      JSON.stringify({
        schemaVersion: 1,
        pid: dead,
        startTicks: null,
        host: hostname(),
        token: `${hostname()}:${dead}:${now}:1`,
        acquiredAt: now,
        leaseExpiresAt: now + 30_000,
      }),
    )
    const extra = { BATON_WAKE_DIR: dir }
    const status = await baton(["status", "--json"], undefined, extra)
    expect(json(status.stdout)).toMatchObject({ watcher: { running: false } })
    const created = await baton(["create", "--objective", "x", "--json"], undefined, extra)
    const jobId = json(created.stdout)["jobId"] as string
    await baton(["checkpoint", jobId, "--file", "-"], CHECKPOINT, extra)
    const armed = await baton(["arm", jobId, "--json"], undefined, extra)
    expect(json(armed.stdout)).toMatchObject({ watcherRunning: false })
    const one = await baton(["status", jobId, "--json"], undefined, extra)
    expect(json(one.stdout)).toMatchObject({ status: { watcher: { running: false } } })
    const doctor = await baton(["doctor", "--json"], undefined, extra)
    expect(doctor.stdout).toContain("not running (unsupervised)")
    const detached = await baton(["watch", "--detach", "--json"], undefined, extra)
    const started = json(detached.stdout)
    try {
      expect(started).toMatchObject({ ok: true, started: true })
    } finally {
      if (typeof started["watcherPid"] === "number") process.kill(started["watcherPid"], "SIGTERM")
    }
  }, 60_000)

  it("watch --stop stops the detached watcher and waits for its lock; with none running it says so", async () => {
    const extra = { BATON_WAKE_DIR: join(root, "stop-watcher") }
    const none = await baton(["watch", "--stop", "--json"], undefined, extra)
    expect(none.code).toBe(0)
    expect(json(none.stdout)).toMatchObject({ ok: true, stopped: false, watcherPid: null })
    const started = json((await baton(["watch", "--detach", "--json"], undefined, extra)).stdout)
    expect(started).toMatchObject({ ok: true, started: true })
    const pid = started["watcherPid"] as number
    try {
      const stop = await baton(["watch", "--stop"], undefined, extra)
      expect(stop).toMatchObject({ code: 0, stdout: `wake watcher stopped (pid ${pid})\n` })
      // Stopped means the lock no longer reads as held, and the process is ending (gone, a zombie
      // nobody reaps here, or exiting right after its release).
      let state = "R"
      for (let i = 0; i < 50 && state !== "gone" && state !== "Z"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        state = ((await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")) || "gone").replace(
          /^.*\) (\S).*$/s,
          "$1",
        )
      }
      expect(["gone", "Z"]).toContain(state)
      const status = await baton(["status", "--json"], undefined, extra)
      expect(json(status.stdout)).toMatchObject({ watcher: { running: false } })
    } finally {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
    const mixed = await baton(["watch", "--stop", "--detach"], undefined, extra)
    expect(mixed.code).toBe(2)
    expect(mixed.stderr).toContain("--stop does not combine with --detach")
  }, 60_000)

  it("watch --detach fails, with the watcher's own error, when the watcher exits at once", async () => {
    const dir = join(root, "no-codex-wake")
    // No codex anywhere: the watcher exits with CodexBinaryNotFoundError as it starts.
    const missing = { BATON_WAKE_DIR: dir, BATON_CODEX_BINARY: join(root, "no-codex") }
    const run = await baton(["watch", "--detach", "--json"], undefined, missing)
    expect(run.code).toBe(1)
    const out = json(run.stdout)
    expect(out["ok"]).toBe(false)
    expect(out["error"]).toMatchObject({
      _tag: "WatcherExited",
      exitCode: 1,
      log: join(dir, "watcher.log"),
      message: expect.stringMatching(
        /^the wake watcher exited at once \(code 1\): .*CodexBinary.*; see .*watcher\.log, fix the cause/,
      ) as unknown,
    })
    const status = await baton(["status", "--json"], undefined, missing)
    expect(JSON.stringify(json(status.stdout))).not.toMatch(/"running":true/)
  }, 60_000)

  it("doctor fails on a wake directory it cannot write", async (ctx) => {
    const dir = join(root, "read-only-wake")
    await mkdir(dir, { recursive: true, mode: 0o700 })
    // Root ignores mode bits: make the directory immutable instead (reported skipped where neither
    // works, never passed unchecked).
    const root_ = process.getuid?.() === 0
    const locked = root_
      ? spawnSync("chattr", ["+i", dir]).status === 0
      : (spawnSync("chmod", ["500", dir]).status ?? 1) === 0
    if (!locked) ctx.skip()
    try {
      const doctor = await baton(["doctor", "--json"], undefined, { BATON_WAKE_DIR: dir })
      expect(doctor.code).toBe(1)
      const checks = json(doctor.stdout)["checks"] as Array<{ name: string; status: string }>
      expect(checks).toContainEqual(
        expect.objectContaining({ name: "wake directory writable", status: "fail" }),
      )
    } finally {
      if (root_) spawnSync("chattr", ["-i", dir])
      else spawnSync("chmod", ["700", dir])
    }
  }, 60_000)

  // `kill -9` of `wake checkpoint` left `lock.<hex>.creating` and `lock.stale-<ms>-<n>` in the
  // job directory (and the thread's create lock beside it in locks/) that nothing removed.
  it("a later change clears the lock debris of killed commands, and keeps a fresh aside", async () => {
    const dir = join(root, "debris-wake")
    const thread = "019a0000-0000-7000-8000-0000000000dd"
    const extra = { BATON_WAKE_DIR: dir }
    const created = await baton(
      ["create", "--objective", "x", "--thread", thread, "--json"],
      undefined,
      extra,
    )
    const jobId = json(created.stdout)["jobId"] as string
    const jobDir = join(dir, "jobs", jobId)
    const long = Date.now() - 2 * 60 * 60_000
    const dead = [
      "lock.2000001-0123456789ab.creating",
      "lock.8e0205b8721f.creating",
      `lock.stale-${long}-1`,
    ]
    const fresh = `lock.stale-${Date.now()}-2`
    for (const name of [...dead, fresh]) await writeFile(join(jobDir, name), "{}")
    await utimes(join(jobDir, "lock.8e0205b8721f.creating"), long / 1000, long / 1000)
    const threadLocks = join(dir, "locks")
    const threadLock = `thread-${createHash("sha256").update(thread).digest("hex")}.lock`
    await writeFile(join(threadLocks, `${threadLock}.2000001-0123456789ab.creating`), "{}")

    const written = await baton(["checkpoint", jobId, "--file", "-", "--json"], CHECKPOINT, extra)
    expect(written.code).toBe(0)
    // The fresh aside may still be in a taker's hands: kept.
    expect((await readdir(jobDir)).filter((n) => n.startsWith("lock"))).toEqual([fresh])
    const again = await baton(
      ["create", "--objective", "x", "--thread", thread, "--json"],
      undefined,
      extra,
    )
    expect(json(again.stdout)).toMatchObject({ jobId, alreadyExists: true })
    expect(await readdir(threadLocks)).toEqual([])
  }, 60_000)

  // A 100 %-full wake disk: every change failed with ENOSPC on the job lock, and doctor said ok.
  it("doctor fails on a full wake disk; a change says how to make room", async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip("mounting a small tmpfs needs root")
    const dir = await mkdtemp(join(tmpdir(), "baton-full-wake-"))
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir])
    if (mounted.status !== 0) {
      await rm(dir, { recursive: true, force: true })
      return ctx.skip(`mount failed: ${mounted.stderr.toString().split("\n")[0]}`)
    }
    try {
      const extra = { BATON_WAKE_DIR: join(dir, "wake") }
      const created = await baton(
        [
          "create",
          "--objective",
          "x",
          "--thread",
          "019a0000-0000-7000-8000-0000000000ee",
          "--json",
        ],
        undefined,
        extra,
      )
      const jobId = json(created.stdout)["jobId"] as string
      // Fill it to the last byte (a short write when the disk is full).
      spawnSync("sh", ["-c", `head -c 2000000 /dev/zero > ${join(dir, "filler")}`])
      const doctor = await baton(["doctor", "--json"], undefined, extra)
      expect(doctor.code).toBe(1)
      const checks = json(doctor.stdout)["checks"] as Array<{ name: string; status: string }>
      expect(checks).toContainEqual({
        name: "wake directory writable",
        status: "fail",
        detail: expect.stringMatching(
          /\(ENOSPC: the disk holding it is full\).*free some space on it, or set BATON_WAKE_DIR/,
        ) as unknown,
      })
      expect(await readdir(join(dir, "wake"))).not.toContainEqual(
        expect.stringContaining("doctor-write-probe"),
      )
      const paused = await baton(["pause", jobId], undefined, extra)
      expect(paused.code).toBe(1)
      expect(paused.stderr).toMatch(
        /\(ENOSPC\).*: the disk holding it is full: free some space on it, or set BATON_WAKE_DIR to a directory on another disk/,
      )
    } finally {
      spawnSync("umount", [dir])
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("watch --once with no jobs: takes the lock, reads nothing, releases it", async () => {
    const dir = join(root, "idle-wake")
    const run = await baton(["watch", "--once", "--json"], undefined, { BATON_WAKE_DIR: dir })
    expect(run.code).toBe(0)
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string })
    expect(events.map((e) => e.kind)).toEqual(["started", "stopped"])
    await expect(stat(join(dir, "watcher.lock"))).rejects.toThrow()
  })
})

import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { STALE_LOCK_KEEP_MS } from "@baton/durable-files"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { afterEach, describe, expect, test } from "vitest"
import type { ProcessProbeShape } from "./job-lock.js"
import {
  acquireJobLock,
  heartbeatJobLock,
  nodeProcessProbe,
  parseBootTimeSeconds,
  parseProcStatStartTicks,
  parseProcStatState,
  ProcessProbe,
  releaseJobLock,
} from "./job-lock.js"
import type { JournalFileSystem } from "./journal-file-system.js"
import { nodeJournalFileSystemLayer } from "./journal-file-system.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})
const tempDir = async () => {
  const d = await mkdtemp(path.join(tmpdir(), "baton-lock-"))
  dirs.push(d)
  return path.join(d, "jobs")
}

/** A probe for a world of processes: pid → start time (absent = dead). */
const world = (self: number, processes: Map<number, number>): ProcessProbeShape => ({
  selfPid: self,
  isAlive: (pid) => Effect.succeed(processes.has(pid)),
  startTimeMs: (pid) => Effect.succeed(processes.get(pid) ?? null),
})

const as = <A, E, R>(probe: ProcessProbeShape, program: Effect.Effect<A, E, R>) =>
  program.pipe(Effect.provide(Layer.succeed(ProcessProbe, probe)))

const opts = (dir: string, jobId: string) => ({ dir, threadId: "thread-1", jobId, leaseMs: 30_000 })

const runLocks = <A, E>(
  program: Effect.Effect<A, E, ProcessProbe | JournalFileSystem>,
  probe: ProcessProbeShape,
) =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(Layer.succeed(ProcessProbe, probe)),
      Effect.provide(nodeJournalFileSystemLayer),
      Effect.provide(TestClock.layer()),
    ),
  )

describe("job lock (real files, injected clock and processes)", () => {
  test("a live holder is respected; its lock file is private", async () => {
    const dir = await tempDir()
    const procs = new Map([
      [100, 5_000],
      [200, 6_000],
    ])
    const error = await runLocks(
      Effect.gen(function* () {
        yield* acquireJobLock(opts(dir, "job-1"))
        yield* TestClock.adjust("10 seconds")
        return yield* Effect.flip(as(world(200, procs), acquireJobLock(opts(dir, "job-2"))))
      }),
      world(100, procs),
    )
    expect(error).toMatchObject({ _tag: "JobLockHeld", holderPid: 100, holderJobId: "job-1" })
    expect((await stat(path.join(dir, "thread-1", "lock.json"))).mode & 0o777).toBe(0o600)
  })

  test.each([
    ["pid_gone", new Map([[200, 6_000]]), 0],
    [
      "pid_reused",
      new Map([
        [100, 9_999],
        [200, 6_000],
      ]),
      0,
    ],
    [
      "lease_expired",
      new Map([
        [100, 5_000],
        [200, 6_000],
      ]),
      31_000,
    ],
  ] as const)(
    "a stale lock (%s) is recovered and logged in the stale job's event log",
    async (reason, after, wait) => {
      const dir = await tempDir()
      const before = new Map([
        [100, 5_000],
        [200, 6_000],
      ])
      const result = await runLocks(
        Effect.gen(function* () {
          yield* acquireJobLock(opts(dir, "job-1"))
          yield* TestClock.adjust(wait)
          return yield* as(world(200, after), acquireJobLock(opts(dir, "job-2")))
        }),
        world(100, before),
      )
      expect(result.lock).toMatchObject({ pid: 200, jobId: "job-2", processStartMs: 6_000 })
      expect(result.recovered).toMatchObject({ reason, previous: { pid: 100, jobId: "job-1" } })
      const log = await readFile(path.join(dir, "thread-1", "job-1.events.jsonl"), "utf8")
      expect(log).toContain(`(${reason})`)
      expect(await readdir(path.join(dir, "thread-1"))).toContain(
        path.basename(result.recovered!.movedTo),
      )
    },
  )

  // A killed creator's `lock.json.<hex>.creating` and every recovery's `lock.json.stale-*` stayed
  // in the thread directory for good.
  test("a later holder removes a killed creator's temporary file, and recovered locks past their keep time", async () => {
    const dir = await tempDir()
    const threadDir = path.join(dir, "thread-1")
    await mkdir(threadDir, { recursive: true })
    const orphan = "lock.json.2000001-0123456789ab.creating"
    await writeFile(path.join(threadDir, orphan), "{")
    const debris = () =>
      readdir(threadDir).then((names) => names.filter((n) => n.startsWith("lock.json.")))
    const seen = await runLocks(
      Effect.gen(function* () {
        yield* acquireJobLock(opts(dir, "job-1"))
        const first = yield* Effect.promise(debris)
        // pid 100 is killed; 200 recovers its lock, then releases its own.
        const dead = new Map([[200, 6_000]])
        const { lock, recovered } = yield* as(world(200, dead), acquireJobLock(opts(dir, "job-2")))
        yield* releaseJobLock(dir, lock)
        const kept = yield* Effect.promise(debris)
        yield* TestClock.adjust(STALE_LOCK_KEEP_MS + 1)
        yield* as(world(300, new Map([[300, 7_000]])), acquireJobLock(opts(dir, "job-3")))
        return { first, recovered, kept, last: yield* Effect.promise(debris) }
      }),
      world(100, new Map([[100, 5_000]])),
    )
    expect(seen.first).toEqual([])
    // Kept for a while: the event log names it.
    expect(seen.kept).toContain(path.basename(seen.recovered!.movedTo))
    expect(seen.last).toEqual(["lock.json.released"])
  })

  test("heartbeat renews the lease; a worker whose lock was recovered learns it lost the lock", async () => {
    const dir = await tempDir()
    const procs = new Map([
      [100, 5_000],
      [200, 6_000],
    ])
    const outcome = await runLocks(
      Effect.gen(function* () {
        const { lock } = yield* acquireJobLock(opts(dir, "job-1"))
        yield* TestClock.adjust("20 seconds")
        const renewed = yield* heartbeatJobLock(dir, lock, 30_000)
        yield* TestClock.adjust("20 seconds") // 40 s after acquire, 20 s after the heartbeat
        const held = yield* Effect.flip(as(world(200, procs), acquireJobLock(opts(dir, "job-2"))))
        yield* TestClock.adjust("11 seconds")
        const taken = yield* as(world(200, procs), acquireJobLock(opts(dir, "job-2")))
        const lost = yield* Effect.flip(heartbeatJobLock(dir, renewed, 30_000))
        yield* releaseJobLock(dir, taken.lock)
        return { renewed, held, lost, takenReason: taken.recovered?.reason }
      }),
      world(100, procs),
    )
    expect(outcome.renewed.leaseExpiresAt).toBe(50_000)
    expect(outcome.held._tag).toBe("JobLockHeld")
    expect(outcome.takenReason).toBe("lease_expired")
    expect(outcome.lost._tag).toBe("JobLockLost")
    expect(await readdir(path.join(dir, "thread-1"))).not.toContain("lock.json")
  })

  test("/proc parsing: field 22 after a comm with spaces and parens; btime", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3))
    fields[19] = "123456"
    expect(parseProcStatStartTicks(`42 (my (odd) name) ${fields.join(" ")}`)).toBe(123_456)
    expect(parseBootTimeSeconds("cpu 1 2\nbtime 1700000000\nprocesses 9\n")).toBe(1_700_000_000)
  })
})

const distIndex = fileURLToPath(new URL("../dist/index.js", import.meta.url))

describe("the real process probe", () => {
  test("/proc parsing: the state letter after a comm with spaces and parens", () => {
    expect(parseProcStatState("42 (my (odd) name) Z 1 42 42 0")).toBe("Z")
    expect(parseProcStatState("7 (sleep) S 1 7")).toBe("S")
    expect(parseProcStatState("garbage")).toBeNull()
  })

  test.skipIf(process.platform !== "linux")(
    "a zombie (exited, not reaped by its parent) is not alive; its parent is",
    async () => {
      // `sleep 0.05` is the child of the `sleep 5` the shell becomes, which never reaps it.
      const parent = spawn("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 5"], {
        stdio: ["ignore", "pipe", "ignore"],
      })
      try {
        const zombie = Number(
          await new Promise<string>((resolve) =>
            parent.stdout.once("data", (d: Buffer) => resolve(d.toString())),
          ),
        )
        let state: string | null = null
        for (let i = 0; i < 100 && state !== "Z"; i++) {
          await new Promise((r) => setTimeout(r, 20))
          state = parseProcStatState(await readFile(`/proc/${zombie}/stat`, "utf8"))
        }
        expect(state).toBe("Z")
        expect(Effect.runSync(nodeProcessProbe.isAlive(zombie))).toBe(false)
        expect(Effect.runSync(nodeProcessProbe.isAlive(parent.pid!))).toBe(true)
      } finally {
        parent.kill("SIGKILL")
      }
    },
  )
})

describe("job lock across real processes", () => {
  test.skipIf(process.platform !== "linux")(
    "a child takes the lock, is killed -9, and the lock is recovered as pid_gone",
    async () => {
      const dir = await tempDir()
      const script = `
        import { Effect, Layer } from "effect"
        import * as c from ${JSON.stringify(distIndex)}
        const program = c.acquireJobLock({ dir: ${JSON.stringify(dir)}, threadId: "thread-1", jobId: "child-job", leaseMs: 600000 })
        await Effect.runPromise(program.pipe(Effect.provide(Layer.mergeAll(c.nodeJournalFileSystemLayer, c.nodeProcessProbeLayer))))
        process.stdout.write("locked\\n")
        setInterval(() => {}, 1000)
      `
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        cwd: path.dirname(distIndex),
        stdio: ["ignore", "pipe", "pipe"],
      })
      let stderr = ""
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => d.toString().includes("locked") && resolve())
        child.on("exit", () => reject(new Error(`child exited early: ${stderr}`)))
      })
      const held = JSON.parse(await readFile(path.join(dir, "thread-1", "lock.json"), "utf8"))
      expect(held.pid).toBe(child.pid)
      expect(held.processStartMs).toEqual(expect.any(Number))
      const live = await Effect.runPromise(
        Effect.flip(acquireJobLock(opts(dir, "job-2"))).pipe(
          Effect.provide(
            Layer.mergeAll(
              nodeJournalFileSystemLayer,
              Layer.succeed(ProcessProbe, nodeProcessProbe),
            ),
          ),
        ),
      )
      expect(live._tag).toBe("JobLockHeld")
      const exited = new Promise((r) => child.on("exit", r))
      child.kill("SIGKILL")
      await exited
      const result = await Effect.runPromise(
        acquireJobLock(opts(dir, "job-2")).pipe(
          Effect.provide(
            Layer.mergeAll(
              nodeJournalFileSystemLayer,
              Layer.succeed(ProcessProbe, nodeProcessProbe),
            ),
          ),
        ),
      )
      expect(result.recovered).toMatchObject({
        reason: "pid_gone",
        previous: { pid: child.pid, jobId: "child-job" },
      })
      expect(result.lock.pid).toBe(process.pid)
      expect(
        await readFile(path.join(dir, "thread-1", "child-job.events.jsonl"), "utf8"),
      ).toContain("pid_gone")
    },
  )
})

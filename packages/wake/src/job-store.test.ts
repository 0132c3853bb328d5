import { readFileSync, writeFileSync } from "node:fs"
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { afterEach, describe, expect, test } from "vitest"
import { CAPSULE_MARKER } from "./capsule.js"
import type { WakeStoreError } from "./errors.js"
import { newJobId, wakeDirectory } from "./job-paths.js"
import { defaultJobBounds } from "./job-record.js"
import { JobStore, jobStoreLayer } from "./job-store.js"
import { memoryWakeFileSystemLayer, nodeWakeFileSystemLayer } from "./wake-file-system.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})
const tempDir = async () => {
  const d = await mkdtemp(path.join(tmpdir(), "baton-wake-"))
  dirs.push(d)
  return d
}

const run = <A>(dir: string, program: Effect.Effect<A, WakeStoreError, JobStore>, memory = false) =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(
        jobStoreLayer(dir, 4242).pipe(
          Layer.provide(memory ? memoryWakeFileSystemLayer() : nodeWakeFileSystemLayer),
        ),
      ),
      Effect.provide(TestClock.layer()),
    ),
  )
const failure = <A>(dir: string, program: Effect.Effect<A, WakeStoreError, JobStore>) =>
  run(dir, Effect.flip(program) as Effect.Effect<WakeStoreError, never, JobStore>)

const JOB = newJobId(Date.UTC(2025, 0, 31, 12, 0, 0), "0123ABCD")
const create = Effect.gen(function* () {
  const store = yield* JobStore
  return yield* store.create({
    jobId: JOB,
    originalThreadId: "thread-1",
    cwd: "/work",
    model: null,
    reasoningEffort: null,
    limitId: null,
    bounds: defaultJobBounds,
    objective: "Port the parser",
  })
})

describe("job store", () => {
  test("paths and ids", () => {
    expect(JOB).toBe("wake-20250131-120000-0123abcd")
    expect(wakeDirectory({ BATON_WAKE_DIR: "/x" })).toBe("/x")
    expect(wakeDirectory({ CODEX_HOME: "/c" })).toBe("/c/baton/wake")
    expect(wakeDirectory({ HOME: "/h" })).toBe("/h/.codex/baton/wake")
  })

  for (const memory of [false, true])
    test(`create → arm → seal, private modes, CAS (${memory ? "memory" : "node"})`, async () => {
      const dir = await tempDir()
      const result = await run(
        dir,
        Effect.gen(function* () {
          const store = yield* JobStore
          const created = yield* create
          const again = yield* Effect.orDie(Effect.flip(create))
          const p = store.paths(JOB)
          const template = (yield* store.readCheckpoint(JOB)) ?? ""
          yield* store.writeCheckpoint(JOB, template.replaceAll("REPLACE_ME", "run the tests"))
          const projection = yield* store.refreshCapsule(JOB)
          const armed = yield* store.applyEvent(JOB, {
            _tag: "Armed",
            at: 1,
            capsuleReady: projection.stored.job.memory.ready,
          })
          const first = yield* store.seal(JOB)
          const second = yield* store.seal(JOB)
          const status = yield* store.memoryStatus(JOB)
          return {
            created,
            again,
            p,
            projection,
            armed,
            first,
            second,
            status,
            ids: yield* store.list(),
          }
        }),
        memory,
      )
      expect(result.created.revision).toBe(1)
      expect(result.created.job.state).toBe("draft")
      expect(result.created.job.memory.ready).toBe(false)
      expect(result.again._tag).toBe("JobExists")
      expect(result.projection.capsule.text.startsWith(CAPSULE_MARKER)).toBe(true)
      expect(result.projection.stored.job.memory.ready).toBe(true)
      expect(result.armed.stored.job.state).toBe("monitoring")
      expect(result.first.sealed).toBe(true)
      expect(result.second.sealed).toBe(false)
      expect(result.second.stored.job.seal?.checkpointSha256).toBe(
        result.projection.stored.job.memory.checkpointSha256,
      )
      expect(result.status.freshness).toEqual({
        checkpointNewerThanCapsule: false,
        capsuleModified: false,
      })
      expect(result.ids).toEqual([JOB])
      if (!memory) {
        expect((await stat(result.p.dir)).mode & 0o777).toBe(0o700)
        for (const f of [
          result.p.state,
          result.p.checkpoint,
          result.p.capsule,
          result.p.sealed(result.projection.stored.job.memory.checkpointSha256 ?? ""),
        ])
          expect((await stat(f)).mode & 0o777).toBe(0o600)
        expect(JSON.parse(await readFile(result.p.state, "utf8")).revision).toBe(
          result.second.stored.revision,
        )
      }
    })

  test("a stale checkpoint shows in status; a torn state.json is a named error and is kept", async () => {
    const dir = await tempDir()
    const { p } = await run(
      dir,
      Effect.map(create, () => ({ p: jobStorePaths(dir) })),
    )
    await writeFile(p.checkpoint, "## Objective\nchanged\n")
    const status = await run(
      dir,
      Effect.flatMap(JobStore, (s) => s.memoryStatus(JOB)),
    )
    expect(status.freshness.checkpointNewerThanCapsule).toBe(true)
    await writeFile(p.state, '{"schemaVersion": 1, "revis')
    const error = await failure(
      dir,
      Effect.flatMap(JobStore, (s) => s.read(JOB)),
    )
    expect(error._tag).toBe("WakeFileCorrupt")
    expect(error.message).toContain(p.state)
    expect(await readFile(p.state, "utf8")).toBe('{"schemaVersion": 1, "revis')
  })

  test("the store never writes a record a read would reject (create and modify)", async () => {
    const dir = await tempDir()
    const createWith = (bounds: typeof defaultJobBounds) =>
      Effect.flatMap(JobStore, (s) =>
        s.create({
          jobId: JOB,
          originalThreadId: null,
          cwd: "/work",
          model: null,
          reasoningEffort: null,
          limitId: null,
          bounds,
          objective: "Port the parser",
        }),
      )
    const refused = await failure(dir, createWith({ ...defaultJobBounds, maxGenerations: NaN }))
    expect(refused._tag).toBe("JobRecordInvalid")
    expect(refused.message).toContain("state.json")
    expect(refused.message).toContain("maxGenerations")
    // The failed create left nothing: no job directory without state.json.
    expect(await readdir(path.join(dir, "jobs"))).toEqual([])
    const p = jobStorePaths(dir)
    const created = await run(dir, createWith(defaultJobBounds))
    const before = await readFile(p.state, "utf8")
    for (const change of [
      { bounds: { ...defaultJobBounds, maxRetriesPerWindow: 2.5 } },
      { bounds: { ...defaultJobBounds, maxWallClockMs: -1 } },
      { delivery: "bogus" },
    ]) {
      const error = await failure(
        dir,
        Effect.flatMap(JobStore, (s) =>
          s.modify(JOB, (job) => ({ ...job, ...change }) as typeof job),
        ),
      )
      expect(error._tag).toBe("JobRecordInvalid")
    }
    // state.json is unchanged and still reads.
    expect(await readFile(p.state, "utf8")).toBe(before)
    const read = await run(
      dir,
      Effect.flatMap(JobStore, (s) => s.read(JOB)),
    )
    expect(read.revision).toBe(created.revision)
  })

  test("with holderProbe, a current lease of a process that is gone is taken over at once", async () => {
    const dir = await tempDir()
    const p = jobStorePaths(dir)
    await run(dir, create)
    const lease = (pid: number) =>
      writeFile(
        p.lock,
        JSON.stringify({
          schemaVersion: 1,
          pid,
          token: "t",
          acquiredAt: 0,
          leaseExpiresAt: 10 ** 15,
        }),
      )
    const withLiveness = <A>(program: Effect.Effect<A, WakeStoreError, JobStore>) =>
      Effect.runPromise(
        Effect.result(program).pipe(
          Effect.provide(
            jobStoreLayer(dir, 4242, {
              holderProbe: (pid) => Effect.succeed(pid !== 999_999),
            }).pipe(Layer.provide(nodeWakeFileSystemLayer)),
          ),
          Effect.provide(TestClock.layer()),
        ),
      )
    const refresh = Effect.flatMap(JobStore, (s) => s.refreshCapsule(JOB))
    // A live holder (pid 1 here) is respected, with liveness or without.
    await lease(1)
    const held = await withLiveness(refresh)
    expect(held._tag === "Failure" && held.failure._tag).toBe("JobLockHeld")
    // A killed holder's lease: without liveness it blocks until it ends; with it, taken over.
    await lease(999_999)
    expect((await failure(dir, refresh))._tag).toBe("JobLockHeld")
    const taken = await withLiveness(refresh)
    expect(taken._tag).toBe("Success")
    // Taken over and removed: nothing of the killed holder's lock is left.
    const files = await readdir(path.dirname(p.lock))
    expect(files.filter((f) => f.startsWith("lock"))).toEqual([])
  })

  test("a held lock is refused, an expired one taken over; a write racing modify is a conflict", async () => {
    const dir = await tempDir()
    const p = jobStorePaths(dir)
    await run(dir, create)
    await writeFile(
      p.lock,
      JSON.stringify({
        schemaVersion: 1,
        pid: 1,
        token: "t",
        acquiredAt: 0,
        leaseExpiresAt: 10 ** 15,
      }),
    )
    const held = await failure(
      dir,
      Effect.flatMap(JobStore, (s) => s.refreshCapsule(JOB)),
    )
    expect(held._tag).toBe("JobLockHeld")
    await writeFile(
      p.lock,
      JSON.stringify({ schemaVersion: 1, pid: 1, token: "t", acquiredAt: 0, leaseExpiresAt: 0 }),
    )
    const refreshed = await run(
      dir,
      Effect.flatMap(JobStore, (s) => s.refreshCapsule(JOB)),
    )
    expect(refreshed.stored.revision).toBe(2)
    const files = await readdir(path.dirname(p.lock))
    expect(files.filter((f) => f.startsWith("lock"))).toEqual([])
    // Another writer (not using the lock) bumps the revision between read and write.
    const conflict = await failure(
      dir,
      Effect.flatMap(JobStore, (s) =>
        s.modify(JOB, (job) => {
          const onDisk = JSON.parse(readFileSync(p.state, "utf8"))
          writeFileSync(p.state, JSON.stringify({ ...onDisk, revision: onDisk.revision + 1 }))
          return { ...job, lastError: "mine" }
        }),
      ),
    )
    expect(conflict).toMatchObject({ _tag: "JobConflict", expectedRevision: 2, foundRevision: 3 })
    const invalid = await failure(
      dir,
      Effect.flatMap(JobStore, (s) => s.read("bad/../id")),
    )
    expect(invalid._tag).toBe("InvalidJobId")
  })
})

const jobStorePaths = (dir: string) => {
  const jobDir = path.join(dir, "jobs", JOB)
  return {
    checkpoint: path.join(jobDir, "checkpoint.md"),
    state: path.join(jobDir, "state.json"),
    lock: path.join(jobDir, "lock"),
  }
}

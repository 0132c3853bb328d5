import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { bindHandoff } from "@baton/handoff"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { afterEach, describe, expect, test } from "vitest"
import type { JournalError } from "./errors.js"
import { memoryJournalFileSystemLayer, nodeJournalFileSystemLayer } from "./journal-file-system.js"
import { Journal, jobsDirectory, journalLayer } from "./journal.js"
import { transition } from "./job-machine.js"
import type { JobRecord } from "./job-record.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})
const tempDir = async () => {
  const d = await mkdtemp(path.join(tmpdir(), "baton-journal-"))
  dirs.push(d)
  return path.join(d, "jobs")
}

const run = <A>(dir: string, program: Effect.Effect<A, JournalError, Journal>, memory = false) =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(
        journalLayer(dir).pipe(
          Layer.provide(memory ? memoryJournalFileSystemLayer() : nodeJournalFileSystemLayer),
        ),
      ),
      Effect.provide(TestClock.layer()),
    ),
  )

const failure = <A>(dir: string, program: Effect.Effect<A, JournalError, Journal>) =>
  run(dir, Effect.flip(program) as Effect.Effect<JournalError, never, Journal>)

const SUMMARY = "Parser ported; the secret-free summary text"

const bound = (jobId: string) =>
  bindHandoff({
    threadId: "thread-1",
    jobId,
    handoff: {
      summary: SUMMARY,
      preserve: [],
      discard: [],
      nextStep: "Run e2e, stop",
      resume: true,
    },
    createdAt: "2025-01-31T12:00:00.000Z",
  })

const scheduleJob = (jobId: string, withHandoff = true) =>
  Effect.gen(function* () {
    const journal = yield* Journal
    const handoff = withHandoff ? yield* Effect.orDie(bound(jobId)) : null
    return yield* journal.schedule({
      job: {
        jobId,
        threadId: "thread-1",
        userFingerprint: "fp",
        resume: withHandoff,
        handoffDigest: handoff?.digest ?? null,
      },
      handoff,
    })
  })

const finish = (job: JobRecord, revision: number) =>
  Effect.gen(function* () {
    const journal = yield* Journal
    const ended = transition(job, { _tag: "CancelRequested", at: job.createdAt + 5 }).job
    return yield* journal.saveJob(ended, revision)
  })

describe("journal on a real directory", () => {
  test("schedule: private modes, handoff stored once as bound text, no text in the status file", async () => {
    const dir = await tempDir()
    const result = await run(dir, scheduleJob("job-1"))
    expect(result.alreadyScheduled).toBe(false)
    expect(result.stored).toMatchObject({ revision: 1, job: { status: "scheduled", jobNumber: 1 } })
    const threadDir = path.join(dir, "thread-1")
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
    expect((await stat(threadDir)).mode & 0o777).toBe(0o700)
    for (const name of await readdir(threadDir))
      expect((await stat(path.join(threadDir, name))).mode & 0o777, name).toBe(0o600)
    const handoff = await Effect.runPromise(bound("job-1"))
    expect(await readFile(path.join(threadDir, "job-1.handoff.json"), "utf8")).toBe(handoff.text)
    const status = await readFile(path.join(threadDir, "job-1.job.json"), "utf8")
    expect(status).not.toContain(SUMMARY)
    expect(JSON.parse(status).job.handoffDigest).toBe(handoff.digest)
    const events = await run(
      dir,
      Journal.use((j) => j.readEvents("thread-1", "job-1")),
    )
    expect(events.entries.map((e) => e.kind)).toEqual(["scheduled"])
  })

  test("one unfinished job per thread; a new job after a terminal one gets number 2 and history", async () => {
    const dir = await tempDir()
    const [again, second] = await run(
      dir,
      Effect.gen(function* () {
        const first = yield* scheduleJob("job-1")
        const again = yield* scheduleJob("job-2")
        yield* finish(first.stored.job, first.stored.revision)
        const second = yield* scheduleJob("job-2", false)
        const journal = yield* Journal
        return [again, { second, inspection: yield* journal.inspect("thread-1") }] as const
      }),
    )
    expect(again).toMatchObject({ alreadyScheduled: true, stored: { job: { jobId: "job-1" } } })
    expect(second.second.stored.job).toMatchObject({ jobId: "job-2", jobNumber: 2 })
    expect(second.inspection.history).toMatchObject([{ jobId: "job-1", status: "cancelled" }])
    expect(second.inspection.current?.job.jobId).toBe("job-2")
  })

  test("an ended job the thread index does not list yet is in the history, and stays there", async () => {
    // The job file and the thread index are two writes: a reader between them, or a process
    // that died between them, finds the job ended and the index without it.
    const dir = await tempDir()
    await run(
      dir,
      Effect.gen(function* () {
        const first = yield* scheduleJob("job-1")
        yield* finish(first.stored.job, first.stored.revision)
      }),
    )
    const indexFile = path.join(dir, "thread-1", "thread.json")
    const index = JSON.parse(await readFile(indexFile, "utf8")) as Record<string, unknown>
    await writeFile(indexFile, JSON.stringify({ ...index, history: [] }))
    const between = await run(
      dir,
      Journal.use((j) => j.inspect("thread-1")),
    )
    expect(between.history).toMatchObject([{ jobId: "job-1", status: "cancelled" }])
    // The next job's index write keeps it.
    await run(dir, scheduleJob("job-2", false))
    const onDisk = JSON.parse(await readFile(indexFile, "utf8")) as { history: Array<unknown> }
    expect(onDisk.history).toMatchObject([{ jobId: "job-1", status: "cancelled" }])
  })

  test("compare-and-set: a stale revision is a JournalConflict naming the file", async () => {
    const dir = await tempDir()
    const error = await failure(
      dir,
      Effect.gen(function* () {
        const { stored } = yield* scheduleJob("job-1")
        const journal = yield* Journal
        yield* journal.saveJob({ ...stored.job, updatedAt: 9 }, 1)
        return yield* journal.saveJob({ ...stored.job, updatedAt: 10 }, 1)
      }),
    )
    expect(error).toMatchObject({ _tag: "JournalConflict", expectedRevision: 1, foundRevision: 2 })
    expect((error as { path: string }).path).toMatch(/job-1\.job\.json$/)
  })

  test("corrupt or half-written status → JournalCorrupt naming the file; the file is untouched", async () => {
    const dir = await tempDir()
    await run(dir, scheduleJob("job-1"))
    const file = path.join(dir, "thread-1", "job-1.job.json")
    await writeFile(file, '{"schemaVersion":1,"revision":1,"job":{"jobId"')
    const error = await failure(
      dir,
      Journal.use((j) => j.readJob("thread-1", "job-1")),
    )
    expect(error).toMatchObject({ _tag: "JournalCorrupt", path: file })
    expect(error.message).toContain("move it aside")
    await writeFile(file, '{"schemaVersion":1,"revision":1,"job":{"jobId":"job-1"}}')
    const schemaError = await failure(
      dir,
      Journal.use((j) => j.currentJob("thread-1")),
    )
    expect(schemaError).toMatchObject({ _tag: "JournalCorrupt", path: file })
    expect(await readFile(file, "utf8")).toBe(
      '{"schemaVersion":1,"revision":1,"job":{"jobId":"job-1"}}',
    )
  })

  test("a torn temp file is ignored and reported; a torn log tail is dropped and reported", async () => {
    const dir = await tempDir()
    await run(dir, scheduleJob("job-1"))
    const threadDir = path.join(dir, "thread-1")
    await writeFile(path.join(threadDir, "job-1.job.json.abc123.tmp"), '{"schemaVer')
    await writeFile(
      path.join(threadDir, "job-1.events.jsonl"),
      '{"at":1,"kind":"note"}\n{"at":2,"ki',
      { flag: "a" },
    )
    const [inspection, events] = await run(
      dir,
      Effect.gen(function* () {
        const journal = yield* Journal
        return [
          yield* journal.inspect("thread-1"),
          yield* journal.readEvents("thread-1", "job-1"),
        ] as const
      }),
    )
    expect(inspection.current?.job.status).toBe("scheduled")
    expect(inspection.tornTempFiles).toEqual([path.join(threadDir, "job-1.job.json.abc123.tmp")])
    expect(events.tornTail).toBe(true)
    expect(events.entries.map((e) => e.kind)).toEqual(["scheduled", "note"])
  })

  test("a stored handoff is never overwritten", async () => {
    const dir = await tempDir()
    await run(
      dir,
      Journal.use((j) => j.inspect("thread-1")),
    )
    const { mkdir } = await import("node:fs/promises")
    await mkdir(path.join(dir, "thread-1"), { recursive: true })
    await writeFile(path.join(dir, "thread-1", "job-1.handoff.json"), "earlier")
    const error = await failure(dir, scheduleJob("job-1"))
    expect(error._tag).toBe("HandoffAlreadyStored")
    expect(await readFile(path.join(dir, "thread-1", "job-1.handoff.json"), "utf8")).toBe("earlier")
  })

  test("invalid ids are refused before any path is built", async () => {
    const dir = await tempDir()
    const error = await failure(
      dir,
      Journal.use((j) => j.readJob("../etc", "x")),
    )
    expect(error).toMatchObject({ _tag: "InvalidJobId", field: "threadId" })
  })
})

describe("journal in memory (the twin)", () => {
  test("history keeps the last 20 finished jobs; cancel marker is idempotent", async () => {
    const result = await run(
      "/jobs",
      Effect.gen(function* () {
        const journal = yield* Journal
        for (let i = 1; i <= 22; i++) {
          const { stored } = yield* scheduleJob(`job-${i}`, false)
          yield* journal.requestCancel("thread-1", `job-${i}`)
          yield* journal.requestCancel("thread-1", `job-${i}`)
          expect(yield* journal.isCancelRequested("thread-1", `job-${i}`)).toBe(true)
          yield* finish(stored.job, stored.revision)
        }
        return yield* journal.inspect("thread-1")
      }),
      true,
    )
    expect(result.history).toHaveLength(20)
    expect(result.history[0]?.jobId).toBe("job-3")
    expect(result.history[19]).toMatchObject({ jobId: "job-22", jobNumber: 22 })
  })
})

describe("jobsDirectory", () => {
  test("BATON_JOBS_DIR wins; else $CODEX_HOME/tools/baton/jobs; else ~/.codex", () => {
    expect(jobsDirectory({ BATON_JOBS_DIR: "/x/jobs", CODEX_HOME: "/c" })).toBe("/x/jobs")
    expect(jobsDirectory({ CODEX_HOME: "/c" })).toBe("/c/tools/baton/jobs")
    expect(jobsDirectory({ HOME: "/h" })).toBe("/h/.codex/tools/baton/jobs")
  })
})

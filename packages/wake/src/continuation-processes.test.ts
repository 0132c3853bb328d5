// The Node adapter against real processes: output to files, exit from the exit event, identity by
// pid + start time, the whole group signalled, zombies not taken for live runs.
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, expect, test } from "vitest"
import { nodeContinuationProcesses as processes, parseProcStat } from "./continuation-processes.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

const spawnSh = async (script: string) => {
  const dir = await mkdtemp(join(tmpdir(), "baton-wake-proc-"))
  dirs.push(dir)
  const files = { stdoutFile: join(dir, "out.jsonl"), stderrFile: join(dir, "err.log") }
  const spawned = await Effect.runPromise(
    processes.spawn({
      command: "/bin/sh",
      args: ["-c", script],
      cwd: dir,
      env: { PATH: "/usr/bin:/bin" },
      ...files,
    }),
  )
  return { spawned, files }
}

test("stdout and stderr go to their files; the exit code comes from the exit event", async () => {
  const { spawned, files } = await spawnSh('echo \'{"type":"x"}\'; echo oops >&2; exit 3')
  expect(await Effect.runPromise(spawned.exit)).toEqual({ code: 3, signal: null })
  expect(await readFile(files.stdoutFile, "utf8")).toBe('{"type":"x"}\n')
  expect(await readFile(files.stderrFile, "utf8")).toBe("oops\n")
  expect(await Effect.runPromise(processes.isAlive(spawned.pid, spawned.startTicks))).toBe(false)
  expect(await Effect.runPromise(processes.fileSize(files.stdoutFile))).toBe(13)
})

test("the whole process group is signalled, and a recycled pid (other start time) is never signalled", async () => {
  const { spawned, files } = await spawnSh("sleep 30 & echo $! ; wait")
  if (process.platform === "linux") expect(spawned.startTicks).not.toBeNull()
  expect(await Effect.runPromise(processes.isAlive(spawned.pid, spawned.startTicks))).toBe(true)
  const wrong = (spawned.startTicks ?? 0) + 1
  expect(await Effect.runPromise(processes.isAlive(spawned.pid, wrong))).toBe(
    process.platform !== "linux",
  )
  expect(await Effect.runPromise(processes.signalGroup(spawned.pid, wrong, "SIGTERM"))).toBe(
    process.platform !== "linux",
  )
  let grandchild = 0
  for (let i = 0; i < 50 && grandchild === 0; i++) {
    grandchild = Number((await readFile(files.stdoutFile, "utf8")).trim()) || 0
    if (grandchild === 0) await new Promise((r) => setTimeout(r, 20))
  }
  expect(
    await Effect.runPromise(processes.signalGroup(spawned.pid, spawned.startTicks, "SIGTERM")),
  ).toBe(true)
  expect((await Effect.runPromise(spawned.exit)).signal).toBe("SIGTERM")
  await new Promise((r) => setTimeout(r, 100))
  expect(await Effect.runPromise(processes.isAlive(grandchild, null))).toBe(false)
})

test("/proc/<pid>/stat: state and start time, with spaces and parentheses in the name", () => {
  const fields = Array.from({ length: 50 }, (_, i) => String(i + 3))
  fields[0] = "Z"
  fields[19] = "123456"
  expect(parseProcStat(`42 (a (weird) name) ${fields.join(" ")}`)).toEqual({
    state: "Z",
    startTicks: 123456,
  })
  expect(parseProcStat("garbage")).toBeNull()
})

test("a spawn that cannot start is a LaunchError", async () => {
  const failure = await Effect.runPromise(
    Effect.flip(
      processes.spawn({
        command: "/nonexistent/codex",
        args: [],
        cwd: tmpdir(),
        env: {},
        stdoutFile: join(tmpdir(), `baton-wake-none-${process.pid}.out`),
        stderrFile: join(tmpdir(), `baton-wake-none-${process.pid}.err`),
      }),
    ),
  )
  expect(failure._tag).toBe("Launch")
  expect(failure.message).toMatch(/ENOENT/)
  await rm(join(tmpdir(), `baton-wake-none-${process.pid}.out`), { force: true })
  await rm(join(tmpdir(), `baton-wake-none-${process.pid}.err`), { force: true })
})

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough } from "node:stream"
import * as Effect from "effect/Effect"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { jsonlFrameLink, makeLineSplitter } from "./jsonl-link.js"
import { connectStdio, stderrSummary } from "./stdio-transport.js"

describe("JSONL framing", () => {
  test("lines split across chunks, several per chunk, CRLF and blank lines", () => {
    const lines: Array<string> = []
    const splitter = makeLineSplitter((l) => lines.push(l))
    for (const chunk of ['{"a":', '1}\n{"b":2}\r\n\n{"c"', ":3}\n", '{"d":4}']) splitter.push(chunk)
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}'])
    splitter.push("\n")
    expect(lines.at(-1)).toBe('{"d":4}')
  })

  test("a line over the limit is dropped up to its newline and counted", () => {
    const lines: Array<string> = []
    const splitter = makeLineSplitter((l) => lines.push(l), 10)
    splitter.push("0123456789ABC")
    splitter.push("DEF\nok\n")
    splitter.push("x".repeat(30) + "\nfine\n")
    expect(lines).toEqual(["ok", "fine"])
    expect(splitter.oversized()).toBe(2)
  })

  test("the link writes one line per frame and reports the input's end once", async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const frames: Array<string> = []
    const closed: Array<string> = []
    const link = jsonlFrameLink({
      transport: "stdio",
      input,
      output,
      sink: { frame: (f) => frames.push(f), closed: (r) => closed.push(r) },
    })
    await Effect.runPromise(link.send('{"id":1}'))
    expect(output.read()?.toString()).toBe('{"id":1}\n')
    input.write(Buffer.from('{"x":"\u00e9'.slice(0, 6)))
    input.write(Buffer.from('\u00e9"}\n'))
    input.end()
    for (let i = 0; i < 1_000 && closed.length === 0; i++) await new Promise((r) => setImmediate(r))
    expect(frames).toEqual(['{"x":"é"}'])
    expect(closed).toEqual(["stdout closed"])
  })
})

// A stand-in `codex` executable speaking JSONL, for the process-handling parts of the transport.
const FAKE_CODEX = `
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const grandchild = spawn("sleep", ["300"], { stdio: "ignore" })
fs.writeFileSync(process.env.FAKE_PIDS, JSON.stringify({ self: process.pid, grandchild: grandchild.pid }))
if (process.env.FAKE_IGNORE_TERM) process.on("SIGTERM", () => {})
process.stdout.write("WARNING: banner that is not JSON\\n")
process.stderr.write("x".repeat(200000))
let buffer = ""
process.stdin.on("data", (chunk) => {
  buffer += chunk
  let i
  while ((i = buffer.indexOf("\\n")) >= 0) {
    const line = buffer.slice(0, i)
    buffer = buffer.slice(i + 1)
    const m = JSON.parse(line)
    if (m.id === undefined) continue
    if (m.method === "initialize" && process.env.FAKE_SILENT_INIT) continue
    if (m.method === "initialize") reply({ id: m.id, result: { userAgent: "baton/9.9.9 (fake)", codexHome: "/x", platformFamily: "unix", platformOs: "linux" } })
    else if (m.method === "thread/resume") reply({ id: m.id, error: { code: -32600, message: "thread " + m.params.threadId + " already has an active writer" } })
    else if (m.method === "thread/loaded/list") {
      const text = JSON.stringify({ id: m.id, result: { data: ["a", "b"], nextCursor: null } }) + "\\n"
      process.stdout.write(text.slice(0, 7))
      setTimeout(() => process.stdout.write(text.slice(7)), 20)
    }
  }
})
process.stdin.on("end", () => { if (!process.env.FAKE_IGNORE_EOF) { grandchild.kill(); process.exit(0) } })
function reply(m) { process.stdout.write(JSON.stringify(m) + "\\n") }
`

let dir = ""
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "baton-stdio-"))
  await writeFile(join(dir, "codex"), `#!${process.execPath}\n${FAKE_CODEX}`, { mode: 0o755 })
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Running (a zombie left to an init that does not reap, as in some containers, counts as gone). */
const alive = async (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null)
  return stat === null || !/^\d+ \(.*\) Z/.test(stat)
}
/** Waits (up to ~10 s of polling) for a killed process to be gone, instead of a fixed sleep. */
const untilDead = async (pid: number) => {
  for (let i = 0; i < 1_000 && (await alive(pid)); i++) await new Promise((r) => setTimeout(r, 10))
}

const connect = (env: Record<string, string> = {}) =>
  connectStdio({
    binary: { path: join(dir, "codex"), source: "env", version: "9.9.9", reason: "test" },
    env: { ...process.env, FAKE_PIDS: join(dir, "pids.json"), ...env },
    stderrLimitBytes: 1_000,
    killGraceMs: 200,
  })

describe("stdio transport", () => {
  test("handshake over JSONL, non-JSON stdout skipped, split lines joined, active writer classified, stderr bounded", async () => {
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const c = yield* connect()
          const loaded = yield* c.listLoadedThreads
          const resume = yield* Effect.flip(c.resumeThread("t-held"))
          return {
            version: c.server.version,
            loaded,
            resume,
            stats: yield* c.stats,
            stderr: c.stderrTail(),
            binary: c.binary,
          }
        }),
      ),
    )
    expect(result.version).toBe("9.9.9")
    expect(result.loaded).toEqual(["a", "b"])
    expect(result.resume).toMatchObject({ _tag: "ActiveWriterError", threadId: "t-held" })
    expect(result.stats.nonJsonFrames).toBe(1)
    expect(result.stderr.length).toBeLessThanOrEqual(1_000)
    expect(result.binary.source).toBe("env")
  })

  test("closing ends the whole process group, escalating past an ignored EOF and SIGTERM", async () => {
    await Effect.runPromise(
      Effect.scoped(Effect.asVoid(connect({ FAKE_IGNORE_EOF: "1", FAKE_IGNORE_TERM: "1" }))),
    )
    const pids = JSON.parse(await readFile(join(dir, "pids.json"), "utf8")) as {
      self: number
      grandchild: number
    }
    await untilDead(pids.self)
    await untilDead(pids.grandchild)
    expect(await alive(pids.self)).toBe(false)
    expect(await alive(pids.grandchild)).toBe(false)
  })

  test("a crashed process is a disconnect naming the exit and stderr; its group is cleaned up", async () => {
    const [reason, after] = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const c = yield* connect()
          const pids = JSON.parse(
            yield* Effect.promise(() => readFile(join(dir, "pids.json"), "utf8")),
          ) as { self: number }
          process.kill(pids.self, "SIGKILL")
          const why = yield* c.awaitClosed
          return [why, yield* Effect.flip(c.listLoadedThreads)] as const
        }),
      ),
    )
    expect(reason).toContain("codex app-server exited (SIGKILL)")
    expect(reason).toContain("stderr: xxx")
    expect(after).toMatchObject({
      _tag: "DisconnectedError",
      transport: "stdio",
      outcomeMayBeUnknown: false,
    })
    const pids = JSON.parse(await readFile(join(dir, "pids.json"), "utf8")) as {
      grandchild: number
    }
    await untilDead(pids.grandchild)
    expect(await alive(pids.grandchild)).toBe(false)
  })

  test("initializeTimeoutMs bounds a server that never answers initialize", async () => {
    const started = Date.now()
    const error = await Effect.runPromise(
      Effect.scoped(
        Effect.flip(
          connectStdio({
            binary: { path: join(dir, "codex"), source: "env", version: "9.9.9", reason: "test" },
            env: { ...process.env, FAKE_PIDS: join(dir, "pids.json"), FAKE_SILENT_INIT: "1" },
            killGraceMs: 200,
            initializeTimeoutMs: 300,
          }),
        ),
      ),
    )
    expect(error).toMatchObject({
      _tag: "RequestTimeoutError",
      method: "initialize",
      timeoutMs: 300,
    })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  test("a missing binary is a SpawnError", async () => {
    const error = await Effect.runPromise(
      Effect.scoped(
        Effect.flip(
          connectStdio({
            binary: { path: join(dir, "nope"), source: "env", version: null, reason: "test" },
          }),
        ),
      ),
    )
    expect(error).toMatchObject({ _tag: "SpawnError" })
  })
})

describe("stderrSummary", () => {
  test("keeps Codex's fatal error, not its backtrace frames", () => {
    // The shape codex 0.169 prints for CODEX_HOME=/nonexistent (app-server exits 1).
    const codex = [
      'WARNING: proceeding, even though we could not create PATH aliases: CODEX_HOME points to "/nonexistent", but that path does not exist',
      'Error: CODEX_HOME points to "/nonexistent", but that path does not exist',
      "",
      "Stack backtrace:",
      ...Array.from({ length: 12 }, (_, i) => `   ${i}: <unknown>`),
      "",
    ].join("\n")
    expect(stderrSummary(codex)).toBe(
      'Error: CODEX_HOME points to "/nonexistent", but that path does not exist',
    )
    expect(stderrSummary("Error: first\n\nCaused by:\n    no such file\n")).toBe(
      "Error: first | Caused by: | no such file",
    )
    expect(stderrSummary("\x1b[31mboom\x1b[0m\n   3: <unknown>\nlast words\n")).toBe(
      "boom | last words",
    )
    expect(stderrSummary("")).toBe("")
  })
})

import * as Data from "effect/Data"
import { describe, expect, it } from "vitest"
import type { TaggedFailure } from "./command-spec.js"
import type { CliIo } from "./cli-io.js"
import { cliUsageError, inputUnreadableError } from "./errors.js"
import { describeDefect, describeFailure, printFailure } from "./failure-report.js"

class SampleError extends Data.TaggedError("SampleBroken")<{
  readonly path: string
  readonly rule: string
}> {
  override get message(): string {
    return `Sample: ${this.path} ${this.rule}.`
  }
}

class BareError extends Data.TaggedError("BareBroken")<{ readonly bytes: number }> {}

const captureIo = () => {
  const out: string[] = []
  const err: string[] = []
  const io: CliIo = {
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    readStdin: () => Promise.resolve(new Uint8Array()),
    env: {},
    cwd: "/",
  }
  return { io, out, err }
}

describe("describeFailure", () => {
  it("maps usage errors to exit 2 with one line pointing at --help", () => {
    const report = describeFailure(
      cliUsageError("unknown flag '--x' for 'baton doctor'", "baton doctor"),
    )
    expect(report.exitCode).toBe(2)
    expect(report.text).toBe(
      "baton: unknown flag '--x' for 'baton doctor' (see 'baton doctor --help')\n",
    )
  })

  it("maps a value a library refuses (a wake job id or setting, a recall query) to exit 2", () => {
    for (const _tag of ["InvalidJobId", "InvalidJobSetting", "RecallQueryError"]) {
      const error = { _tag, message: "x is not valid" } as TaggedFailure
      const report = describeFailure(error, "baton wake status")
      expect(report).toMatchObject({
        exitCode: 2,
        text: "baton: x is not valid (see 'baton wake status --help')\n",
        json: { _tag, message: "x is not valid" },
      })
    }
    const io = { _tag: "WakeIo", message: "disk full" } as TaggedFailure
    expect(describeFailure(io).exitCode).toBe(1)
  })

  it("maps unreadable input to exit 1 naming the path", () => {
    const report = describeFailure(inputUnreadableError("missing.json", "no such file"))
    expect(report).toMatchObject({
      exitCode: 1,
      text: "baton: cannot read 'missing.json': no such file\n",
    })
  })

  it("uses a domain error's own message after its _tag, and its fields in JSON", () => {
    const report = describeFailure(new SampleError({ path: "summary", rule: "is required" }))
    expect(report.exitCode).toBe(1)
    expect(report.text).toBe("baton: SampleBroken: Sample: summary is required.\n")
    expect(report.json).toEqual({
      _tag: "SampleBroken",
      message: "Sample: summary is required.",
      path: "summary",
      rule: "is required",
    })
  })

  it("falls back to the fields when an error has no message", () => {
    expect(describeFailure(new BareError({ bytes: 5 })).text).toBe("baton: BareBroken: bytes=5\n")
  })
})

describe("describeDefect", () => {
  it("prints one line asking for a report, without the stack", () => {
    const report = describeDefect(new TypeError("x is not a function\nmore"), false)
    expect(report.exitCode).toBe(1)
    expect(report.text).toBe(
      "baton: unexpected error: TypeError: x is not a function — please report this bug (BATON_DEBUG=1 shows the stack)\n",
    )
  })

  it("adds the stack under BATON_DEBUG", () => {
    const report = describeDefect(new Error("boom"), true)
    expect(report.text).toMatch(
      /^baton: unexpected error: Error: boom — please report this bug\n.*Error: boom\n\s+at /s,
    )
  })
})

describe("printFailure", () => {
  it("writes text to stderr, or {ok:false,error} to stdout under --json", () => {
    const report = describeFailure(inputUnreadableError("a", "no such file"))
    const text = captureIo()
    expect(printFailure(report, false, text.io)).toBe(1)
    expect(text.err.join("")).toBe(report.text)
    expect(text.out).toEqual([])
    const json = captureIo()
    expect(printFailure(report, true, json.io)).toBe(1)
    expect(JSON.parse(json.out.join(""))).toEqual({
      ok: false,
      error: {
        _tag: "InputUnreadableError",
        message: "cannot read 'a': no such file",
        path: "a",
        reason: "no such file",
      },
    })
    expect(json.err).toEqual([])
  })
})

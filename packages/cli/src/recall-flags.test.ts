import { describe, expect, it } from "vitest"
import type { Invocation } from "./command-spec.js"
import { filterFlags, forgetFlags, integerFlag, sourceFlag } from "./recall-flags.js"

const invocation = (
  flags: Record<string, string | true>,
  path = ["recall", "search"],
): Invocation => ({
  commandPath: path,
  flags,
  positionals: [],
})

describe("recall flags", () => {
  it("decodes filters against the working directory", () => {
    expect(
      filterFlags(
        invocation({
          source: "codex",
          scope: "../repo",
          date: "today",
          timezone: "UTC",
          "no-headless": true,
        }),
        "/work/x",
      ),
    ).toEqual({
      _tag: "Ok",
      value: {
        source: "codex",
        scopeDir: "/work/repo",
        onDate: "today",
        timezone: "UTC",
        excludeHeadless: true,
      },
    })
    expect(filterFlags(invocation({ here: true }), "/work/x")).toEqual({
      _tag: "Ok",
      value: { scopeDir: "/work/x" },
    })
  })

  it("names the problem and the command for bad combinations and values", () => {
    const problem = (d: ReturnType<typeof filterFlags>) =>
      d._tag === "Usage" ? d.error : undefined
    expect(problem(filterFlags(invocation({ here: true, scope: "a" }), "/"))).toEqual({
      _tag: "CliUsageError",
      problem: "give --scope or --here, not both",
      helpCommand: "baton recall search",
    })
    expect(
      problem(filterFlags(invocation({ date: "today", "start-date": "2026-01-01" }), "/"))?.problem,
    ).toBe("give --date or --start-date/--end-date, not both")
    expect(sourceFlag(invocation({ source: "all" }))).toEqual({ _tag: "Ok", value: undefined })
    expect(sourceFlag(invocation({ source: "codex" }))).toEqual({ _tag: "Ok", value: "codex" })
    expect(sourceFlag(invocation({ source: "both" }))).toMatchObject({
      _tag: "Usage",
      error: { problem: "--source must be all, claude or codex, not 'both'" },
    })
    expect(integerFlag(invocation({ limit: "0" }), "limit", 10, 1, 100)._tag).toBe("Usage")
    expect(integerFlag(invocation({ limit: "7" }), "limit", 10, 1, 100)).toEqual({
      _tag: "Ok",
      value: 7,
    })
    expect(integerFlag(invocation({}), "limit", 10, 1, 100)).toEqual({ _tag: "Ok", value: 10 })
  })

  it("forget takes exactly one target, and --all only with --yes", () => {
    const forget = (flags: Record<string, string | true>) =>
      forgetFlags(invocation(flags, ["recall", "forget"]), "/work")
    expect(forget({ all: true, yes: true })).toEqual({ _tag: "Ok", value: { _tag: "All" } })
    expect(forget({ all: true })._tag).toBe("Usage")
    expect(forget({ session: "s1", source: "claude" })).toEqual({
      _tag: "Ok",
      value: { _tag: "Session", sessionId: "s1", source: "claude" },
    })
    expect(forget({ project: "app" })).toEqual({
      _tag: "Ok",
      value: { _tag: "Project", dir: "/work/app" },
    })
    expect(forget({ project: "app", source: "codex" })).toEqual({
      _tag: "Ok",
      value: { _tag: "Project", dir: "/work/app", source: "codex" },
    })
    expect(forget({ all: true, yes: true, source: "codex" })).toMatchObject({
      _tag: "Usage",
      error: { problem: "--source narrows --session or --project; --all empties the whole index" },
    })
    expect(forget({})._tag).toBe("Usage")
    expect(forget({ session: "s", all: true })._tag).toBe("Usage")
  })
})

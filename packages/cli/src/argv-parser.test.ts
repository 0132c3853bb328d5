import { describe, expect, it } from "vitest"
import { parseArgv } from "./argv-parser.js"
import type { CommandSpec } from "./command-spec.js"
import { batonCommand } from "./command-tree.js"

const parse = (...argv: string[]) => parseArgv(batonCommand, argv)

const usageProblem = (...argv: string[]): string => {
  const parsed = parse(...argv)
  if (parsed._tag !== "UsageFailure")
    throw new Error(`expected a usage failure, got ${parsed._tag}`)
  return `${parsed.error.problem} | ${parsed.error.helpCommand}`
}

describe("parseArgv", () => {
  it("reads --version and -V at the root", () => {
    expect(parse("--version")._tag).toBe("ShowVersion")
    expect(parse("-V")._tag).toBe("ShowVersion")
  })

  it("shows help for the deepest command named, wherever --help appears", () => {
    const cases: Array<[string[], string[]]> = [
      [["--help"], []],
      [["-h"], []],
      [["--help", "doctor"], ["doctor"]],
      [
        ["-h", "handoff", "hash"],
        ["handoff", "hash"],
      ],
      [["doctor", "--help"], ["doctor"]],
      [["handoff", "-h"], ["handoff"]],
      [
        ["handoff", "validate", "--help"],
        ["handoff", "validate"],
      ],
      [
        ["handoff", "validate", "--bogus", "--help"],
        ["handoff", "validate"],
      ],
      [
        ["handoff", "hash", "x.json", "--json", "-h"],
        ["handoff", "hash"],
      ],
    ]
    for (const [argv, path] of cases) {
      const parsed = parse(...argv)
      expect(parsed._tag, argv.join(" ")).toBe("ShowHelp")
      if (parsed._tag === "ShowHelp") expect(parsed.commandPath).toEqual(path)
    }
  })

  it("does not treat --help after -- as a flag", () => {
    const parsed = parse("handoff", "validate", "--", "--help")
    expect(parsed).toMatchObject({ _tag: "Run", invocation: { positionals: ["--help"] } })
  })

  it("parses a leaf command with its flags and positionals", () => {
    expect(parse("doctor", "--json")).toMatchObject({
      _tag: "Run",
      invocation: { commandPath: ["doctor"], flags: { json: true }, positionals: [] },
    })
    expect(parse("handoff", "validate", "-", "--json")).toMatchObject({
      _tag: "Run",
      invocation: {
        commandPath: ["handoff", "validate"],
        flags: { json: true },
        positionals: ["-"],
      },
    })
    expect(parse("handoff", "hash", "--json", "a.json")).toMatchObject({
      _tag: "Run",
      invocation: { commandPath: ["handoff", "hash"], positionals: ["a.json"] },
    })
    expect(parse("mcp")).toMatchObject({ _tag: "Run", invocation: { commandPath: ["mcp"] } })
  })

  it("shows help for a bare baton and for the word help where a command is expected", () => {
    expect(parse()).toMatchObject({ _tag: "ShowHelp", commandPath: [] })
    expect(parse("help")).toMatchObject({ _tag: "ShowHelp", commandPath: [] })
    expect(parse("help", "recall", "search")).toMatchObject({
      _tag: "ShowHelp",
      commandPath: ["recall", "search"],
    })
    expect(parse("recall", "help")).toMatchObject({ _tag: "ShowHelp", commandPath: ["recall"] })
    // As an argument, "help" is text: a search for the word help.
    expect(parse("recall", "search", "help")).toMatchObject({
      _tag: "Run",
      invocation: { positionals: ["help"] },
    })
  })

  it("names every usage problem and the command whose --help applies", () => {
    expect(usageProblem("--")).toBe(
      "missing command for 'baton' (expected one of: doctor, handoff, codex, compact, recall, wake, mcp) | baton",
    )
    expect(usageProblem("bogus")).toBe(
      "unknown command 'bogus' for 'baton' (expected one of: doctor, handoff, codex, compact, recall, wake, mcp) | baton",
    )
    expect(usageProblem("--bogus")).toBe("unknown flag '--bogus' for 'baton' | baton")
    // A repeated value flag: the second used to win without a word.
    expect(usageProblem("recall", "search", "x", "--source", "claude", "--source=codex")).toBe(
      "flag '--source' is given twice ('claude', then 'codex'): give it once | baton recall search",
    )
    // A pasted file as an argument is not repeated whole.
    const long = "a".repeat(120_000)
    expect(usageProblem(long)).toBe(
      `unknown command '${"a".repeat(80)}… (120000 characters)' for 'baton' (expected one of: doctor, handoff, codex, compact, recall, wake, mcp) | baton`,
    )
    expect(usageProblem(`--${long}`)).toMatch(
      /^unknown flag '--a{78}… \(120002 characters\)' for 'baton' \| baton$/,
    )
    expect(usageProblem("doctor", long)).toMatch(
      /^unexpected argument 'a{80}… \(120000 characters\)'/,
    )
    expect(usageProblem("doctor", "--bogus")).toBe(
      "unknown flag '--bogus' for 'baton doctor' | baton doctor",
    )
    expect(usageProblem("doctor", "-x")).toBe("unknown flag '-x' for 'baton doctor' | baton doctor")
    expect(usageProblem("doctor", "--version")).toBe(
      "unknown flag '--version' for 'baton doctor' | baton doctor",
    )
    expect(usageProblem("doctor", "--json=yes")).toBe("flag '--json' takes no value | baton doctor")
    expect(usageProblem("doctor", "extra")).toBe(
      "unexpected argument 'extra' for 'baton doctor' | baton doctor",
    )
    expect(usageProblem("handoff")).toBe(
      "missing command for 'baton handoff' (expected one of: validate, hash) | baton handoff",
    )
    expect(usageProblem("handoff", "sign")).toBe(
      "unknown command 'sign' for 'baton handoff' (expected one of: validate, hash) | baton handoff",
    )
    expect(usageProblem("handoff", "validate")).toBe(
      "missing <file> for 'baton handoff validate' | baton handoff validate",
    )
    expect(usageProblem("handoff", "validate", "a", "b")).toBe(
      "unexpected argument 'b' for 'baton handoff validate' | baton handoff validate",
    )
  })

  it("refuses an empty value for every value flag, instead of reading it as absent", () => {
    expect(usageProblem("recall", "recent", "--date", "")).toBe(
      "flag '--date' is empty: give <day> or leave the flag out | baton recall recent",
    )
    expect(usageProblem("recall", "search", "x", "--scope=")).toBe(
      "flag '--scope' is empty: give <dir> or leave the flag out | baton recall search",
    )
    expect(usageProblem("recall", "grep", "x", "-n", "")).toBe(
      "flag '--limit' is empty: give <n> or leave the flag out | baton recall grep",
    )
    // Every value flag of every command, in both spellings.
    const leaves = (command: CommandSpec, path: string[]): Array<[string[], CommandSpec]> =>
      command.subcommands.length === 0
        ? [[path, command]]
        : command.subcommands.flatMap((sub) => leaves(sub, [...path, sub.name]))
    for (const [path, command] of leaves(batonCommand, [])) {
      const required = command.positionals.filter((p) => p.required).map(() => "x")
      for (const flag of command.flags.filter((f) => f.takesValue)) {
        for (const argv of [
          [...path, ...required, `--${flag.name}`, ""],
          [...path, ...required, `--${flag.name}=`],
        ]) {
          const parsed = parse(...argv)
          expect(parsed._tag, argv.join(" ")).toBe("UsageFailure")
          if (parsed._tag === "UsageFailure")
            expect(parsed.error.problem).toContain(`flag '--${flag.name}' is empty`)
        }
      }
    }
    // An empty positional is the command's to judge (an empty query has its own message).
    expect(parse("recall", "search", "")._tag).toBe("Run")
  })

  it("never throws, whatever the argv", () => {
    const tokens = [
      "doctor",
      "handoff",
      "validate",
      "hash",
      "mcp",
      "-",
      "--",
      "--json",
      "-h",
      "--help",
      "-V",
      "x",
      "--a=b",
      "",
    ]
    for (let seed = 0; seed < 500; seed += 1) {
      const argv = Array.from(
        { length: seed % 6 },
        (_, i) => tokens[(seed * 7 + i * 13) % tokens.length] ?? "",
      )
      expect(() => parse(...argv)).not.toThrow()
    }
  })
})

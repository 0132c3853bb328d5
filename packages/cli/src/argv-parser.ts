/**
 * Parses `baton` arguments against the command tree. Guarantees: total — every argv yields a
 * result, never a throw; unknown commands, unknown flags, missing or extra arguments become a
 * `CliUsageError` naming the problem. `--help` anywhere (before `--`) wins over other problems
 * in the flags of the resolved command. `-` is a positional (stdin), `--` ends the options. An
 * empty value (`--date ""`, `--date=`) is refused unless the flag says empty means something: a
 * script's unset variable would otherwise drop the flag without a word.
 */
import { helpFlag, versionFlag } from "./command-spec.js"
import type { CommandSpec, FlagSpec, Invocation } from "./command-spec.js"
import { cliUsageError } from "./errors.js"
import type { CliUsageError } from "./errors.js"

/** What the command line asks for. */
export type ParsedArgv =
  | {
      readonly _tag: "ShowHelp"
      readonly command: CommandSpec
      readonly commandPath: readonly string[]
    }
  | { readonly _tag: "ShowVersion" }
  | { readonly _tag: "Run"; readonly command: CommandSpec; readonly invocation: Invocation }
  | { readonly _tag: "UsageFailure"; readonly error: CliUsageError }

/** The flags a command accepts: its own, `--help`, and `--version` at the root. */
export const acceptedFlags = (command: CommandSpec, isRoot: boolean): readonly FlagSpec[] =>
  isRoot ? [...command.flags, helpFlag, versionFlag] : [...command.flags, helpFlag]

const isOptionToken = (token: string): boolean => token.startsWith("-") && token !== "-"

const findFlag = (flags: readonly FlagSpec[], token: string): FlagSpec | undefined =>
  token.startsWith("--")
    ? flags.find((flag) => flag.name === token.slice(2))
    : flags.find((flag) => flag.short !== undefined && flag.short === token.slice(1))

const commandName = (path: readonly string[]): string => ["baton", ...path].join(" ")

const failure = (problem: string, path: readonly string[]): ParsedArgv => ({
  _tag: "UsageFailure",
  error: cliUsageError(problem, commandName(path)),
})

/** Longest part of an argument a usage error repeats (a pasted file as an argument echoed 120 KB). */
const SHOWN_CHARS = 80

/** `token` as a usage error shows it: at most {@link SHOWN_CHARS} characters, then "…". */
const shown = (token: string): string =>
  token.length <= SHOWN_CHARS
    ? token
    : `${token.slice(0, SHOWN_CHARS)}… (${token.length} characters)`

/** Parses `argv` (without the node and script paths) against `root`. */
export const parseArgv = (root: CommandSpec, argv: readonly string[]): ParsedArgv => {
  const terminator = argv.indexOf("--")
  const optionZone = terminator === -1 ? argv : argv.slice(0, terminator)
  const wantsHelp = optionZone.some((token) => token === "--help" || token === "-h")

  // `baton` alone, and `help` where a command is expected (`baton help recall`, `baton recall
  // help`), show help.
  if (argv.length === 0) return { _tag: "ShowHelp", command: root, commandPath: [] }
  let helpWord = false
  let command = root
  const path: string[] = []
  let index = 0
  while (command.subcommands.length > 0) {
    const token = argv[index]
    if (
      token === "--help" ||
      token === "-h" ||
      (token === "help" && !command.subcommands.some((sub) => sub.name === "help"))
    ) {
      if (token === "help") helpWord = true
      index += 1
      continue
    }
    if (token === undefined || token === "--" || isOptionToken(token)) break
    const next = command.subcommands.find((sub) => sub.name === token)
    if (next === undefined) {
      const known = command.subcommands.map((sub) => sub.name).join(", ")
      return failure(
        `unknown command '${shown(token)}' for '${commandName(path)}' (expected one of: ${known})`,
        path,
      )
    }
    command = next
    path.push(token)
    index += 1
  }

  if (wantsHelp || helpWord) return { _tag: "ShowHelp", command, commandPath: path }

  const flagSpecs = acceptedFlags(command, path.length === 0)
  const flags: Record<string, string | true> = {}
  const positionals: string[] = []
  let optionsEnded = false
  for (; index < argv.length; index += 1) {
    const token = argv[index] ?? ""
    if (!optionsEnded && token === "--") {
      optionsEnded = true
      continue
    }
    if (optionsEnded || !isOptionToken(token)) {
      positionals.push(token)
      continue
    }
    const equals = token.startsWith("--") ? token.indexOf("=") : -1
    const name = equals === -1 ? token : token.slice(0, equals)
    const flag = findFlag(flagSpecs, name)
    if (flag === undefined) {
      // A query or pattern can start with '-' too: say how to pass one.
      const asText =
        command.positionals.length > 0
          ? ` (text that starts with '-' goes after '--': ${commandName(path)} -- '${shown(token)}')`
          : ""
      return failure(`unknown flag '${shown(name)}' for '${commandName(path)}'${asText}`, path)
    }
    if (!flag.takesValue) {
      if (equals !== -1) return failure(`flag '--${flag.name}' takes no value`, path)
      flags[flag.name] = true
      continue
    }
    const value = equals === -1 ? argv[index + 1] : token.slice(equals + 1)
    if (value === undefined) return failure(`flag '--${flag.name}' needs a value`, path)
    if (value === "" && flag.acceptsEmpty !== true)
      return failure(
        `flag '--${flag.name}' is empty: give ${flag.valueName === undefined ? "a value" : `<${flag.valueName}>`} or leave the flag out`,
        path,
      )
    // No flag takes several values: a second one would silently win over the first.
    const earlier = flags[flag.name]
    if (typeof earlier === "string")
      return failure(
        `flag '--${flag.name}' is given twice ('${shown(earlier)}', then '${shown(value)}'): give it once`,
        path,
      )
    if (equals === -1) index += 1
    flags[flag.name] = value
  }

  if (path.length === 0 && flags["version"] === true) return { _tag: "ShowVersion" }

  if (command.subcommands.length > 0) {
    const known = command.subcommands.map((sub) => sub.name).join(", ")
    const extra = positionals[0]
    return extra === undefined
      ? failure(`missing command for '${commandName(path)}' (expected one of: ${known})`, path)
      : failure(`unexpected argument '${shown(extra)}' for '${commandName(path)}'`, path)
  }

  const missing = command.positionals
    .slice(positionals.length)
    .find((positional) => positional.required)
  if (missing !== undefined)
    return failure(`missing <${missing.name}> for '${commandName(path)}'`, path)
  const extra = positionals[command.positionals.length]
  if (extra !== undefined)
    return failure(`unexpected argument '${shown(extra)}' for '${commandName(path)}'`, path)

  return { _tag: "Run", command, invocation: { commandPath: path, flags, positionals } }
}

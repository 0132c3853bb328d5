/**
 * Renders `--help` for any node of the command tree, and the one-line version. Guarantees:
 * derived from the command specs alone, so help never disagrees with what the parser accepts.
 */
import { acceptedFlags } from "./argv-parser.js"
import type { CommandSpec, FlagSpec } from "./command-spec.js"

const table = (rows: ReadonlyArray<readonly [string, string]>): string[] => {
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`)
}

const flagLabel = (flag: FlagSpec): string => {
  const long = flag.takesValue ? `--${flag.name} <${flag.valueName ?? "value"}>` : `--${flag.name}`
  return flag.short === undefined ? `    ${long}` : `-${flag.short}, ${long}`
}

const usageLine = (command: CommandSpec, name: string): string => {
  const parts = [name]
  if (command.subcommands.length > 0) parts.push("<command>")
  for (const positional of command.positionals) {
    parts.push(positional.required ? `<${positional.name}>` : `[${positional.name}]`)
  }
  for (const flag of command.flags)
    parts.push(flag.takesValue ? `[--${flag.name} <value>]` : `[--${flag.name}]`)
  return parts.join(" ")
}

/** The help text of `command`, reached through `commandPath` (empty for the root). */
export const renderHelp = (command: CommandSpec, commandPath: readonly string[]): string => {
  const name = ["baton", ...commandPath].join(" ")
  const lines = [`${name} — ${command.summary}`, ""]
  if (command.details.length > 0) lines.push(...command.details, "")
  lines.push("Usage", `  ${usageLine(command, name)}`, "")
  if (command.subcommands.length > 0) {
    lines.push(
      "Commands",
      ...table(command.subcommands.map((sub) => [sub.name, sub.summary] as const)),
      "",
    )
  }
  if (command.positionals.length > 0) {
    lines.push(
      "Arguments",
      ...table(
        command.positionals.map(
          (positional) => [`<${positional.name}>`, positional.description] as const,
        ),
      ),
      "",
    )
  }
  const flags = acceptedFlags(command, commandPath.length === 0)
  lines.push(
    "Options",
    ...table(flags.map((flag) => [flagLabel(flag), flag.description] as const)),
    "",
  )
  lines.push("Exit codes", `  ${command.exitCodes}`)
  if (command.subcommands.length > 0)
    lines.push("", `Run '${name} <command> --help' for a command's options.`)
  return `${lines.join("\n")}\n`
}

/** The `--version` line: the bare version number, for scripts. */
export const renderVersion = (version: string): string => `${version}\n`

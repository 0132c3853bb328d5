/**
 * The shape of a command: its flags, positionals, subcommands and a lazy loader for its runner.
 * Guarantees: a spec is plain data; nothing here imports a command's implementation, so the
 * whole tree can be parsed and its help printed before any heavy module loads.
 */
import type { CliIo } from "./cli-io.js"

/** A `--name` option; `short` is a one-letter alias (`-h`). */
export interface FlagSpec {
  readonly name: string
  readonly short?: string
  readonly takesValue: boolean
  readonly valueName?: string
  readonly description: string
  /** An empty value means something for this flag; otherwise the parser refuses `--name ""`. */
  readonly acceptsEmpty?: boolean
}

/** A positional argument, in order. */
export interface PositionalSpec {
  readonly name: string
  readonly required: boolean
  readonly description: string
}

/** What a parsed command line asks a runner to do. */
export interface Invocation {
  readonly commandPath: readonly string[]
  readonly flags: Readonly<Record<string, string | true>>
  readonly positionals: readonly string[]
}

/** A failure carried as tagged data; the one place that renders it is `failure-report.ts`. */
export interface TaggedFailure {
  readonly _tag: string
}

/** How a command ended: with an exit code it chose, or with a tagged failure to report. */
export type CommandOutcome =
  | { readonly _tag: "Completed"; readonly exitCode: 0 | 1 | 130 }
  | { readonly _tag: "Failed"; readonly error: TaggedFailure; readonly json: boolean }

/** Runs one command; prints its own report and returns how it ended. */
export type CommandRunner = (invocation: Invocation, io: CliIo) => Promise<CommandOutcome>

/** One node of the command tree: a group (with subcommands) or a leaf (with a runner). */
export interface CommandSpec {
  readonly name: string
  readonly summary: string
  readonly details: readonly string[]
  readonly flags: readonly FlagSpec[]
  readonly positionals: readonly PositionalSpec[]
  readonly subcommands: readonly CommandSpec[]
  readonly exitCodes: string
  readonly load?: () => Promise<CommandRunner>
}

/** The `--json` flag, shared by every command that reports. */
export const jsonFlag: FlagSpec = {
  name: "json",
  takesValue: false,
  description: "print one JSON object on stdout instead of text",
}

/** `-h, --help`, accepted by every command. */
export const helpFlag: FlagSpec = {
  name: "help",
  short: "h",
  takesValue: false,
  description: "show this help",
}

/** `-V, --version`, accepted by the root command only. */
export const versionFlag: FlagSpec = {
  name: "version",
  short: "V",
  takesValue: false,
  description: "print the baton version",
}

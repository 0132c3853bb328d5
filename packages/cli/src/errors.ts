/**
 * Tagged errors raised by the CLI itself (the domain packages bring their own). They are plain
 * readonly records with a `_tag`, not Effect classes: the usage path must not load `effect`,
 * so `baton --bogus` costs no more than `baton --version`.
 */

/** The command line could not be understood; `helpCommand` is the command whose --help applies. */
export interface CliUsageError {
  readonly _tag: "CliUsageError"
  readonly problem: string
  readonly helpCommand: string
}

/** An input file (or stdin) could not be read; `path` is as the user gave it. */
export interface InputUnreadableError {
  readonly _tag: "InputUnreadableError"
  readonly path: string
  readonly reason: string
}

/** Builds a {@link CliUsageError}. */
export const cliUsageError = (problem: string, helpCommand: string): CliUsageError => ({
  _tag: "CliUsageError",
  problem,
  helpCommand,
})

/** Builds an {@link InputUnreadableError}. */
export const inputUnreadableError = (path: string, reason: string): InputUnreadableError => ({
  _tag: "InputUnreadableError",
  path,
  reason,
})

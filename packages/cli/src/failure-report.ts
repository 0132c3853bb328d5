/**
 * The one place the CLI turns failures into exit codes and text. Tagged errors (the CLI's own and
 * the domain packages') become one readable line on stderr, or a JSON object on stdout under
 * `--json`; anything untagged is a defect: one line plus "please report", exit 1, and the stack
 * only when `BATON_DEBUG=1`. Guarantees: never prints a value a secret scan flagged — only the
 * error's own fields, which never carry the secret.
 */
import type { CliIo } from "./cli-io.js"
import type { TaggedFailure } from "./command-spec.js"

/** Exit status of a failure: 1 failed, 2 bad usage. */
export type FailureExitCode = 1 | 2

/** A failure as printed: its exit code, its line for people, its object for `--json`. */
export interface FailureReport {
  readonly exitCode: FailureExitCode
  readonly text: string
  readonly json: { readonly _tag: string; readonly message: string } & Readonly<
    Record<string, unknown>
  >
}

const hiddenKeys = new Set(["_tag", "name", "message", "stack", "cause"])

/** The data fields of a tagged error (no stack, name, message or cause). */
export const errorFields = (error: TaggedFailure): Readonly<Record<string, unknown>> =>
  Object.fromEntries(Object.entries(error).filter(([key]) => !hiddenKeys.has(key)))

const text = (value: unknown): string =>
  typeof value === "string" ? value : (JSON.stringify(value) ?? String(value))

const ownMessage = (error: TaggedFailure): string | undefined => {
  const message = (error as { message?: unknown }).message
  return typeof message === "string" && message !== "" ? message : undefined
}

/** One sentence describing a tagged error: the CLI's own, else the error's message, else its fields. */
export const describeError = (error: TaggedFailure): string => {
  const f = errorFields(error)
  switch (error._tag) {
    case "CliUsageError":
      return `${text(f["problem"])} (see '${text(f["helpCommand"])} --help')`
    case "InputUnreadableError":
      return `cannot read '${text(f["path"])}': ${text(f["reason"])}`
    default:
      return (
        ownMessage(error) ??
        (Object.entries(f)
          .map(([key, value]) => `${key}=${text(value)}`)
          .join(", ") ||
          "failed")
      )
  }
}

/**
 * The library names a recall query's inputs as the MCP tools do (`on_date`, `start_date`,
 * `end_date`); on the command line they are flags.
 */
const asFlags = (message: string): string =>
  message
    .replace(/\bon_date\b/g, "--date")
    .replace(/\bstart_date\b/g, "--start-date")
    .replace(/\bend_date\b/g, "--end-date")

/**
 * Errors a library raises for a value given on the command line — bad usage like the CLI's own:
 * a recall date, time zone, pattern or empty query; a wake job id; a wake job's setting (thread
 * id, model, effort, objective, cwd).
 */
const BAD_VALUE_TAGS: ReadonlySet<string> = new Set([
  "RecallQueryError",
  "InvalidJobId",
  "InvalidJobSetting",
])

/**
 * Describes a tagged error: bad usage exits 2 — a flag the CLI rejects, or a value a library
 * rejects ({@link BAD_VALUE_TAGS}; its text points to `helpCommand`'s help like any usage
 * error) — and everything else 1.
 */
export const describeFailure = (error: TaggedFailure, helpCommand?: string): FailureReport => {
  const badValue = BAD_VALUE_TAGS.has(error._tag)
  const own = describeError(error)
  const message = !badValue
    ? own
    : // A time zone's message names only the value: say which flag it came from.
      (error as { field?: unknown }).field === "timezone" && !own.startsWith("--timezone")
      ? `--timezone ${own}`
      : asFlags(own)
  const pointer = badValue && helpCommand !== undefined ? ` (see '${helpCommand} --help')` : ""
  const prefix =
    error._tag === "CliUsageError" || error._tag === "InputUnreadableError" || badValue
      ? ""
      : `${error._tag}: `
  return {
    exitCode: error._tag === "CliUsageError" || badValue ? 2 : 1,
    text: `baton: ${prefix}${message}${pointer}\n`,
    json: { _tag: error._tag, message, ...errorFields(error) },
  }
}

/** Describes an untagged throw: one line, "please report", exit 1; the stack only when debugging. */
export const describeDefect = (defect: unknown, debug: boolean): FailureReport => {
  const summary =
    defect instanceof Error
      ? `${defect.name}: ${defect.message}`
      : `non-error thrown: ${text(defect)}`.slice(0, 500)
  const stack =
    debug && defect instanceof Error && defect.stack !== undefined ? `${defect.stack}\n` : ""
  const hint = debug ? "" : " (BATON_DEBUG=1 shows the stack)"
  return {
    exitCode: 1,
    text: `baton: unexpected error: ${summary.split("\n")[0] ?? ""} — please report this bug${hint}\n${stack}`,
    json: { _tag: "Defect", message: summary },
  }
}

/** Prints a failure (stderr, or a `{ok:false, error}` object on stdout under `--json`) and returns its exit code. */
export const printFailure = (report: FailureReport, json: boolean, io: CliIo): FailureExitCode => {
  if (json) io.stdout(`${JSON.stringify({ ok: false, error: report.json })}\n`)
  else io.stderr(report.text)
  return report.exitCode
}

/**
 * Runs one `baton` invocation: parse, then help, version, or the command's lazily loaded runner.
 * Guarantees: resolves to an exit code (0 ok, 1 failed, 2 bad usage) and never rejects; every
 * failure goes through `failure-report.ts`.
 */
import { parseArgv } from "./argv-parser.js"
import type { CliIo } from "./cli-io.js"
import { batonCommand } from "./command-tree.js"
import { describeDefect, describeFailure, printFailure } from "./failure-report.js"
import { renderHelp, renderVersion } from "./help-text.js"
import { readPackageVersion } from "./package-version.js"

/** Runs `baton <argv>` against `io` and returns the exit code. */
export const runCli = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const parsed = parseArgv(batonCommand, argv)
  switch (parsed._tag) {
    case "ShowVersion":
      io.stdout(renderVersion(readPackageVersion()))
      return 0
    case "ShowHelp":
      io.stdout(renderHelp(parsed.command, parsed.commandPath))
      return 0
    case "UsageFailure":
      // Asked for JSON, a caller parses stdout even when the flags were wrong.
      return printFailure(
        describeFailure(parsed.error),
        argv.includes("--json") && !argv.slice(0, argv.indexOf("--json")).includes("--"),
        io,
      )
    case "Run": {
      const json = parsed.invocation.flags["json"] === true
      try {
        if (parsed.command.load === undefined)
          throw new Error(`command '${parsed.command.name}' has no runner`)
        const runner = await parsed.command.load()
        const outcome = await runner(parsed.invocation, io)
        return outcome._tag === "Completed"
          ? outcome.exitCode
          : printFailure(
              describeFailure(outcome.error, ["baton", ...parsed.invocation.commandPath].join(" ")),
              outcome.json,
              io,
            )
      } catch (defect) {
        return printFailure(describeDefect(defect, io.env["BATON_DEBUG"] === "1"), json, io)
      }
    }
  }
}

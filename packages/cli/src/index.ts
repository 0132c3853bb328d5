/**
 * @baton/cli — The `baton` command-line interface. The executable is `dist/bin.js`; this entry
 * exposes the pieces it is built from, for tests and for embedding `baton` in another program.
 */
export { runCli } from "./run-cli.js"
export { processCliIo } from "./cli-io.js"
export type { CliIo } from "./cli-io.js"
export { parseArgv } from "./argv-parser.js"
export type { ParsedArgv } from "./argv-parser.js"
export { batonCommand } from "./command-tree.js"
export type {
  CommandSpec,
  CommandOutcome,
  CommandRunner,
  FlagSpec,
  Invocation,
  PositionalSpec,
} from "./command-spec.js"
export { renderHelp } from "./help-text.js"
export { assessDoctorFacts } from "./doctor-checks.js"
export type { CheckStatus, DoctorCheck } from "./doctor-checks.js"
export { gatherDoctorFacts } from "./doctor-facts.js"
export type { DoctorFacts, DoctorProbes } from "./doctor-facts.js"
export { renderDoctorJson, renderDoctorText } from "./doctor-report.js"
export type { DoctorReport } from "./doctor-report.js"

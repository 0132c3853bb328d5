#!/usr/bin/env node
/**
 * The `baton` executable. Guarantees: imports only the parser, the command tree and the failure
 * reporter up front (no effect, no MCP SDK, no SQLite); commands load their modules on demand.
 * A closed stdout (`baton doctor | head -1`) ends the process quietly.
 */
import { processCliIo } from "./cli-io.js"
import { runCli } from "./run-cli.js"

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
  throw error
})

process.exitCode = await runCli(process.argv.slice(2), processCliIo())

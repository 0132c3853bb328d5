#!/usr/bin/env node
/**
 * The `baton` executable. Guarantees: imports only the parser, the command tree and the failure
 * reporter up front (no effect, no MCP SDK, no SQLite); commands load their modules on demand.
 * A closed stdout (`baton doctor | head -1`) ends the process quietly; a finished command ends it
 * once its output is written, whatever timers a library left running.
 */
import { userInfo } from "node:os"
import { isAbsolute } from "node:path"
import { processCliIo } from "./cli-io.js"
import { runCli } from "./run-cli.js"

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
  throw error
})

// An empty or relative HOME (`HOME= baton …`, an unset HOME in a service manager) made every
// default path (the index, wake jobs, compaction journals) relative to the working directory: a
// hook run in a project dropped `.local/share/baton` into it. Such a HOME counts as unset: the
// account's home directory, as for a HOME that is not set at all. Children (the compaction
// worker, a background index run, `baton mcp`'s tools) inherit the same value.
const home = process.env["HOME"]
if (home === undefined || !isAbsolute(home)) {
  try {
    process.env["HOME"] = userInfo().homedir
  } catch {
    // No account entry: the paths say so when they are used.
  }
}

const code = await runCli(process.argv.slice(2), processCliIo())
process.exitCode = code

// The command is done. A library's timer can outlive it by minutes (an HTTP client's own request
// timeout, left running when Baton gave up on a provider that does not answer): once the output
// is written, the process ends instead of waiting for it.
const written = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve()
    else stream.write("", () => resolve())
  })
await Promise.all([written(process.stdout), written(process.stderr)])
process.exit(code)

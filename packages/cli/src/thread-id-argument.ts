/**
 * The thread id of a command: the positional argument, else `$CODEX_THREAD_ID` — never guessed —
 * and it must look like a Codex thread id (a UUID). Anything else is bad usage (exit 2) with a
 * sentence saying what to pass. Loads nothing heavy.
 */
import type { CliIo } from "./cli-io.js"
import type { CliUsageError } from "./errors.js"
import { cliUsageError } from "./errors.js"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The thread id from `given` or the environment, or the usage error explaining what is wrong. */
export const resolveThreadId = (
  given: string | undefined,
  io: CliIo,
  helpCommand: string,
):
  | { readonly _tag: "Found"; readonly threadId: string }
  | { readonly _tag: "Invalid"; readonly error: CliUsageError } => {
  const threadId = given ?? io.env["CODEX_THREAD_ID"]
  if (threadId === undefined || threadId === "")
    return {
      _tag: "Invalid",
      error: cliUsageError(
        "no thread id: pass one, or run inside Codex where CODEX_THREAD_ID is set",
        helpCommand,
      ),
    }
  if (!UUID.test(threadId))
    return {
      _tag: "Invalid",
      error: cliUsageError(
        `'${threadId.slice(0, 80)}'${given === undefined ? " (from CODEX_THREAD_ID)" : ""} is not a Codex thread id (a UUID such as 019a…-…)`,
        helpCommand,
      ),
    }
  return { _tag: "Found", threadId }
}

/**
 * `baton mcp`: serves the `baton` MCP server on stdio. Guarantees: the MCP SDK is imported only
 * here; stdout is left to the protocol (this command prints nothing itself).
 */
import type { CommandRunner } from "./command-spec.js"

/** Runs `baton mcp` until stdin ends. */
export const runMcp: CommandRunner = async () => {
  const { runStdio } = await import("@baton/mcp-server")
  await runStdio()
  return { _tag: "Completed", exitCode: 0 }
}

/**
 * Baton's own recall tools as the agents name them. Their results are copies of records already
 * indexed, so a transcript's copy stays a raw record flagged `skipForGrep` — else every recall
 * call would come back as a hit of the next grep (echoes of echoes).
 *
 * - Claude Code: `mcp__baton__grep` from a configured server, `mcp__plugin_baton_baton__grep` from
 *   the plugin.
 * - Codex: `name: "grep"` with `namespace: "mcp__baton"` (0.169), `mcp__baton__grep` as one name
 *   (earlier releases), or `server: "baton", tool: "grep"` in its MCP call items and events.
 */
const recallTools = new Set([
  "recall_search",
  "grep",
  "expand_around",
  "step",
  "recent_sessions",
  "recall_status",
])

const qualifiedName = /^mcp__(?:plugin_baton_)?baton__([a-z_]+)$/

/** True for a qualified tool name (`mcp__baton__grep`) of one of Baton's recall tools. */
export const isBatonRecallToolName = (name: string | undefined): boolean => {
  const match = name === undefined ? null : qualifiedName.exec(name)
  return match !== null && recallTools.has(match[1] ?? "")
}

/** True for an MCP call of `tool` on `server` that is one of Baton's recall tools. */
export const isBatonRecallToolCall = (
  server: string | undefined,
  tool: string | undefined,
): boolean => server === "baton" && recallTools.has(tool ?? "")

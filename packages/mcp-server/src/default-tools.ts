/**
 * The tools `baton mcp` serves. Capability packages' tools are added to this list as they land;
 * order is the order `tools/list` shows.
 */
import type { BatonTool } from "./baton-tool.js"
import {
  cancelCompactionTool,
  compactionStatusTool,
  scheduleCompactionTool,
} from "./compaction-tools.js"
import { handoffValidateTool } from "./handoff-validate-tool.js"
import { probeCompactionTool } from "./probe-compaction-tool.js"
import { recallTools } from "./recall-tools.js"
import { wakeTools } from "./wake-tools.js"

/** Every tool of the `baton` MCP server. */
export const batonTools: readonly BatonTool[] = [
  handoffValidateTool,
  probeCompactionTool,
  scheduleCompactionTool,
  compactionStatusTool,
  cancelCompactionTool,
  ...recallTools,
  ...wakeTools,
]

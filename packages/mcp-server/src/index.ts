/**
 * @baton/mcp-server — The one `baton` MCP server: tools registered by the capability packages.
 * Define a tool with `defineBatonTool`, serve a list with `createBatonServer`, or run the default
 * list on stdio with `runStdio` (what `baton mcp` does).
 */
export {
  createBatonServer,
  registerBatonTool,
  toolInputSchema,
  batonServerName,
  stderrDefectLogger,
} from "./baton-server.js"
export type { BatonServerOptions, DefectLogger } from "./baton-server.js"
export { defineBatonTool, toolSuccess, toolFailure } from "./baton-tool.js"
export type { BatonTool, ToolContext, ToolFailure, ToolOutcome } from "./baton-tool.js"
export { batonTools } from "./default-tools.js"
export { DrainingTransport } from "./draining-transport.js"
export { DEFAULT_MAX_LINE_BYTES, LineTransport } from "./line-transport.js"
export type { LineTransportOptions } from "./line-transport.js"
export {
  handoffValidateTool,
  handoffValidateInput,
  handoffValidateOutput,
} from "./handoff-validate-tool.js"
export {
  probeCompactionInput,
  probeCompactionOutput,
  probeCompactionTool,
} from "./probe-compaction-tool.js"
export { runStdio } from "./stdio-runner.js"
export type { StdioOptions } from "./stdio-runner.js"
export { toCallToolResult, defectToCallToolResult, describeToolFailure } from "./tool-result.js"

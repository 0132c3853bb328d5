/**
 * Builds the one `baton` MCP server from a list of tools. Guarantees: every tool is registered
 * with its input and output schema; every call goes through `tool-result.ts` (success, tagged
 * failure or defect — a handler's throw never reaches the SDK); requests are handled
 * concurrently, so a slow tool never holds up `ping` or another call. Tool names are unique.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { BatonTool } from "./baton-tool.js"
import { serverVersion } from "./server-version.js"
import { defectToCallToolResult, toCallToolResult } from "./tool-result.js"

/** Called with every defect (a handler that threw); the default writes one line to stderr. */
export type DefectLogger = (defect: unknown, toolName: string) => void

/** Options for {@link createBatonServer}. */
export interface BatonServerOptions {
  readonly tools: readonly BatonTool[]
  readonly version?: string
  readonly onDefect?: DefectLogger
}

/** The server's name in `initialize`. */
export const batonServerName = "baton"

const instructions = [
  "Baton gives coding agents continuity.",
  "Recall: recall_search finds past Claude Code and Codex sessions on this machine by meaning and words; expand_around / step walk the raw turns of a hit; grep finds exact text (tool output included); recent_sessions lists sessions; recall_status says what is indexed.",
  "Compaction (Codex): read compaction_status and probe_compaction first, validate the handoff with handoff_validate, call schedule_compaction once with the exact $CODEX_THREAD_ID, then end your turn.",
  "Wake: wake_create / wake_checkpoint keep a long task's checkpoint current; wake_complete ends it, wake_pause parks it for the user; wake_status reports it.",
].join(" ")

/** Writes a defect to stderr: one line, the stack only when BATON_DEBUG=1. */
export const stderrDefectLogger: DefectLogger = (defect, toolName) => {
  const debug = process.env["BATON_DEBUG"] === "1"
  const text =
    defect instanceof Error
      ? debug
        ? (defect.stack ?? defect.message)
        : defect.message
      : String(defect)
  process.stderr.write(`baton mcp: defect in tool ${toolName}: ${text} — please report this bug\n`)
}

/**
 * A tool's input as the server checks it: an unknown argument is refused (an agent that passes
 * `uuid` for `turn_id` must hear so, not get another turn), and `null` stands for an omitted
 * optional argument, as callers that fill every field of a function schema send it.
 */
export const toolInputSchema = (shape: z.ZodRawShape): z.ZodObject =>
  z
    .object(
      Object.fromEntries(
        Object.entries(shape).map(([name, core]) => {
          // Every shape here is built with zod's classic API.
          const field = core as z.ZodType
          if (!field.safeParse(undefined).success) return [name, field]
          const nullable = field.nullish()
          return [
            name,
            field.description === undefined ? nullable : nullable.describe(field.description),
          ]
        }),
      ),
    )
    .strict()

/** The arguments without the `null`s that stand for omitted ones. */
const withoutNulls = (input: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null))

/** Registers one tool on an existing server, routing every outcome through the one result mapper. */
export const registerBatonTool = (
  server: McpServer,
  tool: BatonTool,
  onDefect: DefectLogger,
): RegisteredTool =>
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: toolInputSchema(tool.inputSchema),
      outputSchema: tool.outputSchema,
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    },
    async (input, extra) => {
      try {
        const args = withoutNulls(input)
        return toCallToolResult(await tool.handler(args, { signal: extra.signal }), tool.name)
      } catch (defect) {
        onDefect(defect, tool.name)
        return defectToCallToolResult(defect, tool.name)
      }
    },
  )

/** Creates the `baton` server carrying `tools`; connect it to a transport to serve. */
export const createBatonServer = (options: BatonServerOptions): McpServer => {
  const names = options.tools.map((tool) => tool.name)
  const duplicate = names.find((name, index) => names.indexOf(name) !== index)
  if (duplicate !== undefined)
    throw new Error(`baton MCP server: tool '${duplicate}' is registered twice`)
  const server = new McpServer(
    { name: batonServerName, version: options.version ?? serverVersion() },
    { capabilities: { tools: {} }, instructions },
  )
  for (const tool of options.tools)
    registerBatonTool(server, tool, options.onDefect ?? stderrDefectLogger)
  return server
}

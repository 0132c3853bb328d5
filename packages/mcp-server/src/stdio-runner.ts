/**
 * Serves the `baton` MCP server on this process's stdin/stdout (used by `baton mcp`).
 * Guarantees: stdout carries only MCP messages (one-line logs go to stderr, never quoting client
 * input); a request line too long or not JSON-RPC is answered with an error and the server keeps
 * serving (`LineTransport`); when stdin ends, every request already received is answered before the server closes;
 * resolves once closed.
 */
import type { BatonTool } from "./baton-tool.js"
import { createBatonServer } from "./baton-server.js"
import { batonTools } from "./default-tools.js"
import { DrainingTransport } from "./draining-transport.js"
import { LineTransport } from "./line-transport.js"

/** Options for {@link runStdio}; the default tool list is {@link batonTools}. */
export interface StdioOptions {
  readonly tools?: readonly BatonTool[]
}

// JSON.parse messages quote the input; a line from the client may hold anything, so say less.
const describeTransportError = (error: Error): string =>
  error instanceof SyntaxError ? "ignored a line that is not valid JSON" : error.message

/** Runs the server on stdio until stdin ends and every pending request is answered. */
export const runStdio = async (options: StdioOptions = {}): Promise<void> => {
  const server = createBatonServer({ tools: options.tools ?? batonTools })
  const transport = new DrainingTransport(new LineTransport())
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve()
  })
  server.server.onerror = (error) =>
    void process.stderr.write(`baton mcp: ${describeTransportError(error)}\n`)
  process.stdin.once("end", () => {
    void transport.drained().then(() => server.close())
  })
  await server.connect(transport)
  await closed
}

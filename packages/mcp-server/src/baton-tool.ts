/**
 * The definition every Baton MCP tool follows: name, title, description, zod input and output
 * shapes, and a handler that returns a success or a tagged failure. Guarantees: plain data — a
 * definition does not touch the server; a handler never needs to build MCP results itself (the
 * server does that in `tool-result.ts`), and a thrown error is treated as a defect, not a result.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import type { z } from "zod"

/** A domain error as data: anything with a string `_tag` (e.g. an Effect `Data.TaggedError`). */
export interface ToolFailure {
  readonly _tag: string
}

/**
 * What a handler returns. Shaped like effect's `Result`, so `Effect.runPromise(Effect.result(e))`
 * can be returned as is.
 */
export type ToolOutcome<A> =
  | { readonly _tag: "Success"; readonly success: A }
  | { readonly _tag: "Failure"; readonly failure: ToolFailure }

/** Per-call context handed to a handler. */
export interface ToolContext {
  /** Aborted when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal
}

/** One tool of the `baton` server. Every tool declares an output schema and returns structured content. */
export interface BatonTool<
  Input extends z.ZodRawShape = z.ZodRawShape,
  Output extends z.ZodRawShape = z.ZodRawShape,
> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: Input
  readonly outputSchema: Output
  readonly annotations?: ToolAnnotations
  /** Runs the tool on input already validated against `inputSchema`. */
  handler(
    input: z.output<z.ZodObject<Input>>,
    context: ToolContext,
  ): Promise<ToolOutcome<z.output<z.ZodObject<Output>>>>
}

/** Defines a tool with its input and output types inferred from the zod shapes. */
export const defineBatonTool = <Input extends z.ZodRawShape, Output extends z.ZodRawShape>(
  tool: BatonTool<Input, Output>,
): BatonTool<Input, Output> => tool

/** A successful outcome. */
export const toolSuccess = <A>(success: A): ToolOutcome<A> => ({ _tag: "Success", success })

/** A failed outcome carrying a tagged error. */
export const toolFailure = <A = never>(failure: ToolFailure): ToolOutcome<A> => ({
  _tag: "Failure",
  failure,
})

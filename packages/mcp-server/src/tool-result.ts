/**
 * The one place the MCP server turns tool outcomes into `CallToolResult`s. Success: the value as
 * `structuredContent` plus a text block mirroring it. Tagged failure: `isError` with the `_tag`
 * and the error's own message (domain errors say what to fix), plus its fields as JSON. Defect:
 * `isError` saying it is a bug in baton, not in the input. Guarantees: never includes a stack
 * trace or anything but an error's own fields (which never carry a flagged secret); a string
 * field is shown up to `ECHO_CHARS` characters (a field often echoes the caller's argument).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { ToolFailure, ToolOutcome } from "./baton-tool.js"
import { echoed } from "./echoed-input.js"

const hiddenKeys = new Set(["_tag", "name", "message", "stack", "cause"])

/** The data fields of a tagged error (no stack, name, message or cause). */
export const failureFields = (failure: ToolFailure): Readonly<Record<string, unknown>> =>
  Object.fromEntries(Object.entries(failure).filter(([key]) => !hiddenKeys.has(key)))

/** JSON with every string cut to `ECHO_CHARS` characters. */
const boundedJson = (value: unknown): string | undefined =>
  JSON.stringify(value, (_key, field: unknown) =>
    typeof field === "string" ? echoed(field) : field,
  )

const show = (value: unknown): string =>
  typeof value === "string" ? echoed(value) : (boundedJson(value) ?? String(value))

const ownMessage = (failure: ToolFailure): string | undefined => {
  const message = (failure as { message?: unknown }).message
  return typeof message === "string" && message !== "" ? message : undefined
}

/** One actionable sentence for a tagged failure, starting with its `_tag`. */
export const describeToolFailure = (failure: ToolFailure, toolName: string): string => {
  const message = ownMessage(failure)
  if (message !== undefined) return `${failure._tag}: ${message}`
  const details = Object.entries(failureFields(failure)).map(
    ([key, value]) => `${key}=${show(value)}`,
  )
  return `${failure._tag}: ${details.join(", ") || "failed"} (from ${toolName}).`
}

/** Maps an outcome to the tool result the client sees. */
export const toCallToolResult = <A>(outcome: ToolOutcome<A>, toolName: string): CallToolResult => {
  if (outcome._tag === "Success") {
    return {
      content: [{ type: "text", text: JSON.stringify(outcome.success) }],
      structuredContent: outcome.success as Record<string, unknown>,
    }
  }
  return {
    isError: true,
    content: [
      { type: "text", text: describeToolFailure(outcome.failure, toolName) },
      {
        type: "text",
        text: boundedJson({ _tag: outcome.failure._tag, ...failureFields(outcome.failure) }) ?? "",
      },
    ],
  }
}

/** Maps a throw from a handler (a bug, not a domain error) to an `isError` result. */
export const defectToCallToolResult = (defect: unknown, toolName: string): CallToolResult => {
  const summary = defect instanceof Error ? `${defect.name}: ${defect.message}` : show(defect)
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: `Defect: ${toolName} failed unexpectedly (${summary.split("\n")[0] ?? ""}). This is a bug in baton, not in your input; please report it. Retrying with the same input will likely fail the same way.`,
      },
    ],
  }
}

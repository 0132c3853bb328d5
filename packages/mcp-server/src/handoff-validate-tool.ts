/**
 * `handoff_validate`: checks a handoff the way Baton will accept it (JSON → schema → size →
 * secret scan) and returns its canonical size and SHA-256. Input decision: `handoff` is either
 * the handoff object itself or a string of JSON text; the input schema stays permissive on
 * purpose so every rule is reported by @baton/handoff, naming the field and rule, rather than
 * by generic schema validation. Guarantees: read-only, no IO; @baton/handoff (and effect) load on
 * the first call, so `initialize` and `tools/list` stay fast.
 */
import { z } from "zod"
import { defineBatonTool } from "./baton-tool.js"

/** Input of `handoff_validate`. */
export const handoffValidateInput = {
  handoff: z
    .union([z.record(z.string(), z.unknown()), z.string()])
    .describe(
      "The handoff: an object {summary: string (required), preserve?: string[] (≤ 40), discard?: string[] (≤ 40), nextStep?: string (required when resume is true), resume: boolean}, or the same object as a JSON string.",
    ),
}

/** Output of `handoff_validate` when the handoff is valid. */
export const handoffValidateOutput = {
  valid: z.boolean().describe("true: the handoff passed schema, size and secret checks"),
  sizeBytes: z
    .number()
    .int()
    .nonnegative()
    .describe("UTF-8 bytes of the handoff's canonical JSON encoding"),
  limitBytes: z.number().int().positive().describe("the largest size accepted"),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe("SHA-256 (lowercase hex) of the canonical JSON encoding"),
}

const utf8 = new TextEncoder()

/** The `handoff_validate` tool. */
export const handoffValidateTool = defineBatonTool({
  name: "handoff_validate",
  title: "Validate a handoff",
  description:
    "Checks a handoff before you rely on it: required fields, list limits, at most 32,000 bytes of canonical JSON, and no credentials. Returns its size and SHA-256, or an error naming the field and the rule it breaks; fix that and call again.",
  inputSchema: handoffValidateInput,
  outputSchema: handoffValidateOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async ({ handoff }) => {
    const {
      canonicalJson,
      handoffDigest,
      handoffLimits,
      parseHandoffJsonResult,
      validateHandoffResult,
    } = await import("@baton/handoff")
    const result =
      typeof handoff === "string" ? parseHandoffJsonResult(handoff) : validateHandoffResult(handoff)
    if (result._tag === "Failure") return result
    return {
      _tag: "Success",
      success: {
        valid: true,
        sizeBytes: utf8.encode(canonicalJson(result.success)).length,
        limitBytes: handoffLimits.maxBytes,
        sha256: handoffDigest(result.success),
      },
    }
  },
})

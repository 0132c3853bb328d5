/**
 * `baton handoff validate` and `baton handoff hash`. Guarantees: the input is validated by
 * @baton/handoff (JSON → schema → size → secret scan) before anything is printed about it; the
 * digest is the library's (SHA-256 of the canonical encoding); a rejected handoff is returned as
 * its tagged error for `failure-report.ts` to print, and no input text is ever echoed.
 */
import type { CommandOutcome, CommandRunner, Invocation } from "./command-spec.js"
import type { CliIo } from "./cli-io.js"
import { readInputBytes } from "./handoff-input.js"

/** A valid handoff's facts, as printed by both commands. */
export interface HandoffFacts {
  readonly sizeBytes: number
  readonly limitBytes: number
  readonly sha256: string
}

const utf8 = new TextEncoder()

type Checked =
  | { readonly _tag: "Valid"; readonly facts: HandoffFacts }
  | Extract<CommandOutcome, { _tag: "Failed" }>

const checkHandoffFile = async (invocation: Invocation, io: CliIo): Promise<Checked> => {
  const json = invocation.flags["json"] === true
  const input = await readInputBytes(invocation.positionals[0] ?? "-", io)
  if (input._tag === "Failure") return { _tag: "Failed", error: input.failure, json }
  const { canonicalJson, handoffDigest, handoffLimits, parseHandoffJsonResult } =
    await import("@baton/handoff")
  const result = parseHandoffJsonResult(input.success)
  if (result._tag === "Failure") return { _tag: "Failed", error: result.failure, json }
  return {
    _tag: "Valid",
    facts: {
      sizeBytes: utf8.encode(canonicalJson(result.success)).length,
      limitBytes: handoffLimits.maxBytes,
      sha256: handoffDigest(result.success),
    },
  }
}

/** The human line `handoff validate` prints for a valid handoff. */
export const renderValidText = (facts: HandoffFacts): string =>
  `OK: valid handoff, ${facts.sizeBytes} of ${facts.limitBytes} bytes (canonical JSON), sha256 ${facts.sha256}\n`

/** Runs `baton handoff validate <file> [--json]`. */
export const runHandoffValidate: CommandRunner = async (invocation, io) => {
  const checked = await checkHandoffFile(invocation, io)
  if (checked._tag === "Failed") return checked
  io.stdout(
    invocation.flags["json"] === true
      ? `${JSON.stringify({ ok: true, valid: true, ...checked.facts })}\n`
      : renderValidText(checked.facts),
  )
  return { _tag: "Completed", exitCode: 0 }
}

/** Runs `baton handoff hash <file> [--json]`: the bare hex digest, or `{ok, sha256}`. */
export const runHandoffHash: CommandRunner = async (invocation, io) => {
  const checked = await checkHandoffFile(invocation, io)
  if (checked._tag === "Failed") return checked
  io.stdout(
    invocation.flags["json"] === true
      ? `${JSON.stringify({ ok: true, sha256: checked.facts.sha256 })}\n`
      : `${checked.facts.sha256}\n`,
  )
  return { _tag: "Completed", exitCode: 0 }
}

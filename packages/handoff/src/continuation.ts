/**
 * The text of the one continuation turn Baton sends after a compaction. Deterministic: the same
 * record and path always give the same text. The parts come in a fixed order (header with job
 * id; compaction done and only the authorized task resumes; the handoff path; user instructions
 * and stop requests win; only nextStep, no new compaction; discard is about context, not files)
 * and the text ends with the canonical JSON of the handoff on its own last line, so
 * `JSON.parse(text.slice(text.lastIndexOf("\n") + 1))` gives back the identical handoff.
 * Call it only with a record that verifyHandoffRecord accepted for a continuation.
 */
import { canonicalJson } from "./canonical-json.js"
import type { HandoffRecord } from "./handoff-record.js"

/** Line breaks and other control characters, which would let a value add lines of its own. */
// eslint-disable-next-line no-control-regex
const controlCharacter = /[\u0000-\u001f\u007f\u2028\u2029]/

/** `value` as written, or as a JSON string when it holds a control character. */
const oneLine = (value: string): string =>
  controlCharacter.test(value) ? JSON.stringify(value) : value

/**
 * The continuation turn's text for a verified record whose handoff is stored at `handoffPath`.
 * A job id or path holding a line break or another control character is written as a JSON
 * string, so it stays on its one line and cannot add instructions of its own.
 */
export const renderContinuation = (record: HandoffRecord, handoffPath: string): string =>
  [
    `Baton automatic continuation for job ${oneLine(record.jobId)}.`,
    "Context compaction has completed. This message resumes only the task that was authorized " +
      "before compaction; it authorizes nothing else.",
    `Saved handoff: ${oneLine(handoffPath)}`,
    "The latest user instructions and permission boundaries take precedence over this message. " +
      "If the user has asked you to stop, stop.",
    "Do only the handoff's nextStep. Do not schedule another compaction because of this message.",
    "The handoff's discard list refers to conversation context only; it never authorizes " +
      "deleting files or any other data.",
    "Handoff (exact canonical JSON):",
    canonicalJson(record.handoff),
  ].join("\n")

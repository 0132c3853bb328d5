/**
 * The memory capsule (`memory-capsule.md`, `WAKE_MEMORY_CAPSULE_V1`): a local, deterministic
 * projection of the checkpoint that a continuation reads first.
 *
 * Guarantees: at most CAPSULE_MAX_BYTES UTF-8 bytes for any checkpoint; every section header is
 * present; clipping is item-aware and by priority: the head of Objective and Next actions (and the
 * other "head" sections), the newest (last) entries of the chronological lists (Verified facts,
 * Decisions); a clipped section says how many items and bytes were left out; text is only ever
 * cut between code points, never inside a multi-byte character; likely secrets (API keys, tokens,
 * passwords; @baton/handoff's scanner) are masked as `[redacted <kind>]`, so they never reach a
 * continuation's prompt (the checkpoint file itself is left as written). Same input, same bytes.
 * It must never call a model, read a file or look at the clock.
 */
import { createHash } from "node:crypto"
import { findSecrets, maskSecrets } from "@baton/handoff"
import type { Checkpoint, CheckpointSectionKey } from "./checkpoint.js"
import { checkpointSectionHeadings } from "./checkpoint.js"

/** First line of every capsule. */
export const CAPSULE_MARKER = "# WAKE_MEMORY_CAPSULE_V1"

/** The hard cap on a capsule's size in UTF-8 bytes. */
export const CAPSULE_MAX_BYTES = 8192

/** The capsule's sections in the order they are rendered. */
export const capsuleSectionOrder: ReadonlyArray<CheckpointSectionKey> = [
  "objective",
  "currentPosition",
  "verifiedFacts",
  "decisions",
  "constraints",
  "activeFiles",
  "nextActions",
  "blockers",
  "resumePolicy",
  "handoff",
]

/** The order in which sections get their budget (first = most important). */
export const capsulePriority: ReadonlyArray<CheckpointSectionKey> = [
  "objective",
  "nextActions",
  "blockers",
  "currentPosition",
  "decisions",
  "constraints",
  "verifiedFacts",
  "activeFiles",
  "handoff",
  "resumePolicy",
]

/** Chronological lists keep their newest (last) items; every other section keeps its head. */
const keepsTail: ReadonlySet<CheckpointSectionKey> = new Set(["verifiedFacts", "decisions"])

/** Bytes each non-empty section is guaranteed before spare budget is shared out by priority. */
const floorBytes: Readonly<Record<CheckpointSectionKey, number>> = {
  objective: 640,
  nextActions: 896,
  blockers: 256,
  currentPosition: 384,
  decisions: 320,
  constraints: 256,
  verifiedFacts: 320,
  activeFiles: 192,
  handoff: 192,
  resumePolicy: 160,
}

// Worst-case length of a clip note (counts up to 10 digits each), reserved for every section.
const NOTE_RESERVE = 96

const RESUME_POLICY_FIXED = [
  "- Read this capsule first; it is the primary task memory.",
  "- Do not replay, reread or summarise the previous chat.",
  "- Inspect only the minimal live workspace state needed.",
  "- Open checkpoint.md only if this capsule is insufficient, inconsistent or points to it.",
].join("\n")

const EMPTY = "- None recorded."

/** How one section was clipped to fit. */
export interface ClippedSection {
  readonly section: CheckpointSectionKey
  readonly keptItems: number
  readonly totalItems: number
  readonly omittedBytes: number
}

/** A projected capsule and how it was clipped. */
export interface Capsule {
  readonly text: string
  readonly bytes: number
  readonly sha256: string
  readonly clipped: ReadonlyArray<ClippedSection>
  /** Likely secrets replaced by `[redacted <kind>]` (counted before clipping). */
  readonly maskedSecrets: number
}

const utf8 = (text: string): number => Buffer.byteLength(text, "utf8")

/** SHA-256 (hex) of the UTF-8 bytes of a text. */
export const sha256Hex = (text: string): string =>
  createHash("sha256").update(text, "utf8").digest("hex")

const listItem = /^(\s{0,3})([-*+]|\d{1,9}[.)])\s/

/** Splits a section body into items: list entries (with continuation lines) or paragraphs. */
export const splitItems = (body: string): ReadonlyArray<string> => {
  const items: Array<Array<string>> = []
  let current: Array<string> | null = null
  for (const line of body.split("\n")) {
    if (line.trim() === "") {
      current = null
      continue
    }
    if (current === null || listItem.test(line)) {
      current = [line]
      items.push(current)
    } else current.push(line)
  }
  return items.map((lines) => lines.join("\n"))
}

/**
 * The longest prefix of `text` within `maxBytes` UTF-8 bytes, cut between code points. A budget
 * that is not a number (NaN) or below 0 fits nothing: the answer is "" (never the whole text).
 */
export const clipUtf8 = (text: string, maxBytes: number): string => {
  if (Number.isNaN(maxBytes)) return ""
  if (utf8(text) <= maxBytes) return text
  let bytes = 0
  let end = 0
  for (const char of text) {
    const size = utf8(char)
    if (bytes + size > maxBytes) break
    bytes += size
    end += char.length
  }
  return text.slice(0, end)
}

const ELLIPSIS = " …"

/** Fits a section's items into `budget` bytes (items joined by "\n"), by its keep rule. */
const fitSection = (
  key: CheckpointSectionKey,
  items: ReadonlyArray<string>,
  budget: number,
): { readonly body: string; readonly clipped: ClippedSection | null } => {
  const total = items.reduce((sum, item) => sum + utf8(item), 0) + Math.max(0, items.length - 1)
  if (total <= budget) return { body: items.join("\n"), clipped: null }
  const tail = keepsTail.has(key)
  const ordered = tail ? [...items].reverse() : items
  const kept: Array<string> = []
  let used = 0
  let partial = false
  for (const item of ordered) {
    const cost = utf8(item) + (kept.length > 0 ? 1 : 0)
    if (used + cost <= budget) {
      kept.push(item)
      used += cost
      continue
    }
    // The most important item must show at least its head, even when it alone is too big.
    if (kept.length === 0) {
      const room = budget - utf8(ELLIPSIS)
      if (room > 0) {
        kept.push(clipUtf8(item, room) + ELLIPSIS)
        partial = true
      }
    }
    break
  }
  const body = (tail ? [...kept].reverse() : kept).join("\n")
  const keptItems = kept.length - (partial ? 1 : 0)
  const keptBytes = utf8(body) - (partial ? utf8(ELLIPSIS) : 0)
  return {
    body,
    clipped: {
      section: key,
      keptItems,
      totalItems: items.length,
      omittedBytes: Math.max(0, total - keptBytes),
    },
  }
}

const clipNote = (clipped: ClippedSection, tail: boolean): string =>
  `- [clipped: ${clipped.totalItems - clipped.keptItems} of ${clipped.totalItems} ${
    tail ? "older " : ""
  }items, ${clipped.omittedBytes} bytes left out; see checkpoint.md]`

const header = (jobId: string, checkpointSha256: string): string =>
  [
    CAPSULE_MARKER,
    "",
    "Task-state serialization projected from checkpoint.md; not a transcript or a summary of any chat.",
    `Job: ${jobId}`,
    "Policy: capsule_first / do_not_replay",
    `Checkpoint-SHA256: ${checkpointSha256}`,
  ].join("\n")

/** Projects the capsule for `jobId` from a parsed checkpoint and the checkpoint file's text. */
export const projectCapsule = (input: {
  readonly jobId: string
  readonly checkpoint: Checkpoint
  readonly checkpointText: string
}): Capsule => {
  const { checkpoint } = input
  let maskedSecrets = 0
  const items = Object.fromEntries(
    capsuleSectionOrder.map((key) => {
      const section = checkpoint.sections[key]
      const found = findSecrets(section).length
      maskedSecrets += found
      return [key, splitItems(found === 0 ? section : maskSecrets(section))]
    }),
  ) as Record<CheckpointSectionKey, ReadonlyArray<string>>
  const head = header(input.jobId, sha256Hex(input.checkpointText))
  const skeleton =
    utf8(head) +
    capsuleSectionOrder.reduce(
      (sum, key) =>
        sum +
        utf8(`\n\n## ${checkpointSectionHeadings[key]}\n`) +
        NOTE_RESERVE +
        (key === "resumePolicy" ? utf8(RESUME_POLICY_FIXED) + 1 : 0) +
        utf8(EMPTY),
      0,
    ) +
    1
  let spare = CAPSULE_MAX_BYTES - skeleton
  const need = (key: CheckpointSectionKey): number => {
    const list = items[key]
    return list.reduce((sum, item) => sum + utf8(item), 0) + Math.max(0, list.length - 1)
  }
  const budget = {} as Record<CheckpointSectionKey, number>
  for (const key of capsulePriority) {
    const give = Math.max(0, Math.min(need(key), floorBytes[key], spare))
    budget[key] = give
    spare -= give
  }
  for (const key of capsulePriority) {
    const give = Math.max(0, Math.min(need(key) - budget[key], spare))
    budget[key] += give
    spare -= give
  }
  const clipped: Array<ClippedSection> = []
  const parts = [head]
  for (const key of capsuleSectionOrder) {
    const list = items[key]
    const fitted =
      list.length === 0 ? { body: "", clipped: null } : fitSection(key, list, budget[key])
    const lines: Array<string> = []
    if (key === "resumePolicy") lines.push(RESUME_POLICY_FIXED)
    const tail = keepsTail.has(key)
    if (fitted.clipped !== null) clipped.push(fitted.clipped)
    if (fitted.clipped !== null && tail) lines.push(clipNote(fitted.clipped, true))
    if (fitted.body !== "") lines.push(fitted.body)
    if (fitted.clipped !== null && !tail) lines.push(clipNote(fitted.clipped, false))
    if (lines.length === 0) lines.push(EMPTY)
    parts.push(`\n\n## ${checkpointSectionHeadings[key]}\n${lines.join("\n")}`)
  }
  const text = `${parts.join("")}\n`
  return { text, bytes: utf8(text), sha256: sha256Hex(text), clipped, maskedSecrets }
}

/** Whether a stored capsule still matches its checkpoint and was not edited by hand. */
export interface CapsuleFreshness {
  /** The checkpoint changed since the capsule was projected: refresh it. */
  readonly checkpointNewerThanCapsule: boolean
  /** The capsule on disk is not the one Baton wrote (edited, or missing when null). */
  readonly capsuleModified: boolean
}

/** Compares the recorded hashes with the files' current texts (null = file missing). */
export const capsuleFreshness = (
  recorded: { readonly checkpointSha256: string | null; readonly capsuleSha256: string | null },
  current: { readonly checkpointText: string | null; readonly capsuleText: string | null },
): CapsuleFreshness => ({
  checkpointNewerThanCapsule:
    current.checkpointText === null ||
    recorded.checkpointSha256 !== sha256Hex(current.checkpointText),
  capsuleModified:
    current.capsuleText === null || recorded.capsuleSha256 !== sha256Hex(current.capsuleText),
})

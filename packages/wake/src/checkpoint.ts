/**
 * `checkpoint.md`: the agent-maintained task state, as named sections under `## ` headings.
 *
 * Guarantees: parsing never fails and never drops text (unknown sections are kept as `extra`,
 * text before the first heading as `preamble`); aliases from wake's v0.5 template (Goal, Current
 * state, Completed, Verification, Decisions, Do not repeat, Files changed) map onto Baton's
 * sections and are reported; `renderCheckpoint` is deterministic and `parseCheckpoint` inverts it.
 * Every line starting with `## ` is a heading (as in wake), even inside a code fence, so that
 * render ∘ parse is a fixed point for any text; a known section name under another level (`#`,
 * `###`) is not a heading but is reported (`misleveled`), and readiness problems name it. Pure.
 */

/** The checkpoint's known sections, in canonical order. */
export const checkpointSectionKeys = [
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
] as const

/** One known checkpoint section. */
export type CheckpointSectionKey = (typeof checkpointSectionKeys)[number]

/** The heading each known section is rendered with. */
export const checkpointSectionHeadings: Readonly<Record<CheckpointSectionKey, string>> = {
  objective: "Objective",
  currentPosition: "Current position",
  verifiedFacts: "Verified facts",
  decisions: "Decisions / do not repeat",
  constraints: "Constraints",
  activeFiles: "Active files",
  nextActions: "Next actions",
  blockers: "Blockers",
  resumePolicy: "Resume policy",
  handoff: "Handoff",
}

const aliases: Readonly<Record<string, CheckpointSectionKey>> = {
  goal: "objective",
  "current state": "currentPosition",
  completed: "verifiedFacts",
  verification: "verifiedFacts",
  decisions: "decisions",
  "do not repeat": "decisions",
  "decisions / do-not-repeat": "decisions",
  "files changed": "activeFiles",
  blocker: "blockers",
}

/** A section with a heading Baton does not know; kept verbatim, never projected. */
export interface ExtraSection {
  readonly heading: string
  readonly body: string
}

/** A parsed checkpoint: bodies have no leading/trailing blank lines and use `\n`. */
export interface Checkpoint {
  readonly preamble: string
  readonly sections: Readonly<Record<CheckpointSectionKey, string>>
  readonly extra: ReadonlyArray<ExtraSection>
}

/** What parsing noticed; none of it is an error. */
export interface CheckpointReport {
  /** Known sections with no heading in the file. */
  readonly missing: ReadonlyArray<CheckpointSectionKey>
  /** Headings Baton does not know (kept as `extra`). */
  readonly unknown: ReadonlyArray<string>
  /** Alias headings mapped onto a known section, e.g. `Goal → objective`. */
  readonly aliased: ReadonlyArray<{
    readonly heading: string
    readonly section: CheckpointSectionKey
  }>
  /** Sections whose heading appeared more than once (bodies were joined in order). */
  readonly duplicated: ReadonlyArray<CheckpointSectionKey>
  /**
   * Lines that name a section with another heading level (`# Objective`, `### Next actions`):
   * not headings here (their text stays in the section above), reported so the writer can fix them.
   */
  readonly misleveled: ReadonlyArray<{
    readonly line: string
    readonly section: CheckpointSectionKey
  }>
}

/** The title line of a fresh checkpoint. */
export const CHECKPOINT_TITLE = "# Baton wake checkpoint"

/** The placeholder a fresh checkpoint carries until the agent fills it. */
export const PLACEHOLDER = "REPLACE_ME"

/** Checkpoints above this size are refused at arm time (as in wake). */
export const CHECKPOINT_MAX_BYTES = 64 * 1024

const normalizeHeading = (heading: string): string =>
  heading.trim().toLowerCase().replace(/\s+/g, " ")

const keyOf = (
  heading: string,
): { readonly key: CheckpointSectionKey; readonly aliased: boolean } | null => {
  const normalized = normalizeHeading(heading)
  for (const key of checkpointSectionKeys)
    if (normalizeHeading(checkpointSectionHeadings[key]) === normalized)
      return { key, aliased: false }
  const alias = aliases[normalized]
  return alias === undefined ? null : { key: alias, aliased: true }
}

const trimBlankLines = (lines: ReadonlyArray<string>): string => {
  let start = 0
  let end = lines.length
  while (start < end && (lines[start] ?? "").trim() === "") start++
  while (end > start && (lines[end - 1] ?? "").trim() === "") end--
  return lines.slice(start, end).join("\n")
}

const headingPattern = /^## (.*)$/
/** A Markdown heading of any other level (`#`, `###` … `######`). */
const otherHeadingPattern = /^(?:#|#{3,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/

const emptySections = (): Record<CheckpointSectionKey, string> => ({
  objective: "",
  currentPosition: "",
  verifiedFacts: "",
  decisions: "",
  constraints: "",
  activeFiles: "",
  nextActions: "",
  blockers: "",
  resumePolicy: "",
  handoff: "",
})

/** Parses checkpoint Markdown; never fails. */
export const parseCheckpoint = (
  markdown: string,
): { readonly checkpoint: Checkpoint; readonly report: CheckpointReport } => {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n")
  const blocks: Array<{ heading: string | null; lines: Array<string> }> = [
    { heading: null, lines: [] },
  ]
  const misleveled: Array<{ line: string; section: CheckpointSectionKey }> = []
  for (const line of lines) {
    const heading = headingPattern.exec(line)
    if (heading !== null) blocks.push({ heading: heading[1] ?? "", lines: [] })
    else {
      blocks[blocks.length - 1]?.lines.push(line)
      const other = otherHeadingPattern.exec(line)
      const known = other === null ? null : keyOf(other[1] ?? "")
      if (known !== null) misleveled.push({ line: line.trim(), section: known.key })
    }
  }
  const sections = emptySections()
  const seen = new Set<CheckpointSectionKey>()
  const duplicated = new Set<CheckpointSectionKey>()
  const extra: Array<ExtraSection> = []
  const unknown: Array<string> = []
  const aliased: Array<{ heading: string; section: CheckpointSectionKey }> = []
  let preamble = ""
  for (const block of blocks) {
    const body = trimBlankLines(block.lines)
    if (block.heading === null) {
      preamble = body
      continue
    }
    const known = keyOf(block.heading)
    if (known === null) {
      extra.push({ heading: block.heading.trim(), body })
      unknown.push(block.heading.trim())
      continue
    }
    if (known.aliased) aliased.push({ heading: block.heading.trim(), section: known.key })
    if (seen.has(known.key)) {
      duplicated.add(known.key)
      const previous = sections[known.key]
      sections[known.key] =
        previous === "" ? body : body === "" ? previous : `${previous}\n\n${body}`
    } else sections[known.key] = body
    seen.add(known.key)
  }
  return {
    checkpoint: { preamble, sections, extra },
    report: {
      missing: checkpointSectionKeys.filter((key) => !seen.has(key)),
      unknown,
      aliased,
      duplicated: checkpointSectionKeys.filter((key) => duplicated.has(key)),
      misleveled,
    },
  }
}

/** Renders a checkpoint: preamble, every known section in canonical order, then extra sections. */
export const renderCheckpoint = (checkpoint: Checkpoint): string => {
  const parts: Array<string> = []
  if (checkpoint.preamble !== "") parts.push(checkpoint.preamble)
  const section = (heading: string, body: string) =>
    parts.push(body === "" ? `## ${heading}` : `## ${heading}\n\n${body}`)
  for (const key of checkpointSectionKeys)
    section(checkpointSectionHeadings[key], checkpoint.sections[key])
  for (const { heading, body } of checkpoint.extra) section(heading, body)
  return `${parts.join("\n\n")}\n`
}

/** The checkpoint a new job starts with; `objective` replaces the placeholder when given. */
export const checkpointTemplate = (objective: string | null): Checkpoint => ({
  preamble: CHECKPOINT_TITLE,
  sections: {
    ...emptySections(),
    objective: objective === null || objective.trim() === "" ? PLACEHOLDER : objective.trim(),
    currentPosition: "Checkpoint created; fill this before arming.",
    verifiedFacts: "- None recorded yet.",
    decisions: "- None recorded yet.",
    constraints:
      "- Preserve completed work in the workspace.\n- Do not reread or replay the old chat.",
    activeFiles: "- None recorded yet.",
    nextActions: `1. ${PLACEHOLDER}`,
    blockers: "- None.",
    resumePolicy:
      "- Read the memory capsule first; open this checkpoint only when it is not enough.",
    handoff:
      "- Update this checkpoint after every milestone and before long, risky or quota-heavy work.",
  },
  extra: [],
})

/** Why a checkpoint cannot be armed yet; empty when it can. */
export const checkpointProblems = (markdown: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const bytes = Buffer.byteLength(markdown, "utf8")
  if (bytes > CHECKPOINT_MAX_BYTES)
    problems.push(`checkpoint is ${bytes} bytes; the limit is ${CHECKPOINT_MAX_BYTES}`)
  if (markdown.includes(PLACEHOLDER)) problems.push(`checkpoint still contains ${PLACEHOLDER}`)
  const { checkpoint, report } = parseCheckpoint(markdown)
  const empty = (key: CheckpointSectionKey) => {
    const name = checkpointSectionHeadings[key]
    const found = report.misleveled.find((m) => m.section === key)
    return found === undefined
      ? `${name} is empty`
      : `${name} is empty: found \`${found.line}\`, but sections use \`## \` headings (\`## ${name}\`)`
  }
  if (checkpoint.sections.objective.trim() === "") problems.push(empty("objective"))
  if (checkpoint.sections.nextActions.trim() === "") problems.push(empty("nextActions"))
  return problems
}

/**
 * What parsing noticed besides readiness, one line each (empty when nothing): headings at another
 * level than `## `, unknown sections (kept, never projected into the capsule), missing, aliased
 * and duplicated sections. Notes never block arming.
 */
export const checkpointNotes = (markdown: string): ReadonlyArray<string> => {
  const { report } = parseCheckpoint(markdown)
  const names = (keys: ReadonlyArray<CheckpointSectionKey>) =>
    keys.map((key) => checkpointSectionHeadings[key]).join(", ")
  const notes: Array<string> = []
  for (const { line, section } of report.misleveled)
    notes.push(
      `found \`${line}\`: not a section heading; sections use \`## \` headings (\`## ${checkpointSectionHeadings[section]}\`)`,
    )
  if (report.unknown.length > 0)
    notes.push(
      `unknown sections (kept in checkpoint.md, not in the capsule): ${report.unknown.join(", ")}`,
    )
  if (report.missing.length > 0) notes.push(`missing sections: ${names(report.missing)}`)
  for (const { heading, section } of report.aliased)
    notes.push(`section "${heading}" read as "${checkpointSectionHeadings[section]}"`)
  if (report.duplicated.length > 0)
    notes.push(`duplicated sections (joined in order): ${names(report.duplicated)}`)
  return notes
}

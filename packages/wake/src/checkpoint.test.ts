import fc from "fast-check"
import { describe, expect, test } from "vitest"
import type { Checkpoint } from "./checkpoint.js"
import {
  checkpointNotes,
  checkpointProblems,
  checkpointSectionKeys,
  checkpointTemplate,
  parseCheckpoint,
  renderCheckpoint,
} from "./checkpoint.js"

// Bodies without heading lines and without leading/trailing blank lines: the canonical form.
const line = fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, " "))
const body = fc.array(line, { maxLength: 6 }).map((lines) => {
  const kept = lines.filter((l) => !l.startsWith("## "))
  while (kept.length > 0 && (kept[0] ?? "").trim() === "") kept.shift()
  while (kept.length > 0 && (kept[kept.length - 1] ?? "").trim() === "") kept.pop()
  return kept.join("\n")
})
const headingText = fc
  .string({ minLength: 1, maxLength: 20 })
  .map((s) => s.replace(/[\r\n]/g, " ").trim())
  .filter((s) => s !== "" && parseCheckpoint(`## ${s}\n`).report.unknown.length === 1)

const checkpointArb: fc.Arbitrary<Checkpoint> = fc.record({
  preamble: fc.constantFrom("", "# Baton wake checkpoint", "# Title\n\nintro text"),
  sections: fc.record(
    Object.fromEntries(checkpointSectionKeys.map((k) => [k, body])) as Record<
      (typeof checkpointSectionKeys)[number],
      fc.Arbitrary<string>
    >,
  ),
  extra: fc.uniqueArray(fc.record({ heading: headingText, body }), {
    maxLength: 3,
    selector: (e) => e.heading.toLowerCase().replace(/\s+/g, " "),
  }),
})

describe("checkpoint", () => {
  test("parse inverts render (property)", () => {
    fc.assert(
      fc.property(checkpointArb, (checkpoint) => {
        const { checkpoint: parsed, report } = parseCheckpoint(renderCheckpoint(checkpoint))
        expect(parsed).toEqual(checkpoint)
        expect(report.missing).toEqual([])
      }),
      { numRuns: 300 },
    )
  })

  test("render ∘ parse is a fixed point for any text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), (text) => {
        const once = renderCheckpoint(parseCheckpoint(text).checkpoint)
        expect(renderCheckpoint(parseCheckpoint(once).checkpoint)).toBe(once)
      }),
      { numRuns: 300 },
    )
    const tricky = "## Objective\n```\n## Not a heading?\n```\n## Goal\nmore\r\n"
    const once = renderCheckpoint(parseCheckpoint(tricky).checkpoint)
    expect(renderCheckpoint(parseCheckpoint(once).checkpoint)).toBe(once)
  })

  test("reports missing, unknown, aliased and duplicated sections and keeps their text", () => {
    const text = [
      "# WAKE Task Checkpoint",
      "## Goal",
      "Port the parser",
      "## Completed",
      "- step 1",
      "## Verification",
      "- tests pass",
      "## Next actions",
      "1. step 2",
      "## Notes to self",
      "keep me",
      "## Next actions",
      "2. step 3",
    ].join("\n")
    const { checkpoint, report } = parseCheckpoint(text)
    expect(checkpoint.sections.objective).toBe("Port the parser")
    expect(checkpoint.sections.verifiedFacts).toBe("- step 1\n\n- tests pass")
    expect(checkpoint.sections.nextActions).toBe("1. step 2\n\n2. step 3")
    expect(checkpoint.extra).toEqual([{ heading: "Notes to self", body: "keep me" }])
    expect(report.unknown).toEqual(["Notes to self"])
    expect(report.duplicated).toEqual(["verifiedFacts", "nextActions"])
    expect(report.aliased.map((a) => a.section)).toEqual([
      "objective",
      "verifiedFacts",
      "verifiedFacts",
    ])
    expect(report.missing).toContain("blockers")
    expect(checkpoint.preamble).toBe("# WAKE Task Checkpoint")
  })

  test("the template is not ready until Objective and Next actions are filled", () => {
    const template = renderCheckpoint(checkpointTemplate(null))
    expect(checkpointProblems(template)).toContain("checkpoint still contains REPLACE_ME")
    const filled = template.replaceAll("REPLACE_ME", "do the thing")
    expect(checkpointProblems(filled)).toEqual([])
    expect(checkpointProblems(filled + "x".repeat(70_000))[0]).toMatch(/limit is 65536/)
    expect(checkpointProblems("## Objective\n\n## Next actions\n")).toEqual([
      "Objective is empty",
      "Next actions is empty",
    ])
  })

  test("a section named under `#` or `###` is not read, and readiness problems and notes say so", () => {
    const markdown = "# Objective\nFinish the upload.\n\n### Next actions ###\n1. Retry.\n"
    const { checkpoint, report } = parseCheckpoint(markdown)
    // Nothing is dropped: the text stays in the preamble.
    expect(checkpoint.preamble).toBe(markdown.trim())
    expect(report.misleveled).toEqual([
      { line: "# Objective", section: "objective" },
      { line: "### Next actions ###", section: "nextActions" },
    ])
    expect(checkpointProblems(markdown)).toEqual([
      "Objective is empty: found `# Objective`, but sections use `## ` headings (`## Objective`)",
      "Next actions is empty: found `### Next actions ###`, but sections use `## ` headings (`## Next actions`)",
    ])
    // The template's title and other headings are not sections.
    expect(parseCheckpoint("# Baton wake checkpoint\n### Step 1\n").report.misleveled).toEqual([])
    expect(checkpointNotes(markdown)[0]).toBe(
      "found `# Objective`: not a section heading; sections use `## ` headings (`## Objective`)",
    )
  })

  test("notes list unknown, missing, aliased and duplicated sections; a full template has none", () => {
    const filled = renderCheckpoint(checkpointTemplate("do the thing")).replace(
      "REPLACE_ME",
      "step",
    )
    expect(checkpointNotes(filled)).toEqual([])
    const notes = checkpointNotes(
      "## Goal\nx\n\n## Next actions\n1. y\n\n## Next actions\n2. z\n\n## Notes\nfree text\n",
    )
    expect(notes).toEqual([
      "unknown sections (kept in checkpoint.md, not in the capsule): Notes",
      "missing sections: Current position, Verified facts, Decisions / do not repeat, Constraints, Active files, Blockers, Resume policy, Handoff",
      'section "Goal" read as "Objective"',
      "duplicated sections (joined in order): Next actions",
    ])
  })
})

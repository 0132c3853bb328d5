import fc from "fast-check"
import { describe, expect, test } from "vitest"
import {
  CAPSULE_MARKER,
  CAPSULE_MAX_BYTES,
  capsuleFreshness,
  clipUtf8,
  projectCapsule,
  sha256Hex,
} from "./capsule.js"
import type { Checkpoint, CheckpointSectionKey } from "./checkpoint.js"
import {
  checkpointSectionHeadings,
  checkpointSectionKeys,
  parseCheckpoint,
  renderCheckpoint,
} from "./checkpoint.js"

const JOB = "wake-20250131-120000-0123abcd"

const project = (checkpoint: Checkpoint) =>
  projectCapsule({ jobId: JOB, checkpoint, checkpointText: renderCheckpoint(checkpoint) })

const withSections = (sections: Partial<Record<CheckpointSectionKey, string>>): Checkpoint => ({
  preamble: "# Baton wake checkpoint",
  sections: {
    ...Object.fromEntries(checkpointSectionKeys.map((k) => [k, ""])),
    ...sections,
  } as Record<CheckpointSectionKey, string>,
  extra: [],
})

const nasty = fc.constantFrom(
  "a",
  "é",
  "中",
  "😀",
  "👩‍👩‍👧",
  "\u0301",
  "\u200d",
  " ",
  "\t",
  "-",
  "1.",
  "\n",
  "## ",
  "\ud83d",
)
const nastyText = fc.array(nasty, { maxLength: 3000 }).map((parts) => parts.join(""))
const sectionText = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 500 }),
  nastyText,
  fc.constant(""),
)
const checkpointArb = fc
  .record(
    Object.fromEntries(checkpointSectionKeys.map((k) => [k, sectionText])) as Record<
      CheckpointSectionKey,
      fc.Arbitrary<string>
    >,
  )
  .map((sections) => parseCheckpoint(renderCheckpoint(withSections(sections))).checkpoint)

const bytes = (s: string) => Buffer.byteLength(s, "utf8")
const list = (prefix: string, n: number, size: number) =>
  Array.from({ length: n }, (_, i) => `- ${prefix} ${i + 1} ${"x".repeat(size)}`).join("\n")

describe("capsule projection", () => {
  test("always ≤ 8 KiB, deterministic, every header present, marker first (property)", () => {
    fc.assert(
      fc.property(checkpointArb, (checkpoint) => {
        const a = project(checkpoint)
        expect(a.bytes).toBeLessThanOrEqual(CAPSULE_MAX_BYTES)
        expect(bytes(a.text)).toBe(a.bytes)
        expect(project(checkpoint).text).toBe(a.text)
        expect(a.text.startsWith(`${CAPSULE_MARKER}\n`)).toBe(true)
        for (const key of checkpointSectionKeys)
          expect(a.text).toContain(`\n## ${checkpointSectionHeadings[key]}\n`)
        const objectiveHead = checkpoint.sections.objective.split("\n")[0] ?? ""
        if (objectiveHead !== "") expect(a.text).toContain(clipUtf8(objectiveHead, 200))
        const nextHead = checkpoint.sections.nextActions.split("\n")[0] ?? ""
        if (nextHead !== "") expect(a.text).toContain(clipUtf8(nextHead, 200))
      }),
      { numRuns: 200 },
    )
  })

  test("a 200 KiB checkpoint: priority heads, newest facts, clip notes, no silent drop", () => {
    const checkpoint = withSections({
      objective: `Ship the parser. ${"goal ".repeat(2000)}`,
      currentPosition: "Halfway through the port.",
      verifiedFacts: list("fact", 800, 120),
      decisions: list("decision", 600, 100),
      constraints: list("constraint", 100, 40),
      activeFiles: list("src/file", 200, 20),
      nextActions: `1. Run the e2e suite\n${list("then", 300, 40)}`,
      blockers: "- None.",
      handoff: list("handoff", 100, 50),
    })
    const text = renderCheckpoint(checkpoint)
    expect(bytes(text)).toBeGreaterThan(200 * 1024)
    const capsule = project(checkpoint)
    expect(capsule.bytes).toBeLessThanOrEqual(CAPSULE_MAX_BYTES)
    expect(capsule.text).toContain("Ship the parser.")
    expect(capsule.text).toContain("1. Run the e2e suite")
    expect(capsule.text).toContain("- fact 800 ")
    expect(capsule.text).not.toContain("- fact 1 x")
    expect(capsule.text).toContain("- decision 600 ")
    expect(capsule.text).toContain("- None.")
    const clippedSections = capsule.clipped.map((c) => c.section)
    for (const key of [
      "objective",
      "verifiedFacts",
      "decisions",
      "nextActions",
      "handoff",
    ] as const)
      expect(clippedSections).toContain(key)
    expect(capsule.text).toMatch(
      /- \[clipped: \d+ of 800 older items, \d+ bytes left out; see checkpoint.md\]\n- fact/,
    )
    expect(capsule.text).toContain(`Checkpoint-SHA256: ${sha256Hex(text)}`)
  })

  test("CJK text is cut between characters, never inside one", () => {
    const capsule = project(
      withSections({ objective: "目标".repeat(5000), nextActions: "1. 下一步".repeat(3000) }),
    )
    expect(capsule.bytes).toBeLessThanOrEqual(CAPSULE_MAX_BYTES)
    expect(capsule.text).not.toContain("\ufffd")
    expect(Buffer.from(capsule.text, "utf8").toString("utf8")).toBe(capsule.text)
    expect(clipUtf8("a😀b", 4)).toBe("a")
    expect(clipUtf8("a😀b", 5)).toBe("a😀")
    // A budget that is not a number fits nothing, like a negative one (never the whole text).
    expect(clipUtf8("abc", NaN)).toBe("")
    expect(clipUtf8("abc", -1)).toBe("")
    expect(clipUtf8("abc", Infinity)).toBe("abc")
  })

  test("a small checkpoint is projected whole; empty sections say so", () => {
    const capsule = project(withSections({ objective: "Goal", nextActions: "1. Do it" }))
    expect(capsule.clipped).toEqual([])
    expect(capsule.text).toContain("## Blockers\n- None recorded.")
    expect(capsule.text).toContain("## Resume policy\n- Read this capsule first")
  })

  test("freshness tells a changed checkpoint and a hand-edited capsule", () => {
    const recorded = { checkpointSha256: sha256Hex("cp"), capsuleSha256: sha256Hex("cap") }
    expect(capsuleFreshness(recorded, { checkpointText: "cp", capsuleText: "cap" })).toEqual({
      checkpointNewerThanCapsule: false,
      capsuleModified: false,
    })
    expect(capsuleFreshness(recorded, { checkpointText: "cp2", capsuleText: "cap!" })).toEqual({
      checkpointNewerThanCapsule: true,
      capsuleModified: true,
    })
  })
})

describe("secrets", () => {
  test("likely secrets in the checkpoint are masked in the capsule and counted", () => {
    const secrets = [
      "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6l",
      "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
      "AKIAIOSFODNN7EXAMPL3",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
      "hunter2-S3cret-99",
    ]
    const capsule = project(
      withSections({
        objective: `Deploy with key ${secrets[0]}.`,
        verifiedFacts: `- token ${secrets[1]}\n- aws ${secrets[2]}`,
        nextActions: `1. curl -H "Authorization: Bearer ${secrets[3]}"\n2. login with password=${secrets[4]}`,
      }),
    )
    for (const secret of secrets) expect(capsule.text).not.toContain(secret)
    expect(capsule.text).toContain("[redacted")
    expect(capsule.maskedSecrets).toBe(5)
    expect(project(withSections({ objective: "Port the parser." })).maskedSecrets).toBe(0)
  })
})

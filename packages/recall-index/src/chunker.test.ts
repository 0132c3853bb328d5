import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { chunkText, chunkTurns, normaliseChunkOptions } from "./chunker.js"
import type { Turn } from "./transcript-model.js"

const isPairSplit = (text: string, at: number): boolean =>
  at > 0 &&
  at < text.length &&
  /[\uD800-\uDBFF]/.test(text[at - 1]!) &&
  /[\uDC00-\uDFFF]/.test(text[at]!)

describe("chunkText", () => {
  it("keeps a short text whole and gives nothing for an empty one", () => {
    expect(chunkText("hello")).toEqual([{ index: 0, start: 0, end: 5, text: "hello" }])
    expect(chunkText("")).toEqual([])
  })

  it("cuts at a paragraph break, then overlaps by exactly the configured amount", () => {
    const a = "a".repeat(30)
    const b = "b".repeat(30)
    const chunks = chunkText(`${a}\n\n${b}`, { maxChars: 40, overlapChars: 5 })
    expect(chunks[0]).toEqual({ index: 0, start: 0, end: 32, text: `${a}\n\n` })
    expect(chunks[1]!.start).toBe(27)
    expect(chunks.at(-1)!.end).toBe(62)
  })

  it("clamps options", () => {
    expect(normaliseChunkOptions({ maxChars: 3, overlapChars: 100 })).toEqual({
      maxChars: 16,
      overlapChars: 4,
    })
    expect(normaliseChunkOptions()).toEqual({ maxChars: 600, overlapChars: 100 })
  })

  it("property: covers every character, bounded, overlaps as configured, never splits a pair", () => {
    const text = fc.string({
      unit: fc.constantFrom("a", "b", " ", ".", "\n", "é", "😀", "中"),
      maxLength: 3000,
    })
    fc.assert(
      fc.property(
        text,
        fc.integer({ min: 16, max: 400 }),
        fc.integer({ min: 0, max: 100 }),
        (t, max, overlap) => {
          const { maxChars, overlapChars } = normaliseChunkOptions({
            maxChars: max,
            overlapChars: overlap,
          })
          const chunks = chunkText(t, { maxChars: max, overlapChars: overlap })
          if (t.length === 0) return chunks.length === 0
          expect(chunks[0]!.start).toBe(0)
          expect(chunks.at(-1)!.end).toBe(t.length)
          chunks.forEach((c, i) => {
            expect(c.index).toBe(i)
            expect(c.text).toBe(t.slice(c.start, c.end))
            expect(c.end - c.start).toBeLessThanOrEqual(maxChars)
            expect(c.end).toBeGreaterThan(c.start)
            expect(isPairSplit(t, c.end)).toBe(false)
            const next = chunks[i + 1]
            if (next !== undefined) {
              const shared = c.end - next.start
              expect(
                shared === overlapChars ||
                  (shared === overlapChars + 1 && isPairSplit(t, c.end - overlapChars)),
              ).toBe(true)
            }
          })
          return true
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe("chunkTurns", () => {
  it("labels chunks with session, turn, surface index and role", () => {
    const turn: Turn = {
      id: "t1",
      sessionId: "s1",
      role: "assistant",
      ordinal: 0,
      startOffset: 0,
      endOffset: 10,
      sidechain: false,
      continued: false,
      records: [],
      surface: [
        { role: "assistant", text: "short", offset: 0, length: 10, channel: "record" },
        { role: "assistant", text: "x".repeat(40), offset: 0, length: 10, channel: "record" },
      ],
    }
    const chunks = chunkTurns([turn], { maxChars: 16, overlapChars: 4 })
    expect(
      chunks.map((c) => [c.sessionId, c.turnId, c.surfaceIndex, c.index, c.start, c.end]),
    ).toEqual([
      ["s1", "t1", 0, 0, 0, 5],
      ["s1", "t1", 1, 0, 0, 16],
      ["s1", "t1", 1, 1, 12, 28],
      ["s1", "t1", 1, 2, 24, 40],
    ])
  })
})

// Skipped-line counts: which parse counts they take, how they add, how many type names they keep,
// and what a stored value that is not theirs reads as.
import { describe, expect, it } from "vitest"
import {
  addSkippedLines,
  decodeSkippedLines,
  encodeSkippedLines,
  OTHER_TYPES,
  skippedLinesOf,
  UNKNOWN_TYPES_KEPT,
} from "./skipped-lines.js"
import type { ParseStats } from "./transcript-model.js"

const stats = (over: Partial<ParseStats>): ParseStats => ({
  firstOffset: 0,
  nextOffset: 100,
  bytesRead: 100,
  lines: 10,
  blankLines: 1,
  malformedLines: 0,
  invalidRecords: 0,
  invalidUtf8Lines: 0,
  unknownRecordTypes: {},
  unknownFieldLines: 0,
  sidechainRecordsSkipped: 0,
  duplicateSurfaceDropped: 0,
  surfaceTexts: 3,
  rawRecords: 9,
  secretsMasked: 0,
  truncatedTail: false,
  ...over,
})

describe("skippedLinesOf", () => {
  it("counts the lines a parse could not use, and only those", () => {
    expect(
      skippedLinesOf(
        stats({ malformedLines: 2, invalidRecords: 1, unknownRecordTypes: { progress: 3 } }),
      ),
    ).toEqual({ lines: 6, malformed: 2, invalid: 1, unknownTypes: { progress: 3 } })
    // Lines that were read, or left for later, are not skipped.
    expect(
      skippedLinesOf(
        stats({
          invalidUtf8Lines: 4,
          unknownFieldLines: 5,
          sidechainRecordsSkipped: 6,
          truncatedTail: true,
          blankLines: 7,
        }),
      ),
    ).toBeUndefined()
  })

  it(`keeps the ${UNKNOWN_TYPES_KEPT} most frequent type names, cut to 60 characters`, () => {
    const many = Object.fromEntries(
      Array.from({ length: UNKNOWN_TYPES_KEPT + 5 }, (_, i) => [`type-${i}`, i + 1]),
    )
    const long = "x".repeat(200)
    const skipped = skippedLinesOf(stats({ unknownRecordTypes: { ...many, [long]: 100 } }))
    const names = Object.keys(skipped?.unknownTypes ?? {})
    expect(names).toHaveLength(UNKNOWN_TYPES_KEPT + 1)
    expect(names[0]).toBe(`${"x".repeat(59)}…`)
    expect(names.at(-1)).toBe(OTHER_TYPES)
    // The five least frequent (1..5) and the rest kept: nothing is lost from the total.
    expect(skipped?.unknownTypes[OTHER_TYPES]).toBe(1 + 2 + 3 + 4 + 5 + 6)
    expect(skipped?.lines).toBe(100 + ((UNKNOWN_TYPES_KEPT + 5) * (UNKNOWN_TYPES_KEPT + 6)) / 2)
  })
})

describe("addSkippedLines", () => {
  it("adds every count, types by name, and stays bounded", () => {
    const a = skippedLinesOf(stats({ malformedLines: 1, unknownRecordTypes: { progress: 2 } }))
    const b = skippedLinesOf(
      stats({ invalidRecords: 3, unknownRecordTypes: { progress: 1, x: 1 } }),
    )
    expect(addSkippedLines(a, b)).toEqual({
      lines: 8,
      malformed: 1,
      invalid: 3,
      unknownTypes: { progress: 3, x: 1 },
    })
    expect(addSkippedLines(undefined, b)).toBe(b)
    expect(addSkippedLines(a, undefined)).toBe(a)
    expect(addSkippedLines(undefined, undefined)).toBeUndefined()
    let sum = skippedLinesOf(stats({ unknownRecordTypes: { [OTHER_TYPES]: 0, t: 1 } }))
    for (let i = 0; i < 50; i++)
      sum = addSkippedLines(sum, skippedLinesOf(stats({ unknownRecordTypes: { [`t${i}`]: 1 } })))
    expect(Object.keys(sum?.unknownTypes ?? {})).toHaveLength(UNKNOWN_TYPES_KEPT + 1)
    expect(sum?.lines).toBe(51)
  })
})

describe("stored form", () => {
  it("reads back what it writes", () => {
    const s = skippedLinesOf(stats({ malformedLines: 1, unknownRecordTypes: { progress: 2 } }))
    expect(decodeSkippedLines(encodeSkippedLines(s))).toEqual(s)
    expect(encodeSkippedLines(undefined)).toBeNull()
    expect(decodeSkippedLines(null)).toBeUndefined()
  })

  it("reads a value that is not its own as none, or keeps only its sound counts", () => {
    for (const bad of ["{not json", "42", "null", "[]", "{}", '{"malformed":-3,"invalid":"2"}'])
      expect(decodeSkippedLines(bad)).toBeUndefined()
    expect(
      decodeSkippedLines('{"malformed":2,"invalid":1.5,"unknownTypes":{"a":1,"b":"x"}}'),
    ).toEqual({ lines: 3, malformed: 2, invalid: 0, unknownTypes: { a: 1 } })
  })
})

import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { normaliseTimestamp } from "./turn-assembler.js"

/** The Date round trip `normaliseTimestamp` skips for already-canonical input. */
const viaDate = (value: string): string | undefined => {
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) || !value.includes("T") ? value : `${value}Z`
  const ms = Date.parse(zoned)
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined
}

const digits = (n: number, max: number) =>
  fc.integer({ min: 0, max }).map((v) => String(v).padStart(n, "0"))

describe("normaliseTimestamp", () => {
  it("answers canonical-looking input exactly like the Date round trip (property)", () => {
    const stamp = fc
      .tuple(
        digits(4, 9999),
        digits(2, 13),
        digits(2, 32),
        digits(2, 25),
        digits(2, 61),
        digits(2, 61),
        digits(3, 999),
        fc.constantFrom("Z", "z", "+00:00", ""),
      )
      .map(([y, mo, d, h, mi, s, ms, zone]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${zone}`)
    fc.assert(
      fc.property(stamp, (value) => {
        expect(normaliseTimestamp(value)).toBe(viaDate(value))
      }),
      { numRuns: 5000 },
    )
  })

  it("keeps leap days, rejects impossible dates, and still normalises other forms", () => {
    expect(normaliseTimestamp("2024-02-29T23:59:59.999Z")).toBe("2024-02-29T23:59:59.999Z")
    expect(normaliseTimestamp("2100-02-29T00:00:00.000Z")).toBe(viaDate("2100-02-29T00:00:00.000Z"))
    expect(normaliseTimestamp("2026-01-02T24:00:00.000Z")).toBe(viaDate("2026-01-02T24:00:00.000Z"))
    expect(normaliseTimestamp("2026-01-02T03:04:05+02:00")).toBe("2026-01-02T01:04:05.000Z")
    expect(normaliseTimestamp("2026-01-02T03:04:05")).toBe("2026-01-02T03:04:05.000Z")
    expect(normaliseTimestamp("not a timestamp")).toBeUndefined()
    expect(normaliseTimestamp(5)).toBeUndefined()
  })
})

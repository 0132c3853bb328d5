import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import {
  dateRange,
  hostTimeZone,
  isTimeZone,
  parseCalendarDate,
  relativeAge,
  resolveTimeZone,
  startOfDay,
  whenHuman,
} from "./time-format.js"

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())
const range = (filter: Parameters<typeof dateRange>[0], now = Date.UTC(2026, 2, 15, 12)) =>
  Effect.runSync(Effect.result(dateRange(filter, now)))

describe("startOfDay", () => {
  it.each([
    ["UTC", { year: 2026, month: 3, day: 12 }, "2026-03-12T00:00:00.000Z"],
    ["Asia/Kolkata", { year: 2026, month: 3, day: 12 }, "2026-03-11T18:30:00.000Z"],
    ["Pacific/Kiritimati", { year: 2026, month: 3, day: 12 }, "2026-03-11T10:00:00.000Z"],
    // The day clocks spring forward (02:00 → 03:00) still starts at local midnight, UTC−5.
    ["America/New_York", { year: 2026, month: 3, day: 8 }, "2026-03-08T05:00:00.000Z"],
    ["America/New_York", { year: 2026, month: 3, day: 9 }, "2026-03-09T04:00:00.000Z"],
    // The day clocks fall back starts at UTC−4; the next at UTC−5.
    ["America/New_York", { year: 2026, month: 11, day: 1 }, "2026-11-01T04:00:00.000Z"],
    ["America/New_York", { year: 2026, month: 11, day: 2 }, "2026-11-02T05:00:00.000Z"],
    // São Paulo skipped midnight on 2018-11-04 (00:00 → 01:00): the day starts at 01:00 −02.
    ["America/Sao_Paulo", { year: 2018, month: 11, day: 4 }, "2018-11-04T03:00:00.000Z"],
    // … and repeated 23:00–24:00 on 2019-02-16 (midnight 2019-02-17 happens once, at −03).
    ["America/Sao_Paulo", { year: 2019, month: 2, day: 17 }, "2019-02-17T03:00:00.000Z"],
  ])("%s %o → %s", (zone, date, expected) => {
    expect(iso(startOfDay(date, zone))).toBe(expected)
  })
})

describe("dateRange", () => {
  it("turns one local day into a half-open instant range", () => {
    const r = range({ onDate: "2026-03-12", timezone: "Asia/Kolkata" })
    expect(Result.isSuccess(r) && r.success).toMatchObject({
      startDate: "2026-03-12",
      endDate: "2026-03-12",
      timezone: "Asia/Kolkata",
    })
    if (!Result.isSuccess(r) || r.success === undefined) throw new Error("expected a range")
    expect(iso(r.success.startMs)).toBe("2026-03-11T18:30:00.000Z")
    expect(iso(r.success.endMs)).toBe("2026-03-12T18:30:00.000Z")
  })

  it("covers 23 hours on the spring-forward day", () => {
    const r = range({ onDate: "2026-03-08", timezone: "America/New_York" })
    if (!Result.isSuccess(r) || r.success === undefined) throw new Error("expected a range")
    expect((r.success.endMs! - r.success.startMs!) / 3_600_000).toBe(23)
  })

  it("accepts open-ended ranges, today / yesterday and days ago", () => {
    const open = range({ startDate: "2026-03-10", timezone: "UTC" })
    expect(Result.isSuccess(open) && open.success).toMatchObject({ startDate: "2026-03-10" })
    expect(Result.isSuccess(open) && open.success?.endMs).toBeUndefined()
    const y = range({ onDate: "yesterday", timezone: "UTC" })
    expect(Result.isSuccess(y) && y.success?.startDate).toBe("2026-03-14")
    // Days ago count back from today in the zone: 2026-03-15 12:00 UTC is already the 16th in
    // Kiritimati (UTC+14).
    const ago = (text: string, timezone = "UTC") =>
      parseCalendarDate(text, Date.UTC(2026, 2, 15, 12), timezone)
    expect(ago("7 days ago")).toEqual({ year: 2026, month: 3, day: 8 })
    expect(ago("7d")).toEqual({ year: 2026, month: 3, day: 8 })
    expect(ago(" 1 Day Ago ")).toEqual({ year: 2026, month: 3, day: 14 })
    expect(ago("0d")).toEqual({ year: 2026, month: 3, day: 15 })
    expect(ago("15 days ago")).toEqual({ year: 2026, month: 2, day: 28 })
    expect(ago("7d", "Pacific/Kiritimati")).toEqual({ year: 2026, month: 3, day: 9 })
    const week = range({ startDate: "7d", timezone: "UTC" })
    expect(Result.isSuccess(week) && week.success?.startDate).toBe("2026-03-08")
    for (const bad of ["7", "-7d", "7 days", "7 weeks ago", "99999d", "1.5d"])
      expect(ago(bad)).toBeUndefined()
    expect(Result.isSuccess(range({}))).toBe(true)
    expect(Result.isSuccess(range({})) && range({})).toMatchObject({ success: undefined })
  })

  it.each([
    [{ onDate: "2026-02-30" }, "date", "is not a date"],
    [{ onDate: "12/03/2026" }, "date", "is not a date"],
    [{ onDate: "2026-03-12", startDate: "2026-03-01" }, "date", "not both"],
    [{ startDate: "2026-03-12", endDate: "2026-03-01" }, "date", "is after"],
    [{ onDate: "2026-03-12", timezone: "Mars/Olympus" }, "timezone", "IANA"],
  ])("rejects %o", (filter, field, message) => {
    const r = range(filter)
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure._tag).toBe("RecallQueryError")
      expect(r.failure.field).toBe(field)
      expect(r.failure.message).toContain(message)
    }
  })
})

describe("human times", () => {
  it("formats in the zone with a relative age", () => {
    const now = Date.UTC(2026, 2, 15, 12)
    expect(whenHuman("2026-03-12T08:00:00.000Z", now, "Europe/Berlin")).toBe(
      "2026-03-12 09:00 Europe/Berlin (3 days ago)",
    )
    expect(whenHuman(null, now, "UTC")).toBe("unknown time")
    expect(whenHuman("not a time", now, "UTC")).toBe("unknown time")
    expect(relativeAge(now - 30_000, now)).toBe("just now")
    expect(relativeAge(now - 5 * 60_000, now)).toBe("5 min ago")
    expect(relativeAge(now - 3 * 3_600_000, now)).toBe("3 h ago")
    expect(relativeAge(now - 86_400_000, now)).toBe("1 day ago")
    expect(relativeAge(now - 400 * 86_400_000, now)).toBe("1 year ago")
    expect(relativeAge(now + 3_600_000, now)).toBe("in the future")
  })

  it("knows zones and strict dates", () => {
    expect(isTimeZone("America/New_York")).toBe(true)
    expect(isTimeZone("Nowhere/Else")).toBe(false)
    expect(parseCalendarDate("2024-02-29", 0, "UTC")).toEqual({ year: 2024, month: 2, day: 29 })
    expect(parseCalendarDate("2025-02-29", 0, "UTC")).toBeUndefined()
  })
})

describe("resolveTimeZone", () => {
  it("spells a zone named in another case as the zone database does, and keeps the rest as written", () => {
    const resolve = (zone: string) => Effect.runSync(resolveTimeZone(zone))
    expect(resolve("america/new_york")).toBe("America/New_York")
    expect(resolve("utc")).toBe("UTC")
    expect(resolve("EUROPE/BERLIN")).toBe("Europe/Berlin")
    expect(resolve("Asia/Kathmandu")).toBe("Asia/Kathmandu")
    expect(Effect.runSync(Effect.result(resolveTimeZone("Foo/Bar")))._tag).toBe("Failure")
  })
})

describe("hostTimeZone", () => {
  const withTz = (tz: string | undefined): string => {
    const saved = process.env["TZ"]
    if (tz === undefined) delete process.env["TZ"]
    else process.env["TZ"] = tz
    try {
      return hostTimeZone()
    } finally {
      if (saved === undefined) delete process.env["TZ"]
      else process.env["TZ"] = saved
    }
  }

  it("is UTC for an empty TZ (Intl resolves it to Etc/Unknown, which no formatter takes)", () => {
    expect(withTz("")).toBe("UTC")
    expect(isTimeZone(withTz(""))).toBe(true)
  })

  it("keeps TZ as written when it names a zone, and falls back to UTC for a POSIX rule", () => {
    expect(withTz("Asia/Kathmandu")).toBe("Asia/Kathmandu")
    expect(withTz(":Europe/London")).toBe("Europe/London")
    expect(withTz("<+0545>-5:45")).toBe("UTC")
  })
})

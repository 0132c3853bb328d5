/**
 * Calendar days and human timestamps in an IANA time zone, with no date library: `Intl` gives
 * each instant's local wall time and the arithmetic stays here. Guarantees: a day range is
 * half-open `[first instant of start day, first instant of the day after end)` in epoch ms, and
 * is right across DST changes — including zones whose clocks skip local midnight (then the day
 * starts at the first instant that is on that date); dates are strict `YYYY-MM-DD` (or `today`,
 * `yesterday` or `N days ago` against the `now` passed in); a bad date or zone is a
 * {@link RecallQueryError}, never a throw. Pure: `now` and the zone are arguments
 * (`hostTimeZone` reads the process's).
 */
import * as Effect from "effect/Effect"
import { RecallQueryError } from "./errors.js"

let hostZone: { readonly tz: string | undefined; readonly zone: string } | undefined

/**
 * The time zone of this process: `TZ` when it names an IANA zone (as written, so
 * `Asia/Kathmandu` is not shown as ICU's older `Asia/Katmandu`), else the one Intl resolves, else
 * `UTC` — also when Intl resolves a name it cannot use: an empty `TZ` (common in containers)
 * resolves to `Etc/Unknown`, which every formatter refuses. Resolved once per value of `TZ`
 * (resolving costs ~1 ms, paid per search otherwise).
 */
export const hostTimeZone = (): string => {
  const tz = process.env["TZ"]
  if (hostZone !== undefined && hostZone.tz === tz) return hostZone.zone
  const named = tz?.startsWith(":") === true ? tz.slice(1) : tz
  let zone = "UTC"
  if (named !== undefined && isTimeZone(named)) zone = named
  else {
    try {
      const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone
      if (resolved !== undefined && isTimeZone(resolved)) zone = resolved
    } catch {
      // UTC.
    }
  }
  hostZone = { tz, zone }
  return zone
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/** A cached formatter giving numeric wall-clock parts in `timeZone` (24-hour). */
const wallClock = (timeZone: string): Intl.DateTimeFormat => {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** Whether `timeZone` is an IANA zone name this runtime knows. */
export const isTimeZone = (timeZone: string): boolean => {
  if (timeZone === "" || timeZone.length > 64) return false
  try {
    wallClock(timeZone)
    return true
  } catch {
    return false
  }
}

/** A calendar date. */
export interface CalendarDate {
  readonly year: number
  readonly month: number
  readonly day: number
}

interface WallTime extends CalendarDate {
  readonly hour: number
  readonly minute: number
  readonly second: number
}

/** The wall-clock time of instant `ms` in `timeZone`. */
const wallTimeOf = (ms: number, timeZone: string): WallTime => {
  const parts: Record<string, number> = {}
  for (const p of wallClock(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== "literal") parts[p.type] = Number(p.value)
  }
  return {
    year: parts["year"] ?? 1970,
    month: parts["month"] ?? 1,
    day: parts["day"] ?? 1,
    hour: (parts["hour"] ?? 0) % 24,
    minute: parts["minute"] ?? 0,
    second: parts["second"] ?? 0,
  }
}

/** Offset of `timeZone` from UTC at instant `ms`, in ms (local − UTC), to the second. */
const offsetAt = (ms: number, timeZone: string): number => {
  const w = wallTimeOf(ms, timeZone)
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second)
  return asUtc - Math.floor(ms / 1000) * 1000
}

const sameDate = (a: CalendarDate, b: CalendarDate): boolean =>
  a.year === b.year && a.month === b.month && a.day === b.day

/** Adds `days` to a calendar date (proleptic Gregorian). */
export const addDays = (date: CalendarDate, days: number): CalendarDate => {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days))
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }
}

/**
 * The first instant (epoch ms) whose local date in `timeZone` is `date`: local midnight, or the
 * end of a DST gap when midnight does not exist that day.
 */
export const startOfDay = (date: CalendarDate, timeZone: string): number => {
  const guess = Date.UTC(date.year, date.month - 1, date.day)
  // Every offset in force around that day gives one candidate for local midnight.
  const candidates = new Set<number>()
  for (const probe of [guess, guess - 86_400_000, guess + 86_400_000]) {
    candidates.add(guess - offsetAt(probe, timeZone))
  }
  let best: number | undefined
  for (const c of candidates) {
    if (!sameDate(wallTimeOf(c, timeZone), date)) continue
    // Walk back to the day's first instant if this candidate is after a gap-shifted midnight.
    const w = wallTimeOf(c, timeZone)
    const sinceMidnight = ((w.hour * 60 + w.minute) * 60 + w.second) * 1000
    let first = c - sinceMidnight
    if (!sameDate(wallTimeOf(first, timeZone), date)) first = c
    if (best === undefined || first < best) best = first
  }
  return best ?? guess - offsetAt(guess, timeZone)
}

/** The local calendar date of instant `ms` in `timeZone`. */
export const localDateOf = (ms: number, timeZone: string): CalendarDate => {
  const w = wallTimeOf(ms, timeZone)
  return { year: w.year, month: w.month, day: w.day }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0")

/** `YYYY-MM-DD` of a calendar date. */
export const formatDate = (date: CalendarDate): string =>
  `${pad(date.year, 4)}-${pad(date.month)}-${pad(date.day)}`

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/

/** `7 days ago`, `1 day ago`, `7d`: a day counted back from today. */
const daysAgoPattern = /^(\d{1,5})\s*(?:d|days?\s+ago)$/

/** Furthest a relative day reaches back (about a century). */
const MAX_DAYS_AGO = 36_525

/**
 * Parses `YYYY-MM-DD`, `today`, `yesterday`, or a number of days ago (`7 days ago`, `7d`), local
 * to `timeZone` at `now`.
 */
export const parseCalendarDate = (
  text: string,
  now: number,
  timeZone: string,
): CalendarDate | undefined => {
  const t = text.trim().toLowerCase()
  if (t === "today") return localDateOf(now, timeZone)
  if (t === "yesterday") return addDays(localDateOf(now, timeZone), -1)
  const ago = daysAgoPattern.exec(t)
  if (ago !== null) {
    const days = Number(ago[1])
    return days <= MAX_DAYS_AGO ? addDays(localDateOf(now, timeZone), -days) : undefined
  }
  const m = datePattern.exec(t)
  if (m === null) return undefined
  const date = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) }
  const check = addDays(date, 0)
  return sameDate(check, date) ? date : undefined
}

/** Which days to keep: one day, or an inclusive range with either end open. */
export interface DateFilter {
  readonly onDate?: string | undefined
  readonly startDate?: string | undefined
  readonly endDate?: string | undefined
  /** IANA zone of the calendar; default {@link hostTimeZone}. */
  readonly timezone?: string | undefined
}

/** A half-open epoch-ms range `[startMs, endMs)`; an absent end is open. */
export interface InstantRange {
  readonly startMs?: number
  readonly endMs?: number
  /** The days as given, normalised: `YYYY-MM-DD`. */
  readonly startDate?: string
  readonly endDate?: string
  readonly timezone: string
}

const shown = (text: string): string => (text.length > 40 ? `${text.slice(0, 40)}…` : text)

/**
 * `timeZone` as the zone database spells it when it differs only in case (`america/new_york` is
 * shown `America/New_York`, `utc` `UTC`); otherwise as written, so `Asia/Kathmandu` is not turned
 * into ICU's older `Asia/Katmandu`.
 */
const canonicalCase = (timeZone: string): string => {
  const resolved = wallClock(timeZone).resolvedOptions().timeZone
  return resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone
}

/** Resolves the time zone of a filter, failing on an unknown one. */
export const resolveTimeZone = (
  timezone: string | undefined,
): Effect.Effect<string, RecallQueryError> => {
  if (timezone === undefined || timezone === "") return Effect.succeed(hostTimeZone())
  return isTimeZone(timezone)
    ? Effect.succeed(canonicalCase(timezone))
    : Effect.fail(
        new RecallQueryError({
          field: "timezone",
          message: `'${shown(timezone)}' is not an IANA time zone (for example Europe/Berlin, America/New_York or UTC)`,
        }),
      )
}

/**
 * The instant range of a date filter at `now`, or `undefined` when it names no day. `onDate`
 * alone, or `startDate` / `endDate` (inclusive, either optional); both kinds at once, a malformed
 * date or start after end fail.
 */
export const dateRange = (
  filter: DateFilter,
  now: number,
): Effect.Effect<InstantRange | undefined, RecallQueryError> =>
  Effect.gen(function* () {
    const timezone = yield* resolveTimeZone(filter.timezone)
    const given = (s: string | undefined): s is string => s !== undefined && s.trim() !== ""
    if (given(filter.onDate) && (given(filter.startDate) || given(filter.endDate))) {
      return yield* new RecallQueryError({
        field: "date",
        message: "give either one day (on_date) or a range (start_date / end_date), not both",
      })
    }
    const parse = (text: string, which: string) => {
      const date = parseCalendarDate(text, now, timezone)
      return date === undefined
        ? Effect.fail(
            new RecallQueryError({
              field: "date",
              message: `${which} '${shown(text)}' is not a date: use YYYY-MM-DD, today, yesterday or N days ago (7d)`,
            }),
          )
        : Effect.succeed(date)
    }
    const start = given(filter.onDate)
      ? yield* parse(filter.onDate, "on_date")
      : given(filter.startDate)
        ? yield* parse(filter.startDate, "start_date")
        : undefined
    const end = given(filter.onDate)
      ? start
      : given(filter.endDate)
        ? yield* parse(filter.endDate, "end_date")
        : undefined
    if (start === undefined && end === undefined) return undefined
    if (start !== undefined && end !== undefined && formatDate(start) > formatDate(end)) {
      return yield* new RecallQueryError({
        field: "date",
        message: `start_date ${formatDate(start)} is after end_date ${formatDate(end)}`,
      })
    }
    return {
      timezone,
      ...(start === undefined
        ? {}
        : { startMs: startOfDay(start, timezone), startDate: formatDate(start) }),
      ...(end === undefined
        ? {}
        : { endMs: startOfDay(addDays(end, 1), timezone), endDate: formatDate(end) }),
    }
  })

/** "just now", "5 min ago", "3 h ago", "2 days ago", "4 months ago", "1 year ago", "in the future". */
export const relativeAge = (ms: number, now: number): string => {
  const s = Math.floor((now - ms) / 1000)
  if (s < -60) return "in the future"
  if (s < 60) return "just now"
  const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? "" : "s"} ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`
  const days = Math.floor(s / 86_400)
  if (days < 60) return plural(days, "day")
  if (days < 365) return plural(Math.floor(days / 30), "month")
  return plural(Math.floor(days / 365), "year")
}

/**
 * A timestamp for people: `2026-07-14 09:30 Europe/Berlin (3 days ago)`; `unknown time` for a
 * missing or unreadable one.
 */
export const whenHuman = (
  timestamp: string | number | null | undefined,
  now: number,
  timeZone: string,
): string => {
  const ms = typeof timestamp === "string" ? Date.parse(timestamp) : (timestamp ?? NaN)
  if (!Number.isFinite(ms)) return "unknown time"
  const w = wallTimeOf(ms, timeZone)
  return `${formatDate(w)} ${pad(w.hour)}:${pad(w.minute)} ${timeZone} (${relativeAge(ms, now)})`
}

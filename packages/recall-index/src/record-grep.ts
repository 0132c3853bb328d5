/**
 * `grepRecords`: a literal or regular-expression scan over every indexed raw record — prompts,
 * answers, tool calls, tool output, reasoning summaries, compaction text — in their decoded,
 * masked form (so quotes, backslashes, newlines and Windows paths match as written, not as JSON
 * escapes). Guarantees: case-insensitive by default; blind to Unicode normalisation (pattern and
 * record are compared in NFC, so a typed `zürich` finds `Zu\u0308rich` as macOS file names and
 * `git status` write it, and the other way round); SQLite first keeps the records holding the
 * pattern's literal text (a literal ASCII pattern entirely, a regex's required runs — `LIKE`,
 * `instr`), then patterns are tested by a JavaScript function SQLite calls on each remaining
 * record (before the session and turn joins, so a record that does not match costs no row) on
 * windows of at most {@link GREP_WINDOW_CHARS} characters; a regex must pass `compileSafeRegex`
 * (bounded size, no backreferences, no nested repeats) and the scan stops at `maxScanMs` of
 * wall-clock time with `timedOut` set and the hits found so far; records that duplicate others
 * (`api-request-blob`, `last-prompt`, …) and noise are skipped unless asked, and so are copies:
 * a fork's record whose original (the same kind and text) its parent session holds and the same
 * grep would find — the original is shown, never the copy, whichever was indexed first (a Claude
 * Code fork starts with a copy of its parent's records, uuids included; a Codex fork replays its
 * parent's history under new turn ids) — and a record already hit in the same turn id (Codex
 * writes each message twice, as an event and as a response item); at most
 * `limit` hits, each with a short snippet around the match and the address (session id, turn id)
 * to expand.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { GREP_SCAN_MS } from "./grep-limits.js"
import { wholeNumber } from "./input-numbers.js"
import type { Database } from "better-sqlite3"
import { RecallNotFoundError, RecallQueryError } from "./errors.js"
import type { RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { compileFilters, escapeLike, timestampClause } from "./recall-filters.js"
import type { CompiledFilters, RecallFilters, SqlClause } from "./recall-filters.js"
import { forkParents } from "./fork-lineage.js"
import { compileSafeRegex, escapeRegExp, requiredLiterals } from "./regex-safety.js"
import { projectOf } from "./search.js"
import { snippetAt } from "./snippet.js"
import { whenHuman } from "./time-format.js"
import type { RawRecordKind, TranscriptSource } from "./transcript-model.js"

/** Longest stretch of text one regex test sees (windows overlap by 10 %). */
export const GREP_WINDOW_CHARS = 4096

/** Input of {@link grepRecords}. */
export interface GrepInput extends RecallFilters {
  readonly pattern: string
  /** Treat `pattern` as a regular expression (JavaScript syntax); default literal. */
  readonly regex?: boolean | undefined
  readonly caseSensitive?: boolean | undefined
  /** Most hits; default 100 (at most 1 000). */
  readonly limit?: number | undefined
  /** Only records of these kinds; default every kind but noise. */
  readonly kinds?: ReadonlyArray<RawRecordKind> | undefined
  /**
   * Also scan records that duplicate others (`api-request-blob`, `last-prompt`, …), and show
   * every copy of a record copied into another session (a fork).
   */
  readonly includeDuplicates?: boolean | undefined
  /** Longest snippet; default 200 characters. */
  readonly snippetChars?: number | undefined
  /** Stop scanning after this long; default 5 000 ms. */
  readonly maxScanMs?: number | undefined
  /**
   * Records (by row id) SQLite filters per statement; default {@link GREP_SCAN_WINDOW_RECORDS}.
   * The time budget is also checked between windows.
   */
  readonly scanWindowRecords?: number | undefined
}

/**
 * Row ids per SQL window of a grep scan. SQLite's prefilter rejects records without handing them
 * to JavaScript, so a pattern found nowhere would otherwise run to the end of the table unchecked:
 * 11 s for 2 M records (622 MB of text) from a cold page cache, past the 5 s budget. A window of
 * this many records is ~5 MB of text at the bench's sizes, a few milliseconds warm.
 */
export const GREP_SCAN_WINDOW_RECORDS = 16_384

/** One matching record. */
export interface GrepHit {
  readonly source: TranscriptSource
  readonly sessionId: string
  /** The turn holding the record; null for a file preamble (session meta, injected context). */
  readonly turnId: string | null
  readonly role: string | null
  readonly kind: string
  readonly recordType: string
  readonly timestamp: string | null
  readonly whenHuman: string
  readonly cwd: string | null
  readonly project: string | null
  /** A machine-driven run (`codex exec`, `claude -p`). */
  readonly headless: boolean
  /** A subagent (sidechain) session. */
  readonly subagent: boolean
  readonly snippet: string
}

/** The answer of {@link grepRecords}. */
export interface GrepResult {
  readonly pattern: string
  readonly mode: "literal" | "regex"
  readonly caseSensitive: boolean
  readonly hits: ReadonlyArray<GrepHit>
  /** More matches exist beyond `limit`. */
  readonly truncated: boolean
  /** The scan hit `maxScanMs`; `hits` are the ones found before. */
  readonly timedOut: boolean
  /** Records tested in JavaScript (SQLite's prefilter rejects the others unseen). */
  readonly scanned: number
  /**
   * Share of the stored records, newest first by row id, the scan got through: 1 unless it
   * stopped at `maxScanMs` or at `limit` (then how far it got, 0–1).
   */
  readonly searchedShare: number
  /**
   * Matching records left out as copies of a record in another session (a fork's copy of its
   * parent's record; see `includeDuplicates`).
   */
  readonly copiesSkipped: number
}

interface Row {
  readonly source: TranscriptSource
  readonly session_id: string
  readonly id: number
  readonly session_row: number
  readonly forked_from: string | null
  readonly turn_id: string | null
  readonly role: string | null
  readonly kind: string
  readonly record_type: string
  readonly timestamp: string | null
  readonly cwd: string | null
  readonly repo_root: string | null
  readonly headless: number
  readonly subagent: number
  readonly text: string
}

/** Shortest piece of a pattern worth a prefilter (shorter ones are in most records). */
const MIN_PREFILTER_CHARS = 3

/** Below this character every string is already NFC: nothing before it composes or decomposes. */
const mayChangeInNfc = /[\u0300-\uffff]/

/**
 * `text` as grep compares it: in Unicode NFC, so the composed (`ü`) and decomposed (`u` + U+0308)
 * spellings of a character are one. Text with no character from U+0300 on (all ASCII, most code
 * and logs) is returned as it is, after one cheap scan.
 */
export const grepFold = (text: string): string =>
  mayChangeInNfc.test(text) ? text.normalize("NFC") : text

/**
 * The text runs SQLite checks before a record reaches JavaScript (each must occur): a literal
 * pattern itself, a regex's {@link requiredLiterals} (the longest two of at least
 * {@link MIN_PREFILTER_CHARS}); matched exactly with `instr`, or — case-insensitive — with `LIKE`,
 * which folds ASCII case only. Only printable ASCII pieces of the runs are used: the record is
 * matched in NFC ({@link grepFold}) but stored as written, and a non-ASCII run of the NFC pattern
 * (`ü`) may be stored decomposed (`u` + U+0308), while an ASCII run of it is in the stored text as
 * it is in the NFC one. A literal ASCII pattern is thus matched by SQLite alone, a regex such as
 * `timeout after \d+ ms` tests only the records holding `timeout after `, and a pattern with no
 * such run scans every record. (`pattern` is already NFC.)
 */
const prefilterRuns = (pattern: string, regexMode: boolean): Array<string> => {
  const runs = regexMode ? requiredLiterals(pattern) : [pattern]
  const pieces = runs.flatMap((run) => run.match(/[\x20-\x7e]+/g) ?? [])
  return pieces
    .filter((piece) => piece === pattern || piece.length >= MIN_PREFILTER_CHARS)
    .sort((a, b) => b.length - a.length)
    .slice(0, 2)
}

/** The SQL function that runs a grep's test on a record's text (see {@link grepMatcher}). */
const GREP_MATCH_FUNCTION = "baton_grep_match"

/** The test a running scan sets: 1 when the record (row id, text) matches. */
type RecordTest = (id: number, text: string) => 0 | 1

/** Per connection: the test of the scan running on it (one at a time; better-sqlite3 is sync). */
const matcherSlots = new WeakMap<Database, { current: RecordTest | undefined }>()

/**
 * The slot holding the test {@link GREP_MATCH_FUNCTION} runs on `sqlite`, registering the function
 * on first use. `directOnly`: a trigger or view cannot call it. Testing inside SQLite, before the
 * joins, is what keeps a regex with no literal run affordable: 200 000 records (62 MB of text)
 * took 0.72 s as rows handed to JavaScript and 0.15 s as function calls.
 */
const grepMatcher = (sqlite: Database): { current: RecordTest | undefined } => {
  const known = matcherSlots.get(sqlite)
  if (known !== undefined) return known
  const slot: { current: RecordTest | undefined } = { current: undefined }
  sqlite.function(
    GREP_MATCH_FUNCTION,
    { deterministic: false, directOnly: true },
    (id: unknown, text: unknown) =>
      slot.current !== undefined && typeof id === "number" && typeof text === "string"
        ? slot.current(id, text)
        : 0,
  )
  matcherSlots.set(sqlite, slot)
  return slot
}

/** The first match of `re` in `text`, testing windows of {@link GREP_WINDOW_CHARS}. */
const firstMatch = (re: RegExp, text: string): { at: number; length: number } | undefined => {
  const step = Math.floor(GREP_WINDOW_CHARS * 0.9)
  for (let start = 0; start < text.length; start += step) {
    const m = re.exec(text.slice(start, start + GREP_WINDOW_CHARS))
    if (m !== null) return { at: start + m.index, length: m[0].length }
    if (start + GREP_WINDOW_CHARS >= text.length) break
  }
  return undefined
}

/**
 * The checks `grepRecords` makes before it reads anything — the pattern's size and safety, the
 * filters — with the compiled pattern and filters; fails as `grepRecords` would.
 */
export const checkGrepInput = (
  input: GrepInput,
  now: number,
): Effect.Effect<
  {
    readonly re: RegExp
    readonly filters: CompiledFilters
    readonly limit: number
    readonly snippetChars: number
    readonly maxScanMs: number
  },
  RecallQueryError
> =>
  Effect.gen(function* () {
    const caseSensitive = input.caseSensitive === true
    if (input.pattern === "" || input.pattern.length > 1000) {
      return yield* new RecallQueryError({
        field: "pattern",
        message:
          input.pattern === "" ? "the pattern is empty" : "keep the pattern under 1000 characters",
      })
    }
    // Matched against NFC text (see grepFold), so in NFC too.
    const pattern = grepFold(input.pattern)
    // A literal needs no safety check: an escaped string cannot backtrack.
    const re =
      input.regex === true
        ? yield* compileSafeRegex(pattern, caseSensitive)
        : new RegExp(escapeRegExp(pattern), caseSensitive ? "u" : "iu")
    const limit = yield* wholeNumber("limit", input.limit, { fallback: 100, least: 1, most: 1000 })
    const snippetChars = yield* wholeNumber("snippetChars", input.snippetChars, {
      fallback: 200,
      least: 1,
      floor: 40,
      most: 2000,
    })
    const maxScanMs = yield* wholeNumber("maxScanMs", input.maxScanMs, {
      fallback: GREP_SCAN_MS,
      least: 1,
      floor: 50,
      most: Number.MAX_SAFE_INTEGER,
    })
    return { re, filters: yield* compileFilters(input, now), limit, snippetChars, maxScanMs }
  })

/** How a grep fails: a bad input, an unknown session, or the database. */
export type GrepFailure = RecallQueryError | RecallNotFoundError | RecallStorageError

/**
 * Scans every indexed raw record — prompts, answers, tool calls and output, reasoning summaries,
 * compaction text — for `pattern`, in its decoded, masked text: a literal (case-insensitive
 * unless `caseSensitive`) or, with `regex`, a JavaScript regular expression that passes the
 * safety check (bounded size, no backreferences, no nested repeats). At most `limit` hits (100),
 * each with a snippet and the address (session id, turn id) to expand; copies of a record already
 * hit are skipped; the scan stops after `maxScanMs` (5 000) with `timedOut` set.
 *
 * Runs on the calling thread, and some patterns that pass the check still backtrack without end on
 * some text: for a pattern from user input use {@link grepRecordsIsolated}, which runs a regex in a
 * worker thread under a hard deadline.
 */
export const grepRecords = (
  input: GrepInput,
): Effect.Effect<GrepResult, GrepFailure, RecallDatabase> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const clock = yield* Clock.clockWith((c) => Effect.succeed(c))
    const now = clock.currentTimeMillisUnsafe()
    const regexMode = input.regex === true
    const caseSensitive = input.caseSensitive === true
    const pattern = input.pattern
    const { re, filters, limit, snippetChars, maxScanMs } = yield* checkGrepInput(input, now)
    const folded = grepFold(pattern)
    const deadline = now + maxScanMs

    const clauses: Array<SqlClause> = [filters.session, { sql: "r.kind <> 'noise'", args: [] }]
    if (input.sessionId !== undefined && input.sessionId !== "") {
      // Also through the records' session index: a grep within one session reads its records
      // (ms), not every record's row (1.2 s at 2 M records); sessions' own index leads with
      // the source, so the join alone does not find it.
      clauses.push({
        sql: "r.session_row in (select id from sessions where session_id = ?)",
        args: [input.sessionId],
      })
    }
    if (input.includeDuplicates !== true) clauses.push({ sql: "r.skip_for_grep = 0", args: [] })
    if (input.kinds !== undefined) {
      clauses.push({
        sql: `r.kind in (${input.kinds.map(() => "?").join(", ") || "''"})`,
        args: [...input.kinds],
      })
    }
    if (filters.range !== undefined) {
      clauses.push(timestampClause(filters.range, "coalesce(r.timestamp, t.timestamp)"))
    }
    // Let SQLite skip the records that cannot match: each of these runs is in every match.
    for (const run of prefilterRuns(folded, regexMode)) {
      clauses.push(
        caseSensitive
          ? { sql: "instr(r.text, ?) > 0", args: [run] }
          : { sql: "r.text like ? escape '\\'", args: [`%${escapeLike(run)}%`] },
      )
    }
    // Last: SQLite runs the JavaScript test only on the records every cheaper clause kept.
    const where = [...clauses, { sql: `${GREP_MATCH_FUNCTION}(r.id, r.text)`, args: [] }]
      .map((c) => `(${c.sql})`)
      .join(" and ")
    // A session id that names no session is most likely mistyped: say so, as expand and step do,
    // instead of "no match".
    if (input.sessionId !== undefined && input.sessionId !== "") {
      const sessionId = input.sessionId
      const known = yield* Effect.try({
        try: () =>
          db.sqlite.prepare("select 1 from sessions where session_id = ? limit 1").get(sessionId),
        catch: storageFailure("read", db.path),
      })
      if (known === undefined)
        return yield* new RecallNotFoundError({
          sessionId,
          turnId: null,
          message: `no session ${sessionId.slice(0, 80)} in the index (it may not be indexed yet, or was pruned or forgotten)`,
        })
    }
    const window = Math.max(1, Math.floor(input.scanWindowRecords ?? GREP_SCAN_WINDOW_RECORDS))
    const matcher = yield* Effect.try({
      try: () => grepMatcher(db.sqlite),
      catch: storageFailure("read", db.path),
    })
    const statement = yield* Effect.try({
      try: () =>
        db.sqlite.prepare(
          `select r.id, s.source, s.session_id, s.id as session_row, s.forked_from, t.turn_id, t.role,
                  r.kind, r.record_type,
                  coalesce(r.timestamp, t.timestamp) as timestamp, s.cwd, s.repo_root, s.headless,
                  s.subagent, r.text
           from raw_records r
           join sessions s on s.id = r.session_row
           left join turns t on t.id = r.turn_row
           where r.id > ? and r.id <= ? and ${where}
           order by r.id desc`,
        ),
      catch: storageFailure("read", db.path),
    })
    // A fork's copy of its parent's record: the parent session holds a record of the same kind
    // and text that this grep finds too (every clause but the test, which the same text passes).
    const copyCheck = yield* Effect.try({
      try: () => {
        const parentOf = forkParents(db.sqlite)
        const sessionRow = db.sqlite
          .prepare("select id from sessions where source = ? and session_id = ?")
          .pluck()
        const original = db.sqlite
          .prepare(
            `select 1 from raw_records r
             join sessions s on s.id = r.session_row
             left join turns t on t.id = r.turn_row
             where r.session_row = ? and r.kind = ? and r.text = ? and ${clauses
               .map((c) => `(${c.sql})`)
               .join(" and ")}
             limit 1`,
          )
          .pluck()
        const parents = new Map<number, number | null>()
        const parentRow = (row: Row): number | null => {
          const known = parents.get(row.session_row)
          if (known !== undefined) return known
          const parent = parentOf(row.source, row.session_row, row.forked_from)
          const found =
            parent === null ? undefined : (sessionRow.get(row.source, parent) as number | undefined)
          const id = found === undefined || found === row.session_row ? null : found
          parents.set(row.session_row, id)
          return id
        }
        const args = clauses.flatMap((c) => c.args)
        return (row: Row): boolean => {
          const parent = parentRow(row)
          return parent !== null && original.get(parent, row.kind, row.text, ...args) !== undefined
        }
      },
      catch: storageFailure("read", db.path),
    })
    // One read transaction: every window sees the same snapshot, as one statement did.
    const scanAll = db.sqlite.transaction((): GrepResult => {
      const newest = db.sqlite
        .prepare("select coalesce(max(id), 0) from raw_records")
        .pluck()
        .get() as number
      const hits: Array<GrepHit> = []
      // Turn id, kind and text of each hit, with the session it was found in: the same text of
      // the same kind in the same turn is one record written twice (Codex writes each message
      // as an event and as a response item) and is not shown again; found in another session,
      // it is a fork's copy and is counted.
      const seen = new Map<string, string>()
      // Session and key of each record skipped as a fork's copy of its parent's.
      const copies = new Set<string>()
      let copiesSkipped = 0
      let scanned = 0
      let truncated = false
      let timedOut = false
      const args = clauses.flatMap((c) => c.args)
      // Newest row ids first, a window per statement; the budget is checked every 16 records
      // JavaScript tests and before every window after the first. `reached`: the lowest row id
      // covered so far (0: the whole table).
      let reached = newest
      // The test SQLite runs on each record left after the cheaper clauses: counts it, moves
      // `reached` to it, and checks the budget every 16 records; past the budget it passes on the
      // rest of the window without testing, and the loop below stops.
      matcher.current = (id, text) => {
        if (timedOut) return 0
        scanned += 1
        reached = id
        if ((scanned & 15) === 0 && clock.currentTimeMillisUnsafe() > deadline) {
          timedOut = true
          return 0
        }
        return firstMatch(re, grepFold(text)) === undefined ? 0 : 1
      }
      scan: for (let top = newest; top > 0; top -= window) {
        if (top !== newest && clock.currentTimeMillisUnsafe() > deadline) {
          timedOut = true
          reached = top
          break
        }
        // All of a window's matches first: the copy check reads the database, which an open
        // iterator on the connection would not allow.
        for (const row of statement.all(top - window, top, ...args) as Array<Row>) {
          // The test passed, so this finds the match again (for the snippet, cut from the NFC
          // text the match is in).
          const text = grepFold(row.text)
          const match = firstMatch(re, text)
          if (match === undefined) continue
          if (input.includeDuplicates !== true) {
            const key =
              row.turn_id === null
                ? undefined
                : `${row.source}\u0000${row.turn_id}\u0000${row.kind}\u0000${row.text}`
            const first = key === undefined ? undefined : seen.get(key)
            if (first !== undefined) {
              if (first !== row.session_id) copiesSkipped += 1
              continue
            }
            if (key !== undefined && copies.has(`${row.session_id}\u0000${key}`)) continue
            if (copyCheck(row)) {
              // Counted once, not again for the same record written twice in its turn.
              if (key !== undefined) copies.add(`${row.session_id}\u0000${key}`)
              copiesSkipped += 1
              continue
            }
            if (key !== undefined) seen.set(key, row.session_id)
          }
          if (hits.length >= limit) {
            truncated = true
            reached = row.id
            break scan
          }
          hits.push({
            source: row.source,
            sessionId: row.session_id,
            turnId: row.turn_id,
            role: row.role,
            kind: row.kind,
            recordType: row.record_type,
            timestamp: row.timestamp,
            whenHuman: whenHuman(row.timestamp, now, filters.timezone),
            cwd: row.cwd,
            project: projectOf(row.repo_root),
            headless: row.headless === 1,
            subagent: row.subagent === 1,
            snippet: snippetAt(text, match.at, match.length, snippetChars),
          })
        }
        if (timedOut) break
        reached = Math.max(0, top - window)
      }
      // Scanned newest-indexed first (no sort over the whole table); shown newest first.
      hits.sort((a, b) => (b.timestamp ?? "").localeCompare(a.timestamp ?? ""))
      return {
        pattern,
        mode: regexMode ? "regex" : "literal",
        caseSensitive,
        hits,
        truncated,
        timedOut,
        scanned,
        searchedShare: newest === 0 ? 1 : Math.min(1, Math.max(0, (newest - reached) / newest)),
        copiesSkipped,
      }
    })
    return yield* Effect.try({
      try: () => {
        try {
          return scanAll()
        } finally {
          matcher.current = undefined
        }
      },
      catch: storageFailure("read", db.path),
    })
  })

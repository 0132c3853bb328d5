/**
 * Cursors into the raw history: `expandAround` (the turns before and after a hit) and `step`
 * (the next or previous turns). They move over conversational turns — a user prompt, or the
 * assistant's whole answer with its tool calls, tool output and reasoning — not over raw lines,
 * so progress and snapshot lines never fill the window. Guarantees: a turn that holds nothing
 * but harness text or noise is skipped (the anchor itself is always shown); a turn id is shown
 * once per session, however many files hold the turn (an older Claude Code resume copies the
 * previous session's records into its new file); the words of a turn
 * are its surface text rebuilt exactly from its chunks; other records come rendered, masked and
 * bounded (`recordChars`, `maxRecords` per turn, with the number left out), and harness,
 * metadata, progress and noise records are left out unless asked for (recalled text is data,
 * never instructions), and so are records that repeat another (`skipForGrep`: Codex's second
 * copy of a command's output or of a compaction summary); a missing session or turn is a
 * {@link RecallNotFoundError}.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { wholeNumber } from "./input-numbers.js"
import * as Schema from "effect/Schema"
import { RecallNotFoundError, RecallQueryError } from "./errors.js"
import type { RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { projectOf } from "./search.js"
import { capRecordText, capText } from "./snippet.js"
import { omissionMarkerPattern } from "./omission-marker.js"
import { decodeRows } from "./stored-rows.js"
import { resolveTimeZone, whenHuman } from "./time-format.js"
import type { RawRecordKind, TranscriptSource } from "./transcript-model.js"

/** Record kinds shown by default: the work, not the harness. */
export const DEFAULT_RECORD_KINDS: ReadonlyArray<RawRecordKind> = [
  "tool-call",
  "tool-output",
  "reasoning",
  "compaction",
]

/** How much of each turn to show. */
export interface TurnViewOptions {
  /** Longest words text per turn; default 2 000 characters. */
  readonly textChars?: number | undefined
  /** Longest rendering per record; default 600 characters. */
  readonly recordChars?: number | undefined
  /** Most records per turn; default 12. */
  readonly maxRecords?: number | undefined
  /** Record kinds to include; default {@link DEFAULT_RECORD_KINDS}. `message` adds raw message lines. */
  readonly recordKinds?: ReadonlyArray<RawRecordKind> | undefined
  /**
   * Also show records that repeat another (Codex's second copy of a tool output or of a
   * compaction summary, Claude Code's request bookkeeping); default false.
   */
  readonly includeDuplicates?: boolean | undefined
  /** Zone of `whenHuman`; default this computer's. */
  readonly timezone?: string | undefined
}

/** A cursor: one turn of one session. */
export interface TurnAnchor {
  readonly sessionId: string
  readonly turnId: string
  readonly source?: TranscriptSource | undefined
}

/** One rendered record of a turn. */
export interface TurnRecordView {
  readonly kind: string
  readonly recordType: string
  readonly timestamp: string | null
  /**
   * Cut (`truncated`) with `[… N characters omitted …]` between its head and its end, or, under
   * 120 characters or for a record stored before parser version 5 with its head only, ending in `…`.
   */
  readonly text: string
  readonly truncated: boolean
}

/** One conversational turn. */
export interface TurnView {
  readonly source: TranscriptSource
  readonly sessionId: string
  readonly turnId: string
  readonly role: string
  readonly timestamp: string | null
  readonly whenHuman: string
  readonly isAnchor: boolean
  /** The user's or assistant's words (harness removed, secrets masked). */
  readonly text: string
  readonly textTruncated: boolean
  readonly records: ReadonlyArray<TurnRecordView>
  /** Records of the shown kinds left out by `maxRecords`. */
  readonly omittedRecords: number
}

/** A window of turns around an anchor. */
export interface TurnWindow {
  readonly source: TranscriptSource
  readonly sessionId: string
  readonly cwd: string | null
  readonly project: string | null
  readonly turns: ReadonlyArray<TurnView>
  /** No turn before the first one shown. */
  readonly atStart: boolean
  /** No turn after the last one shown. */
  readonly atEnd: boolean
}

const TurnRows = Schema.Array(
  Schema.Struct({
    id: Schema.Number,
    file_id: Schema.NullOr(Schema.Number),
    ordinal: Schema.Number,
    turn_id: Schema.String,
    role: Schema.String,
    timestamp: Schema.NullOr(Schema.String),
    navigable: Schema.Number,
  }),
)

const AnchorRow = Schema.Struct({
  turn_row: Schema.NullOr(Schema.Number),
  session_row: Schema.Number,
  source: Schema.Literals(["claude", "codex"]),
  session_id: Schema.String,
  cwd: Schema.NullOr(Schema.String),
  repo_root: Schema.NullOr(Schema.String),
})

const ChunkRows = Schema.Array(
  Schema.Struct({
    turn_row: Schema.Number,
    surface_index: Schema.Number,
    char_start: Schema.Number,
    char_end: Schema.Number,
    text: Schema.String,
  }),
)

const RecordRows = Schema.Array(
  Schema.Struct({
    turn_row: Schema.Number,
    kind: Schema.String,
    record_type: Schema.String,
    timestamp: Schema.NullOr(Schema.String),
    text: Schema.String,
    truncated: Schema.Number,
  }),
)

/** Rebuilds surface texts from their overlapping chunks (`text === source.slice(start, end)`). */
export const rebuildSurface = (
  chunks: ReadonlyArray<{
    surface_index: number
    char_start: number
    char_end: number
    text: string
  }>,
): ReadonlyArray<string> => {
  const bySurface = new Map<number, Array<(typeof chunks)[number]>>()
  for (const c of chunks) {
    const list = bySurface.get(c.surface_index)
    if (list === undefined) bySurface.set(c.surface_index, [c])
    else list.push(c)
  }
  return [...bySurface.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, list]) => {
      list.sort((a, b) => a.char_start - b.char_start)
      let text = ""
      let end = 0
      for (const c of list) {
        if (c.char_end <= end) continue
        text += c.text.slice(Math.max(0, end - c.char_start))
        end = c.char_end
      }
      return text
    })
}

const kindsList = (kinds: ReadonlyArray<string>): string =>
  kinds.map((k) => `'${k.replace(/[^a-z-]/g, "")}'`).join(", ")

/** Outside a session: before its first turn, or after its last. */
interface SessionEdge {
  readonly sessionId: string
  readonly source?: TranscriptSource | undefined
  readonly edge: "start" | "end"
}

/**
 * The turns of the anchor's session, `before` turns before and `after` turns after the anchor
 * (the anchor included unless `includeAnchor` is false). At an edge, the first `after` turns
 * (`start`) or the last `before` (`end`).
 */
const turnWindow = (
  anchor: TurnAnchor | SessionEdge,
  before: number,
  after: number,
  includeAnchor: boolean,
  options: TurnViewOptions,
): Effect.Effect<
  TurnWindow,
  RecallNotFoundError | RecallQueryError | RecallStorageError,
  RecallDatabase
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const now = yield* Clock.currentTimeMillis
    const timezone = yield* resolveTimeZone(options.timezone)
    const read = <A>(f: () => A) => Effect.try({ try: f, catch: storageFailure("read", db.path) })
    if (anchor.sessionId.trim() === "") {
      return yield* new RecallQueryError({ field: "session", message: "the session id is empty" })
    }
    const edge = "edge" in anchor ? anchor.edge : undefined
    const turnId = "turnId" in anchor ? anchor.turnId : ""
    if (edge === undefined && turnId.trim() === "") {
      return yield* new RecallQueryError({ field: "turn", message: "the turn id is empty" })
    }
    const source = anchor.source ?? null
    const found = yield* read(() =>
      edge !== undefined
        ? db.sqlite
            .prepare(
              `select null as turn_row, s.id as session_row, s.source, s.session_id, s.cwd,
                 s.repo_root
               from sessions s where s.session_id = ? and (? is null or s.source = ?)
               order by s.id limit 1`,
            )
            .get(anchor.sessionId, source, source)
        : db.sqlite
            .prepare(
              `select t.id as turn_row, s.id as session_row, s.source, s.session_id, s.cwd,
                 s.repo_root
               from turns t join sessions s on s.id = t.session_row
               where s.session_id = ? and t.turn_id = ? and (? is null or s.source = ?)
               order by t.id limit 1`,
            )
            .get(anchor.sessionId, turnId, source, source),
    )
    if (found === undefined) {
      const session = yield* read(() =>
        db.sqlite.prepare("select 1 from sessions where session_id = ?").get(anchor.sessionId),
      )
      return yield* new RecallNotFoundError({
        sessionId: anchor.sessionId,
        turnId: session === undefined || edge !== undefined ? null : turnId,
        message:
          session === undefined
            ? `no session ${anchor.sessionId.slice(0, 80)} in the index (it may not be indexed yet, or was pruned or forgotten)`
            : `session ${anchor.sessionId.slice(0, 80)} has no turn ${turnId.slice(0, 120)}; take turn ids from search, grep or expand results`,
      })
    }
    const at = yield* decodeRows(AnchorRow, db.path, found)
    const kinds = options.recordKinds ?? DEFAULT_RECORD_KINDS
    // Turns in file order; a session spread over files orders its files by their first turn.
    const rows = yield* decodeRows(
      TurnRows,
      db.path,
      yield* read(() =>
        db.sqlite
          .prepare(
            `select t.id, t.file_id, t.ordinal, t.turn_id, t.role, t.timestamp,
                (t.surface_count > 0 or exists (select 1 from raw_records r where r.turn_row = t.id
                   and r.kind in ('tool-call', 'tool-output', 'reasoning', 'compaction', 'message'))
                ) as navigable
             from turns t where t.session_row = ? order by t.id`,
          )
          .all(at.session_row),
      ),
    )
    const firstOfFile = new Map<number | null, number>()
    for (const r of rows) if (!firstOfFile.has(r.file_id)) firstOfFile.set(r.file_id, r.id)
    const ordered = [...rows].sort(
      (a, b) =>
        (firstOfFile.get(a.file_id) ?? 0) - (firstOfFile.get(b.file_id) ?? 0) ||
        a.ordinal - b.ordinal ||
        a.id - b.id,
    )
    // A turn two files hold (an older Claude Code resume's copy, one Codex rollout in two
    // folders) is shown once, where it comes first; an anchor on the other copy lands there.
    const kept = new Map<string, (typeof ordered)[number]>()
    for (const t of ordered) if (!kept.has(t.turn_id)) kept.set(t.turn_id, t)
    const turns = [...kept.values()]
    const anchorRow = at.turn_row === null ? null : (kept.get(turnId)?.id ?? at.turn_row)
    const index = turns.findIndex((t) => t.id === anchorRow)
    const navigable = turns.filter((t, i) => i === index || t.navigable === 1)
    const position =
      edge === "start"
        ? -1
        : edge === "end"
          ? navigable.length
          : navigable.findIndex((t) => t.id === anchorRow)
    const from = Math.max(0, position - before)
    const to = Math.min(navigable.length, position + after + 1)
    const shown = navigable.slice(from, to).filter((t) => includeAnchor || t.id !== anchorRow)
    const ids = JSON.stringify(shown.map((t) => t.id))
    const chunks = yield* decodeRows(
      ChunkRows,
      db.path,
      yield* read(() =>
        db.sqlite
          .prepare(
            `select turn_row, surface_index, char_start, char_end, text from chunks
             where turn_row in (select value from json_each(?))
             order by turn_row, surface_index, chunk_index`,
          )
          .all(ids),
      ),
    )
    const records =
      kinds.length === 0
        ? []
        : yield* decodeRows(
            RecordRows,
            db.path,
            yield* read(() =>
              db.sqlite
                .prepare(
                  `select turn_row, kind, record_type, timestamp, text, truncated from raw_records
                   where turn_row in (select value from json_each(?))
                     and kind in (${kindsList(kinds)}) and text <> ''${
                       options.includeDuplicates === true ? "" : " and skip_for_grep = 0"
                     }
                   order by turn_row, offset`,
                )
                .all(ids),
            ),
          )
    const textChars = yield* wholeNumber("textChars", options.textChars, {
      fallback: 2000,
      least: 1,
      floor: 40,
      most: 100_000,
    })
    const recordChars = yield* wholeNumber("recordChars", options.recordChars, {
      fallback: 600,
      least: 1,
      floor: 40,
      most: 100_000,
    })
    const maxRecords = yield* wholeNumber("maxRecords", options.maxRecords, {
      fallback: 12,
      least: 0,
      most: 1000,
    })
    const views = shown.map((t): TurnView => {
      const words = rebuildSurface(chunks.filter((c) => c.turn_row === t.id)).join("\n\n")
      const text = capText(words, textChars)
      const own = records.filter((r) => r.turn_row === t.id)
      return {
        source: at.source,
        sessionId: at.session_id,
        turnId: t.turn_id,
        role: t.role,
        timestamp: t.timestamp,
        whenHuman: whenHuman(t.timestamp, now, timezone),
        isAnchor: t.id === anchorRow,
        text: text.text,
        textTruncated: text.truncated,
        records: own.slice(0, maxRecords).map((r) => {
          const capped = capRecordText(r.text, recordChars)
          // A cut made at index time (`maxRawTextChars`) is marked like one made here, unless it
          // left out the middle and kept the true end (parser version 5 on).
          const cutBefore =
            !capped.truncated && r.truncated === 1 && !omissionMarkerPattern.test(r.text)
          return {
            kind: r.kind,
            recordType: r.record_type,
            timestamp: r.timestamp,
            text: cutBefore ? `${capped.text}…` : capped.text,
            truncated: capped.truncated || r.truncated === 1,
          }
        }),
        omittedRecords: Math.max(0, own.length - maxRecords),
      }
    })
    return {
      source: at.source,
      sessionId: at.session_id,
      cwd: at.cwd,
      project: projectOf(at.repo_root),
      turns: views,
      atStart: from === 0,
      atEnd: to >= navigable.length,
    }
  })

/** Input of {@link expandAround}. */
export interface ExpandInput extends TurnAnchor, TurnViewOptions {
  /** Turns before the anchor; default 2 (at most 50). */
  readonly before?: number | undefined
  /** Turns after the anchor; default 2 (at most 50). */
  readonly after?: number | undefined
}

/** The anchor turn with up to `before` turns before it and `after` after it. */
export const expandAround = (
  input: ExpandInput,
): Effect.Effect<
  TurnWindow,
  RecallNotFoundError | RecallQueryError | RecallStorageError,
  RecallDatabase
> =>
  Effect.gen(function* () {
    const before = yield* wholeNumber("before", input.before, { fallback: 2, least: 0, most: 50 })
    const after = yield* wholeNumber("after", input.after, { fallback: 2, least: 0, most: 50 })
    return yield* turnWindow(input, before, after, true, input)
  })

/** Which way to step. */
export type StepDirection = "next" | "prev"

/** Input of {@link step}. */
export interface StepInput extends TurnViewOptions {
  readonly sessionId: string
  /**
   * The turn to move from. Omitted, the step starts outside the session: `next` gives its first
   * turns and `prev` its last (how to open a session `recentSessions` listed).
   */
  readonly turnId?: string | undefined
  readonly source?: TranscriptSource | undefined
  readonly direction: StepDirection
  /** Turns to return; default 1 (at most 20). */
  readonly count?: number | undefined
}

/**
 * The `count` turns after (`next`) or before (`prev`) the anchor, in conversation order, without
 * the anchor; empty at the start or end of the session (`atStart` / `atEnd` say which). With no
 * anchor turn, the session's first (`next`) or last (`prev`) `count` turns.
 */
export const step = (
  input: StepInput,
): Effect.Effect<
  TurnWindow,
  RecallNotFoundError | RecallQueryError | RecallStorageError,
  RecallDatabase
> => {
  if (input.direction !== "next" && input.direction !== "prev") {
    return Effect.fail(
      new RecallQueryError({ field: "direction", message: "direction must be next or prev" }),
    )
  }
  const { sessionId, source, turnId } = input
  const anchor: TurnAnchor | SessionEdge =
    turnId !== undefined
      ? { sessionId, source, turnId }
      : { sessionId, source, edge: input.direction === "next" ? "start" : "end" }
  return Effect.flatMap(
    wholeNumber("count", input.count, { fallback: 1, least: 1, most: 20 }),
    (count) =>
      input.direction === "next"
        ? turnWindow(anchor, 0, count, false, input)
        : turnWindow(anchor, count, 0, false, input),
  )
}

/**
 * `recentSessions`: the most recently active sessions, newest first, for "what was I doing" and
 * for picking a session to expand. Guarantees: a session counts for a day range when it has a
 * turn in it (not only when it started or ended there); subagent sessions are left out unless
 * asked (they are not something to resume); each entry carries its title — the agent's title, else
 * the first prompt, capped — its last activity, turn count, the session it was forked from, and
 * how fresh its index rows are (when its transcript was last indexed, and whether the transcript
 * still exists on disk).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { RecallQueryError, RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { compileFilters } from "./recall-filters.js"
import type { RecallFilters } from "./recall-filters.js"
import { projectOf } from "./search.js"
import { capText } from "./snippet.js"
import { decodeRows } from "./stored-rows.js"
import { relativeAge, whenHuman } from "./time-format.js"
import type { TranscriptSource } from "./transcript-model.js"
import type { Database } from "better-sqlite3"

/** Input of {@link recentSessions}. */
export interface RecentSessionsInput extends RecallFilters {
  /** Most sessions; default 10 (at most 200). */
  readonly limit?: number | undefined
  /** Include subagent / sidechain sessions; default false. */
  readonly includeSubagents?: boolean | undefined
}

/** One session, as listed. */
export interface RecentSession {
  readonly source: TranscriptSource
  readonly sessionId: string
  readonly project: string | null
  readonly cwd: string | null
  /** The session's title, else its first prompt (capped at 160 characters), else null. */
  readonly title: string | null
  readonly titleSource: "title" | "first-prompt" | null
  readonly startedAt: string | null
  readonly lastActivity: string | null
  readonly lastActivityHuman: string
  readonly turns: number
  readonly headless: boolean
  readonly subagent: boolean
  /**
   * The session this one was forked from: the one its transcript names (Codex `forked_from_id`,
   * Claude Code `forkedFrom`), else — a Claude Code `--fork-session` transcript names none but
   * starts with a copy of its parent's records — the session it copied (see `copiedFrom`). Null
   * for a session that starts with its own turn.
   */
  readonly forkedFrom: string | null
  /** `indexed`, or `missing` when the transcript is gone from disk and only the index keeps it. */
  readonly transcript: string | null
  /** When its transcript was last indexed (ISO-8601), and how long ago. */
  readonly indexedAt: string | null
  readonly indexedAgo: string | null
}

const Rows = Schema.Array(
  Schema.Struct({
    source: Schema.Literals(["claude", "codex"]),
    session_id: Schema.String,
    cwd: Schema.NullOr(Schema.String),
    repo_root: Schema.NullOr(Schema.String),
    title: Schema.NullOr(Schema.String),
    first_prompt: Schema.NullOr(Schema.String),
    started_at: Schema.NullOr(Schema.String),
    last_activity: Schema.NullOr(Schema.String),
    turn_count: Schema.Number,
    headless: Schema.Number,
    subagent: Schema.Number,
    row_id: Schema.Number,
    forked_from: Schema.NullOr(Schema.String),
    status: Schema.NullOr(Schema.String),
    indexed_at: Schema.NullOr(Schema.Number),
  }),
)

/** Another session of the same agent holding `s`'s first turn (one with a copied prefix). */
const COPY_HOLDERS = `select distinct p.id, p.session_id
  from turns ft
  join turns pt on pt.turn_id = ft.turn_id and pt.session_row <> ft.session_row
  join sessions p on p.id = pt.session_row and p.source = ?
  where ft.id = (select id from turns where session_row = ? order by ordinal limit 1)`

/** The earliest timestamp of the turns of session `a` that session `b` does not hold, and how many. */
const OWN_TURNS = `select min(t.timestamp) as first, count(*) as count from turns t
  where t.session_row = ? and t.timestamp is not null
    and not exists (select 1 from turns x where x.turn_id = t.turn_id and x.session_row = ?)`

/**
 * On `sqlite`, the session `row` was forked from when its transcript does not say (a Claude Code
 * `--fork-session` copy starts with its parent's records, uuids included): among the other
 * sessions holding its first turn, those it left before they left it — its first turn of its own
 * is earlier than theirs, or they have none (a parent that went on after the fork has its own
 * turns later than the fork's first). Of those, the one it shares the longest prefix with (a fork
 * of a fork names its direct parent), then the one with the fewest turns it does not share
 * (forks of one parent name the parent, not each other). Null when none qualifies.
 */
const copiedFrom = (sqlite: Database): ((source: string, row: number) => string | null) => {
  const copyHolders = sqlite.prepare(COPY_HOLDERS)
  const ownTurns = sqlite.prepare(OWN_TURNS)
  const own = (a: number, b: number) =>
    ownTurns.get(a, b) as { first: string | null; count: number }
  return (source, row) => {
    const holders = copyHolders.all(source, row) as Array<{ id: number; session_id: string }>
    const parents = holders
      .map((p) => ({ sessionId: p.session_id, mine: own(row, p.id).first, theirs: own(p.id, row) }))
      .filter((p) => p.mine !== null && (p.theirs.first === null || p.mine < p.theirs.first))
      .sort(
        (a, b) =>
          b.mine!.localeCompare(a.mine!) ||
          a.theirs.count - b.theirs.count ||
          (b.theirs.first ?? "").localeCompare(a.theirs.first ?? ""),
      )
    return parents[0]?.sessionId ?? null
  }
}

/** The most recently active sessions matching the filters. */
export const recentSessions = (
  input: RecentSessionsInput = {},
): Effect.Effect<
  ReadonlyArray<RecentSession>,
  RecallQueryError | RecallStorageError,
  RecallDatabase
> =>
  Effect.gen(function* () {
    const db = yield* RecallDatabase
    const now = yield* Clock.currentTimeMillis
    const filters = yield* compileFilters(
      { ...input, excludeSubagents: input.excludeSubagents ?? input.includeSubagents !== true },
      now,
    )
    const limit = Math.max(1, Math.min(200, Math.floor(input.limit ?? 10)))
    const inRange =
      filters.range === undefined
        ? { sql: "1 = 1", args: [] }
        : {
            sql: `exists (select 1 from turns t where t.session_row = s.id and ${filters.turn.sql})`,
            args: filters.turn.args,
          }
    const rows = yield* decodeRows(
      Rows,
      db.path,
      yield* Effect.try({
        try: () =>
          db.sqlite
            .prepare(
              `select s.source, s.session_id, s.cwd, s.repo_root, s.title, s.first_prompt,
                      s.started_at, s.last_activity, s.turn_count, s.headless, s.subagent,
                      s.id as row_id, s.forked_from,
                      f.status, f.indexed_at
               from sessions s left join files f on f.id = s.file_id
               where (${filters.session.sql}) and (${inRange.sql}) and s.turn_count > 0
               order by s.last_activity is null, s.last_activity desc, s.id desc
               limit ?`,
            )
            .all(...filters.session.args, ...inRange.args, limit),
        catch: storageFailure("read", db.path),
      }),
    )
    const forkedFrom = yield* Effect.try({
      try: () => {
        const parentOf = copiedFrom(db.sqlite)
        return rows.map((r) => r.forked_from ?? parentOf(r.source, r.row_id))
      },
      catch: storageFailure("read", db.path),
    })
    return rows.map((r, i): RecentSession => {
      const title = r.title ?? r.first_prompt
      return {
        source: r.source,
        sessionId: r.session_id,
        project: projectOf(r.repo_root),
        cwd: r.cwd,
        title: title === null ? null : capText(title.replace(/\s+/g, " ").trim(), 160).text,
        titleSource: r.title !== null ? "title" : r.first_prompt !== null ? "first-prompt" : null,
        startedAt: r.started_at,
        lastActivity: r.last_activity,
        lastActivityHuman: whenHuman(r.last_activity, now, filters.timezone),
        turns: r.turn_count,
        headless: r.headless === 1,
        subagent: r.subagent === 1,
        forkedFrom: forkedFrom[i] ?? null,
        transcript: r.status,
        indexedAt: r.indexed_at === null ? null : new Date(r.indexed_at).toISOString(),
        indexedAgo: r.indexed_at === null ? null : relativeAge(r.indexed_at, now),
      }
    })
  })

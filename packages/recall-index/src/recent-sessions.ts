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
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { wholeNumber } from "./input-numbers.js"
import * as Schema from "effect/Schema"
import type { RecallQueryError, RecallStorageError } from "./errors.js"
import { RecallDatabase, storageFailure } from "./recall-database.js"
import { forkParents } from "./fork-lineage.js"
import { compileFilters } from "./recall-filters.js"
import type { RecallFilters } from "./recall-filters.js"
import { projectOf } from "./search.js"
import { capText } from "./snippet.js"
import { TranscriptFileSystem } from "./transcript-file-system.js"
import { decodeRows } from "./stored-rows.js"
import { relativeAge, whenHuman } from "./time-format.js"
import type { TranscriptSource } from "./transcript-model.js"

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
   * starts with a copy of its parent's records — the session it copied (see `forkParents`). Null
   * for a session that starts with its own turn.
   */
  readonly forkedFrom: string | null
  /**
   * `indexed`; `changed` when the transcript on disk is no longer the one indexed (it grew or was
   * rewritten since: the next index run brings in what is new); `missing` when it is gone from
   * disk and only the index keeps it. Checked against the disk when a {@link TranscriptFileSystem}
   * is provided (one `stat` per listed session), else as of the last index run.
   */
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
    path: Schema.NullOr(Schema.String),
    size: Schema.NullOr(Schema.Number),
    mtime_ms: Schema.NullOr(Schema.Number),
  }),
)

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
    const limit = yield* wholeNumber("limit", input.limit, { fallback: 10, least: 1, most: 200 })
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
                      f.status, f.indexed_at, f.path, f.size, f.mtime_ms
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
        const parentOf = forkParents(db.sqlite)
        return rows.map((r) => parentOf(r.source, r.row_id, r.forked_from))
      },
      catch: storageFailure("read", db.path),
    })
    const onDisk = yield* diskStatus(rows)
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
        transcript: onDisk[i] ?? r.status,
        indexedAt: r.indexed_at === null ? null : new Date(r.indexed_at).toISOString(),
        indexedAgo: r.indexed_at === null ? null : relativeAge(r.indexed_at, now),
      }
    })
  })

/**
 * Per row, the transcript's status checked against the disk now (`changed` or `missing`), or
 * `undefined` to keep the status of the last index run: an `indexed` file whose size and mtime
 * still match, any other status, or no file system to look with.
 */
const diskStatus = (
  rows: ReadonlyArray<{
    readonly status: string | null
    readonly path: string | null
    readonly size: number | null
    readonly mtime_ms: number | null
  }>,
): Effect.Effect<ReadonlyArray<string | undefined>> =>
  Effect.gen(function* () {
    const fs = yield* Effect.serviceOption(TranscriptFileSystem)
    if (Option.isNone(fs)) return []
    const checked = rows.filter((r) => r.status === "indexed" && r.path !== null)
    if (checked.length === 0) return []
    const stats = yield* fs.value.statMany(checked.map((r) => r.path!))
    const byPath = new Map<string, string | undefined>()
    checked.forEach((r, i) => {
      const stat = stats[i]!
      byPath.set(
        r.path!,
        Result.isFailure(stat)
          ? stat.failure.code === "ENOENT" || stat.failure.code === "ENOTDIR"
            ? "missing"
            : undefined
          : stat.success.size !== r.size || stat.success.mtimeMs !== r.mtime_ms
            ? "changed"
            : undefined,
      )
    })
    return rows.map((r) =>
      r.status === "indexed" && r.path !== null ? byPath.get(r.path) : undefined,
    )
  })

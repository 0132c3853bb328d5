/**
 * The filters every recall query shares — source, repository scope, session, calendar days in a
 * time zone, headless and subagent sessions — compiled once into SQL over the aliases `s`
 * (sessions) and `t` (turns). Guarantees: user values only ever travel as bound parameters (LIKE
 * patterns escaped); the scope collapses worktrees to the main repository (`repoRootOf`) and
 * matches that root and everything below it, never a sibling sharing a prefix (`/repo-backend`
 * is not inside `/repo`); any date bound excludes turns without a timestamp.
 */
import * as Effect from "effect/Effect"
import { RecallQueryError } from "./errors.js"
import { repoRootOf } from "./repo-root.js"
import { dateRange, resolveTimeZone } from "./time-format.js"
import type { InstantRange } from "./time-format.js"
import type { TranscriptSource } from "./transcript-model.js"

/** Filters accepted by search, grep and recent sessions. */
export interface RecallFilters {
  /** Only this agent's sessions. */
  readonly source?: TranscriptSource | undefined
  /** Only sessions in this directory's repository (worktrees collapse to the main checkout). */
  readonly scopeCwd?: string | undefined
  /** Only this session. */
  readonly sessionId?: string | undefined
  /** One calendar day (`YYYY-MM-DD`, `today`, `yesterday`, `7 days ago` / `7d`) … */
  readonly onDate?: string | undefined
  /** … or an inclusive range; either end may be omitted. */
  readonly startDate?: string | undefined
  readonly endDate?: string | undefined
  /** IANA zone of those days; default: this computer's. */
  readonly timezone?: string | undefined
  /** Leave out machine-driven runs (`codex exec`, `claude -p`). */
  readonly excludeHeadless?: boolean | undefined
  /** Leave out subagent / sidechain sessions. */
  readonly excludeSubagents?: boolean | undefined
}

/** A WHERE fragment with its bound values. */
export interface SqlClause {
  readonly sql: string
  readonly args: ReadonlyArray<string | number>
}

/** Filters compiled to SQL: one clause on `s` (sessions), one on `t` (turns). */
export interface CompiledFilters {
  readonly session: SqlClause
  readonly turn: SqlClause
  /** Both, joined with `and` (for queries joining `s` and `t`). */
  readonly all: SqlClause
  /** The resolved scope root, if any. */
  readonly scopeRoot?: string
  readonly range?: InstantRange
  /** The time zone used for days (and for `when_human`). */
  readonly timezone: string
}

const sources: ReadonlyArray<string> = ["claude", "codex"]

/** Escapes `%`, `_` and `\` for `LIKE … escape '\'`. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

const join = (clauses: ReadonlyArray<SqlClause>): SqlClause =>
  clauses.length === 0
    ? { sql: "1 = 1", args: [] }
    : { sql: clauses.map((c) => `(${c.sql})`).join(" and "), args: clauses.flatMap((c) => c.args) }

/** `column` (an ISO-8601 UTC text column) inside the half-open `range`; null never matches. */
export const timestampClause = (range: InstantRange, column: string): SqlClause => {
  const parts: Array<SqlClause> = [{ sql: `${column} is not null`, args: [] }]
  if (range.startMs !== undefined) {
    parts.push({ sql: `${column} >= ?`, args: [new Date(range.startMs).toISOString()] })
  }
  if (range.endMs !== undefined) {
    parts.push({ sql: `${column} < ?`, args: [new Date(range.endMs).toISOString()] })
  }
  return join(parts)
}

/** Validates and compiles `filters` at `now` (epoch ms, for `today`, `yesterday` and days ago). */
export const compileFilters = (
  filters: RecallFilters,
  now: number,
): Effect.Effect<CompiledFilters, RecallQueryError> =>
  Effect.gen(function* () {
    if (filters.source !== undefined && !sources.includes(filters.source)) {
      return yield* new RecallQueryError({
        field: "source",
        message: `source must be claude or codex, not '${String(filters.source).slice(0, 20)}'`,
      })
    }
    const range = yield* dateRange(filters, now)
    const session: Array<SqlClause> = []
    const turn: Array<SqlClause> = []
    if (filters.source !== undefined) session.push({ sql: "s.source = ?", args: [filters.source] })
    if (filters.sessionId !== undefined && filters.sessionId !== "") {
      session.push({ sql: "s.session_id = ?", args: [filters.sessionId] })
    }
    let scopeRoot: string | undefined
    if (filters.scopeCwd !== undefined && filters.scopeCwd.trim() !== "") {
      scopeRoot = repoRootOf(filters.scopeCwd.trim())
      const below = scopeRoot === "/" ? "/%" : `${escapeLike(scopeRoot)}/%`
      session.push({
        sql: "s.repo_root = ? or s.repo_root like ? escape '\\'",
        args: [scopeRoot, below],
      })
    }
    if (filters.excludeHeadless === true) session.push({ sql: "s.headless = 0", args: [] })
    if (filters.excludeSubagents === true) session.push({ sql: "s.subagent = 0", args: [] })
    if (range !== undefined) turn.push(timestampClause(range, "t.timestamp"))
    const sessionClause = join(session)
    const turnClause = join(turn)
    return {
      session: sessionClause,
      turn: turnClause,
      all: join([...session, ...turn]),
      ...(scopeRoot === undefined ? {} : { scopeRoot }),
      ...(range === undefined ? {} : { range }),
      timezone: range?.timezone ?? (yield* resolveTimeZone(filters.timezone)),
    }
  })

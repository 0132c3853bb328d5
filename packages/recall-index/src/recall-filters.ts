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

/** 10000-01-01T00:00:00Z in epoch ms. */
const AFTER_YEAR_9999 = Date.UTC(10000, 0, 1)

/** `column` (an ISO-8601 UTC text column) inside the half-open `range`; null never matches. */
export const timestampClause = (range: InstantRange, column: string): SqlClause => {
  const parts: Array<SqlClause> = [{ sql: `${column} is not null`, args: [] }]
  // Past 9999 an ISO string gains a sign (`+010000-01-01…`), which sorts before every stored
  // four-digit year: such an end bounds nothing, such a start excludes everything.
  if (range.startMs !== undefined) {
    parts.push(
      range.startMs >= AFTER_YEAR_9999
        ? { sql: "0", args: [] }
        : { sql: `${column} >= ?`, args: [new Date(range.startMs).toISOString()] },
    )
  }
  if (range.endMs !== undefined && range.endMs < AFTER_YEAR_9999) {
    parts.push({ sql: `${column} < ?`, args: [new Date(range.endMs).toISOString()] })
  }
  return join(parts)
}

/**
 * `column` (a directory) is `root` or a directory below it. Case-sensitive, as paths are
 * here (a `like` prefix ignores ASCII case, so `/work/REPOS` took in `/work/repos/…`).
 */
const repoRootClause = (column: string, root: string): SqlClause => ({
  sql: `${column} = ? or instr(${column}, ?) = 1`,
  args: [root, root === "/" ? "/" : `${root}/`],
})

/**
 * The sessions (columns `repo_root` and `cwd` after `prefix`, e.g. `s.`) of the repository at
 * `root`: its root is `root` or below it, or it was recorded in `root` or below — a worktree
 * removed since (its sessions' roots were collapsed to the main checkout while it existed; its
 * own path no longer resolves to that checkout). What `--scope` keeps and `forget --project`
 * removes.
 */
export const scopeClause = (prefix: string, root: string): SqlClause => {
  const inRepo = repoRootClause(`${prefix}repo_root`, root)
  const inDir = repoRootClause(`${prefix}cwd`, root)
  return { sql: `${inRepo.sql} or ${inDir.sql}`, args: [...inRepo.args, ...inDir.args] }
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
      session.push(scopeClause("s.", scopeRoot))
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

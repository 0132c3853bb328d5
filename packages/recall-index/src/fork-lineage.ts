/**
 * Fork lineage: which session a session was forked from. A transcript that names its parent
 * (Codex `forked_from_id`, Claude Code `forkedFrom`) is taken at its word; a Claude Code
 * `--fork-session` transcript names none but starts with a copy of its parent's records, uuids
 * included, so its parent is derived from the turns it shares (`copiedFrom`). Used by
 * `recentSessions` and by `searchRecall`'s hits.
 */
import type { Database } from "better-sqlite3"

/** Another session of the same agent holding `s`'s first turn (one with a copied prefix). */
const COPY_HOLDERS = `select distinct p.id, p.session_id
  from turns ft
  join turns pt on pt.turn_id = ft.turn_id and pt.session_row <> ft.session_row
  join sessions p on p.id = pt.session_row and p.source = ?
  where ft.id = (select id from turns where session_row = ? order by ordinal limit 1)`

/**
 * The earliest timestamp of the turns of session `a` that session `b` does not hold, and how
 * many.
 */
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

/**
 * On `sqlite`, a finder of the session a session was forked from: `recorded` (what its transcript
 * names) when set, else the session it copied (see `copiedFrom`), else null. Prepares its
 * statements once; call the finder per session.
 */
export const forkParents = (
  sqlite: Database,
): ((source: string, row: number, recorded: string | null) => string | null) => {
  const parentOf = copiedFrom(sqlite)
  return (source, row, recorded) => recorded ?? parentOf(source, row)
}

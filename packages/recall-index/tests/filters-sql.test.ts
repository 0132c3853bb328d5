// Filters as SQL, on real temp-file SQLite tables: which session rows (repository root, last
// cwd) a scope keeps, and which turn times a day range keeps.
import Database from "better-sqlite3"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { compileFilters } from "@baton/recall-index"

const dir = mkdtempSync(join(tmpdir(), "baton-scope-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const db = new Database(join(dir, "scope.db"))
db.exec("create table sessions (name text, repo_root text, cwd text)")
const insert = db.prepare("insert into sessions values (?, ?, ?)")
for (const row of [
  ["main", "/work/repos/alpha", "/work/repos/alpha"],
  ["nested", "/work/repos/alpha/nested", "/work/repos/alpha/nested"],
  // A sibling worktree, removed since: collapsed to the main checkout while it existed.
  ["removed-worktree", "/work/repos/alpha", "/work/repos/alpha-wt/src"],
  ["sibling", "/work/repos/alpha-backend", "/work/repos/alpha-backend"],
  ["percent", "/work/repos/50%_off", "/work/repos/50%_off"],
])
  insert.run(...row)
db.exec("create table turns (name text, timestamp text)")
const insertTurn = db.prepare("insert into turns values (?, ?)")
for (const row of [
  ["2026", "2026-07-14T10:00:00.000Z"],
  ["9999", "9999-12-31T23:00:00.000Z"],
  ["unknown", null],
])
  insertTurn.run(...row)
afterAll(() => db.close())

const scoped = (scopeCwd: string): Array<string> => {
  const { session } = Effect.runSync(compileFilters({ scopeCwd }, Date.UTC(2026, 0, 1)))
  return (
    db
      .prepare(`select name from sessions s where ${session.sql} order by name`)
      .all(...session.args) as Array<{ name: string }>
  ).map((r) => r.name)
}

describe("repository scope", () => {
  it("keeps the repository, what lies below it and what was recorded in it, not a sibling", () => {
    expect(scoped("/work/repos/alpha")).toEqual(["main", "nested", "removed-worktree"])
    expect(scoped("/work/repos/alpha/")).toEqual(["main", "nested", "removed-worktree"])
    expect(scoped("/work/repos")).toEqual([
      "main",
      "nested",
      "percent",
      "removed-worktree",
      "sibling",
    ])
  })

  it("finds a removed worktree's sessions by the worktree's own path", () => {
    expect(scoped("/work/repos/alpha-wt")).toEqual(["removed-worktree"])
  })

  it("is case-sensitive, as paths are", () => {
    expect(scoped("/work/REPOS")).toEqual([])
    expect(scoped("/work/repos/ALPHA")).toEqual([])
  })

  it("takes % and _ literally", () => {
    expect(scoped("/work/repos/50%_off")).toEqual(["percent"])
    expect(scoped("/work/repos/5_")).toEqual([])
  })
})

describe("day range", () => {
  const days = (range: { startDate?: string; endDate?: string }): Array<string> => {
    const { turn } = Effect.runSync(
      compileFilters({ ...range, timezone: "UTC" }, Date.UTC(2026, 0, 1)),
    )
    return (
      db
        .prepare(`select name from turns t where ${turn.sql} order by name`)
        .all(...turn.args) as Array<{ name: string }>
    ).map((r) => r.name)
  }

  it("reaches the last day there is (an ISO string past 9999 sorts before every year)", () => {
    expect(days({ startDate: "2026-01-01", endDate: "9999-12-30" })).toEqual(["2026"])
    expect(days({ startDate: "2026-01-01", endDate: "9999-12-31" })).toEqual(["2026", "9999"])
    expect(days({ endDate: "9999-12-31" })).toEqual(["2026", "9999"])
    expect(days({ startDate: "9999-12-31" })).toEqual(["9999"])
  })
})

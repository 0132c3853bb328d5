// The sort settings the lookup indexes are built under: set for the build, the connection's own
// back after (also when the build throws), and left alone where SQLite refuses a change.
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { SORT_SETTINGS, withSortSettings } from "./lookup-indexes.js"

const dir = mkdtempSync(join(tmpdir(), "baton-sort-settings-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const open = (name: string) => {
  const db = new Database(join(dir, name))
  // As `recall-database.ts` opens it.
  db.pragma("journal_mode = WAL")
  db.pragma("cache_size = -65536")
  db.pragma("temp_store = MEMORY")
  return db
}
const settings = (db: Database.Database) =>
  Object.keys(SORT_SETTINGS).map((name) => db.pragma(name, { simple: true }))

describe("withSortSettings", () => {
  it("sorts on disk with a small cache and a helper thread, then restores the connection's", () => {
    const db = open("a.db")
    const before = settings(db)
    expect(before).toEqual([2, 0, -65536])
    expect(withSortSettings(db, () => settings(db))).toEqual([1, 1, -16384])
    expect(settings(db)).toEqual(before)
    expect(() =>
      withSortSettings(db, () => {
        throw new Error("build failed")
      }),
    ).toThrow("build failed")
    expect(settings(db)).toEqual(before)
    db.close()
  })

  it("leaves temporary storage alone while temporary objects exist, and still runs", () => {
    const db = open("b.db")
    db.exec("create temp table kept (x); insert into kept values (1)")
    expect(withSortSettings(db, () => settings(db))).toEqual([2, 1, -16384])
    // Changing it would have dropped the table.
    expect(db.prepare("select x from temp.kept").pluck().all()).toEqual([1])
    expect(settings(db)).toEqual([2, 0, -65536])
    db.exec("drop table temp.kept")
    // None left, but inside a transaction the temporary database is open: SQLite refuses.
    db.exec("create table t (x)")
    expect(db.transaction(() => withSortSettings(db, () => settings(db)))()).toEqual([2, 1, -16384])
    expect(settings(db)).toEqual([2, 0, -65536])
    // Outside one it changes.
    expect(withSortSettings(db, () => settings(db))).toEqual([1, 1, -16384])
    expect(settings(db)).toEqual([2, 0, -65536])
    db.close()
  })
})

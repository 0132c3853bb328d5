// Commit groups on a real SQLite file in WAL mode: when a group commits, that a failing file's
// savepoint rolls back alone, and how a group SQLite itself rolled back is noticed.
import BetterSqlite3 from "better-sqlite3"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { makeCommitGroup } from "./index-writer.js"
import { storageFailure } from "./recall-database.js"

const opened: Array<{ dir: string; handles: Array<BetterSqlite3.Database> }> = []
afterEach(() => {
  for (const { dir, handles } of opened.splice(0)) {
    for (const h of handles) h.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

/** A writer and a second connection (another process's view) on one database file. */
const database = () => {
  const dir = mkdtempSync(join(tmpdir(), "baton-commit-group-"))
  const path = join(dir, "group.db")
  const writer = new BetterSqlite3(path)
  writer.pragma("journal_mode = WAL")
  writer.exec("create table files (path text primary key)")
  const reader = new BetterSqlite3(path)
  reader.pragma("busy_timeout = 20")
  opened.push({ dir, handles: [writer, reader] })
  const writeFile = writer.transaction((path: string) => {
    writer.prepare("insert into files (path) values (?)").run(path)
    if (path.startsWith("bad")) throw new Error(`cannot write ${path}`)
  })
  const committed = () =>
    reader.prepare("select path from files order by path").pluck().all() as Array<string>
  return { path, writer, reader, writeFile, committed }
}

describe("makeCommitGroup", () => {
  it("commits once the group reaches its file count, and not before", () => {
    const { writer, writeFile, committed } = database()
    const group = makeCommitGroup(writer, { maxFiles: 3, maxMs: 1e9, maxBytes: 1e12 })
    for (const [i, path] of ["a", "b", "c", "d"].entries()) {
      group.begin(i)
      writeFile(path)
      group.counted(10, i)
      if (i < 2) expect(committed()).toEqual([])
    }
    expect(committed()).toEqual(["a", "b", "c"])
    expect(writer.inTransaction).toBe(true)
    group.commit()
    expect(writer.inTransaction).toBe(false)
    expect(committed()).toEqual(["a", "b", "c", "d"])
  })

  it("commits once the group has lasted maxMs or read maxBytes", () => {
    /** Two files a and b; `[begun, bytes, at]` per file; what is committed after each. */
    const twoFiles = (
      limits: { maxMs: number; maxBytes: number },
      files: ReadonlyArray<readonly [number, number, number]>,
    ) => {
      const { writer, writeFile, committed } = database()
      const group = makeCommitGroup(writer, { maxFiles: 1e9, ...limits })
      return files.map(([begun, bytes, at], i) => {
        group.begin(begun)
        writeFile(i === 0 ? "a" : "b")
        group.counted(bytes, at)
        return committed()
      })
    }
    const after = [[], ["a", "b"]]
    const byTime = twoFiles({ maxMs: 250, maxBytes: 1e12 }, [
      [1_000, 1, 1_249],
      [1_249, 1, 1_250],
    ])
    expect(byTime).toEqual(after)
    const bySize = twoFiles({ maxMs: 1e9, maxBytes: 100 }, [
      [0, 99, 0],
      [0, 1, 0],
    ])
    expect(bySize).toEqual(after)
  })

  it("rolls back a failing file alone: its group-mates commit", () => {
    const { writer, writeFile, committed } = database()
    const group = makeCommitGroup(writer)
    for (const path of ["a", "bad", "c"]) {
      group.begin(0)
      try {
        writeFile(path)
      } catch {
        // The file failed; the indexer records it and goes on.
      }
      group.counted(1, 0)
      expect(group.lost()).toBe(0)
    }
    group.commit()
    expect(committed()).toEqual(["a", "c"])
  })

  it("notices a group SQLite rolled back as a whole (lost names how many files went)", () => {
    const { writer, writeFile, committed } = database()
    const group = makeCommitGroup(writer)
    for (const path of ["a", "b"]) {
      group.begin(0)
      writeFile(path)
      group.counted(1, 0)
    }
    // What SQLite does itself after e.g. SQLITE_FULL: the whole transaction is gone.
    writer.exec("ROLLBACK")
    expect(group.lost()).toBe(2)
    group.begin(0)
    expect(group.lost()).toBe(0)
    writeFile("c")
    group.counted(1, 0)
    group.close()
    expect(committed()).toEqual(["c"])
  })

  it("close commits what is open and never throws; with nothing open it does nothing", () => {
    const { writer, writeFile, committed } = database()
    const group = makeCommitGroup(writer)
    expect(() => group.close()).not.toThrow()
    group.begin(0)
    writeFile("a")
    group.close()
    expect(committed()).toEqual(["a"])
    expect(writer.inTransaction).toBe(false)
    expect(() => group.close()).not.toThrow()
  })

  it("another writer held off by an open group gets an error that says the index is busy", () => {
    const { path, writer, reader, writeFile } = database()
    const group = makeCommitGroup(writer)
    group.begin(0)
    writeFile("a")
    let caught: unknown
    try {
      reader.exec("BEGIN IMMEDIATE")
    } catch (error) {
      caught = error
    }
    expect(caught).toBeDefined()
    const failure = storageFailure("write", path)(caught)
    expect(failure.message).toBe(
      `the recall index at ${path} is busy: another process is writing it (an index run?); ` +
        "try again when it finishes ('baton recall status' shows a running index)",
    )
    expect(storageFailure("read", path)(new Error("disk I/O error")).message).toBe(
      `recall index read failed at ${path}: disk I/O error`,
    )
    group.close()
  })
})

describe("storage failures", () => {
  /** The error SQLite raises for `run`, as the driver throws it. */
  const thrown = (run: () => void): unknown => {
    try {
      run()
    } catch (error) {
      return error
    }
    throw new Error("expected SQLite to fail")
  }

  it("say what to do when the disk is full, the file is read-only or damaged", () => {
    const { path, writer } = database()
    writer.pragma("journal_mode = DELETE")
    // A page limit makes SQLite fail exactly as on a full disk (SQLITE_FULL).
    writer.pragma(`max_page_count = ${writer.pragma("page_count", { simple: true }) as number}`)
    const full = thrown(() =>
      writer.transaction(() => {
        const put = writer.prepare("insert into files (path) values (?)")
        for (let i = 0; i < 10_000; i++) put.run(`file-${i}-${"x".repeat(100)}`)
      })(),
    )
    expect(storageFailure("write", path)(full).message).toBe(
      `the disk holding the recall index (${dirname(path)}) is full: free some space, or set ` +
        "BATON_DATA_DIR to a directory on another disk (and index again there); what was " +
        "written before is kept, and the next index run continues from it",
    )
    const readonly = new BetterSqlite3(path, { readonly: true })
    opened.push({ dir: mkdtempSync(join(tmpdir(), "baton-ro-")), handles: [readonly] })
    const denied = thrown(() => readonly.prepare("insert into files (path) values ('a')").run())
    expect(storageFailure("write", path)(denied).message).toMatch(
      new RegExp(
        `^the recall index at ${path} cannot be written \\(attempt to write a readonly database\\): check that the file and .* are yours and writable`,
      ),
    )
    const damagedPath = join(dirname(path), "damaged.db")
    writeFileSync(damagedPath, "this is not a database file, just text long enough".repeat(100))
    const damaged = new BetterSqlite3(damagedPath)
    opened.push({ dir: mkdtempSync(join(tmpdir(), "baton-bad-")), handles: [damaged] })
    const notDb = thrown(() => damaged.prepare("select * from sqlite_master").all())
    expect(storageFailure("open", damagedPath)(notDb).message).toMatch(
      /^the recall index at .*damaged\.db is damaged \(file is not a database\): move it aside and run 'baton recall index'/,
    )
  })
})

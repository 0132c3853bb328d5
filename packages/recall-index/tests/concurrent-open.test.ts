// Several processes opening a new index at the same moment (agent sessions starting together each
// run the SessionStart hook): one migrates, the others wait for it and find the file current —
// never a failed open, never a migration run twice (which put back an earlier schema version and
// earlier full-text triggers while the migration log said every migration had run).
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import Database from "better-sqlite3"
import { afterAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import {
  RECALL_DATABASE_FILE,
  RECALL_SCHEMA_VERSION,
  RecallDatabase,
  recallDatabaseLayer,
} from "@baton/recall-index"

const child = fileURLToPath(new URL("./fixtures/open-child.mjs", import.meta.url))
const run = promisify(execFile)
const root = mkdtempSync(join(tmpdir(), "baton-concurrent-open-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** The schema and migration state of the index in `dataDir`. */
const schemaOf = (dataDir: string) => {
  const db = new Database(join(dataDir, RECALL_DATABASE_FILE), { readonly: true })
  try {
    return {
      version: db.prepare("select value from meta where key = 'schema_version'").pluck().get(),
      migrations: db.prepare("select name from kysely_migration order by name").pluck().all(),
      schema: db
        .prepare(
          "select type, name, sql from sqlite_master where name not like 'sqlite_%' order by name",
        )
        .all(),
    }
  } finally {
    db.close()
  }
}

/** `count` processes open the index in `dataDir` at the same moment; their outputs. */
const openTogether = async (dataDir: string, count: number) => {
  const at = Date.now() + 1500
  const outs = await Promise.all(
    Array.from({ length: count }, () =>
      run(process.execPath, [child, dataDir, String(at)], { timeout: 60_000 }),
    ),
  )
  return outs.map((o) => o.stdout.trim())
}

describe("processes opening a new index at once", () => {
  it("migrate it once: every open succeeds and the schema is the one a single open makes", async () => {
    const reference = join(root, "reference")
    expect(await openTogether(reference, 1)).toEqual(["ok"])
    const expected = schemaOf(reference)
    expect(expected.version).toBe(String(RECALL_SCHEMA_VERSION))
    for (let round = 0; round < 6; round++) {
      const dataDir = join(root, `round-${round}`)
      expect(await openTogether(dataDir, 4), `round ${round}`).toEqual(["ok", "ok", "ok", "ok"])
      expect(schemaOf(dataDir), `round ${round}`).toEqual(expected)
    }
  }, 180_000)

  it("take over the lock of a process that died mid-migration", async () => {
    const dataDir = join(root, "stale")
    mkdirSync(dataDir)
    const gone = await run(process.execPath, ["-e", "process.stdout.write(String(process.pid))"])
    const lock = join(dataDir, `${RECALL_DATABASE_FILE}.migrate-lock`)
    writeFileSync(lock, gone.stdout)
    expect(await openTogether(dataDir, 2)).toEqual(["ok", "ok"])
    expect(schemaOf(dataDir).version).toBe(String(RECALL_SCHEMA_VERSION))
    expect(existsSync(lock)).toBe(false)
  }, 60_000)

  it("wait out a write lock held while the new file is switched to WAL", async () => {
    // Deterministic form of a race seen in CI: another connection holds the write lock of the new
    // file (still in rollback mode) when this one switches it to WAL. SQLite answers that switch
    // SQLITE_BUSY at once, busy timeout or not; the open must wait for the lock instead.
    const dataDir = join(root, "write-locked")
    mkdirSync(dataDir)
    const other = new Database(join(dataDir, RECALL_DATABASE_FILE))
    other.exec("create table other_writer (x)")
    other.exec("begin immediate")
    const released = setTimeout(() => other.exec("commit"), 300)
    try {
      const outcome = await Effect.runPromise(
        Effect.result(
          Effect.scoped(
            Effect.gen(function* () {
              const db = yield* RecallDatabase
              return db.sqlite.pragma("journal_mode", { simple: true })
            }).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
          ),
        ),
      )
      expect(outcome._tag === "Success" ? outcome.success : outcome.failure.message).toBe("wal")
      expect(other.inTransaction).toBe(false)
    } finally {
      clearTimeout(released)
      other.close()
    }
    expect(schemaOf(dataDir).version).toBe(String(RECALL_SCHEMA_VERSION))
  })
})

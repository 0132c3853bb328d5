// Connections kept across calls (the MCP server's): one connection per file is lent to
// successive calls, commits of other connections are seen, a deleted and recreated database is
// never read through the old connection, a connection in use is closed only when its call ends,
// and concurrent first calls each get a working connection.
import { Effect } from "effect"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeRecallDatabasePool, RecallDatabase, recallDatabaseLayer } from "@baton/recall-index"
import type { RecallDatabasePool } from "@baton/recall-index"
import { tempDir } from "./index-harness.js"

const data = tempDir("recall-pool")
afterAll(() => data.dispose())

const put = (dataDir: string, value: string) =>
  Effect.runPromise(
    RecallDatabase.use((db) =>
      Effect.sync(() => {
        db.sqlite.prepare("insert or replace into meta(key, value) values ('probe', ?)").run(value)
      }),
    ).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
  )

const read = (pool: RecallDatabasePool, dataDir: string) =>
  Effect.runPromise(
    RecallDatabase.use((db) =>
      Effect.sync(() => ({
        sqlite: db.sqlite,
        probe: db.sqlite.prepare("select value from meta where key = 'probe'").pluck().get(),
      })),
    ).pipe(Effect.provide(pool.layer({ dataDir }))),
  )

describe("makeRecallDatabasePool", () => {
  it("lends one connection per file and sees other connections' commits", async () => {
    const dataDir = join(data.path, "shared")
    await put(dataDir, "one")
    const pool = makeRecallDatabasePool()
    const first = await read(pool, dataDir)
    expect(first.probe).toBe("one")
    await put(dataDir, "two")
    const second = await read(pool, dataDir)
    expect(second.sqlite).toBe(first.sqlite)
    expect(second.probe).toBe("two")
    expect(pool.size()).toBe(1)
    await Effect.runPromise(pool.close())
    expect(pool.size()).toBe(0)
    expect(first.sqlite.open).toBe(false)
    // A call after close opens again.
    expect((await read(pool, dataDir)).probe).toBe("two")
    await Effect.runPromise(pool.close())
  })

  it("never reads a deleted and recreated database through the old connection", async () => {
    const dataDir = join(data.path, "recreated")
    await put(dataDir, "old")
    const pool = makeRecallDatabasePool()
    const before = await read(pool, dataDir)
    expect(before.probe).toBe("old")
    rmSync(dataDir, { recursive: true, force: true })
    await put(dataDir, "new")
    const after = await read(pool, dataDir)
    expect(after.probe).toBe("new")
    expect(after.sqlite).not.toBe(before.sqlite)
    expect(before.sqlite.open).toBe(false)
    expect(pool.size()).toBe(1)
    await Effect.runPromise(pool.close())
  })

  it("closes a connection in use only when its call ends, and serves concurrent first calls", async () => {
    const dataDir = join(data.path, "busy")
    await put(dataDir, "v")
    const pool = makeRecallDatabasePool()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow = Effect.runPromise(
      RecallDatabase.use((db) =>
        Effect.promise(() => gate).pipe(
          Effect.map(() => db.sqlite.prepare("select value from meta where key = 'probe'").get()),
        ),
      ).pipe(Effect.provide(pool.layer({ dataDir }))),
    )
    // Concurrent first calls: each reads through a working connection.
    const concurrent = await Promise.all([read(pool, dataDir), read(pool, dataDir)])
    expect(concurrent.map((c) => c.probe)).toEqual(["v", "v"])
    await Effect.runPromise(pool.close())
    expect(pool.size()).toBe(1) // the slow call's connection stays open until it ends
    release()
    expect(await slow).toEqual({ value: "v" })
    expect(pool.size()).toBe(0)
  })

  it("fails a call whose database cannot be opened, and keeps nothing", async () => {
    const pool = makeRecallDatabasePool()
    await put(join(data.path, "sibling"), "x")
    // The data directory given is a file: opening fails with a storage error.
    const file = join(data.path, "sibling", "recall-index.db")
    const failure = await Effect.runPromise(
      Effect.flip(
        RecallDatabase.use(() => Effect.void).pipe(Effect.provide(pool.layer({ dataDir: file }))),
      ),
    )
    expect(failure).toMatchObject({ _tag: "RecallStorageError" })
    expect(pool.size()).toBe(0)
  })
})

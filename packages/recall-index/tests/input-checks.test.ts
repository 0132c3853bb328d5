// The recall calls' whole-number options and other caller inputs, as a program passes them: a
// value that is not a whole number or is below the option's least fails with a RecallQueryError
// naming the option (never a storage error, never a silent clamp to 1); a value above the maximum
// is the maximum; a text size below its floor is the floor. And every tagged error of the package
// has a message a program can print.
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  EmbedderError,
  nodeIndexerProcessLayer,
  expandAround,
  grepRecords,
  grepRecordsIsolated,
  RecallDatabase,
  recallDatabaseLayer,
  recallStatus,
  RecallStorageError,
  recentSessions,
  searchRecall,
  searchVectors,
  step,
  TranscriptDecompressError,
  TranscriptReadError,
  TranscriptResumeError,
  VectorStoreUnavailableError,
} from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { defaultHistory, indexedHistory } from "./recall-fixtures.js"

const embedder = makeDeterministicEmbedder({ dim: 64 })
let history: Awaited<ReturnType<typeof indexedHistory>>

beforeAll(async () => {
  history = await indexedHistory(defaultHistory, embedder)
})
afterAll(() => history?.dispose())

type Run = Parameters<typeof history.run>[0]

/** The failure of `effect` as `{ _tag, field, message }`, or "succeeded". */
const refused = (effect: Run) =>
  history.run(
    effect.pipe(
      Effect.match({
        onFailure: (e) => {
          const { _tag, field, message } = e as { _tag: string; field?: string; message: string }
          return { _tag, field, message }
        },
        onSuccess: () => "succeeded" as const,
      }),
    ),
  )

const PAYMENTS = "019c0000-cccc-7ccc-8ccc-000000000003"

describe("whole-number options", () => {
  it.each([0, -1, Number.NaN, 2.5, Number.POSITIVE_INFINITY])(
    "searchRecall refuses k = %s, naming it",
    async (k) => {
      expect(await refused(searchRecall({ query: "retry policy", k }, { embedder }))).toEqual({
        _tag: "RecallQueryError",
        field: "limit",
        message: `k must be a whole number of at least 1 (at most 100 is used); got ${String(k)}`,
      })
    },
  )

  it("caps a large k and floors a short text, without an error", async () => {
    const many = await history.run(searchRecall({ query: "the", k: 5000 }, { embedder }))
    expect(many.hits.length).toBeGreaterThan(10)
    expect(many.hits.length).toBeLessThanOrEqual(100)
    const short = await history.run(
      searchRecall({ query: "retry policy", textChars: 5 }, { embedder }),
    )
    expect(short.hits[0]!.text.length).toBeGreaterThan(5)
    expect(short.hits[0]!.text.length).toBeLessThanOrEqual(41)
  })

  it("refuses a negative or non-numeric fusion weight", async () => {
    for (const lexical of [-1, Number.NaN]) {
      expect(
        await refused(searchRecall({ query: "retry", weights: { lexical } }, { embedder })),
      ).toMatchObject({
        _tag: "RecallQueryError",
        message: `weights.lexical must be a number of at least 0; got ${String(lexical)}`,
      })
    }
    expect(
      await refused(searchRecall({ query: "retry", weights: { lexical: 0 } }, { embedder })),
    ).toBe("succeeded")
  })

  it("refuses bad counts in recent sessions, grep, step and expand", async () => {
    const cases = [
      [recentSessions({ limit: Number.NaN }), "limit"],
      [recentSessions({ limit: 0 }), "limit"],
      [grepRecords({ pattern: "retry", limit: 0 }), "limit"],
      [grepRecords({ pattern: "retry", snippetChars: -3 }), "snippetChars"],
      [grepRecordsIsolated({ pattern: "retr(y|ies)", regex: true, limit: -1 }), "limit"],
      [grepRecordsIsolated({ pattern: "retry", regex: true, maxScanMs: Number.NaN }), "maxScanMs"],
      [step({ sessionId: PAYMENTS, direction: "next", count: 0 }), "count"],
      [step({ sessionId: PAYMENTS, direction: "prev", textChars: 1.5 }), "textChars"],
    ] as const
    for (const [effect, name] of cases) {
      const got = await refused(effect)
      expect(got, name).toMatchObject({ _tag: "RecallQueryError", field: "limit" })
      expect((got as { message: string }).message, name).toMatch(
        new RegExp(
          `^${name} must be a whole number of at least -?\\d+ \\(at most \\d+ is used\\); got `,
        ),
      )
    }
    const first = await history.run(step({ sessionId: PAYMENTS, direction: "next" }))
    const turnId = first.turns[0]!.turnId
    expect(await refused(expandAround({ sessionId: PAYMENTS, turnId, before: -1 }))).toMatchObject({
      _tag: "RecallQueryError",
      message: expect.stringMatching(/^before must be/),
    })
    // Zero turns around is a valid window: the anchor alone.
    const alone = await history.run(
      expandAround({ sessionId: PAYMENTS, turnId, before: 0, after: 0 }),
    )
    expect(alone.turns.map((t) => t.turnId)).toEqual([turnId])
  })

  it("checks a vector search's vector, k and pool as query errors", async () => {
    const fingerprint = embedder.info.fingerprint
    const vector = Array.from({ length: 64 }, (_, i) => (i === 0 ? 1 : 0))
    expect(
      await refused(searchVectors({ vector: [...vector.slice(1), Number.NaN], k: 5, fingerprint })),
    ).toEqual({
      _tag: "RecallQueryError",
      field: "query",
      message: "the query vector holds NaN at index 63",
    })
    expect(await refused(searchVectors({ vector: [1, 0, 0], k: 5, fingerprint }))).toMatchObject({
      _tag: "RecallQueryError",
      field: "query",
    })
    expect(await refused(searchVectors({ vector, k: Number.NaN, fingerprint }))).toMatchObject({
      _tag: "RecallQueryError",
      field: "limit",
      message: /^k must be/,
    })
    expect(await refused(searchVectors({ vector, k: 5, pool: -1, fingerprint }))).toMatchObject({
      _tag: "RecallQueryError",
      field: "limit",
      message: /^pool must be/,
    })
    expect(await history.run(searchVectors({ vector, k: 5, fingerprint }))).toHaveLength(5)
  })

  it("refuses an unknown time zone in the status, as everywhere else", async () => {
    expect(await refused(recallStatus({ timezone: "Nope/Nope" }))).toMatchObject({
      _tag: "RecallQueryError",
      field: "timezone",
    })
  })
})

describe("error messages", () => {
  it("are set on every tagged error a program may print", async () => {
    const errors = [
      new EmbedderError({
        provider: "openai",
        failure: "unavailable",
        retryable: true,
        reason: "transport error reaching 127.0.0.1:9",
      }),
      new TranscriptReadError({ path: "/h/a.jsonl", operation: "read", code: "ENOENT" }),
      new TranscriptDecompressError({ path: "/h/a.jsonl.zst", reason: "unexpected EOF" }),
      new TranscriptResumeError({ path: "/h/a.jsonl", offset: 900, size: 12 }),
      new VectorStoreUnavailableError({ stage: "load-extension", reason: "no vec0.so" }),
    ]
    expect(errors.map((e) => e.message)).toEqual([
      "the openai embedder failed (unavailable): transport error reaching 127.0.0.1:9",
      "cannot read /h/a.jsonl: ENOENT",
      "/h/a.jsonl.zst is not valid zstd (corrupt or cut short): unexpected EOF",
      "cannot resume /h/a.jsonl at byte 900: it has 12 bytes (replaced or truncated); parse it again from the start",
      "the SQLite vector store cannot be used on this machine (load-extension): no vec0.so",
    ])
    // A file-system refusal while writing (the background launcher's log) reads as the disk
    // full or the place not writable, as SQLite's own do.
    const log = "/d/baton/recall-index.log"
    expect(
      new RecallStorageError({
        operation: "write",
        path: log,
        reason: "ENOSPC: no space left on device, write",
      }).message,
    ).toMatch(/^the disk holding the recall index \(\/d\/baton\) is full/)
    expect(
      new RecallStorageError({
        operation: "write",
        path: log,
        reason: "EACCES: permission denied, open",
      }).message,
    ).toMatch(/cannot be written \(EACCES: permission denied, open\): check that the file/)
    // And a failed run's rejection prints it.
    await expect(Effect.runPromise(Effect.fail(errors[1]!))).rejects.toThrow(
      "cannot read /h/a.jsonl: ENOENT",
    )
  })

  it("say what to do about a data directory that is empty, or a database that is a directory", async () => {
    const open = (dataDir: string) =>
      Effect.runPromise(
        Effect.flip(
          Effect.gen(function* () {
            return yield* RecallDatabase
          }).pipe(Effect.provide(recallDatabaseLayer({ dataDir }))),
        ),
      ).then((e) => e.message)
    expect(await open("")).toBe(
      "no directory was given for the recall index: set BATON_DATA_DIR (or pass dataDir) to a " +
        "directory you can write (default: $XDG_DATA_HOME/baton, else ~/.local/share/baton)",
    )
    const dir = mkdtempSync(join(tmpdir(), "baton-dbdir-"))
    try {
      mkdirSync(join(dir, "recall-index.db"))
      expect(await open(dir)).toMatch(
        new RegExp(
          `^the recall index at ${join(dir, "recall-index.db")} cannot be opened \\(.+\\): it must be a database file you can read and write`,
        ),
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the status of a stopped index run", () => {
  it("is not 'indexing' once the run's process is gone, though its lease has time left", async () => {
    const gone = 2 ** 22 + 12345 // above Linux's default pid_max: no such process
    const now = Date.now()
    await history.run(
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        db.sqlite
          .prepare(
            "insert or replace into index_lock (id, pid, run_token, acquired_at, lease_until) values (1, ?, 'x', ?, ?)",
          )
          .run(gone, now, now + 120_000)
      }),
    )
    // Without a way to ask about processes (a bare library call), the lease is all it knows.
    const bare = await Effect.runPromise(
      recallStatus().pipe(Effect.provide(recallDatabaseLayer({ dataDir: history.dataDir }))),
    )
    expect(bare.indexing).toMatchObject({ pid: gone })
    // The CLI and the MCP server provide the process service: the dead run is no running index.
    const asked = await history.run(recallStatus().pipe(Effect.provide(nodeIndexerProcessLayer)))
    expect(asked.indexing).toBeNull()
    await history.run(
      Effect.gen(function* () {
        const db = yield* RecallDatabase
        db.sqlite.prepare("delete from index_lock").run()
      }),
    )
  })
})

// expandAround, step, grepRecords, recentSessions and recallStatus over the hand-written history
// in a real temp-file database. Anchors come from search hits, as an agent would take them.
import { Clock, Effect } from "effect"
import { appendFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  expandAround,
  grepRecords,
  RecallDatabase,
  recallStatus,
  recentSessions,
  searchRecall,
  step,
} from "@baton/recall-index"
import type { GrepInput, RecallHit } from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { defaultHistory, indexedHistory } from "./recall-fixtures.js"

const embedder = makeDeterministicEmbedder({ dim: 64 })
let history: Awaited<ReturnType<typeof indexedHistory>>

beforeAll(async () => {
  history = await indexedHistory(defaultHistory, embedder)
})
afterAll(() => history?.dispose())

const GARDEN = "aaaaaaaa-1111-4111-8111-000000000001"
const WORKTREE = "bbbbbbbb-2222-4222-8222-000000000002"
const PAYMENTS = "019c0000-cccc-7ccc-8ccc-000000000003"
const BACKEND = "019c0000-dddd-7ddd-8ddd-000000000004"
const MARATHON = "eeeeeeee-5555-4555-8555-000000000005"
const NOTES = "ffffffff-6666-4666-8666-000000000006"

const hitFor = async (query: string, text: string): Promise<RecallHit> => {
  const result = await history.run(searchRecall({ query, k: 20, perSession: 20 }, { embedder }))
  const hit = result.hits.find((h) => h.text === text)
  if (hit === undefined) throw new Error(`no hit with text ${text}`)
  return hit
}

describe("expandAround", () => {
  it("shows the turns around a hit, with tool calls, tool output and reasoning", async () => {
    const anchor = await hitFor("count migration files", "Count the migration files.")
    const window = await history.run(
      expandAround({
        sessionId: anchor.sessionId,
        turnId: anchor.turnId,
        before: 1,
        after: 1,
        timezone: "UTC",
      }),
    )
    expect(window).toMatchObject({
      source: "claude",
      sessionId: GARDEN,
      cwd: "/work/garden",
      project: "garden",
    })
    expect(window.turns.map((t) => [t.role, t.text, t.isAnchor])).toEqual([
      [
        "assistant",
        "We picked SQLite with WAL mode, because the app is single-user and local.",
        false,
      ],
      ["user", "Count the migration files.", true],
      ["assistant", "There are 12 migration files.", false],
    ])
    const answer = window.turns[2]!
    expect(answer.records.map((r) => r.kind)).toEqual(["tool-call", "tool-output"])
    expect(answer.records[0]!.text).toContain("ls migrations | wc -l")
    expect(answer.records[0]!.text).toContain("The user wants a count")
    expect(answer.records[1]!.text).toContain("migrations=12 (C:\\garden\\db)")
    expect(answer.whenHuman).toMatch(/^2026-03-10 10:00 UTC/)
    expect(window.atStart).toBe(false)
    expect(window.atEnd).toBe(false)
    // No signature or encrypted payload ever comes back.
    expect(JSON.stringify(window)).not.toContain("c2lnbmF0dXJl")
  })

  it("stops at the session's edges and bounds every record", async () => {
    const anchor = await hitFor(
      "which database garden planner",
      "Which database did we pick for the garden planner?",
    )
    const window = await history.run(
      expandAround({
        sessionId: anchor.sessionId,
        turnId: anchor.turnId,
        before: 5,
        after: 50,
        recordChars: 40,
        maxRecords: 1,
      }),
    )
    expect(window.atStart).toBe(true)
    expect(window.atEnd).toBe(true)
    expect(window.turns).toHaveLength(6)
    expect(window.turns[0]!.isAnchor).toBe(true)
    const withTools = window.turns.find((t) => t.text === "There are 12 migration files.")!
    expect(withTools.records).toHaveLength(1)
    expect(withTools.omittedRecords).toBe(1)
    expect(withTools.records[0]!.text.length).toBeLessThanOrEqual(41)
    expect(withTools.records[0]!.truncated).toBe(true)
  })

  it("works on Codex sessions, where tool calls are response items", async () => {
    const anchor = await hitFor("webhook handlers folder", "There are 7 webhook handlers.")
    const window = await history.run(
      expandAround({ sessionId: PAYMENTS, turnId: anchor.turnId, before: 1, after: 0 }),
    )
    expect(window.turns.map((t) => t.role)).toEqual(["user", "assistant"])
    expect(window.turns[0]!.text).toBe("Check how many handlers are in the webhooks folder.")
    const kinds = window.turns[1]!.records.map((r) => r.kind)
    expect(kinds).toContain("tool-call")
    expect(kinds).toContain("tool-output")
    expect(window.turns[1]!.records.find((r) => r.kind === "tool-output")!.text).toContain(
      'handlers=7 "quoted" path\\to\\file',
    )
  })

  it("reports a missing session or turn as RecallNotFoundError", async () => {
    const missing = await history.run(Effect.flip(expandAround({ sessionId: "nope", turnId: "x" })))
    expect(missing).toMatchObject({ _tag: "RecallNotFoundError", sessionId: "nope", turnId: null })
    expect(missing.message).toContain("no session nope")
    const noTurn = await history.run(Effect.flip(expandAround({ sessionId: GARDEN, turnId: "x" })))
    expect(noTurn).toMatchObject({ _tag: "RecallNotFoundError", turnId: "x" })
    const empty = await history.run(Effect.flip(expandAround({ sessionId: "", turnId: "x" })))
    expect(empty).toMatchObject({ _tag: "RecallQueryError", field: "session" })
  })

  it("marks a record cut at index time with … as it marks one cut at read time", async () => {
    const anchor = await hitFor("count migration files", "Count the migration files.")
    const output = (sqlite: RecallDatabase["Service"]["sqlite"], truncated: number) =>
      sqlite
        .prepare("update raw_records set truncated = ? where text like '%migrations=12 (C:%'")
        .run(truncated)
    const toolOutput = () =>
      history
        .run(expandAround({ sessionId: anchor.sessionId, turnId: anchor.turnId, after: 1 }))
        .then((w) =>
          w.turns
            .find((t) => t.text === "There are 12 migration files.")!
            .records.find((r) => r.kind === "tool-output")!,
        )
    expect(await toolOutput()).toMatchObject({
      truncated: false,
      text: expect.not.stringMatching(/…$/),
    })
    await history.run(RecallDatabase.use((db) => Effect.sync(() => output(db.sqlite, 1))))
    try {
      const cut = await toolOutput()
      expect(cut.truncated).toBe(true)
      expect(cut.text).toMatch(/migrations=12 \(C:\\garden\\db\)…$/)
      // A record whose middle was left out (head, omission marker, true end) gets no "…".
      const middle = (sqlite: RecallDatabase["Service"]["sqlite"], on: boolean) =>
        sqlite
          .prepare(
            on
              ? "update raw_records set text = 'ls db/migrations' || char(10) || '[… 40000 characters omitted …]' || char(10) || text where text like '%migrations=12 (C:%'"
              : "update raw_records set text = substr(text, instr(text, '…]') + 3) where text like '%migrations=12 (C:%'",
          )
          .run()
      await history.run(RecallDatabase.use((db) => Effect.sync(() => middle(db.sqlite, true))))
      try {
        const kept = await toolOutput()
        expect(kept.truncated).toBe(true)
        expect(kept.text).toContain("\n[… 40000 characters omitted …]\n")
        expect(kept.text).toMatch(/migrations=12 \(C:\\garden\\db\)$/)
      } finally {
        await history.run(RecallDatabase.use((db) => Effect.sync(() => middle(db.sqlite, false))))
      }
      expect((await toolOutput()).text).toMatch(/migrations=12 \(C:\\garden\\db\)…$/)
    } finally {
      await history.run(RecallDatabase.use((db) => Effect.sync(() => output(db.sqlite, 0))))
    }
  })
})

describe("step", () => {
  it("moves one turn (or more) at a time and stops at the ends", async () => {
    const anchor = await hitFor("count migration files", "Count the migration files.")
    const next = await history.run(
      step({ sessionId: GARDEN, turnId: anchor.turnId, direction: "next" }),
    )
    expect(next.turns.map((t) => t.text)).toEqual(["There are 12 migration files."])
    const prev = await history.run(
      step({ sessionId: GARDEN, turnId: anchor.turnId, direction: "prev", count: 2 }),
    )
    expect(prev.turns.map((t) => t.role)).toEqual(["user", "assistant"])
    expect(prev.turns.map((t) => t.isAnchor)).toEqual([false, false])
    expect(prev.atStart).toBe(true)
    // Walk to the end, then one more step gives nothing.
    let cursor = anchor.turnId
    for (let i = 0; i < 10; i++) {
      const moved = await history.run(
        step({ sessionId: GARDEN, turnId: cursor, direction: "next" }),
      )
      if (moved.turns.length === 0) {
        expect(moved.atEnd).toBe(true)
        expect(i).toBe(3)
        break
      }
      cursor = moved.turns[0]!.turnId
    }
    const bad = await history.run(
      Effect.flip(step({ sessionId: GARDEN, turnId: cursor, direction: "up" as "next" })),
    )
    expect(bad).toMatchObject({ _tag: "RecallQueryError", field: "direction" })
  })
})

/** A clock that jumps a second on every reading: a time budget runs out at its first check. */
const jumpingClock = (): Clock.Clock => {
  let t = Date.UTC(2026, 3, 1)
  const tick = () => (t += 1000)
  const nanos = () => BigInt(tick()) * 1_000_000n
  return {
    currentTimeMillisUnsafe: tick,
    currentTimeMillis: Effect.sync(tick),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: nanos,
    monotonicTimeNanos: Effect.sync(nanos),
    sleep: () => Effect.void,
  }
}

describe("grepRecords", () => {
  const grep = (input: GrepInput) => history.run(grepRecords(input))

  it("finds text in tool output as written (quotes, backslashes), case-insensitively", async () => {
    const win = await grep({ pattern: "C:\\garden\\db" })
    expect(win.hits).toHaveLength(1)
    expect(win.hits[0]).toMatchObject({
      source: "claude",
      sessionId: GARDEN,
      kind: "tool-output",
      role: "assistant",
      project: "garden",
    })
    expect(win.hits[0]!.snippet).toContain("migrations=12 (C:\\garden\\db)")
    const quoted = await grep({ pattern: 'HANDLERS=7 "QUOTED" PATH\\TO' })
    expect(quoted.hits.map((h) => [h.sessionId, h.kind])).toEqual([[PAYMENTS, "tool-output"]])
    expect(quoted.caseSensitive).toBe(false)
    const sensitive = await grep({ pattern: "HANDLERS=7", caseSensitive: true })
    expect(sensitive.hits).toEqual([])
  })

  it("folds case beyond ASCII", async () => {
    const umlaut = await grep({ pattern: "GRÖSSE" })
    expect(umlaut.hits).toEqual([])
    const lower = await grep({ pattern: "größe der straße" })
    expect(lower.hits.map((h) => h.sessionId)).toEqual([NOTES])
    const accent = await grep({ pattern: "école" })
    expect(accent.hits.map((h) => h.sessionId)).toEqual([NOTES])
  })

  it("searches reasoning and every turn, not only the embedded words", async () => {
    const reasoning = await grep({ pattern: "wants a count" })
    expect(reasoning.hits.map((h) => h.sessionId)).toEqual([GARDEN])
    const call = await grep({ pattern: "ls webhooks" })
    expect(call.hits.map((h) => h.kind)).toContain("tool-call")
  })

  it("takes safe regular expressions and refuses dangerous or invalid ones", async () => {
    const re = await grep({ pattern: "handlers=\\d+", regex: true })
    expect(re.mode).toBe("regex")
    expect(re.hits.map((h) => h.kind)).toContain("tool-output")
    const nested = await history.run(Effect.flip(grepRecords({ pattern: "(a+)+$", regex: true })))
    expect(nested).toMatchObject({ _tag: "RecallQueryError", field: "pattern" })
    const invalid = await history.run(Effect.flip(grepRecords({ pattern: "([", regex: true })))
    expect(invalid.message).toContain("not a valid regular expression")
    // The same characters as a literal are fine.
    expect((await grep({ pattern: "(a+)+$" })).hits).toEqual([])
  })

  it("shows a Codex message once, though the rollout writes it twice", async () => {
    // As an event (`agent_message`) and as a response item: one record for the reader.
    const once = await grep({ pattern: "exponential backoff with jitter" })
    expect(once.hits.map((h) => [h.source, h.kind, h.role])).toEqual([
      ["codex", "message", "assistant"],
    ])
    expect(once.copiesSkipped).toBe(0)
    const every = await grep({
      pattern: "exponential backoff with jitter",
      includeDuplicates: true,
    })
    expect(new Set(every.hits.map((h) => h.recordType)).size).toBeGreaterThan(1)
  })

  it("tests only the records holding a regex's literal text, with the same hits", async () => {
    const prefiltered = await grep({ pattern: "handlers=\\d+", regex: true, limit: 1000 })
    // A top-level alternative leaves no run every match must hold: every record is tested.
    const everything = await grep({
      pattern: "handlers=\\d+|no-such-text",
      regex: true,
      limit: 1000,
    })
    expect(prefiltered.hits.length).toBeGreaterThan(0)
    expect(prefiltered.hits).toEqual(everything.hits)
    expect(prefiltered.scanned).toBeLessThan(everything.scanned)
    expect(prefiltered.scanned).toBe(prefiltered.hits.length + prefiltered.copiesSkipped)
    // Case folds beyond ASCII in JavaScript; SQLite checks only the run's ASCII piece.
    const umlaut = await grep({ pattern: "GRÖßE der Straße", regex: true })
    expect(umlaut.hits.map((h) => h.sessionId)).toEqual([NOTES])
    expect(
      (await grep({ pattern: "GRÖßE der Straße", regex: true, caseSensitive: true })).hits,
    ).toEqual([])
  })

  it("applies filters and the limit", async () => {
    const all = await grep({ pattern: "frost", limit: 1000 })
    expect(all.truncated).toBe(false)
    expect(all.hits.length).toBeGreaterThan(10)
    const limited = await grep({ pattern: "frost", limit: 3 })
    expect(limited.hits).toHaveLength(3)
    expect(limited.truncated).toBe(true)
    const scoped = await grep({
      pattern: "frost",
      scopeCwd: "/work/garden/.worktrees/x",
      limit: 1000,
    })
    expect(new Set(scoped.hits.map((h) => h.sessionId))).toEqual(
      new Set([GARDEN, WORKTREE, MARATHON]),
    )
    const session = await grep({ pattern: "frost", sessionId: WORKTREE })
    expect(new Set(session.hits.map((h) => h.sessionId))).toEqual(new Set([WORKTREE]))
    const day = await grep({
      pattern: "frost",
      onDate: "2026-03-12",
      timezone: "Asia/Kolkata",
      limit: 1000,
    })
    expect(new Set(day.hits.map((h) => h.sessionId))).toEqual(new Set([WORKTREE]))
    const codex = await grep({ pattern: "retry", source: "codex" })
    expect(codex.hits.every((h) => h.source === "codex")).toBe(true)
    const newestFirst = all.hits.map((h) => h.timestamp ?? "")
    expect(newestFirst).toEqual([...newestFirst].sort().reverse())
  })

  it("stops at the time budget and says so", async () => {
    const jumping = jumpingClock()
    const scan = (maxScanMs: number) =>
      history.run(
        // No literal run: every record reaches the JavaScript test.
        grepRecords({ pattern: "[qz]\\d[qz]\\d[qz]", regex: true, maxScanMs }).pipe(
          Effect.provideService(Clock.Clock, jumping),
        ),
      )
    const cut = await scan(500)
    expect(cut).toMatchObject({ timedOut: true, hits: [], scanned: 16 })
    const whole = await scan(3_600_000)
    expect(whole.timedOut).toBe(false)
    expect(whole.scanned).toBeGreaterThan(16)
  })

  it("stops at the time budget when SQLite rejects every record", async () => {
    // A literal found nowhere never reaches JavaScript: the budget is checked between windows.
    const jumping = jumpingClock()
    const scan = (pattern: string, maxScanMs: number, scanWindowRecords?: number) =>
      history.run(
        grepRecords({ pattern, maxScanMs, scanWindowRecords }).pipe(
          Effect.provideService(Clock.Clock, jumping),
        ),
      )
    const stopped = await scan("zzqq-found-nowhere", 500, 8)
    expect(stopped).toMatchObject({ timedOut: true, hits: [], scanned: 0 })
    // One window of 8 records got through before the budget was checked.
    expect(stopped.searchedShare).toBeGreaterThan(0)
    expect(stopped.searchedShare).toBeLessThan(1)
    expect(await scan("zzqq-found-nowhere", 3_600_000, 8)).toMatchObject({
      timedOut: false,
      hits: [],
      searchedShare: 1,
    })
    // Windows change nothing else: hits and order equal one window over everything.
    const windowed = await scan("retry", 3_600_000, 3)
    const whole = await scan("retry", 3_600_000, 1_000_000)
    expect(windowed.hits.length).toBeGreaterThan(1)
    expect(windowed).toEqual(whole)
  })
})

describe("recentSessions", () => {
  it("lists sessions newest first with title, turns and index freshness", async () => {
    const recent = await history.run(recentSessions({ timezone: "UTC" }))
    expect(recent.map((s) => s.sessionId)).toEqual([
      BACKEND,
      PAYMENTS,
      WORKTREE,
      GARDEN,
      MARATHON,
      NOTES,
    ])
    const garden = recent.find((s) => s.sessionId === GARDEN)!
    expect(garden).toMatchObject({
      source: "claude",
      project: "garden",
      title: "Garden planner storage",
      titleSource: "title",
      turns: 6,
      headless: false,
      transcript: "indexed",
    })
    expect(garden.lastActivityHuman).toMatch(/^2026-03-10 10:00 UTC/)
    expect(garden.indexedAt).not.toBeNull()
    expect(recent.find((s) => s.sessionId === PAYMENTS)).toMatchObject({
      title: "What retry policy should the payment webhook client use?",
      titleSource: "first-prompt",
    })
    expect(recent.find((s) => s.sessionId === BACKEND)?.headless).toBe(true)
  })

  it("checks each listed transcript against the disk: changed since indexed, or deleted", async () => {
    const own = await indexedHistory(defaultHistory)
    try {
      const files = await own.run(
        Effect.gen(function* () {
          const db = yield* RecallDatabase
          return db.sqlite
            .prepare(
              "select s.session_id as id, f.path from sessions s join files f on f.id = s.file_id",
            )
            .all() as Array<{ id: string; path: string }>
        }),
      )
      const pathOf = (id: string) => files.find((f) => f.id === id)!.path
      appendFileSync(pathOf(GARDEN), "\n")
      rmSync(pathOf(PAYMENTS))
      const transcript = new Map(
        (await own.run(recentSessions({}))).map((s) => [s.sessionId, s.transcript]),
      )
      expect(transcript.get(GARDEN)).toBe("changed")
      expect(transcript.get(PAYMENTS)).toBe("missing")
      expect(transcript.get(NOTES)).toBe("indexed")
    } finally {
      own.dispose()
    }
  })

  it("filters by source, headless, scope and calendar day", async () => {
    const ids = async (input: Parameters<typeof recentSessions>[0]) =>
      (await history.run(recentSessions(input))).map((s) => s.sessionId)
    expect(await ids({ source: "codex" })).toEqual([BACKEND, PAYMENTS])
    expect(await ids({ source: "codex", excludeHeadless: true })).toEqual([PAYMENTS])
    expect(await ids({ scopeCwd: "/work/payments" })).toEqual([PAYMENTS])
    expect(await ids({ onDate: "2026-03-12", timezone: "UTC" })).toEqual([BACKEND, PAYMENTS])
    expect(await ids({ onDate: "2026-03-12", timezone: "Asia/Kolkata" })).toEqual([
      BACKEND,
      PAYMENTS,
      WORKTREE,
    ])
    expect(await ids({ limit: 2 })).toEqual([BACKEND, PAYMENTS])
  })
})

describe("recallStatus", () => {
  it("reports counts per source, vectors, freshness and roots", async () => {
    const status = await history.run(
      recallStatus({
        environment: { env: { CODEX_HOME: join(history.home, ".codex") }, homeDir: history.home },
        timezone: "UTC",
      }),
    )
    expect(status.empty).toBe(false)
    expect(status.sessions).toBe(6)
    expect(status.bySource.claude.sessions).toBe(4)
    expect(status.bySource.codex.sessions).toBe(2)
    expect(status.bySource.claude.chunks + status.bySource.codex.chunks).toBe(status.chunks)
    expect(status.embeddingBacklog).toBe(0)
    expect(status.embedders).toEqual([
      {
        fingerprint: embedder.info.fingerprint,
        dim: 64,
        vectors: expect.any(Number),
        active: true,
        elements: "int8",
        endpoint: null,
      },
    ])
    expect(status.embedders[0]!.vectors).toBeGreaterThan(10)
    expect(status.newestActivity).toBe("2026-03-12T09:00:20.000Z")
    expect(status.lastRunAgo).not.toBeNull()
    expect(status.indexing).toBeNull()
    expect(status.roots?.codexSessions).toBe(join(history.home, ".codex", "sessions"))
    expect(status.databasePath).toBe(join(history.dataDir, "recall-index.db"))
  })

  it("says empty for a fresh index", async () => {
    const fresh = await indexedHistory([])
    try {
      const status = await fresh.run(recallStatus())
      expect(status).toMatchObject({ empty: true, sessions: 0, roots: null, embedders: [] })
    } finally {
      fresh.dispose()
    }
  })
})

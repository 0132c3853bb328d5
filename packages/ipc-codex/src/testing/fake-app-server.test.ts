// The twin against what codex 0.169 answered (tests/*.e2e.test.ts and the README's "What 0.169.0
// did"): unknown and malformed ids, interrupt on an unknown thread, unsubscribe twice, thread/list
// defaults, limits and cursors, turn/start while a turn runs (steered into it), and a compaction
// requested while a turn runs (the turn is interrupted first).
import * as Effect from "effect/Effect"
import type { Scope } from "effect"
import { describe, expect, test } from "vitest"
import type { CodexConnection } from "../codex-connection.js"
import { isThreadIdle } from "../thread-state.js"
import { parseCodexUuid } from "./codex-uuid-parse.js"
import type { FakeAppServer } from "./fake-app-server.js"
import { makeFakeAppServer } from "./fake-app-server.js"
import { fakeTransport } from "./fake-transport.js"
import { waitForThreadState } from "./wait-for-state.js"

const THREAD = "01a23b94-2222-7222-8222-222222222222"
const UNKNOWN = "01a23b94-1111-7111-8111-111111111111"

const withConnection = <A, E>(
  server: FakeAppServer,
  body: (connection: CodexConnection) => Effect.Effect<A, E, Scope.Scope>,
): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(fakeTransport(server).connect, body)))

describe("thread ids as 0.169 parses them", () => {
  // Error texts as codex 0.169 returned them after "invalid thread id: ".
  test.each([
    [
      "garbage",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `g` at 1",
    ],
    ["", "invalid length: expected length 32 for simple format, found 0"],
    ["0123", "invalid length: expected length 32 for simple format, found 4"],
    [
      "01a23b94-1111-7111-8111-11111111111",
      "invalid group length in group 4: expected 12, found 11",
    ],
    [
      "01a23b94-1111-7111-8111-1111111111111",
      "invalid group length in group 4: expected 12, found 13",
    ],
    [
      "zz23b94-1111-7111-8111-111111111111x",
      "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `z` at 1",
    ],
  ])("%j is invalid: %s", (text, error) => {
    expect(parseCodexUuid(text)).toEqual({ _tag: "Invalid", error })
  })

  test("simple and upper-case forms normalise to the hyphenated lower-case id", () => {
    expect(parseCodexUuid("01A23B94111171118111111111111111")).toEqual({
      _tag: "Valid",
      id: UNKNOWN,
    })
    expect(parseCodexUuid(UNKNOWN.toUpperCase())).toEqual({ _tag: "Valid", id: UNKNOWN })
  })
})

describe("the twin answers like 0.169", () => {
  test("unknown and malformed ids", async () => {
    const server = makeFakeAppServer({ threads: [{ id: THREAD, loaded: false }] })
    const [stored, unknown, malformed, resumeMalformed, interrupt] = await withConnection(
      server,
      (c) =>
        Effect.all([
          c.readThread(THREAD),
          Effect.flip(c.readThread(UNKNOWN)),
          Effect.flip(c.readThread("garbage")),
          Effect.flip(c.resumeThread("garbage")),
          Effect.flip(c.interruptTurn(UNKNOWN, UNKNOWN)),
        ]),
    )
    expect(stored.status).toEqual({ type: "notLoaded" })
    expect(unknown).toMatchObject({
      _tag: "ThreadNotFoundError",
      method: "thread/read",
      threadId: UNKNOWN,
      detail: `thread not loaded: ${UNKNOWN}`,
    })
    expect(malformed).toMatchObject({
      _tag: "RpcError",
      code: -32600,
      detail:
        "invalid thread id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `g` at 1",
    })
    expect(resumeMalformed).toMatchObject({ _tag: "RpcError", code: -32600 })
    expect(resumeMalformed.message).toContain("invalid session id: invalid character")
    expect(interrupt).toMatchObject({
      _tag: "ThreadNotFoundError",
      method: "turn/interrupt",
      detail: `thread not found: ${UNKNOWN}`,
    })
  })

  test("thread/list: interactive sources by default, limit at least 1, cursors checked", async () => {
    const server = makeFakeAppServer({
      threads: [
        { id: "cli-1" },
        { id: "exec-1", source: "exec" },
        { id: "vscode-1", source: "vscode" },
        { id: "exec-2", source: "exec" },
      ],
    })
    const result = await withConnection(server, (c) =>
      Effect.gen(function* () {
        const all = yield* c.listThreads()
        const exec = yield* c.listThreads({ sourceKinds: ["exec"] })
        const zero = yield* c.listThreads({ limit: 0, sourceKinds: ["exec"] })
        const next = yield* c.listThreads({
          limit: 1,
          sourceKinds: ["exec"],
          cursor: zero.nextCursor ?? "missing",
        })
        const badCursor = yield* Effect.flip(c.listThreads({ cursor: "zzz" }))
        return { all, exec, zero, next, badCursor }
      }),
    )
    expect(result.all.threads.map((t) => t.id)).toEqual(["cli-1", "vscode-1"])
    expect(result.all.nextCursor).toBeNull()
    expect(result.exec.threads.map((t) => t.id)).toEqual(["exec-1", "exec-2"])
    expect(result.zero.threads.map((t) => t.id)).toEqual(["exec-1"])
    expect(result.zero.nextCursor).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\|exec-1$/)
    expect(result.next.threads.map((t) => t.id)).toEqual(["exec-2"])
    expect(result.next.nextCursor).toBeNull()
    expect(result.badCursor).toMatchObject({
      _tag: "RpcError",
      code: -32600,
      detail: "invalid cursor: zzz",
    })
  })

  test("turn/start while a turn runs is steered into it and answers with its id", async () => {
    const server = makeFakeAppServer({ threads: [{ id: THREAD }] })
    const result = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread(THREAD)
        const first = yield* c.startTurn(THREAD, "first")
        const second = yield* c.startTurn(THREAD, "second while first runs")
        const done = yield* waitForThreadState(
          c,
          THREAD,
          (s) => isThreadIdle(s) && s.turns.some((t) => t.status === "completed"),
        )
        return { first, second, done }
      }),
    )
    expect(result.second.turnId).toBe(result.first.turnId)
    expect(result.done.turns.map((t) => t.id)).toEqual([result.first.turnId])
    expect(result.done.turns[0]!.items.filter((i) => i.type === "userMessage")).toHaveLength(2)
    expect(server.turnInputs.map((t) => t.text)).toEqual(["first", "second while first runs"])
  })

  test("thread/compact/start while a turn runs interrupts it, then compacts", async () => {
    const server = makeFakeAppServer({ threads: [{ id: THREAD }] })
    const done = await withConnection(server, (c) =>
      Effect.gen(function* () {
        yield* c.resumeThread(THREAD)
        const { turnId } = yield* c.startTurn(THREAD, "long work")
        yield* c.compactThread(THREAD)
        const state = yield* waitForThreadState(
          c,
          THREAD,
          (s) => isThreadIdle(s) && s.compactions.some((k) => k.phase === "completed"),
        )
        return { turnId, state }
      }),
    )
    const interrupted = done.state.turns.find((t) => t.id === done.turnId)
    expect(interrupted?.status).toBe("interrupted")
    // The interrupted turn never got its answer; the compaction ran in a turn of its own after it.
    expect(interrupted?.items.some((i) => i.type === "agentMessage")).toBe(false)
    const ids = done.state.turns.map((t) => t.id)
    expect(ids.indexOf(done.turnId)).toBe(0)
    expect(ids).toHaveLength(2)
  })
})

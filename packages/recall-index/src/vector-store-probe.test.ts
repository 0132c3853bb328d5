import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { probeVectorStore } from "./vector-store-probe.js"

describe("probeVectorStore", () => {
  it("loads sqlite-vec into better-sqlite3 and reports versions and FTS5", async () => {
    const probe = await Effect.runPromise(probeVectorStore())
    expect(probe.sqliteVersion).toMatch(/^3\.\d+\.\d+$/)
    expect(probe.vecVersion).toMatch(/^v?\d+\.\d+\.\d+/)
    expect(probe.fts5).toBe(true)
  })

  it("returns a result, never throws, when run twice (the database is closed each time)", async () => {
    const first = await Effect.runPromise(Effect.result(probeVectorStore()))
    const second = await Effect.runPromise(Effect.result(probeVectorStore()))
    expect(Result.isSuccess(first) && Result.isSuccess(second)).toBe(true)
  })
})

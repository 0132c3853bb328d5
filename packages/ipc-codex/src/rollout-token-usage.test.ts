import * as Effect from "effect/Effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, test } from "vitest"
import { lastTokenUsage, readRolloutTokenUsage } from "./rollout-token-usage.js"

const tokenCount = (info: unknown) =>
  JSON.stringify({ timestamp: "t", type: "event_msg", payload: { type: "token_count", info } })
const usage = (last: number, total: number, window: number | null) => ({
  total_token_usage: { input_tokens: total, total_tokens: total },
  last_token_usage: { input_tokens: last, total_tokens: last },
  model_context_window: window,
})

describe("lastTokenUsage", () => {
  test("takes the newest token_count with info, skipping null info, garbage and other lines", () => {
    const text = [
      tokenCount(usage(10, 10, 258_400)),
      tokenCount(usage(42_100, 50_000, 258_400)),
      tokenCount(null),
      '{"type":"event_msg","payload":{"type":"token_count"', // truncated line
      JSON.stringify({ type: "response_item", payload: { type: "message" } }),
      "",
    ].join("\n")
    expect(lastTokenUsage(text)).toEqual({
      lastTotalTokens: 42_100,
      totalTotalTokens: 50_000,
      modelContextWindow: 258_400,
    })
  })

  test("legacy lines without last_token_usage or window; nothing at all", () => {
    expect(lastTokenUsage(tokenCount({ total_token_usage: { total_tokens: 5 } }))).toEqual({
      lastTotalTokens: null,
      totalTotalTokens: 5,
      modelContextWindow: null,
    })
    expect(lastTokenUsage("")).toBeNull()
  })
})

describe("readRolloutTokenUsage", () => {
  test("reads only the tail of the file; a missing file is a RolloutReadError", async () => {
    const dir = await mkdtemp(join(tmpdir(), "baton-rollout-"))
    try {
      const file = join(dir, "rollout.jsonl")
      const filler = `${JSON.stringify({ type: "response_item", payload: { text: "x".repeat(1_000) } })}\n`
      await writeFile(
        file,
        `${tokenCount(usage(1, 1, 1))}\n${filler.repeat(10)}${tokenCount(usage(7, 9, 100))}\n`,
      )
      expect(await Effect.runPromise(readRolloutTokenUsage(file, 2_000))).toEqual({
        lastTotalTokens: 7,
        totalTotalTokens: 9,
        modelContextWindow: 100,
      })
      const error = await Effect.runPromise(Effect.flip(readRolloutTokenUsage(join(dir, "nope"))))
      expect(error).toMatchObject({ _tag: "RolloutReadError", path: join(dir, "nope") })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

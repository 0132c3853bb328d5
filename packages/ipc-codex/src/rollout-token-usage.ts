/**
 * Context occupancy of a thread from its rollout JSONL, read passively (codex-app-server.md §8
 * "Passive", transcripts.md §2.7): the last `event_msg` `token_count` whose `info` is not null.
 * Used where no live token usage is available without subscribing (a daemon replays none on
 * `thread/resume`). Reads only the file's tail; never writes. The scan is pure.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { open } from "node:fs/promises"
import { RolloutReadError } from "./errors.js"

/** The newest token usage a rollout recorded. */
export interface RolloutTokenUsage {
  /** `last_token_usage.total_tokens`: current context occupancy. */
  readonly lastTotalTokens: number | null
  /** `total_token_usage.total_tokens`: cumulative. */
  readonly totalTotalTokens: number | null
  readonly modelContextWindow: number | null
}

/** Bytes read from the end of a rollout (default 4 MiB). */
export const ROLLOUT_TAIL_BYTES = 4 * 1024 * 1024

const Usage = Schema.Struct({ total_tokens: Schema.optionalKey(Schema.NullOr(Schema.Number)) })
const TokenCountLine = Schema.Struct({
  type: Schema.Literal("event_msg"),
  payload: Schema.Struct({
    type: Schema.Literal("token_count"),
    info: Schema.NullOr(
      Schema.Struct({
        total_token_usage: Schema.optionalKey(Schema.NullOr(Usage)),
        last_token_usage: Schema.optionalKey(Schema.NullOr(Usage)),
        model_context_window: Schema.optionalKey(Schema.NullOr(Schema.Number)),
      }),
    ),
  }),
})
const decodeTokenCount = Schema.decodeUnknownOption(TokenCountLine)

/** The last `token_count` with usage info in JSONL text, or null (invalid lines are skipped). */
export const lastTokenUsage = (jsonl: string): RolloutTokenUsage | null => {
  const lines = jsonl.split("\n")
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index]!
    if (!line.includes('"token_count"')) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      continue
    }
    const decoded = decodeTokenCount(parsed)
    if (decoded._tag === "None" || decoded.value.payload.info === null) continue
    const info = decoded.value.payload.info
    return {
      lastTotalTokens: info.last_token_usage?.total_tokens ?? null,
      totalTotalTokens: info.total_token_usage?.total_tokens ?? null,
      modelContextWindow: info.model_context_window ?? null,
    }
  }
  return null
}

/** Reads the tail of a rollout file and returns its newest token usage (null when none). */
export const readRolloutTokenUsage = (
  path: string,
  tailBytes: number = ROLLOUT_TAIL_BYTES,
): Effect.Effect<RolloutTokenUsage | null, RolloutReadError> =>
  Effect.tryPromise({
    try: async () => {
      const file = await open(path, "r")
      try {
        const { size } = await file.stat()
        const length = Math.min(size, tailBytes)
        const buffer = Buffer.alloc(length)
        await file.read(buffer, 0, length, size - length)
        return buffer.toString("utf8")
      } finally {
        await file.close()
      }
    },
    catch: (cause) =>
      new RolloutReadError({
        path,
        reason: cause instanceof Error ? cause.message : String(cause),
      }),
  }).pipe(Effect.map(lastTokenUsage))

/**
 * Structured signals read from Codex's own files, decoded with effect/Schema line by line:
 * - a `codex exec --json` run log: the thread id (`thread.started`), the last agent message, turn
 *   completions and failures;
 * - a rollout (`$CODEX_HOME/sessions/.../rollout-*.jsonl`): rate-limit snapshots from `token_count`
 *   events (the passive quota source when not signed in) and turn ends from `task_complete` /
 *   `error` events with their `codex_error_info`.
 * Lines that are not JSON or not one of these shapes are skipped; a partial last line is left for
 * the next read. Only structured fields are kept: no tool output, no message scanning. Pure.
 */
import type { RateLimitSnapshot, RateLimitWindow } from "@baton/ipc-codex"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { codexErrorKind } from "./failure-classifier.js"
import type { CodexErrorKind } from "./failure-classifier.js"

/** Complete lines of a chunk and the unterminated rest (kept for the next read). */
export const splitCompleteLines = (
  text: string,
): { readonly lines: ReadonlyArray<string>; readonly rest: string } => {
  const end = text.lastIndexOf("\n")
  if (end === -1) return { lines: [], rest: text }
  return {
    lines: text
      .slice(0, end)
      .split("\n")
      .filter((line) => line.trim() !== ""),
    rest: text.slice(end + 1),
  }
}

const parseJson = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown
  } catch {
    return undefined
  }
}

const NullableNumber = Schema.optionalKey(Schema.NullOr(Schema.Number))
const NullableString = Schema.optionalKey(Schema.NullOr(Schema.String))

// `codex exec --json` events.
const ExecEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("thread.started"), thread_id: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("item.completed"),
    item: Schema.Struct({ type: Schema.String, text: NullableString }),
  }),
  Schema.Struct({ type: Schema.Literal("turn.completed") }),
  Schema.Struct({
    type: Schema.Literal("turn.failed"),
    error: Schema.Struct({ message: Schema.String }),
  }),
])
const decodeExecEvent = Schema.decodeUnknownOption(ExecEvent)

/** What a `codex exec --json` run log says. */
export interface ExecLogScan {
  readonly threadId: string | null
  readonly lastAgentMessage: string | null
  readonly turnsCompleted: number
  /** The message of the last `turn.failed`, when the last turn failed. */
  readonly lastTurnFailure: string | null
}

/** An empty scan. */
export const emptyExecLogScan: ExecLogScan = {
  threadId: null,
  lastAgentMessage: null,
  turnsCompleted: 0,
  lastTurnFailure: null,
}

/** Folds complete run-log lines into a scan. */
export const scanExecLog = (
  lines: ReadonlyArray<string>,
  from: ExecLogScan = emptyExecLogScan,
): ExecLogScan => {
  let scan = from
  for (const line of lines) {
    const decoded = decodeExecEvent(parseJson(line))
    if (Option.isNone(decoded)) continue
    const event = decoded.value
    switch (event.type) {
      case "thread.started":
        scan = { ...scan, threadId: scan.threadId ?? event.thread_id }
        break
      case "item.completed":
        if (event.item.type === "agent_message" && typeof event.item.text === "string")
          scan = { ...scan, lastAgentMessage: event.item.text }
        break
      case "turn.completed":
        scan = { ...scan, turnsCompleted: scan.turnsCompleted + 1, lastTurnFailure: null }
        break
      case "turn.failed":
        scan = { ...scan, lastTurnFailure: event.error.message }
        break
    }
  }
  return scan
}

// Rollout lines.
const WindowSchema = Schema.Struct({
  used_percent: Schema.Number,
  window_minutes: NullableNumber,
  resets_at: NullableNumber,
  resets_in_seconds: NullableNumber,
})
const RolloutRateLimits = Schema.Struct({
  limit_id: NullableString,
  limit_name: NullableString,
  primary: Schema.optionalKey(Schema.NullOr(WindowSchema)),
  secondary: Schema.optionalKey(Schema.NullOr(WindowSchema)),
  plan_type: NullableString,
  rate_limit_reached_type: NullableString,
})
const TurnErrorSchema = Schema.Struct({
  message: Schema.String,
  codex_error_info: Schema.optionalKey(Schema.Unknown),
})
const RolloutLine = Schema.Struct({
  timestamp: Schema.optionalKey(Schema.String),
  type: Schema.Literal("event_msg"),
  payload: Schema.Union([
    Schema.Struct({
      type: Schema.Literal("token_count"),
      rate_limits: Schema.optionalKey(Schema.NullOr(RolloutRateLimits)),
    }),
    Schema.Struct({
      type: Schema.Literal("task_complete"),
      last_agent_message: NullableString,
      error: Schema.optionalKey(Schema.NullOr(TurnErrorSchema)),
    }),
    Schema.Struct({
      type: Schema.Literal("error"),
      message: Schema.String,
      codex_error_info: Schema.optionalKey(Schema.Unknown),
    }),
  ]),
})
const decodeRolloutLine = Schema.decodeUnknownOption(RolloutLine)

/**
 * One structured signal from a rollout, in file order. `at` is the line's own timestamp (ms),
 * null or absent when the line has none: it tells history written before the watcher started
 * from what happens while it watches.
 */
export type RolloutSignal =
  | {
      readonly _tag: "RateLimits"
      readonly snapshot: RateLimitSnapshot
      readonly at?: number | null
    }
  | {
      readonly _tag: "TurnEnded"
      /** Null when the turn completed cleanly. */
      readonly error: { readonly kind: CodexErrorKind | null; readonly message: string } | null
      readonly lastAgentMessage: string | null
      readonly at?: number | null
    }
  | {
      readonly _tag: "ErrorReported"
      readonly error: { readonly kind: CodexErrorKind | null; readonly message: string }
      readonly at?: number | null
    }

const toWindow = (
  window: typeof WindowSchema.Type | null | undefined,
  lineSeconds: number | null,
): RateLimitWindow | null => {
  if (window === null || window === undefined) return null
  const resetsAt =
    window.resets_at ??
    (window.resets_in_seconds !== undefined &&
    window.resets_in_seconds !== null &&
    lineSeconds !== null
      ? lineSeconds + window.resets_in_seconds
      : null)
  return {
    usedPercent: window.used_percent,
    windowDurationMins: window.window_minutes ?? null,
    resetsAt,
  }
}

const millisOf = (timestamp: string | undefined): number | null => {
  if (timestamp === undefined) return null
  const ms = Date.parse(timestamp)
  return Number.isFinite(ms) ? ms : null
}

/** The structured signals of complete rollout lines. */
export const scanRollout = (lines: ReadonlyArray<string>): ReadonlyArray<RolloutSignal> => {
  const signals: Array<RolloutSignal> = []
  for (const line of lines) {
    if (!line.includes('"event_msg"')) continue
    const decoded = decodeRolloutLine(parseJson(line))
    if (Option.isNone(decoded)) continue
    const { payload, timestamp } = decoded.value
    const at = millisOf(timestamp)
    switch (payload.type) {
      case "token_count": {
        const limits = payload.rate_limits
        if (limits === null || limits === undefined) break
        const seconds = at === null ? null : Math.floor(at / 1000)
        signals.push({
          _tag: "RateLimits",
          at,
          snapshot: {
            limitId: limits.limit_id ?? null,
            limitName: limits.limit_name ?? null,
            primary: toWindow(limits.primary, seconds),
            secondary: toWindow(limits.secondary, seconds),
            planType: limits.plan_type ?? null,
            rateLimitReachedType: limits.rate_limit_reached_type ?? null,
          },
        })
        break
      }
      case "task_complete":
        signals.push({
          _tag: "TurnEnded",
          error:
            payload.error === null || payload.error === undefined
              ? null
              : {
                  kind: codexErrorKind(payload.error.codex_error_info),
                  message: payload.error.message,
                },
          lastAgentMessage: payload.last_agent_message ?? null,
          at,
        })
        break
      case "error":
        signals.push({
          _tag: "ErrorReported",
          error: { kind: codexErrorKind(payload.codex_error_info), message: payload.message },
          at,
        })
        break
    }
  }
  return signals
}

/**
 * The error of the last turn in a rollout: the last `task_complete`'s error (null when it ended
 * cleanly), else — for a turn that never ended — the last reported error after it.
 */
export const lastTurnError = (
  signals: ReadonlyArray<RolloutSignal>,
): { readonly kind: CodexErrorKind | null; readonly message: string } | null => {
  for (let i = signals.length - 1; i >= 0; i--) {
    const signal = signals[i]!
    if (signal._tag === "TurnEnded" || signal._tag === "ErrorReported") return signal.error
  }
  return null
}

/**
 * When an exhausted window of the rollout's last rate-limit snapshot resets (ms): codex records the
 * 429's `x-codex-*` snapshot before the usage-limit turn end. The latest reset of the windows at
 * 100 % or more; null when no window reads exhausted (nothing is guessed from message text).
 */
export const exhaustedWindowResetsAt = (signals: ReadonlyArray<RolloutSignal>): number | null => {
  for (let i = signals.length - 1; i >= 0; i--) {
    const signal = signals[i]!
    if (signal._tag !== "RateLimits") continue
    const resets = [signal.snapshot.primary, signal.snapshot.secondary]
      .filter((w) => w !== null && w !== undefined && w.usedPercent >= 100)
      .map((w) => w?.resetsAt)
      .filter((r): r is number => typeof r === "number" && Number.isFinite(r))
    return resets.length === 0 ? null : Math.max(...resets) * 1000
  }
  return null
}

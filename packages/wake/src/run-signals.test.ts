import { expect, test } from "vitest"
import {
  exhaustedWindowResetsAt,
  lastTurnError,
  scanExecLog,
  scanRollout,
  splitCompleteLines,
} from "./run-signals.js"
import type { RolloutSignal } from "./run-signals.js"

// Lines as codex-cli 0.169.0 wrote them against the mock (trimmed to the fields read).
const rollout = [
  '{"timestamp":"2026-11-30T11:04:54.586Z","type":"session_meta","payload":{"id":"t"}}',
  '{"timestamp":"2026-11-30T11:04:54.700Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":91.5,"window_minutes":300,"resets_at":1796036753},"secondary":null,"credits":null,"plan_type":null,"rate_limit_reached_type":null}}}',
  '{"timestamp":"2026-11-30T11:04:54.800Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"a","last_agent_message":null,"error":{"message":"You\\u2019ve hit your usage limit.","codex_error_info":"usage_limit_exceeded"}}}',
  '{"timestamp":"2026-11-30T11:04:55.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"b","last_agent_message":"ok","error":null}}',
  "not json",
  '{"timestamp":"2026-11-30T11:04:56.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":10,"resets_in_seconds":60}}}}',
]

test("partial last lines wait for the next read", () => {
  expect(splitCompleteLines("a\nb\nc")).toEqual({ lines: ["a", "b"], rest: "c" })
  expect(splitCompleteLines("abc")).toEqual({ lines: [], rest: "abc" })
})

test("rollout: rate limits in order (seconds; resets_in_seconds from the line time) and turn ends with codex_error_info", () => {
  const signals = scanRollout(rollout)
  expect(signals.map((s) => s._tag)).toEqual(["RateLimits", "TurnEnded", "TurnEnded", "RateLimits"])
  // Each signal carries its line's time: the watcher tells history from what it sees live.
  expect(signals[0]?.at).toBe(Date.parse("2026-11-30T11:04:54.700Z"))
  expect(signals[1]?.at).toBe(Date.parse("2026-11-30T11:04:54.800Z"))
  expect(signals[0]).toMatchObject({
    snapshot: {
      limitId: "codex",
      primary: { usedPercent: 91.5, windowDurationMins: 300, resetsAt: 1796036753 },
    },
  })
  expect(signals[1]).toMatchObject({ error: { kind: { kind: "usageLimitExceeded" } } })
  expect(signals[3]).toMatchObject({
    snapshot: { primary: { resetsAt: Date.parse("2026-11-30T11:04:56.000Z") / 1000 + 60 } },
  })
  // The last turn ended cleanly: no error, even though an earlier one hit the limit.
  expect(lastTurnError(signals)).toBeNull()
  expect(lastTurnError(signals.slice(0, 2))).toMatchObject({ kind: { kind: "usageLimitExceeded" } })
})

test("exec log: thread id, last agent message, the last turn's failure", () => {
  const scan = scanExecLog([
    '{"type":"thread.started","thread_id":"019a-thread"}',
    '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"metadata"}}',
    '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"working"}}',
    '{"type":"error","message":"Reconnecting... 1/5"}',
    '{"type":"turn.failed","error":{"message":"stream disconnected"}}',
  ])
  expect(scan).toEqual({
    threadId: "019a-thread",
    lastAgentMessage: "working",
    turnsCompleted: 0,
    lastTurnFailure: "stream disconnected",
  })
  expect(scanExecLog(['{"type":"turn.completed","usage":{}}'], scan).lastTurnFailure).toBeNull()
})

test("exhaustedWindowResetsAt: the latest reset of the windows at 100 % in the last snapshot, else null", () => {
  const snapshot = (primary: number, secondary: number | null): RolloutSignal => ({
    _tag: "RateLimits",
    snapshot: {
      limitId: "codex",
      primary: { usedPercent: primary, windowDurationMins: 300, resetsAt: 1_000 },
      secondary:
        secondary === null
          ? null
          : { usedPercent: secondary, windowDurationMins: 10_080, resetsAt: 5_000 },
    },
  })
  expect(exhaustedWindowResetsAt([snapshot(100, 20)])).toBe(1_000_000)
  expect(exhaustedWindowResetsAt([snapshot(100, 100)])).toBe(5_000_000)
  expect(exhaustedWindowResetsAt([snapshot(100, null), snapshot(40, null)])).toBeNull()
  expect(exhaustedWindowResetsAt([])).toBeNull()
})

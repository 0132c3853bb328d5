import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, expect, test } from "vitest"
import { findRolloutFile, makeRolloutThreadSignals } from "./thread-signals.js"

const dirs: Array<string> = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

const THREAD = "019a22c2-1a7b-7611-a89d-7e51c258aa8d"
const limits = (p: number) =>
  `${JSON.stringify({ timestamp: "2026-11-30T11:00:00Z", type: "event_msg", payload: { type: "token_count", info: null, rate_limits: { limit_id: "codex", primary: { used_percent: p, window_minutes: 300, resets_at: 1 } } } })}\n`

test("finds the thread's rollout and returns only what was appended, whole lines only", async () => {
  const home = await mkdtemp(join(tmpdir(), "baton-wake-rollout-"))
  dirs.push(home)
  const day = join(home, "sessions", "2026", "11", "30")
  await mkdir(day, { recursive: true })
  await mkdir(join(home, "sessions", "2026", "11", "29"), { recursive: true })
  const file = join(day, `rollout-2026-11-30T11-00-00-${THREAD}.jsonl`)
  await writeFile(file, limits(40) + limits(50))
  expect(await findRolloutFile(home, THREAD)).toBe(file)
  expect(await findRolloutFile(home, "019a0000-0000-0000-0000-000000000000")).toBeNull()
  const signals = makeRolloutThreadSignals(home)
  const percents = async () =>
    (await Effect.runPromise(signals.poll(THREAD))).map((s) =>
      s._tag === "RateLimits" ? s.snapshot.primary?.usedPercent : s._tag,
    )
  expect(await percents()).toEqual([40, 50])
  expect(await percents()).toEqual([])
  const next = limits(85)
  await appendFile(file, next.slice(0, 20))
  expect(await percents()).toEqual([])
  await appendFile(file, next.slice(20) + limits(92))
  expect(await percents()).toEqual([85, 92])
  expect((await Effect.runPromise(signals.readAll(THREAD)))?.length).toBe(4)
  expect(await Effect.runPromise(signals.poll("019a0000-0000-0000-0000-000000000000"))).toEqual([])
})

import * as Effect from "effect/Effect"
import { TestClock } from "effect/testing"
import { STALE_LOCK_KEEP_MS } from "@baton/durable-files"
import { describe, expect, test } from "vitest"
import { LOCK_LEASE_MS, withJobLock } from "./job-lock.js"
import { makeMemoryWakeFileSystem } from "./wake-file-system.js"

const FILE = "/w/jobs/j/lock"
const lockText = (pid: number, at: number) =>
  `${JSON.stringify({ schemaVersion: 1, pid, token: `${pid}:${at}:1`, acquiredAt: at, leaseExpiresAt: at + LOCK_LEASE_MS })}\n`

const run = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.result(effect).pipe(Effect.provide(TestClock.layer())))

describe("withJobLock", () => {
  // A parallel storm of CLI calls: the holder read as "current lease" releases and exits while
  // its liveness is checked, and a successor takes the lock in between.
  test("never moves aside a successor's lock that replaced a holder found dead", async () => {
    const fs = makeMemoryWakeFileSystem()
    fs.store.files.set(FILE, { text: lockText(111, 0), mode: 0o600 })
    const successor = lockText(222, 5)
    const probe = (holder: number) =>
      Effect.sync(() => {
        if (holder === 111) {
          // Released and gone; the successor created its lock meanwhile.
          fs.store.files.set(FILE, { text: successor, mode: 0o600 })
          return false
        }
        return true
      })
    const outcome = await run(withJobLock(fs, FILE, 333, Effect.succeed("used"), probe))
    expect(outcome._tag).toBe("Failure")
    expect(outcome._tag === "Failure" ? outcome.failure : undefined).toMatchObject({
      _tag: "JobLockHeld",
      holderPid: 222,
    })
    expect(fs.store.files.get(FILE)?.text).toBe(successor)
    expect([...fs.store.files.keys()]).toEqual([FILE])
  })

  // Each takeover used to leave its `lock.stale-<ms>-<n>` in the job directory for good.
  test("takes over a lock whose holder is gone, leaving nothing of it behind", async () => {
    const fs = makeMemoryWakeFileSystem()
    fs.store.files.set(FILE, { text: lockText(111, 0), mode: 0o600 })
    let asides = -1
    const outcome = await run(
      withJobLock(
        fs,
        FILE,
        333,
        Effect.sync(() => {
          asides = [...fs.store.files.keys()].filter((n) => n.startsWith(`${FILE}.`)).length
          return "used"
        }),
        () => Effect.succeed(false),
      ),
    )
    expect(outcome).toMatchObject({ _tag: "Success", success: "used" })
    expect(asides).toBe(0)
    // Released after use.
    expect([...fs.store.files.keys()]).toEqual([])
  })

  test("the holder removes asides a killed taker left, once past their keep time", async () => {
    const fs = makeMemoryWakeFileSystem()
    const now = STALE_LOCK_KEEP_MS + 10_000
    const old = `${FILE}.stale-5000-1`
    const fresh = `${FILE}.stale-${now - 1_000}-2`
    for (const name of [old, fresh, "/w/jobs/j/other.stale-5000-1"])
      fs.store.files.set(name, { text: lockText(111, 0), mode: 0o600 })
    const outcome = await Effect.runPromise(
      Effect.result(
        Effect.gen(function* () {
          yield* TestClock.setTime(now)
          return yield* withJobLock(fs, FILE, 333, Effect.succeed("used"))
        }),
      ).pipe(Effect.provide(TestClock.layer())),
    )
    expect(outcome).toMatchObject({ _tag: "Success", success: "used" })
    expect([...fs.store.files.keys()].sort()).toEqual([fresh, "/w/jobs/j/other.stale-5000-1"])
  })
})

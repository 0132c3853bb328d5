import * as Effect from "effect/Effect"
import { TestClock } from "effect/testing"
import { expect, test } from "vitest"
import { makeMemoryWakeFileSystem } from "./wake-file-system.js"
import {
  acquireWatcherLock,
  readWatcherLock,
  releaseWatcherLock,
  renewWatcherLock,
} from "./watcher-lock.js"

const me = { pid: 10, startTicks: 100, host: "h1" }
const run = <A, E>(program: Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.flip(Effect.flip(program)).pipe(Effect.provide(TestClock.layer())) as Effect.Effect<A>,
  )
const alive = (pids: ReadonlyArray<number>) => (pid: number) => Effect.succeed(pids.includes(pid))

test("one holder: a live lease is respected, an expired one or a dead local holder is taken over", () =>
  run(
    Effect.gen(function* () {
      const fs = makeMemoryWakeFileSystem()
      const held = yield* acquireWatcherLock(fs, "/w", me, alive([10]), 30_000)
      // Same host, holder alive: refused.
      const refused = yield* Effect.flip(
        acquireWatcherLock(fs, "/w", { ...me, pid: 11 }, alive([10, 11]), 30_000),
      )
      expect(refused).toMatchObject({ _tag: "WatcherLockHeld", holderPid: 10, host: "h1" })
      // Other host: the lease decides, the local probe is not consulted.
      const remote = yield* Effect.flip(
        acquireWatcherLock(fs, "/w", { pid: 12, startTicks: null, host: "h2" }, alive([]), 30_000),
      )
      expect(remote._tag).toBe("WatcherLockHeld")
      // Renewal keeps it; after the holder dies on this host, a successor takes over at once.
      yield* TestClock.adjust(20_000)
      yield* renewWatcherLock(fs, held, 30_000)
      expect((yield* readWatcherLock(fs, "/w"))?.leaseExpiresAt).toBe(50_000)
      const successor = yield* acquireWatcherLock(fs, "/w", { ...me, pid: 13 }, alive([13]), 30_000)
      expect((yield* readWatcherLock(fs, "/w"))?.pid).toBe(13)
      // The old holder finds out on its next renewal, and its release leaves the new lock alone.
      expect((yield* Effect.flip(renewWatcherLock(fs, held)))._tag).toBe("WatcherLockLost")
      yield* releaseWatcherLock(fs, held)
      expect((yield* readWatcherLock(fs, "/w"))?.pid).toBe(13)
      // A remote lock whose lease expired is taken over too.
      yield* releaseWatcherLock(fs, successor)
      yield* acquireWatcherLock(
        fs,
        "/w",
        { pid: 20, startTicks: null, host: "h2" },
        alive([]),
        1_000,
      )
      yield* TestClock.adjust(1_001)
      yield* acquireWatcherLock(fs, "/w", me, alive([]), 30_000)
      expect((yield* readWatcherLock(fs, "/w"))?.host).toBe("h1")
    }),
  ))

test("a torn lock file is treated as stale", () =>
  run(
    Effect.gen(function* () {
      const fs = makeMemoryWakeFileSystem()
      yield* fs.writeAtomic("/w/watcher.lock", "{torn", 0o600)
      yield* acquireWatcherLock(fs, "/w", me, alive([]))
      expect((yield* readWatcherLock(fs, "/w"))?.pid).toBe(10)
    }),
  ))

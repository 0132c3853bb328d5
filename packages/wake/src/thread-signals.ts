/**
 * The passive port: structured signals of a Codex thread read from its rollout file
 * (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<thread id>.jsonl`), which every Codex host writes
 * (CLI, exec, app-server, VS Code). `poll` returns only what was appended since the previous
 * poll of that thread, whole lines only; `readAll` reads a rollout from the start (to classify an
 * ended continuation). Read-only: never writes, never talks to a model. The Node adapter finds
 * the file by its thread id (newest day directories first) and remembers where it stopped; the
 * in-memory twin returns what the test pushed.
 */
import { open, readdir } from "node:fs/promises"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { scanRollout, splitCompleteLines } from "./run-signals.js"
import type { RolloutSignal } from "./run-signals.js"

/** Reads a thread's rollout signals. */
export interface ThreadSignalsShape {
  /** Signals appended since the previous poll of this thread ([] when the rollout is unknown). */
  readonly poll: (threadId: string) => Effect.Effect<ReadonlyArray<RolloutSignal>>
  /** Every signal of the thread's rollout, or null when no rollout exists for it. */
  readonly readAll: (threadId: string) => Effect.Effect<ReadonlyArray<RolloutSignal> | null>
}

/** The thread signals service. */
export class ThreadSignals extends Context.Service<ThreadSignals, ThreadSignalsShape>()(
  "@baton/wake/ThreadSignals",
) {}

const listNames = async (dir: string): Promise<ReadonlyArray<string>> => {
  try {
    return await readdir(dir)
  } catch {
    return []
  }
}

/** Finds the rollout of `threadId` under `codexHome` (sessions, newest first; then archived). */
export const findRolloutFile = async (
  codexHome: string,
  threadId: string,
): Promise<string | null> => {
  const sessions = path.join(codexHome, "sessions")
  const byName = (names: ReadonlyArray<string>) => [...names].sort().reverse()
  for (const year of byName(await listNames(sessions)))
    for (const month of byName(await listNames(path.join(sessions, year))))
      for (const day of byName(await listNames(path.join(sessions, year, month)))) {
        const dir = path.join(sessions, year, month, day)
        const hit = (await listNames(dir)).find(
          (name) => name.endsWith(`${threadId}.jsonl`) && name.startsWith("rollout-"),
        )
        if (hit !== undefined) return path.join(dir, hit)
      }
  const archived = path.join(codexHome, "archived_sessions")
  const hit = (await listNames(archived)).find((name) => name.endsWith(`${threadId}.jsonl`))
  return hit === undefined ? null : path.join(archived, hit)
}

const readFrom = async (file: string, offset: number): Promise<{ text: string; end: number }> => {
  const handle = await open(file, "r")
  try {
    const { size } = await handle.stat()
    if (size <= offset) return { text: "", end: size < offset ? 0 : offset }
    const buffer = Buffer.alloc(size - offset)
    await handle.read(buffer, 0, buffer.length, offset)
    return { text: buffer.toString("utf8"), end: size }
  } finally {
    await handle.close()
  }
}

/** The rollout reader for threads of `codexHome`. */
export const makeRolloutThreadSignals = (codexHome: string): ThreadSignalsShape => {
  const files = new Map<string, string>()
  const cursors = new Map<string, { offset: number; rest: string }>()

  const locate = async (threadId: string) => {
    const known = files.get(threadId)
    if (known !== undefined) return known
    const found = await findRolloutFile(codexHome, threadId)
    if (found !== null) files.set(threadId, found)
    return found
  }

  return {
    poll: (threadId) =>
      Effect.promise(async () => {
        try {
          const file = await locate(threadId)
          if (file === null) return []
          const cursor = cursors.get(threadId) ?? { offset: 0, rest: "" }
          const { text, end } = await readFrom(file, cursor.offset)
          // A shrunken file was replaced: start over.
          const base = end < cursor.offset ? "" : cursor.rest
          const { lines, rest } = splitCompleteLines(base + text)
          cursors.set(threadId, { offset: end, rest })
          return scanRollout(lines)
        } catch {
          return []
        }
      }),
    readAll: (threadId) =>
      Effect.promise(async () => {
        try {
          const file = await locate(threadId)
          if (file === null) return null
          const { text } = await readFrom(file, 0)
          return scanRollout(splitCompleteLines(`${text}\n`).lines)
        } catch {
          return null
        }
      }),
  }
}

/** Layer: rollouts under `codexHome`. */
export const rolloutThreadSignalsLayer = (codexHome: string): Layer.Layer<ThreadSignals> =>
  Layer.sync(ThreadSignals, () => makeRolloutThreadSignals(codexHome))

/**
 * The twin: returns what the test pushes for a thread. `rewind` is a new reader (a restarted
 * watcher): the next poll of each thread returns its whole history again, as the rollout reader's
 * first poll does.
 */
export const makeScriptedThreadSignals = (): ThreadSignalsShape & {
  readonly push: (threadId: string, ...signals: ReadonlyArray<RolloutSignal>) => void
  readonly rewind: () => void
} => {
  const pending = new Map<string, Array<RolloutSignal>>()
  const all = new Map<string, Array<RolloutSignal>>()
  return {
    push: (threadId, ...signals) => {
      pending.set(threadId, [...(pending.get(threadId) ?? []), ...signals])
      all.set(threadId, [...(all.get(threadId) ?? []), ...signals])
    },
    rewind: () => {
      for (const [threadId, signals] of all) pending.set(threadId, [...signals])
    },
    poll: (threadId) =>
      Effect.sync(() => {
        const out = pending.get(threadId) ?? []
        pending.delete(threadId)
        return out
      }),
    readAll: (threadId) => Effect.sync(() => all.get(threadId) ?? null),
  }
}

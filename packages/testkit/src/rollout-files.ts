/**
 * Finds and reads the rollout JSONL files Codex writes under `$CODEX_HOME/sessions/YYYY/MM/DD/`
 * (and `archived_sessions/`). Read-only; compressed `.jsonl.zst` files are listed but not read.
 */
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"

/** One rollout line: `{timestamp, ordinal?, type, payload}`. */
export interface RolloutLine {
  readonly timestamp: string
  readonly ordinal?: number
  readonly type: string
  readonly payload: Record<string, unknown>
}

const walk = async (dir: string): Promise<Array<string>> => {
  let entries
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch {
    return []
  }
  const files: Array<string> = []
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) files.push(...(await walk(path)))
    else if (/^rollout-.*\.jsonl(\.zst)?$/.test(entry.name)) files.push(path)
  }
  return files
}

/** Every rollout file under `sessions/` and `archived_sessions/`, sorted by path (= time). */
export const findRolloutFiles = async (codexHome: string): Promise<ReadonlyArray<string>> => {
  const files = [
    ...(await walk(join(codexHome, "sessions"))),
    ...(await walk(join(codexHome, "archived_sessions"))),
  ]
  return files.sort()
}

/** The rollout file of one thread (its id is the UUID at the end of the file name). */
export const findRolloutForThread = async (
  codexHome: string,
  threadId: string,
): Promise<string | undefined> =>
  (await findRolloutFiles(codexHome)).find((path) => path.includes(threadId))

/** Parses a rollout file; throws naming the file and line when a line is not JSON. */
export const readRollout = async (path: string): Promise<ReadonlyArray<RolloutLine>> => {
  const text = await readFile(path, "utf8")
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, index) => {
      try {
        return JSON.parse(line) as RolloutLine
      } catch (error) {
        throw new Error(`${path}:${index + 1}: not JSON (${String(error)})`, { cause: error })
      }
    })
}

/** Payloads of `event_msg` lines whose `payload.type` is `eventType` (e.g. `token_count`). */
export const rolloutEvents = (
  lines: ReadonlyArray<RolloutLine>,
  eventType: string,
): ReadonlyArray<Record<string, unknown>> =>
  lines
    .filter((line) => line.type === "event_msg" && line.payload["type"] === eventType)
    .map((line) => line.payload)

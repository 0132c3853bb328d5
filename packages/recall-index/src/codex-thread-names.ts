/**
 * The names users give Codex threads. Codex 0.169 writes a rename (`thread/name/set`, the TUI's
 * `/rename`) only to `$CODEX_HOME/session_index.jsonl` — append-only `{id, thread_name,
 * updated_at}` lines, the newest entry for an id winning — and not into the rollout, so a
 * session's `thread_name_updated` event is not the only source of its title. Guarantees: a line
 * that is not such an entry is skipped, never thrown on; a missing or unreadable file is no
 * names; only the newest {@link THREAD_INDEX_TAIL_BYTES} of a huge file are read (entries are
 * appended, so the newest names are at its end); names are masked like transcript text.
 */
import * as Effect from "effect/Effect"
import type { Database } from "better-sqlite3"
import { maskTranscriptText } from "./secret-masking.js"
import { TranscriptFileSystem } from "./transcript-file-system.js"

/** The thread index file's name in `CODEX_HOME`. */
export const CODEX_THREAD_INDEX_FILE = "session_index.jsonl"

/** At most this many bytes from the end of the thread index are read. */
export const THREAD_INDEX_TAIL_BYTES = 8 * 1024 * 1024

/** Thread id → its newest name, from the text of a thread index. */
export const parseThreadNames = (text: string): Map<string, string> => {
  const names = new Map<string, { readonly name: string; readonly at: string }>()
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    let entry: unknown
    try {
      entry = JSON.parse(line)
    } catch {
      continue
    }
    if (typeof entry !== "object" || entry === null) continue
    const { id, thread_name: name, updated_at: at } = entry as Record<string, unknown>
    if (typeof id !== "string" || id === "" || typeof name !== "string") continue
    const trimmed = name.trim()
    if (trimmed === "") continue
    const when = typeof at === "string" ? at : ""
    const known = names.get(id)
    // Appended in time order; an entry stamped earlier than the one kept does not undo it.
    if (known !== undefined && when !== "" && known.at !== "" && when < known.at) continue
    names.set(id, { name: maskTranscriptText(trimmed).text.toWellFormed(), at: when })
  }
  return new Map([...names].map(([id, { name }]) => [id, name]))
}

/** The thread names in `codexHome`'s thread index (none when it is missing or unreadable). */
export const readCodexThreadNames = (
  codexHome: string,
): Effect.Effect<Map<string, string>, never, TranscriptFileSystem> =>
  Effect.gen(function* () {
    const fs = yield* TranscriptFileSystem
    const path = `${codexHome.replace(/\/+$/, "")}/${CODEX_THREAD_INDEX_FILE}`
    const stat = yield* Effect.result(fs.stat(path))
    if (stat._tag === "Failure" || stat.success.kind !== "file") return new Map<string, string>()
    const size = stat.success.size
    const from = Math.max(0, size - THREAD_INDEX_TAIL_BYTES)
    const bytes = yield* Effect.result(fs.read(path, from, size - from))
    if (bytes._tag === "Failure") return new Map<string, string>()
    let text = new TextDecoder().decode(bytes.success)
    // Started mid-file: the first (partial) line is not an entry.
    if (from > 0) text = text.slice(text.indexOf("\n") + 1)
    return parseThreadNames(text)
  })

/**
 * Sets each named Codex session's title to its thread name; returns how many titles changed.
 * Sessions not in the index are left alone (a forgotten one stays forgotten).
 */
export const applyCodexThreadNames = (
  sqlite: Database,
  names: ReadonlyMap<string, string>,
): number => {
  if (names.size === 0) return 0
  const update = sqlite.prepare(
    "update sessions set title = ? where source = 'codex' and session_id = ? and title is not ?",
  )
  return sqlite.transaction(() => {
    let changed = 0
    for (const [id, name] of names) changed += update.run(name, id, name).changes
    return changed
  })()
}

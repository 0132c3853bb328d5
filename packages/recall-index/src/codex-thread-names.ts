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

/**
 * The thread names in `codexHome`'s thread index (none when it is missing or unreadable), and the
 * file's signature (size, mtime, inode; `undefined` without a file). When the signature equals
 * `unchangedSince`, the file is not read and `names` is `undefined`: a no-change index run reads
 * no transcript bytes, this file's included.
 */
export const readCodexThreadNames = (
  codexHome: string,
  unchangedSince?: string,
): Effect.Effect<
  { readonly names: Map<string, string> | undefined; readonly signature: string | undefined },
  never,
  TranscriptFileSystem
> =>
  Effect.gen(function* () {
    const fs = yield* TranscriptFileSystem
    const path = `${codexHome.replace(/\/+$/, "")}/${CODEX_THREAD_INDEX_FILE}`
    const stat = yield* Effect.result(fs.stat(path))
    if (stat._tag === "Failure" || stat.success.kind !== "file")
      return { names: new Map<string, string>(), signature: undefined }
    const size = stat.success.size
    const signature = `${size}:${stat.success.mtimeMs}:${stat.success.ino}`
    if (signature === unchangedSince) return { names: undefined, signature }
    const from = Math.max(0, size - THREAD_INDEX_TAIL_BYTES)
    const bytes = yield* Effect.result(fs.read(path, from, size - from))
    if (bytes._tag === "Failure") return { names: new Map<string, string>(), signature: undefined }
    let text = new TextDecoder().decode(bytes.success)
    // Started mid-file: the first (partial) line is not an entry.
    if (from > 0) text = text.slice(text.indexOf("\n") + 1)
    return { names: parseThreadNames(text), signature }
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

const SIGNATURE_KEY = "codex_thread_index"

/** The thread index signature the last names were applied from (`meta`), if any. */
export const threadIndexSignature = (sqlite: Database): string | undefined =>
  (
    sqlite.prepare("select value from meta where key = ?").get(SIGNATURE_KEY) as
      { value: string } | undefined
  )?.value

/** Records the thread index signature names were applied from (none: forgets it). */
export const saveThreadIndexSignature = (sqlite: Database, signature: string | undefined): void => {
  if (signature === undefined) sqlite.prepare("delete from meta where key = ?").run(SIGNATURE_KEY)
  else
    sqlite
      .prepare(
        "insert into meta (key, value) values (?, ?) on conflict (key) do update set value = excluded.value",
      )
      .run(SIGNATURE_KEY, signature)
}

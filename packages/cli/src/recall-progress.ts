/**
 * The progress bar of `baton recall index` on a terminal: files and turns while indexing (and
 * while a large run builds its full-text and lookup indexes at the end), then the embedding
 * backlog, each with an ETA from the rate so far. Guarantees: `renderProgress` is pure and never wider than
 * `columns`; the writer redraws one stderr line at most ten times a second (`\r` + clear to end of
 * line), at once when the phase changes, and ends it with a newline, so the final summary on
 * stdout starts on a clean line; a note (a retry warning) goes on its own line above the bar. No
 * bar when disabled (not a TTY, --json, --quiet); notes are still written.
 */

/** What the bar shows. */
export type ProgressState =
  | {
      readonly phase: "indexing"
      readonly filesDone: number
      readonly filesTotal: number
      readonly turns: number
      readonly startedAt: number
    }
  | {
      readonly phase: "embedding"
      readonly done: number
      readonly total: number
      readonly startedAt: number
    }
  | {
      /** The files are written; the run builds the indexes it deferred (no count). */
      readonly phase: "building-indexes"
      readonly filesTotal: number
    }
  | {
      /** An earlier version's float vectors are rewritten as int8, once (no count). */
      readonly phase: "converting-vectors"
      readonly vectors: number
    }

const grouped = (n: number): string => Math.round(n).toLocaleString("en-US")

/** `45s`, `3m 05s`, `1h 12m`. */
export const formatDuration = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
}

const bar = (done: number, total: number, width: number): string => {
  const filled = total <= 0 ? width : Math.min(width, Math.round((done / total) * width))
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`
}

const eta = (done: number, total: number, startedAt: number, now: number): string => {
  const elapsed = now - startedAt
  if (done <= 0 || done >= total || elapsed < 500) return ""
  return ` · ETA ${formatDuration(((total - done) * elapsed) / done)}`
}

/** One line of progress, at most `columns` wide. */
export const renderProgress = (state: ProgressState, now: number, columns = 80): string => {
  const line =
    state.phase === "indexing"
      ? `indexing  ${bar(state.filesDone, state.filesTotal, 20)} ${grouped(state.filesDone)}/${grouped(state.filesTotal)} files · ${grouped(state.turns)} turns${eta(state.filesDone, state.filesTotal, state.startedAt, now)}`
      : state.phase === "embedding"
        ? `embedding ${bar(state.done, state.total, 20)} ${grouped(state.done)}/${grouped(state.total)} chunks${eta(state.done, state.total, state.startedAt, now)}`
        : state.phase === "converting-vectors"
          ? `embedding storing ${grouped(state.vectors)} vectors of an earlier version as int8 (once)…`
          : `indexing  ${bar(1, 1, 20)} ${grouped(state.filesTotal)} files written · building search indexes…`
  return line.length > columns ? `${line.slice(0, Math.max(0, columns - 1))}…` : line
}

/**
 * The width to draw in: the terminal's, else `COLUMNS`, else 80. A pseudo-terminal nobody sized
 * (`script` run without a terminal, some editors' shells) reports 0 columns, which would cut every
 * line down to "…".
 */
export const terminalColumns = (
  streamColumns: number | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number => {
  if (streamColumns !== undefined && Number.isInteger(streamColumns) && streamColumns > 0)
    return streamColumns
  const fromEnv = Number(env["COLUMNS"])
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80
}

/** Draws progress on a terminal stream. */
export interface ProgressWriter {
  readonly update: (state: ProgressState) => void
  /**
   * Writes `line` (a warning: a retry of the embedding server) on its own line, above the bar
   * when one is drawn (the bar is drawn again under it); written also when the bar is disabled.
   */
  readonly note: (line: string) => void
  /** Draws the last state (if any) and ends the line. */
  readonly done: () => void
}

/** A writer drawing on `write` (stderr), or one that does nothing when `enabled` is false. */
export const progressWriter = (
  enabled: boolean,
  write: (text: string) => void,
  now: () => number,
  columns: () => number,
): ProgressWriter => {
  if (!enabled)
    return { update: () => undefined, note: (line) => write(`${line}\n`), done: () => undefined }
  let last: ProgressState | undefined
  let lastDrawn = true
  let drawnAt = Number.NEGATIVE_INFINITY
  let drawn = false
  const draw = (state: ProgressState) => {
    write(`\r${renderProgress(state, now(), columns())}\u001b[K`)
    drawn = true
  }
  return {
    update: (state) => {
      const phaseChanged = last !== undefined && last.phase !== state.phase
      last = state
      lastDrawn = false
      const t = now()
      if (t - drawnAt >= 100 || phaseChanged) {
        drawnAt = t
        draw(state)
        lastDrawn = true
      }
    },
    note: (line) => {
      if (!drawn) {
        write(`${line}\n`)
        return
      }
      write(`\r\u001b[K${line}\n`)
      if (last !== undefined) {
        draw(last)
        lastDrawn = true
      }
    },
    done: () => {
      if (last !== undefined && !lastDrawn) draw(last)
      if (drawn) write("\n")
      last = undefined
      lastDrawn = true
      drawn = false
    },
  }
}

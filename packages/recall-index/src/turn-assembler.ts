/**
 * Groups decoded lines into turns, shared by the Claude and Codex readers. Rules (in order):
 * a line with user surface text opens a new user turn; an assistant-side line (assistant text,
 * tool call, reasoning) opens an assistant turn unless the open turn is already an assistant turn
 * of the same session and sidechain-ness; any other line joins the open turn, or the preamble when
 * no turn is open yet. Ordinals continue from the resume state, and a turn left open by an
 * earlier call is extended (emitted again with `continued: true` and only the new content).
 * Also keeps the per-session summaries and the parse counters. Pure: no IO.
 */
import type {
  OpenTurnState,
  ParseStats,
  RawRecord,
  SurfaceText,
  TranscriptSession,
  TranscriptSource,
  Turn,
  TurnRole,
} from "./transcript-model.js"

/** How a line relates to turns. */
export interface LinePlacement {
  readonly sessionId: string
  readonly sidechain: boolean
  /** `assistant` for assistant-side lines; `user` for lines that may carry a prompt. */
  readonly side?: TurnRole
  /** Preferred id if this line opens a turn (Claude `uuid`). */
  readonly idCandidate?: string
  readonly timestamp?: string
}

interface MutableTurn {
  id: string
  sessionId: string
  role: TurnRole
  ordinal: number
  timestamp?: string
  startOffset: number
  endOffset: number
  sidechain: boolean
  continued: boolean
  surface: Array<SurfaceText>
  records: Array<RawRecord>
}

type MutableSession = { -readonly [K in keyof TranscriptSession]: TranscriptSession[K] }

type Counters = { -readonly [K in keyof ParseStats]: ParseStats[K] }

const digitsAt = (text: string, at: number, count: number): number => {
  let n = 0
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

const daysIn = (year: number, month: number): number =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : month === 4 || month === 6 || month === 9 || month === 11
      ? 30
      : 31

/**
 * Whether `value` is already the canonical form `normaliseTimestamp` returns
 * (`YYYY-MM-DDTHH:MM:SS.mmmZ`, a real calendar instant): then `toISOString(parse(value))` is
 * `value` itself and the Date round trip (most of the cost on a transcript line) is skipped.
 */
const isCanonicalIso = (value: string): boolean => {
  if (value.length !== 24) return false
  if (value[4] !== "-" || value[7] !== "-" || value[10] !== "T" || value[13] !== ":") return false
  if (value[16] !== ":" || value[19] !== "." || value[23] !== "Z") return false
  const year = digitsAt(value, 0, 4)
  const month = digitsAt(value, 5, 2)
  const day = digitsAt(value, 8, 2)
  const hour = digitsAt(value, 11, 2)
  const minute = digitsAt(value, 14, 2)
  const second = digitsAt(value, 17, 2)
  return (
    year >= 0 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour >= 0 &&
    hour <= 23 &&
    minute >= 0 &&
    minute <= 59 &&
    second >= 0 &&
    second <= 59 &&
    digitsAt(value, 20, 3) >= 0
  )
}

/** Normalises a timestamp to ISO-8601 UTC; a zone-less timestamp is read as UTC, never as host time. */
export const normaliseTimestamp = (value: unknown): string | undefined => {
  if (typeof value !== "string" || value.length < 10) return undefined
  if (isCanonicalIso(value)) return value
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) || !value.includes("T") ? value : `${value}Z`
  const ms = Date.parse(zoned)
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined
}

/** The mutable builder behind one parse call. */
export class TurnAssembler {
  readonly stats: Counters
  private readonly turns: Array<MutableTurn> = []
  private readonly preamble: Array<RawRecord> = []
  private readonly sessions = new Map<string, MutableSession>()
  private open: MutableTurn | undefined
  private carried: OpenTurnState | undefined
  private nextOrdinal: number

  constructor(
    readonly source: TranscriptSource,
    firstOffset: number,
    nextOrdinal: number,
    openTurn: OpenTurnState | undefined,
    sessions: ReadonlyArray<TranscriptSession>,
  ) {
    this.nextOrdinal = nextOrdinal
    this.carried = openTurn
    for (const s of sessions) this.sessions.set(s.sessionId, { ...s })
    this.stats = {
      firstOffset,
      nextOffset: firstOffset,
      bytesRead: 0,
      lines: 0,
      blankLines: 0,
      malformedLines: 0,
      invalidRecords: 0,
      invalidUtf8Lines: 0,
      unknownRecordTypes: {},
      unknownFieldLines: 0,
      sidechainRecordsSkipped: 0,
      duplicateSurfaceDropped: 0,
      surfaceTexts: 0,
      rawRecords: 0,
      secretsMasked: 0,
      truncatedTail: false,
    }
  }

  /** Counts a line of an unknown record type. */
  unknownType(type: string): void {
    const counts = this.stats.unknownRecordTypes as Record<string, number>
    counts[type] = (counts[type] ?? 0) + 1
  }

  /** The summary of `sessionId`, created on first use. */
  session(sessionId: string): MutableSession {
    let s = this.sessions.get(sessionId)
    if (s === undefined) {
      s = { source: this.source, sessionId, headless: false, subagent: false }
      this.sessions.set(sessionId, s)
    }
    return s
  }

  /** Widens a session's time range with a record timestamp. */
  touch(sessionId: string, timestamp: string | undefined): void {
    if (timestamp === undefined) return
    const s = this.session(sessionId)
    if (s.startedAt === undefined || timestamp < s.startedAt) s.startedAt = timestamp
    if (s.endedAt === undefined || timestamp > s.endedAt) s.endedAt = timestamp
  }

  private openTurn(
    role: TurnRole,
    placement: LinePlacement,
    offset: number,
    fallbackId: string,
  ): MutableTurn {
    const turn: MutableTurn = {
      id: placement.idCandidate ?? fallbackId,
      sessionId: placement.sessionId,
      role,
      ordinal: this.nextOrdinal++,
      ...(placement.timestamp !== undefined ? { timestamp: placement.timestamp } : {}),
      startOffset: offset,
      endOffset: offset,
      sidechain: placement.sidechain,
      continued: false,
      surface: [],
      records: [],
    }
    this.turns.push(turn)
    this.open = turn
    this.carried = undefined
    return turn
  }

  /** The turn a non-opening line joins: the open one, or a continuation of the carried one. */
  private current(offset: number): MutableTurn | undefined {
    if (this.open !== undefined) return this.open
    const carried = this.carried
    if (carried === undefined) return undefined
    const turn: MutableTurn = {
      id: carried.id,
      sessionId: carried.sessionId,
      role: carried.role,
      ordinal: carried.ordinal,
      startOffset: offset,
      endOffset: offset,
      sidechain: carried.sidechain,
      continued: true,
      surface: [],
      records: [],
    }
    this.turns.push(turn)
    this.open = turn
    this.carried = undefined
    return turn
  }

  private currentMeta(): OpenTurnState | undefined {
    const t = this.open
    if (t !== undefined) {
      return {
        id: t.id,
        sessionId: t.sessionId,
        role: t.role,
        sidechain: t.sidechain,
        ordinal: t.ordinal,
      }
    }
    return this.carried
  }

  /** Places one decoded line: its raw record (if any) and surface texts. */
  place(
    placement: LinePlacement,
    offset: number,
    length: number,
    record: RawRecord | undefined,
    surface: ReadonlyArray<SurfaceText>,
    fallbackId: string,
  ): void {
    const meta = this.currentMeta()
    let turn: MutableTurn | undefined
    if (surface.some((s) => s.role === "user")) {
      turn = this.openTurn("user", placement, offset, fallbackId)
    } else if (
      placement.side === "assistant" &&
      (meta === undefined ||
        meta.role !== "assistant" ||
        meta.sessionId !== placement.sessionId ||
        meta.sidechain !== placement.sidechain)
    ) {
      turn = this.openTurn("assistant", placement, offset, fallbackId)
    } else {
      turn = this.current(offset)
    }
    if (record !== undefined) this.stats.rawRecords++
    this.stats.surfaceTexts += surface.length
    if (turn === undefined) {
      if (record !== undefined) this.preamble.push(record)
      return
    }
    if (record !== undefined) turn.records.push(record)
    turn.surface.push(...surface)
    turn.endOffset = offset + length
  }

  /** Freezes the call's output. */
  finish(): {
    readonly turns: ReadonlyArray<Turn>
    readonly preamble: ReadonlyArray<RawRecord>
    readonly sessions: ReadonlyArray<TranscriptSession>
    readonly openTurn: OpenTurnState | undefined
    readonly nextOrdinal: number
  } {
    return {
      turns: this.turns.map((t) => ({ ...t })),
      preamble: [...this.preamble],
      sessions: [...this.sessions.values()].map((s) => ({ ...s })),
      openTurn: this.currentMeta(),
      nextOrdinal: this.nextOrdinal,
    }
  }
}

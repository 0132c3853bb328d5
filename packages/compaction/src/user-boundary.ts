/**
 * The user-boundary fingerprint: a hash that changes when the user says something new (a new
 * turn, or steering inside the latest one) and stays put for turns without user text
 * (compaction turns, our own bookkeeping). Derived from the latest user turn's id, its start
 * time and the SHA-256 of its text. Pure; the text itself is never returned, stored or logged:
 * only its hash leaves this module. `threadUserBoundary` is the one reading of a `ThreadState`
 * that both the schedule path (the job's anchor) and the worker (new input) must use.
 */
import { createHash } from "node:crypto"
import { canonicalDigest } from "@baton/handoff"
import type { ThreadState } from "@baton/ipc-codex"

/** One turn as the boundary sees it; transports map their turn shapes onto this. */
export interface UserTurnView {
  /** Turn id, or the client's user-message id when the host has not assigned one yet. */
  readonly turnId: string | null
  readonly startedAtMs: number | null
  /** `inProgress`, `completed`, `interrupted`, `failed`, … */
  readonly status: string
  /** All user text of the turn (input plus user messages, in order), or null when it has none. */
  readonly userText: string | null
}

/** The boundary: the fingerprint and the facts behind it (no text). */
export interface UserBoundary {
  readonly fingerprint: string
  readonly turnId: string | null
  readonly startedAtMs: number | null
  readonly textSha256: string | null
  /** True when the latest user turn was interrupted or failed. */
  readonly stopped: boolean
}

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/** The fingerprint when the thread has no user turn at all. */
export const NO_USER_INPUT_FINGERPRINT = canonicalDigest({ boundary: 1, userTurn: null })

/**
 * The latest user turn (non-empty `userText`; latest `startedAtMs`, null counting as oldest;
 * on a tie the later entry wins) and its fingerprint.
 */
export const userBoundary = (turns: ReadonlyArray<UserTurnView>): UserBoundary => {
  let latest: UserTurnView | null = null
  for (const turn of turns) {
    if (turn.userText === null || turn.userText.length === 0) continue
    const a = turn.startedAtMs ?? Number.NEGATIVE_INFINITY
    const b = latest?.startedAtMs ?? Number.NEGATIVE_INFINITY
    if (latest === null || a >= b) latest = turn
  }
  if (latest === null || latest.userText === null)
    return {
      fingerprint: NO_USER_INPUT_FINGERPRINT,
      turnId: null,
      startedAtMs: null,
      textSha256: null,
      stopped: false,
    }
  const textSha256 = sha256(latest.userText)
  return {
    fingerprint: canonicalDigest({
      boundary: 1,
      turnId: latest.turnId,
      startedAtMs: latest.startedAtMs,
      textSha256,
    }),
    turnId: latest.turnId,
    startedAtMs: latest.startedAtMs,
    textSha256,
    stopped: latest.status === "interrupted" || latest.status === "failed",
  }
}

/** Item types that carry user text: a new message, or steering into the running turn. */
const USER_ITEM_TYPES: ReadonlySet<string> = new Set(["userMessage", "steeringUserMessage"])

/**
 * The user turns of a `ThreadState`: turns with a user message or steering item. The state carries
 * no text, so the item ids stand in for it (a new message or steering adds an id; an edit that
 * keeps the ids is not visible here). Turns are ordered as listed (start times are not compared).
 */
export const userTurnsOfState = (state: ThreadState): ReadonlyArray<UserTurnView> =>
  state.turns.flatMap((turn) => {
    const ids = turn.items.filter((i) => USER_ITEM_TYPES.has(i.type)).map((i) => i.id)
    return ids.length === 0
      ? []
      : [{ turnId: turn.id, startedAtMs: null, status: turn.status, userText: ids.join("\n") }]
  })

/** The user boundary of a thread state, as the worker judges it; anchor jobs with this. */
export const threadUserBoundary = (state: ThreadState): UserBoundary =>
  userBoundary(userTurnsOfState(state))

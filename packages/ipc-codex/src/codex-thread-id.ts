/**
 * The shape of a Codex thread id, checked before anything is spawned or connected to: Codex thread
 * ids are UUIDs (v7 for new threads). Pure.
 */
import { InvalidThreadIdError } from "./errors.js"

/** Codex thread ids are UUIDs (v7 for new threads). */
export const CODEX_THREAD_ID_PATTERN =
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True when `text` looks like a Codex thread id. */
export const isCodexThreadId = (text: string): boolean => CODEX_THREAD_ID_PATTERN.test(text)

/** The `InvalidThreadIdError` for `text`, or null when it looks like a Codex thread id. */
export const invalidThreadId = (text: string): InvalidThreadIdError | null =>
  isCodexThreadId(text) ? null : new InvalidThreadIdError({ value: text })

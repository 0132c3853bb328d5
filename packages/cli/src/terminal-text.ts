/**
 * Text from transcripts made inert for a terminal before it is printed: ANSI escape sequences
 * (colours in recorded tool output) are dropped, and every other control character — a NUL, a
 * bell, a lone carriage return, C1 controls — is shown as `\xNN` (`\r` for a carriage return)
 * instead of acting. Newlines and tabs stay; a CRLF line end becomes a newline. Pure; `--json`
 * output does not go through here (JSON escapes control characters itself).
 */

// eslint-disable-next-line no-control-regex
const ansiSequence = /\u001b\[[0-?]*[ -/]*[@-~]/g
// eslint-disable-next-line no-control-regex
const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/** `text` with control characters shown instead of acting (newlines and tabs kept). */
export const inertText = (text: string): string =>
  text
    .replace(ansiSequence, "")
    .replace(/\r\n/g, "\n")
    .replace(control, (c) =>
      c === "\r" ? "\\r" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
    )

/**
 * Text from transcripts and jobs made inert for a terminal before it is printed: a control
 * character — a NUL, a bell, an escape, a lone carriage return, C1 controls — is shown as `\xNN`
 * (`\r`, `\n`, `\t` by name) instead of acting. Pure; `--json` output does not go through here
 * (JSON escapes control characters itself).
 */

// eslint-disable-next-line no-control-regex
const ansiSequence = /\u001b\[[0-?]*[ -/]*[@-~]/g
// eslint-disable-next-line no-control-regex
const anyControl = /[\u0000-\u001f\u007f-\u009f]/g
// eslint-disable-next-line no-control-regex
const controlButLineBreaks = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

const named: Readonly<Record<string, string>> = { "\r": "\\r", "\n": "\\n", "\t": "\\t" }
const shown = (c: string): string =>
  named[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`

/**
 * Multi-line text (a transcript's turn) with control characters shown instead of acting:
 * newlines and tabs stay, a CRLF line end becomes a newline, and ANSI sequences (colours in
 * recorded tool output) are dropped.
 */
export const inertText = (text: string): string =>
  text.replace(ansiSequence, "").replace(/\r\n/g, "\n").replace(controlButLineBreaks, shown)

/**
 * Free text for one terminal line (a pause reason, an error detail): every control character,
 * newlines and ANSI escapes included, is shown (`\n`, `\x1b`) instead of acting.
 */
export const inertLine = (text: string): string => text.replace(anyControl, shown)

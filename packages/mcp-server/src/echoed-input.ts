/**
 * How much of a caller's argument a result repeats back. Guarantees: an error or a note never
 * carries more than {@link ECHO_CHARS} characters of one echoed string (a 5 MB session id came
 * back whole in its error), and a cut echo ends in `…` so it is not mistaken for the value.
 */

/** Longest echo of one string in an error's fields or a note. */
export const ECHO_CHARS = 200

/** `text` as echoed back: at most {@link ECHO_CHARS} characters, then `…` when cut. */
export const echoed = (text: string): string =>
  text.length > ECHO_CHARS ? `${text.slice(0, ECHO_CHARS)}…` : text

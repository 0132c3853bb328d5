/**
 * Splits a byte stream into newline-terminated lines with their byte offsets, without ever
 * holding more than the current line (pieces of a long line are kept as a list and joined once).
 * Guarantees: offsets are exact byte positions in the stream; a trailing `\r`, a UTF-8 BOM on
 * the first line of the file and NUL padding a crash left before a line's record are removed from
 * the text but counted in `length`; a final line
 * without newline is handed out only when the caller says the input is complete.
 */

/** One line: byte range `[offset, offset + length)` including its newline, and decoded text. */
export interface SplitLine {
  readonly offset: number
  readonly length: number
  readonly text: string
  readonly invalidUtf8: boolean
}

/** A push-based line splitter. */
export interface LineSplitter {
  readonly push: (chunk: Uint8Array) => void
  /** Flushes; returns the offset after the last line handed out and whether bytes were left over. */
  readonly end: (completeTail: boolean) => {
    readonly nextOffset: number
    readonly pending: boolean
  }
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const lenientDecoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true })

const decode = (bytes: Uint8Array): { text: string; invalidUtf8: boolean } => {
  try {
    return { text: strictDecoder.decode(bytes), invalidUtf8: false }
  } catch {
    return { text: lenientDecoder.decode(bytes), invalidUtf8: true }
  }
}

const concat = (pieces: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (pieces.length === 1) return pieces[0]!
  let size = 0
  for (const p of pieces) size += p.length
  const out = new Uint8Array(size)
  let at = 0
  for (const p of pieces) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const isPadding = (byte: number): boolean =>
  byte === 0x00 || byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0b || byte === 0x0c

/**
 * Where the line's text starts past leading NUL padding: a crash or power loss while a file is
 * appended to can leave a run of NUL bytes (the file grown, its data never written), and the agent
 * then appends its next record right after them, so that record's line starts with the NULs.
 * Leading NULs and whitespace (which JSON allows anyway) are skipped when at least one NUL is
 * among them and something else follows; a line of nothing but padding is kept as it is (not a
 * record: counted as a malformed line, as before). The byte range (`offset`, `length`) still
 * covers the whole line.
 */
const afterPadding = (body: Uint8Array, start: number, end: number): number => {
  if (start >= end || !isPadding(body[start]!)) return start
  let at = start
  let nul = false
  while (at < end && isPadding(body[at]!)) {
    if (body[at] === 0x00) nul = true
    at++
  }
  return nul && at < end ? at : start
}

/** Creates a splitter whose first byte sits at `startOffset` of the file. */
export const createLineSplitter = (
  startOffset: number,
  onLine: (line: SplitLine) => void,
): LineSplitter => {
  let lineStart = startOffset
  let pieces: Array<Uint8Array> = []
  let pendingSize = 0

  const emit = (body: Uint8Array, terminatorBytes: number): void => {
    let start = 0
    let end = body.length
    if (lineStart === 0 && end >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
      start = 3
    }
    if (end > start && body[end - 1] === 0x0d) end--
    start = afterPadding(body, start, end)
    const { text, invalidUtf8 } = decode(body.subarray(start, end))
    const length = body.length + terminatorBytes
    onLine({ offset: lineStart, length, text, invalidUtf8 })
    lineStart += length
  }

  return {
    push: (chunk) => {
      let from = 0
      for (;;) {
        const nl = chunk.indexOf(0x0a, from)
        if (nl === -1) break
        const tail = chunk.subarray(from, nl)
        const body = pieces.length === 0 ? tail : concat([...pieces, tail])
        pieces = []
        pendingSize = 0
        emit(body, 1)
        from = nl + 1
      }
      if (from < chunk.length) {
        // Copy: the caller may reuse its buffer.
        pieces.push(chunk.slice(from))
        pendingSize += chunk.length - from
      }
    },
    end: (completeTail) => {
      if (pendingSize > 0 && completeTail) {
        emit(concat(pieces), 0)
        pieces = []
        pendingSize = 0
      }
      return { nextOffset: lineStart, pending: pendingSize > 0 }
    },
  }
}

/**
 * Server-sent events framing as the OpenAI Responses API streams it: `event: <type>`, one
 * `data: <json>` line, a blank line. Encoding is what the mock server writes; decoding exists so
 * unit tests can read the mock's output back. Pure functions, no IO.
 */

/** One decoded server-sent event: its `event:` name and the parsed `data:` JSON. */
export interface SseEvent {
  readonly event: string
  readonly data: unknown
}

/** Frames one event: `event: <type>\ndata: <json>\n\n` (the JSON stays on one line). */
export const encodeSseEvent = (event: string, data: unknown): string =>
  `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

/**
 * Decodes a complete SSE body into events. Multi-line `data:` fields are joined with `\n`;
 * comment lines (`:`) are skipped; an event without data gets `data: undefined`; data that is not
 * JSON is kept as a string.
 */
export const decodeSseStream = (body: string): ReadonlyArray<SseEvent> => {
  const events: Array<SseEvent> = []
  for (const block of body.replace(/\r\n/g, "\n").split(/\n\n+/)) {
    if (block.trim() === "") continue
    let event = "message"
    const data: Array<string> = []
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue
      const colon = line.indexOf(":")
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "")
      if (field === "event") event = value
      else if (field === "data") data.push(value)
    }
    const text = data.join("\n")
    events.push({ event, data: data.length === 0 ? undefined : parseJsonOrText(text) })
  }
  return events
}

const parseJsonOrText = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/**
 * JSONL framing over a byte stream pair (a child's stdout/stdin): one message per `\n`-terminated
 * line. Lines may arrive split across chunks or several per chunk; a line longer than the limit is
 * discarded up to its newline and counted, never buffered without bound. Reading is driven by
 * 'data' events and never paused, so the peer is never blocked by Baton.
 */
import { StringDecoder } from "node:string_decoder"
import type { Readable, Writable } from "node:stream"
import * as Effect from "effect/Effect"
import type { TransportKind } from "./errors.js"
import { DisconnectedError } from "./errors.js"
import type { FrameLink, FrameSink } from "./json-rpc-connection.js"

/** Splits text chunks into lines with a length limit. */
export interface LineSplitter {
  /** Feeds one chunk; calls `onLine` for each complete line. */
  readonly push: (chunk: string) => void
  /** Lines dropped for exceeding the limit. */
  readonly oversized: () => number
}

/** Creates a line splitter; `maxLineLength` counts UTF-16 code units (default 64 MiB). */
export const makeLineSplitter = (
  onLine: (line: string) => void,
  maxLineLength = 64 * 1024 * 1024,
): LineSplitter => {
  let buffer = ""
  let discarding = false
  let oversized = 0
  return {
    push: (chunk) => {
      let rest = chunk
      while (rest.length > 0) {
        const newline = rest.indexOf("\n")
        if (newline === -1) {
          if (!discarding) buffer += rest
          if (buffer.length > maxLineLength) {
            buffer = ""
            discarding = true
            oversized++
          }
          return
        }
        const piece = rest.slice(0, newline)
        rest = rest.slice(newline + 1)
        if (discarding) {
          discarding = false
          continue
        }
        const line = buffer + piece
        buffer = ""
        if (line.length > maxLineLength) {
          oversized++
          continue
        }
        const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line
        if (trimmed.trim().length > 0) onLine(trimmed)
      }
    },
    oversized: () => oversized,
  }
}

/** Options of `jsonlFrameLink`. */
export interface JsonlLinkOptions {
  readonly transport: TransportKind
  readonly input: Readable
  readonly output: Writable
  readonly sink: FrameSink
  readonly maxLineLength?: number
  /** Extra text for the close reason (e.g. the process's exit status and stderr tail). */
  readonly describeClose?: () => string
}

/** Wires a readable/writable pair as a JSONL frame link. The caller owns the streams' lifetime. */
export const jsonlFrameLink = (
  options: JsonlLinkOptions,
): FrameLink & { readonly splitter: LineSplitter } => {
  const decoder = new StringDecoder("utf8")
  const splitter = makeLineSplitter(options.sink.frame, options.maxLineLength)
  let open = true
  const closed = (why: string) => {
    if (!open) return
    open = false
    const extra = options.describeClose?.() ?? ""
    options.sink.closed(extra === "" ? why : `${why}; ${extra}`)
  }
  options.input.on("data", (chunk: Buffer | string) =>
    splitter.push(typeof chunk === "string" ? chunk : decoder.write(chunk)),
  )
  options.input.on("end", () => closed("stdout closed"))
  options.input.on("close", () => closed("stdout closed"))
  options.input.on("error", (error) => closed(`stdout error: ${error.message}`))
  options.output.on("error", (error) => closed(`stdin error: ${error.message}`))
  return {
    splitter,
    oversizedFrames: splitter.oversized,
    send: (frame) =>
      Effect.suspend(() => {
        if (!open || options.output.writableEnded || options.output.destroyed) {
          return Effect.fail(
            new DisconnectedError({
              transport: options.transport,
              reason: "stdin closed",
              outcomeMayBeUnknown: false,
            }),
          )
        }
        options.output.write(`${frame}\n`)
        return Effect.void
      }),
    close: Effect.sync(() => {
      if (!options.output.writableEnded) options.output.end()
    }),
  }
}

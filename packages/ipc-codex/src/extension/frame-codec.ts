/**
 * Length-prefixed JSON frames of the extension IPC: a 4-byte little-endian uint32 body length,
 * then that many bytes of UTF-8 JSON. No newline delimiting.
 * Guarantees of {@link FrameDecoder}:
 * - frames split anywhere (inside the header too, byte by byte) or packed several per chunk
 *   decode to the same messages in order;
 * - a declared length of 0 or above `maxFrameBytes` is fatal ({@link FrameEmptyError},
 *   {@link FrameTooLargeError}) and is detected from the header alone, so an oversized frame
 *   is never buffered; after a fatal error the decoder accepts nothing more;
 * - a body that is not UTF-8 JSON is skipped ({@link FrameInvalidJsonError}) without losing
 *   sync, because its length was valid;
 * - buffered bytes never exceed `maxFrameBytes + 4` plus the current chunk.
 * Pure, synchronous and never throws.
 */
import * as Result from "effect/Result"
import {
  FrameEmptyError,
  FrameEncodeError,
  FrameInvalidJsonError,
  FrameTooLargeError,
} from "./errors.js"
import type { FrameFatalError } from "./errors.js"

/** Bytes in a frame header. */
export const FRAME_HEADER_BYTES = 4

/** Default frame cap: 256 MiB, as Rekall and the extension's own reader use. */
export const DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Frames the UTF-8 JSON text of `message` (fails on non-JSON values or over the cap). */
export const encodeFrame = (
  message: unknown,
  maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES,
): Result.Result<Uint8Array, FrameEncodeError | FrameTooLargeError> => {
  let text: string | undefined
  try {
    text = JSON.stringify(message)
  } catch (cause) {
    return Result.fail(
      new FrameEncodeError({ problem: cause instanceof Error ? cause.message : String(cause) }),
    )
  }
  if (text === undefined)
    return Result.fail(new FrameEncodeError({ problem: "value has no JSON form" }))
  const body = utf8Encoder.encode(text)
  if (body.byteLength > maxFrameBytes)
    return Result.fail(
      new FrameTooLargeError({
        bytes: body.byteLength,
        maxBytes: maxFrameBytes,
        direction: "outgoing",
      }),
    )
  const frame = new Uint8Array(FRAME_HEADER_BYTES + body.byteLength)
  new DataView(frame.buffer).setUint32(0, body.byteLength, true)
  frame.set(body, FRAME_HEADER_BYTES)
  return Result.succeed(frame)
}

/** Frames an already-serialised body as is (test support: invalid JSON, exact bytes). */
export const frameBytes = (body: Uint8Array): Uint8Array => {
  const frame = new Uint8Array(FRAME_HEADER_BYTES + body.byteLength)
  new DataView(frame.buffer).setUint32(0, body.byteLength, true)
  frame.set(body, FRAME_HEADER_BYTES)
  return frame
}

/** What one `push` produced: decoded messages, skipped frames, and at most one fatal error. */
export interface DecodeStep {
  readonly messages: ReadonlyArray<unknown>
  readonly skipped: ReadonlyArray<FrameInvalidJsonError>
  readonly fatal: FrameFatalError | undefined
}

/** Streaming decoder for one connection. Feed it every chunk, in order. */
export class FrameDecoder {
  private chunks: Array<Uint8Array> = []
  private buffered = 0
  private expected: number | undefined = undefined
  private failed: FrameFatalError | undefined = undefined

  constructor(private readonly maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES) {}

  /** Bytes held while waiting for the rest of a frame. */
  get bufferedBytes(): number {
    return this.buffered
  }

  /** Consumes one chunk and returns every message it completed. */
  push(chunk: Uint8Array): DecodeStep {
    const messages: Array<unknown> = []
    const skipped: Array<FrameInvalidJsonError> = []
    if (this.failed !== undefined) return { messages, skipped, fatal: this.failed }
    if (chunk.byteLength > 0) {
      this.chunks.push(chunk)
      this.buffered += chunk.byteLength
    }
    for (;;) {
      if (this.expected === undefined) {
        if (this.buffered < FRAME_HEADER_BYTES) break
        const header = this.take(FRAME_HEADER_BYTES)
        const length = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(
          0,
          true,
        )
        if (length === 0) return this.fail(new FrameEmptyError(), messages, skipped)
        if (length > this.maxFrameBytes)
          return this.fail(
            new FrameTooLargeError({
              bytes: length,
              maxBytes: this.maxFrameBytes,
              direction: "incoming",
            }),
            messages,
            skipped,
          )
        this.expected = length
      }
      if (this.buffered < this.expected) break
      const body = this.take(this.expected)
      this.expected = undefined
      const parsed = parseBody(body)
      if (parsed._tag === "Success") messages.push(parsed.success)
      else skipped.push(parsed.failure)
    }
    return { messages, skipped, fatal: undefined }
  }

  private fail(
    error: FrameFatalError,
    messages: Array<unknown>,
    skipped: Array<FrameInvalidJsonError>,
  ): DecodeStep {
    this.failed = error
    this.chunks = []
    this.buffered = 0
    this.expected = undefined
    return { messages, skipped, fatal: error }
  }

  /** Removes exactly `n` buffered bytes (the caller checked `buffered >= n`). */
  private take(n: number): Uint8Array {
    const first = this.chunks[0]
    if (first !== undefined && first.byteLength >= n) {
      const out = first.subarray(0, n)
      if (first.byteLength === n) this.chunks.shift()
      else this.chunks[0] = first.subarray(n)
      this.buffered -= n
      return out
    }
    const out = new Uint8Array(n)
    let filled = 0
    let used = 0
    while (filled < n) {
      const chunk = this.chunks[used]
      if (chunk === undefined) break
      const need = n - filled
      if (chunk.byteLength <= need) {
        out.set(chunk, filled)
        filled += chunk.byteLength
        used += 1
      } else {
        out.set(chunk.subarray(0, need), filled)
        this.chunks[used] = chunk.subarray(need)
        filled += need
      }
    }
    this.chunks.splice(0, used)
    this.buffered -= n
    return out
  }
}

const parseBody = (body: Uint8Array): Result.Result<unknown, FrameInvalidJsonError> => {
  try {
    return Result.succeed(JSON.parse(utf8Decoder.decode(body)) as unknown)
  } catch (cause) {
    const problem = cause instanceof Error ? cause.name : "unparseable"
    return Result.fail(new FrameInvalidJsonError({ bytes: body.byteLength, problem }))
  }
}

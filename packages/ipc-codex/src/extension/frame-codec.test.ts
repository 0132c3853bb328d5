import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeFrame, FrameDecoder, frameBytes } from "./frame-codec.js"

const encode = (message: unknown, max?: number): Uint8Array => {
  const frame = encodeFrame(message, max)
  if (frame._tag === "Failure") throw new Error(frame.failure.message)
  return frame.success
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.byteLength
  }
  return out
}

/** Cuts `bytes` at the given (sorted, deduplicated) offsets. */
const cut = (bytes: Uint8Array, offsets: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(offsets.map((o) => o % (bytes.byteLength + 1)))].sort((a, b) => a - b)
  const pieces: Array<Uint8Array> = []
  let last = 0
  for (const point of [...points, bytes.byteLength]) {
    pieces.push(bytes.subarray(last, point))
    last = point
  }
  return pieces
}

const decodeAll = (decoder: FrameDecoder, pieces: ReadonlyArray<Uint8Array>): Array<unknown> =>
  pieces.flatMap((piece) => {
    const step = decoder.push(piece)
    expect(step.fatal).toBeUndefined()
    expect(step.skipped).toEqual([])
    return [...step.messages]
  })

describe("encodeFrame", () => {
  it("writes a 4-byte little-endian length of the UTF-8 body", () => {
    const frame = encode({ text: "héllo ✓" })
    const body = new TextEncoder().encode(JSON.stringify({ text: "héllo ✓" }))
    expect(frame.byteLength).toBe(4 + body.byteLength)
    expect(new DataView(frame.buffer).getUint32(0, true)).toBe(body.byteLength)
    expect([...frame.subarray(0, 4)]).toEqual([
      body.byteLength & 0xff,
      (body.byteLength >> 8) & 0xff,
      0,
      0,
    ])
    expect(new TextDecoder().decode(frame.subarray(4))).toBe(JSON.stringify({ text: "héllo ✓" }))
  })

  it("refuses messages over the cap and values without JSON form", () => {
    const big = encodeFrame({ data: "x".repeat(100) }, 50)
    expect(big._tag === "Failure" && big.failure._tag).toBe("FrameTooLargeError")
    const bigint = encodeFrame({ n: 1n })
    expect(bigint._tag === "Failure" && bigint.failure._tag).toBe("FrameEncodeError")
    const nothing = encodeFrame(undefined)
    expect(nothing._tag === "Failure" && nothing.failure._tag).toBe("FrameEncodeError")
  })
})

describe("FrameDecoder", () => {
  const messages = [{ type: "response", requestId: "a" }, { n: 1 }, ["x", { y: null }], "s", 42]
  const stream = concat(messages.map((m) => encode(m)))

  it("decodes several frames packed in one chunk", () => {
    expect(decodeAll(new FrameDecoder(), [stream])).toEqual(messages)
  })

  it("decodes frames split after two header bytes", () => {
    const pieces = messages.flatMap((m) => {
      const frame = encode(m)
      return [frame.subarray(0, 2), frame.subarray(2)]
    })
    expect(decodeAll(new FrameDecoder(), pieces)).toEqual(messages)
  })

  it("decodes a stream fed byte by byte", () => {
    const pieces = Array.from(stream, (_, i) => stream.subarray(i, i + 1))
    expect(decodeAll(new FrameDecoder(), pieces)).toEqual(messages)
  })

  it("treats a zero-length frame as fatal and accepts nothing after it", () => {
    const decoder = new FrameDecoder()
    const step = decoder.push(concat([encode({ a: 1 }), new Uint8Array(4), encode({ b: 2 })]))
    expect(step.messages).toEqual([{ a: 1 }])
    expect(step.fatal?._tag).toBe("FrameEmptyError")
    const after = decoder.push(encode({ c: 3 }))
    expect(after.messages).toEqual([])
    expect(after.fatal?._tag).toBe("FrameEmptyError")
    expect(decoder.bufferedBytes).toBe(0)
  })

  it("rejects an oversized frame from its header alone, without buffering the body", () => {
    const decoder = new FrameDecoder(1024)
    const header = new Uint8Array(4)
    new DataView(header.buffer).setUint32(0, 1025, true)
    const step = decoder.push(header)
    expect(step.fatal?._tag).toBe("FrameTooLargeError")
    expect(step.fatal?.message).toContain("1025")
    expect(decoder.bufferedBytes).toBe(0)
    expect(decoder.push(new Uint8Array(5000)).fatal?._tag).toBe("FrameTooLargeError")
    expect(decoder.bufferedBytes).toBe(0)
  })

  it("accepts a frame exactly at the cap", () => {
    const frame = encode("x".repeat(98))
    expect(frame.byteLength - 4).toBe(100)
    expect(decodeAll(new FrameDecoder(100), [frame])).toEqual(["x".repeat(98)])
  })

  it("skips a frame that is not JSON or not UTF-8 and stays in sync", () => {
    const decoder = new FrameDecoder()
    const step = decoder.push(
      concat([
        frameBytes(new TextEncoder().encode("{broken")),
        frameBytes(new Uint8Array([0xff, 0xfe])),
        encode({ ok: 1 }),
      ]),
    )
    expect(step.fatal).toBeUndefined()
    expect(step.messages).toEqual([{ ok: 1 }])
    expect(step.skipped.map((s) => s._tag)).toEqual([
      "FrameInvalidJsonError",
      "FrameInvalidJsonError",
    ])
    expect(step.skipped[0]!.message).not.toContain("broken")
  })

  it("property: any messages, re-chunked anywhere, decode to the same messages", () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (values, offsets) => {
          const expected = values.map((v) => JSON.parse(JSON.stringify(v)) as unknown)
          const bytes = concat(values.map((v) => encode(v)))
          expect(decodeAll(new FrameDecoder(), cut(bytes, offsets))).toEqual(expected)
        },
      ),
      { numRuns: 300 },
    )
  })

  it("property: buffered bytes stay below the cap plus one chunk", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 60 }), { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (values, offsets) => {
          const cap = 64
          const decoder = new FrameDecoder(cap)
          const bytes = concat(
            values.map((v) => frameBytes(new TextEncoder().encode(JSON.stringify(v)))),
          )
          for (const piece of cut(bytes, offsets)) {
            const step = decoder.push(piece)
            if (step.fatal !== undefined) return
            expect(decoder.bufferedBytes).toBeLessThanOrEqual(cap + 4 + piece.byteLength)
          }
        },
      ),
    )
  })
})

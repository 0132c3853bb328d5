import { describe, expect, it } from "vitest"
import { seededRandom } from "./testing/seeded-random.js"
import {
  makeSignScanner,
  scanSignSegments,
  signScanModule,
  streamSignScanner,
} from "./sign-scan.js"
import type { SignSegment } from "./sign-scan.js"
import { bitBytes, scoreSignBits, signLookupTable, writeSignBits } from "./vector-codes.js"

const vector = (next: () => number, dim: number) =>
  Float32Array.from({ length: dim }, () => next() - 0.5)

/** Segments of the given sizes with random codes against a random centre, and a query table. */
const fixture = (seed: number, dim: number, sizes: ReadonlyArray<number>) => {
  const next = seededRandom(seed).next
  const bytes = bitBytes(dim)
  const center = vector(next, dim).map((x) => x / 4)
  let key = 1
  const segments: SignSegment[] = sizes.map((count) => {
    const bits = new Uint8Array(count * bytes)
    const keys = new Int32Array(count)
    for (let i = 0; i < count; i++) {
      writeSignBits(vector(next, dim), center, bits, i * bytes)
      keys[i] = key
      key += 1 + Math.floor(next() * 3)
    }
    return { count, keys, bits }
  })
  const tables = Array.from({ length: 3 }, () => signLookupTable(vector(next, dim), center))
  return { bytes, segments, tables }
}

/** The scores `scoreSignBits` gives, segment by segment. */
const reference = (segments: ReadonlyArray<SignSegment>, bytes: number, table: Float64Array) =>
  segments.flatMap((s) => {
    const out = new Float32Array(s.count)
    scoreSignBits(s.bits, s.count, bytes, table, out)
    return [...out]
  })

describe("makeSignScanner", () => {
  it("loads the shipped module", () => {
    expect(signScanModule()).not.toBeNull()
  })

  it("scores bit-identically in WebAssembly and JavaScript, keys in segment order", () => {
    for (const [seed, dim, sizes] of [
      [1, 512, [4096, 4096, 17]],
      [2, 32, [1, 2, 3]],
      [3, 64, [300]],
      [4, 512, []],
    ] as const) {
      const { bytes, segments, tables } = fixture(seed, dim, sizes)
      const wasm = makeSignScanner(segments, bytes)
      const js = makeSignScanner(segments, bytes, { useWasm: false })
      expect(wasm.kind).toBe("wasm")
      expect(js.kind).toBe("js")
      const total = sizes.reduce((a, b) => a + b, 0)
      expect(wasm.count).toBe(total)
      expect([...wasm.keys]).toEqual(segments.flatMap((s) => [...s.keys]))
      expect([...js.keys]).toEqual([...wasm.keys])
      for (const table of tables) {
        const want = reference(segments, bytes, table)
        // Repeated scans reuse the buffers: each must be whole.
        expect([...wasm.scan(table)]).toEqual(want)
        expect([...js.scan(table)]).toEqual(want)
      }
    }
  })

  it("uses JavaScript when the code size is not a multiple of 4 bytes", () => {
    const { bytes, segments, tables } = fixture(5, 48, [10, 7])
    const scanner = makeSignScanner(segments, bytes)
    expect(scanner.kind).toBe("js")
    expect([...scanner.scan(tables[0]!)]).toEqual(reference(segments, bytes, tables[0]!))
  })

  it("streams segments read once to the same scanner, and stops at the count it was given", () => {
    const { bytes, segments, tables } = fixture(7, 512, [4096, 100, 3])
    const table = tables[0]!
    for (const useWasm of [true, false]) {
      let read = 0
      function* once(): Generator<SignSegment> {
        for (const s of segments) {
          read += 1
          yield s
        }
      }
      const whole = makeSignScanner(segments, bytes, { useWasm })
      const streamed = streamSignScanner(4199, once(), bytes, { useWasm })
      expect(read).toBe(3)
      expect(streamed.kind).toBe(useWasm ? "wasm" : "js")
      expect([...streamed.keys]).toEqual([...whole.keys])
      expect([...streamed.scan(table)]).toEqual([...whole.scan(table)])
      // A count short of the stream takes the first codes and reads no further segment.
      read = 0
      const first = streamSignScanner(4096, once(), bytes, { useWasm })
      expect(read).toBe(2)
      expect(first.count).toBe(4096)
      expect([...first.scan(table)]).toEqual(reference(segments.slice(0, 1), bytes, table))
      // A stream short of the count (rows gone meanwhile) gives the codes it had.
      const short = streamSignScanner(5000, segments.slice(1), bytes, { useWasm })
      expect(short.count).toBe(103)
      expect([...short.keys]).toEqual(segments.slice(1).flatMap((s) => [...s.keys]))
      expect([...short.scan(table)]).toEqual(reference(segments.slice(1), bytes, table))
    }
  })

  it("holds the bits once, in the module's memory", () => {
    const { bytes, segments } = fixture(6, 512, [4096, 4096])
    const wasm = makeSignScanner(segments, bytes)
    const bitsHeld = 8192 * bytes
    expect(wasm.bytes).toBeGreaterThanOrEqual(bitsHeld + 8192 * 4)
    expect(wasm.bytes).toBeLessThan(bitsHeld * 1.5)
  })
})

describe("scanSignSegments", () => {
  it("gives each segment's keys and the scores a scanner gives, in WebAssembly and JavaScript", () => {
    for (const [seed, dim, sizes] of [
      // Growing segments make the WebAssembly path take a larger memory mid-stream.
      [8, 512, [17, 4096, 4096, 3]],
      [9, 64, [300, 1]],
      [10, 48, [5, 9]],
      [11, 512, []],
    ] as const) {
      const { bytes, segments, tables } = fixture(seed, dim, sizes)
      for (const useWasm of [true, false]) {
        for (const table of tables) {
          const keys: number[] = []
          const scores: number[] = []
          const counts: number[] = []
          scanSignSegments(
            segments,
            bytes,
            table,
            (k, s, count) => {
              counts.push(count)
              keys.push(...k.subarray(0, count))
              scores.push(...s.subarray(0, count))
            },
            { useWasm },
          )
          expect(counts).toEqual([...sizes])
          expect(keys).toEqual(segments.flatMap((s) => [...s.keys]))
          expect(scores).toEqual(reference(segments, bytes, table))
          expect(scores).toEqual([...makeSignScanner(segments, bytes, { useWasm }).scan(table)])
        }
      }
    }
  })
})

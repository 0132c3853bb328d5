import { describe, expect, it } from "vitest"
import {
  bitBytes,
  decodeInt8,
  decodeInt8Into,
  dotInt8,
  int8Code,
  scoreSignBits,
  signLookupTable,
  TopScores,
  writeSignBits,
} from "./vector-codes.js"

/** A deterministic generator (xorshift32) so failures reproduce. */
const generator = (seed: number) => {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 0x1_0000_0000
  }
}

const unitVector = (next: () => number, dim: number): Float32Array => {
  const v = new Float32Array(dim)
  let norm = 0
  for (let i = 0; i < dim; i++) {
    v[i] = next() - 0.5
    norm += v[i]! * v[i]!
  }
  norm = Math.sqrt(norm)
  for (let i = 0; i < dim; i++) v[i]! /= norm
  return v
}

const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

describe("int8 codes", () => {
  it("rescore within 1e-2 of the float dot product and decode to the vector", () => {
    const next = generator(7)
    for (let n = 0; n < 200; n++) {
      const a = unitVector(next, 64)
      const b = unitVector(next, 64)
      const code = int8Code(b)
      expect(code.byteLength).toBe(4 + 64)
      expect(Math.abs(dotInt8(a, code) - dot(a, b))).toBeLessThan(1e-2)
      const back = decodeInt8(code, 64)
      for (let i = 0; i < 64; i++) expect(Math.abs(back[i]! - b[i]!)).toBeLessThan(0.01)
    }
  })

  it("decode into a reused buffer exactly as into a fresh one", () => {
    const next = generator(9)
    const scratch = new Float32Array(64).fill(Number.NaN)
    for (let n = 0; n < 50; n++) {
      // A code inside a larger buffer, at an odd offset, as SQLite rows can hand them over.
      const code = int8Code(unitVector(next, 64))
      const host = new Uint8Array(code.byteLength + 3)
      host.set(code, 3)
      const at = host.subarray(3)
      expect(decodeInt8Into(at, 64, scratch)).toBe(scratch)
      expect([...scratch]).toEqual([...decodeInt8(code, 64)])
    }
  })

  it("code a zero vector as zeros", () => {
    const code = int8Code(new Float32Array(16))
    expect(dotInt8(new Float32Array(16).fill(1), code)).toBe(0)
  })
})

describe("sign bits", () => {
  it("set bit i of byte j for dimension 8j + i above the centre", () => {
    const v = new Float32Array(16)
    v[0] = 1
    v[9] = 0.5
    v[15] = 0.2
    const center = new Float32Array(16)
    center[15] = 0.3 // below its centre: not set
    const out = new Uint8Array(bitBytes(16) + 1)
    writeSignBits(v, center, out, 1)
    expect([...out]).toEqual([0, 0b0000_0001, 0b0000_0010])
  })

  it("score through the lookup table exactly as Σ ±(q − c)ᵢ", () => {
    const next = generator(11)
    const dim = 32
    const center = unitVector(next, dim).map((x) => x / 4)
    const query = unitVector(next, dim)
    const table = signLookupTable(query, center)
    const stored = Array.from({ length: 20 }, () => unitVector(next, dim))
    const bits = new Uint8Array(stored.length * bitBytes(dim))
    stored.forEach((v, i) => writeSignBits(v, center, bits, i * bitBytes(dim)))
    const scores = new Float32Array(stored.length)
    scoreSignBits(bits, stored.length, bitBytes(dim), table, scores)
    stored.forEach((v, n) => {
      let want = 0
      for (let i = 0; i < dim; i++) {
        const q = query[i]! - center[i]!
        want += v[i]! > center[i]! ? q : -q
      }
      expect(scores[n]).toBeCloseTo(want, 4)
    })
  })
})

describe("TopScores", () => {
  it("keeps the best `size` of a stream, best first, ties by id", () => {
    const next = generator(3)
    const entries = Array.from({ length: 500 }, (_, id) => ({
      id,
      score: Math.round(next() * 50), // many ties
    }))
    const top = new TopScores(25)
    for (const e of entries) top.offer(e.id, e.score)
    const want = [...entries].sort((a, b) => b.score - a.score || a.id - b.id).slice(0, 25)
    const got = top.sorted()
    expect(got.map((g) => g.score)).toEqual(want.map((w) => w.score))
    // Among equal scores at the cut, which ids survive depends on arrival; above it, all do.
    const cut = want.at(-1)!.score
    expect(got.filter((g) => g.score > cut)).toEqual(want.filter((w) => w.score > cut))
    expect(top.floor).toBe(cut)
  })

  it("is empty-safe and reports −∞ until full", () => {
    const top = new TopScores(3)
    expect(top.floor).toBe(-Infinity)
    top.offer(1, 0.5)
    expect(top.sorted()).toEqual([{ id: 1, score: 0.5 }])
    expect(new TopScores(0).sorted()).toEqual([])
  })
})

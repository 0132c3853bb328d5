/**
 * Compact codes for fast approximate nearest-neighbour search, kept beside each embedder's vec0
 * table (`vector-code-store.ts` stores them; `vector-search.ts` scans them). Two codes per vector:
 * - **sign bits** of the vector minus a centre (one bit per dimension), scanned for every stored
 *   vector with an *asymmetric* score: the float query against the signs, through a per-byte
 *   lookup table (dim / 8 table reads per vector). Centring matters: sign bits of raw
 *   bag-of-words vectors are nearly constant on the common component and carry little;
 * - an **int8 code** (one float scale + dim int8 values) that rescores the first pass's pool to
 *   within about 1e-3 of the float cosine similarity.
 * All functions are pure and allocation-light; nothing here touches storage.
 */

/** Bytes of the sign-bit code of a `dim`-dimensional vector (dim must be a multiple of 8). */
export const bitBytes = (dim: number): number => dim / 8

/** Bytes of the int8 code of a `dim`-dimensional vector: a float32 scale, then dim int8 values. */
export const int8Bytes = (dim: number): number => 4 + dim

/** Sign bits of `vector − center`, written at `out[offset..]` (bit i of byte j is dimension 8j+i). */
export const writeSignBits = (
  vector: Float32Array,
  center: Float32Array,
  out: Uint8Array,
  offset: number,
): void => {
  const bytes = vector.length >> 3
  for (let j = 0; j < bytes; j++) {
    let byte = 0
    const base = j << 3
    for (let i = 0; i < 8; i++) {
      if ((vector[base + i] ?? 0) > (center[base + i] ?? 0)) byte |= 1 << i
    }
    out[offset + j] = byte
  }
}

/** The int8 code of `vector`: scale = max |x| / 127, values = round(x / scale). */
export const int8Code = (vector: Float32Array): Uint8Array => {
  const out = new Uint8Array(int8Bytes(vector.length))
  let max = 0
  for (let i = 0; i < vector.length; i++) max = Math.max(max, Math.abs(vector[i] ?? 0))
  const scale = max === 0 ? 0 : max / 127
  new DataView(out.buffer).setFloat32(0, scale, true)
  const values = new Int8Array(out.buffer, 4, vector.length)
  for (let i = 0; i < vector.length; i++) {
    values[i] = scale === 0 ? 0 : Math.round((vector[i] ?? 0) / scale)
  }
  return out
}

/** Decodes an int8 code back to floats (for centre recomputation). */
export const decodeInt8 = (code: Uint8Array, dim: number): Float32Array =>
  decodeInt8Into(code, dim, new Float32Array(dim))

/**
 * {@link decodeInt8} into `out` (length ≥ `dim`), which it returns: a loop over many codes reuses
 * one buffer instead of allocating one per code.
 */
export const decodeInt8Into = (code: Uint8Array, dim: number, out: Float32Array): Float32Array => {
  const scale = new DataView(code.buffer, code.byteOffset, code.byteLength).getFloat32(0, true)
  const values = new Int8Array(code.buffer, code.byteOffset + 4, dim)
  for (let i = 0; i < dim; i++) out[i] = (values[i] ?? 0) * scale
  return out
}

/** Dot product of a float query with an int8 code (≈ the float dot product). */
export const dotInt8 = (query: Float32Array, code: Uint8Array): number => {
  const dim = query.length
  if (code.byteLength < 4 + dim) return 0
  const view = new DataView(code.buffer, code.byteOffset, code.byteLength)
  const values = new Int8Array(code.buffer, code.byteOffset + 4, dim)
  let dot = 0
  for (let i = 0; i < dim; i++) dot += query[i]! * values[i]!
  return dot * view.getFloat32(0, true)
}

/**
 * The asymmetric lookup table of a query: for byte position j and byte value b, the sum over the
 * 8 dimensions of byte j of ±(q − c)ᵢ (+ when bit i of b is set). A stored vector's score is the
 * sum of dim / 8 table entries; higher means nearer.
 */
export const signLookupTable = (query: Float32Array, center: Float32Array): Float64Array => {
  const bytes = query.length >> 3
  const table = new Float64Array(bytes * 256)
  const q = new Float32Array(8)
  for (let j = 0; j < bytes; j++) {
    for (let i = 0; i < 8; i++) q[i] = (query[(j << 3) + i] ?? 0) - (center[(j << 3) + i] ?? 0)
    const row = j << 8
    for (let b = 0; b < 256; b++) {
      let s = 0
      for (let i = 0; i < 8; i++) s += b & (1 << i) ? q[i]! : -q[i]!
      table[row + b] = s
    }
  }
  return table
}

/**
 * Scores `count` sign codes packed in `bits` (each `bytes` long) with a lookup table; writes the
 * scores to `out[0..count)`. Reads 32-bit words when `bytes` is a multiple of 4 and `bits` is
 * aligned (measured about 2× faster than byte reads), bytes otherwise.
 */
export const scoreSignBits = (
  bits: Uint8Array,
  count: number,
  bytes: number,
  table: Float64Array,
  out: Float32Array,
): void => {
  if (bytes % 4 === 0 && bits.byteOffset % 4 === 0) {
    scoreWords(
      new Uint32Array(bits.buffer, bits.byteOffset, (count * bytes) >> 2),
      count,
      bytes,
      table,
      out,
    )
    return
  }
  for (let v = 0, at = 0; v < count; v++) {
    let s = 0
    for (let j = 0; j < bytes; j++, at++) s += table[(j << 8) | bits[at]!]!
    out[v] = s
  }
}

/** Little-endian 32-bit words: byte k of a word is byte position j + k of the code. */
const scoreWords = (
  words: Uint32Array,
  count: number,
  bytes: number,
  table: Float64Array,
  out: Float32Array,
): void => {
  for (let v = 0, at = 0; v < count; v++) {
    let s0 = 0
    let s1 = 0
    for (let j = 0; j < bytes; j += 4, at++) {
      const x = words[at]!
      s0 += table[(j << 8) | (x & 255)]! + table[((j + 1) << 8) | ((x >>> 8) & 255)]!
      s1 += table[((j + 2) << 8) | ((x >>> 16) & 255)]! + table[((j + 3) << 8) | (x >>> 24)]!
    }
    out[v] = s0 + s1
  }
}

/**
 * Keeps the `size` best (highest) scores seen through {@link offer}: a bounded min-heap, O(log
 * size) per accepted entry and O(1) per rejected one.
 */
export class TopScores {
  private readonly scores: Float64Array
  private readonly ids: Float64Array
  private length = 0

  constructor(readonly size: number) {
    this.scores = new Float64Array(Math.max(1, size))
    this.ids = new Float64Array(Math.max(1, size))
  }

  /** The lowest score kept, or −∞ while not full. */
  get floor(): number {
    return this.length < this.size ? -Infinity : this.scores[0]!
  }

  /** Offers one (id, score). */
  offer(id: number, score: number): void {
    if (this.size <= 0) return
    if (this.length < this.size) {
      let i = this.length++
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (this.scores[parent]! <= score) break
        this.scores[i] = this.scores[parent]!
        this.ids[i] = this.ids[parent]!
        i = parent
      }
      this.scores[i] = score
      this.ids[i] = id
      return
    }
    if (score <= this.scores[0]!) return
    let i = 0
    const n = this.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && this.scores[right]! < this.scores[left]! ? right : left
      if (this.scores[child]! >= score) break
      this.scores[i] = this.scores[child]!
      this.ids[i] = this.ids[child]!
      i = child
    }
    this.scores[i] = score
    this.ids[i] = id
  }

  /** The kept entries, best first (ties by id ascending). */
  sorted(): Array<{ readonly id: number; readonly score: number }> {
    const out: Array<{ id: number; score: number }> = []
    for (let i = 0; i < this.length; i++) out.push({ id: this.ids[i]!, score: this.scores[i]! })
    return out.sort((a, b) => b.score - a.score || a.id - b.id)
  }
}

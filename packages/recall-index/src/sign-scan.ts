/**
 * The sign-bit first pass over every stored code of one embedder: {@link SignScanner} holds the
 * codes (keys and bits, in segment order) and scores them all against a query's lookup table
 * (`signLookupTable` in `vector-codes.ts`). Two implementations with bit-identical scores:
 * WebAssembly (`assets/sign-scan.wasm`, built from `assets/sign-scan.wat`; about 2× the
 * JavaScript loop, measured 6.4 vs 14 ms over 100 k codes of 64 bytes), used when the code size
 * is a multiple of 4 bytes and the module compiles, and `scoreSignBits` otherwise. The bits live
 * in the module's own memory, not also in JavaScript. Pure compute after construction.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { scoreSignBits } from "./vector-codes.js"

// Node has WebAssembly; @types/node 20 does not declare it (the DOM lib does). The part used here:
interface WasmModule {
  readonly __wasmModule?: never
}
declare const WebAssembly: {
  readonly Module: new (bytes: Uint8Array) => WasmModule
  readonly Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => { readonly exports: Record<string, unknown> }
  readonly Memory: new (descriptor: { readonly initial: number }) => {
    readonly buffer: ArrayBuffer
  }
}

/** All sign codes of one embedder, ready to score. */
export interface SignScanner {
  /** Codes held. */
  readonly count: number
  /** The vector key of each code, in scan order. */
  readonly keys: Int32Array
  /** Bytes held (keys and bits), for cache accounting. */
  readonly bytes: number
  /** `"wasm"` or `"js"`. */
  readonly kind: "wasm" | "js"
  /**
   * Scores every code against `table` (dim / 8 × 256 entries); the result, indexed like `keys`,
   * is valid until the next call.
   */
  readonly scan: (table: Float64Array) => Float32Array
}

/** One stored segment: `count` keys and their codes, `codeBytes` each. */
export interface SignSegment {
  readonly count: number
  readonly keys: Int32Array
  readonly bits: Uint8Array
}

/** The shipped module. */
export const SIGN_SCAN_WASM_PATH = fileURLToPath(
  new URL("../assets/sign-scan.wasm", import.meta.url),
)

let compiled: WasmModule | null | undefined

/** The compiled module, or null when it cannot be read or compiled (the JS path is used). */
export const signScanModule = (): WasmModule | null => {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(readFileSync(SIGN_SCAN_WASM_PATH))
    } catch {
      compiled = null
    }
  }
  return compiled
}

const PAGE = 65_536

/** An instance of the module over its own memory of at least `bytes`. */
interface WasmScan {
  readonly memory: { readonly buffer: ArrayBuffer }
  /** Scores `count` codes of `bytes` at `bits` against the table at `lut` into floats at `out`. */
  readonly scan: (bits: number, count: number, bytes: number, lut: number, out: number) => void
}

const instantiate = (module: WasmModule, bytes: number): WasmScan => {
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) })
  const instance = new WebAssembly.Instance(module, { env: { memory } })
  return { memory, scan: instance.exports["scan"] as WasmScan["scan"] }
}

/**
 * A scanner over `segments` (codes of `codeBytes` each): WebAssembly when `codeBytes` is a
 * multiple of 4 and `useWasm` is not false and the module is available, JavaScript otherwise.
 */
export const makeSignScanner = (
  segments: ReadonlyArray<SignSegment>,
  codeBytes: number,
  options: { readonly useWasm?: boolean } = {},
): SignScanner => {
  let count = 0
  for (const s of segments) count += s.count
  return streamSignScanner(count, segments, codeBytes, options)
}

/**
 * Reads `segments` once, up to `count` codes: their keys in order, and each segment's share
 * (`take` codes, the first at code `at`) handed to `place`.
 */
const takeSegments = (
  count: number,
  segments: Iterable<SignSegment>,
  place: (segment: SignSegment, take: number, at: number) => void,
): { readonly keys: Int32Array; readonly held: number } => {
  const keys = new Int32Array(count)
  let held = 0
  for (const s of segments) {
    const take = Math.min(s.count, count - held)
    if (take <= 0) break
    keys.set(s.keys.subarray(0, take), held)
    place(s, take, held)
    held += take
  }
  return { keys: keys.subarray(0, held), held }
}

/**
 * {@link makeSignScanner} over segments read once, in order, holding `count` codes in all: the
 * WebAssembly path copies each segment into the module's memory as it arrives, so a caller
 * streaming rows from SQLite never holds every segment in JavaScript besides (at 2 M codes of
 * 64 bytes that second copy was ~140 MB of a search's peak). Codes past `count` are ignored; a
 * shorter stream leaves a scanner of the codes it gave.
 */
export const streamSignScanner = (
  count: number,
  segments: Iterable<SignSegment>,
  codeBytes: number,
  options: { readonly useWasm?: boolean } = {},
): SignScanner => {
  const module = options.useWasm === false || codeBytes % 4 !== 0 ? null : signScanModule()
  if (module !== null) {
    const tableBytes = codeBytes * 256 * 8
    const outAt = tableBytes
    const bitsAt = outAt + count * 4
    const { memory, scan } = instantiate(module, bitsAt + count * codeBytes)
    const { keys, held } = takeSegments(count, segments, (s, take, at) =>
      new Uint8Array(memory.buffer, bitsAt + at * codeBytes, take * codeBytes).set(
        s.bits.subarray(0, take * codeBytes),
      ),
    )
    const table = new Float64Array(memory.buffer, 0, codeBytes * 256)
    const scores = new Float32Array(memory.buffer, outAt, held)
    return {
      count: held,
      keys,
      bytes: keys.byteLength + memory.buffer.byteLength,
      kind: "wasm",
      scan: (lut) => {
        table.set(lut.subarray(0, table.length))
        scan(bitsAt, held, codeBytes, 0, outAt)
        return scores
      },
    }
  }
  const kept: Array<{ count: number; bits: Uint8Array }> = []
  const { keys, held } = takeSegments(count, segments, (s, take) =>
    kept.push({ count: take, bits: s.bits }),
  )
  const scores = new Float32Array(held)
  let bitBytes = 0
  for (const s of kept) bitBytes += s.bits.byteLength
  return {
    count: held,
    keys,
    bytes: keys.byteLength + bitBytes,
    kind: "js",
    scan: (lut) => {
      let from = 0
      for (const s of kept) {
        scoreSignBits(s.bits, s.count, codeBytes, lut, scores.subarray(from, from + s.count))
        from += s.count
      }
      return scores
    },
  }
}

/**
 * Scores `segments` against `table` one at a time, handing each segment's keys and scores
 * (valid only during the call) to `visit`, and holds one segment at a time: the first pass of
 * a search that does not keep the codes (a one-shot CLI search at millions of codes, where
 * holding them all was most of the process's memory). Scores equal a {@link SignScanner}'s over
 * the same segments.
 */
export const scanSignSegments = (
  segments: Iterable<SignSegment>,
  codeBytes: number,
  table: Float64Array,
  visit: (keys: Int32Array, scores: Float32Array, count: number) => void,
  options: { readonly useWasm?: boolean } = {},
): void => {
  const module = options.useWasm === false || codeBytes % 4 !== 0 ? null : signScanModule()
  if (module === null) {
    let scores = new Float32Array(0)
    for (const s of segments) {
      if (scores.length < s.count) scores = new Float32Array(s.count)
      scoreSignBits(s.bits, s.count, codeBytes, table, scores)
      visit(s.keys, scores, s.count)
    }
    return
  }
  const tableBytes = codeBytes * 256 * 8
  // Sized for the largest segment seen so far (segments have one size but the last).
  let held: { readonly room: number; readonly wasm: WasmScan } | undefined
  for (const s of segments) {
    if (held === undefined || s.count > held.room) {
      held = { room: s.count, wasm: instantiate(module, tableBytes + s.count * (4 + codeBytes)) }
      new Float64Array(held.wasm.memory.buffer, 0, codeBytes * 256).set(
        table.subarray(0, codeBytes * 256),
      )
    }
    const { memory, scan } = held.wasm
    const outAt = tableBytes
    const bitsAt = outAt + held.room * 4
    new Uint8Array(memory.buffer, bitsAt, s.count * codeBytes).set(
      s.bits.subarray(0, s.count * codeBytes),
    )
    scan(bitsAt, s.count, codeBytes, 0, outAt)
    visit(s.keys, new Float32Array(memory.buffer, outAt, s.count), s.count)
  }
}

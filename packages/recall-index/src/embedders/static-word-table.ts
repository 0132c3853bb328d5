/**
 * The static word table format and its text tokeniser, shared by the runtime embedder
 * (`embedded-static.ts`) and the build-time distillation script. A table maps lower-case words
 * to int8 vectors (one float scale per row) plus each word's corpus log-probability, used for
 * SIF weights a / (a + p(w)). Guarantees: decoding checks the magic, version and sizes and
 * returns a reason instead of throwing; tokenisation is pure and splits code identifiers
 * (`retryBackoff`, `retry_backoff`, `retry-backoff` → retry, backoff).
 */
import { createHash } from "node:crypto"

/** File magic ("BSWT": Baton static word table). */
export const STATIC_TABLE_MAGIC = 0x54575342
/** Current format version. */
export const STATIC_TABLE_VERSION = 1

/** The JSON header of a table file. */
export interface StaticTableHeader {
  /** Identifies the table's contents; part of the embedder fingerprint. */
  readonly name: string
  readonly dim: number
  readonly words: ReadonlyArray<string>
  /** Natural-log probability of each word in the distillation corpus. */
  readonly logProb: ReadonlyArray<number>
  /** Weighted mean word vector (the common component), float. */
  readonly mean: ReadonlyArray<number>
  /** Where the vectors and frequencies came from, and their licence. */
  readonly source: string
}

/** A decoded table. */
export interface StaticWordTable {
  readonly header: StaticTableHeader
  /** First 12 hex digits of the SHA-256 of the table file (part of the fingerprint). */
  readonly digest: string
  readonly index: ReadonlyMap<string, number>
  readonly scales: Float32Array
  readonly vectors: Int8Array
}

/** Lower-case word tokens of `text`, with code identifiers split into their words. */
export const staticTokens = (text: string): string[] => {
  const spaced = text
    // camelCase and PascalCase boundaries: "retryBackoff" → "retry Backoff", "HTTPServer" → "HTTP Server"
    .replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
  return (spaced.toLowerCase().match(/\p{L}+/gu) ?? []).filter((w) => w.length <= 32)
}

/**
 * True when `staticTokens` of `text`'s pieces cut at whitespace (letter-free text between them
 * dropped) concatenate to `staticTokens(text)`: no token spans whitespace, but U+FEFF, whitespace
 * to a split, is case-ignorable to `toLowerCase`, so "Σ" → "ς" or "σ" can look across it.
 */
export const cutAtWhitespaceKeepsTokens = (text: string): boolean => !text.includes("\uFEFF")

/**
 * The table row of `word`, trying plain suffix variants when the word itself is missing
 * ("alerts" → "alert", "retried" → "retry", "caching" → "cache"). Undefined when none is known.
 */
export const lookupWord = (
  index: ReadonlyMap<string, number>,
  word: string,
): number | undefined => {
  const direct = index.get(word)
  if (direct !== undefined || word.length < 4) return direct
  const candidates: string[] = []
  if (word.endsWith("ies")) candidates.push(`${word.slice(0, -3)}y`)
  if (word.endsWith("es")) candidates.push(word.slice(0, -2))
  if (word.endsWith("s") && !word.endsWith("ss")) candidates.push(word.slice(0, -1))
  if (word.endsWith("ied")) candidates.push(`${word.slice(0, -3)}y`)
  if (word.endsWith("ed")) candidates.push(word.slice(0, -2), word.slice(0, -1))
  if (word.endsWith("ing")) candidates.push(word.slice(0, -3), `${word.slice(0, -3)}e`)
  if (word.endsWith("ly")) candidates.push(word.slice(0, -2))
  for (const c of candidates) {
    const row = index.get(c)
    if (row !== undefined) return row
  }
  return undefined
}

/** Encodes a table: magic, version, header length, header JSON, padding, scales, int8 rows. */
export const encodeStaticTable = (
  header: StaticTableHeader,
  scales: Float32Array,
  vectors: Int8Array,
): Uint8Array => {
  const json = new TextEncoder().encode(JSON.stringify(header))
  const headerEnd = 12 + json.length
  const scalesAt = Math.ceil(headerEnd / 4) * 4
  const vectorsAt = scalesAt + scales.byteLength
  const out = new Uint8Array(vectorsAt + vectors.byteLength)
  const view = new DataView(out.buffer)
  view.setUint32(0, STATIC_TABLE_MAGIC, true)
  view.setUint32(4, STATIC_TABLE_VERSION, true)
  view.setUint32(8, json.length, true)
  out.set(json, 12)
  for (let i = 0; i < scales.length; i++) view.setFloat32(scalesAt + i * 4, scales[i] ?? 0, true)
  out.set(new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength), vectorsAt)
  return out
}

/** Decodes a table, or returns why it cannot. */
export const decodeStaticTable = (bytes: Uint8Array): StaticWordTable | string => {
  if (bytes.byteLength < 12) return "the table file is too short"
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(0, true) !== STATIC_TABLE_MAGIC) return "not a static word table"
  const version = view.getUint32(4, true)
  if (version !== STATIC_TABLE_VERSION) return `unsupported table version ${version}`
  const jsonLength = view.getUint32(8, true)
  if (12 + jsonLength > bytes.byteLength) return "the table header is cut short"
  let header: StaticTableHeader
  try {
    header = JSON.parse(
      new TextDecoder().decode(bytes.subarray(12, 12 + jsonLength)),
    ) as StaticTableHeader
  } catch {
    return "the table header is not JSON"
  }
  const count = header.words?.length ?? 0
  const dim = header.dim
  if (
    !Number.isInteger(dim) ||
    dim <= 0 ||
    header.logProb?.length !== count ||
    header.mean?.length !== dim
  ) {
    return "the table header is inconsistent"
  }
  const scalesAt = Math.ceil((12 + jsonLength) / 4) * 4
  const vectorsAt = scalesAt + count * 4
  if (vectorsAt + count * dim !== bytes.byteLength)
    return "the table size does not match its header"
  const scales = new Float32Array(count)
  for (let i = 0; i < count; i++) scales[i] = view.getFloat32(scalesAt + i * 4, true)
  const vectors = new Int8Array(bytes.buffer, bytes.byteOffset + vectorsAt, count * dim)
  const index = new Map<string, number>()
  header.words.forEach((w, i) => index.set(w, i))
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 12)
  return { header, digest, index, scales, vectors }
}

/** Neighbour file magic ("BSWN": Baton static word neighbours). */
export const NEIGHBOUR_TABLE_MAGIC = 0x4e575342

/**
 * The nearest words of every table word, precomputed (`scripts/build-static-neighbours.mjs`) so
 * query expansion does not scan the whole table per query word. Row r holds up to `perWord`
 * (word index, similarity) pairs, best first; index 0xffff ends a short row.
 */
export interface NeighbourTable {
  /** Digest of the word table these neighbours belong to. */
  readonly tableDigest: string
  readonly perWord: number
  /** Least similarity kept when the file was built. */
  readonly minSimilarity: number
  readonly indices: Uint16Array
  /** Cosine similarity of each pair (float32). */
  readonly similarities: Float32Array
}

/** Encodes a neighbour table: magic, version, digest (12 ASCII bytes), perWord, minSimilarity, count, rows. */
export const encodeNeighbourTable = (table: NeighbourTable): Uint8Array => {
  const count = table.indices.length / table.perWord
  const headerBytes = 4 + 4 + 12 + 4 + 4 + 4
  const out = new Uint8Array(headerBytes + table.indices.length * 6)
  const view = new DataView(out.buffer)
  view.setUint32(0, NEIGHBOUR_TABLE_MAGIC, true)
  view.setUint32(4, 1, true)
  out.set(new TextEncoder().encode(table.tableDigest.padEnd(12, " ").slice(0, 12)), 8)
  view.setUint32(20, table.perWord, true)
  view.setFloat32(24, table.minSimilarity, true)
  view.setUint32(28, count, true)
  for (let i = 0; i < table.indices.length; i++) {
    view.setUint16(headerBytes + i * 2, table.indices[i] ?? 0xffff, true)
  }
  const at = headerBytes + table.indices.length * 2
  for (let i = 0; i < table.similarities.length; i++) {
    view.setFloat32(at + i * 4, table.similarities[i] ?? 0, true)
  }
  return out
}

/** Decodes a neighbour table for a word table of `words` rows, or returns why it cannot. */
export const decodeNeighbourTable = (bytes: Uint8Array, words: number): NeighbourTable | string => {
  const headerBytes = 32
  if (bytes.byteLength < headerBytes) return "the neighbour file is too short"
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(0, true) !== NEIGHBOUR_TABLE_MAGIC) return "not a neighbour file"
  if (view.getUint32(4, true) !== 1) return "unsupported neighbour file version"
  const tableDigest = new TextDecoder().decode(bytes.subarray(8, 20)).trim()
  const perWord = view.getUint32(20, true)
  const minSimilarity = view.getFloat32(24, true)
  const count = view.getUint32(28, true)
  if (count !== words) return `the neighbour file has ${count} rows, the table ${words} words`
  if (bytes.byteLength !== headerBytes + count * perWord * 6) {
    return "the neighbour file size does not match its header"
  }
  const indices = new Uint16Array(count * perWord)
  for (let i = 0; i < indices.length; i++) indices[i] = view.getUint16(headerBytes + i * 2, true)
  const similarities = new Float32Array(count * perWord)
  const at = headerBytes + indices.length * 2
  for (let i = 0; i < similarities.length; i++) {
    similarities[i] = view.getFloat32(at + i * 4, true)
  }
  return { tableDigest, perWord, minSimilarity, indices, similarities }
}

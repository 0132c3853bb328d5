/**
 * The embedded static word-table embedder: each word's vector was distilled from USE-lite at
 * build time (`scripts/distill-static-table.mjs`, shipped as `assets/use-lite-static.bin`); a
 * text's vector is the SIF-weighted mean of its known words' vectors (weight a / (a + p(w)),
 * so frequent words count little; a missing word falls back to a plain suffix variant),
 * L2-normalised. Thousands of texts per second on one core, offline, no key. Guarantees:
 * deterministic; unknown words are skipped; a text with no known word gets the zero vector; the table is read once, on
 * first use, and a missing or corrupt table fails with `unavailable` naming the path.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import type { Embedder } from "../embedder.js"
import { EmbedderError, normalizeVector } from "../embedder.js"
import { decodeStaticTable, lookupWord, staticTokens } from "./static-word-table.js"
import type { StaticWordTable } from "./static-word-table.js"

/** The table shipped with the package. */
export const DEFAULT_STATIC_TABLE_PATH = fileURLToPath(
  new URL("../../assets/use-lite-static.bin", import.meta.url),
)

/** Options of {@link makeStaticTableEmbedder}. */
export interface StaticTableOptions {
  /** Table file; default the shipped `assets/use-lite-static.bin`. */
  readonly tablePath?: string
  /** SIF smoothing a; default 0.0003. */
  readonly sifA?: number
  /** Subtract the table's common component before normalising; default false (it measured worse). */
  readonly removeCommon?: boolean
}

const tables = new Map<string, StaticWordTable>()

/** Reads and decodes a table file once per path. */
export const loadStaticTable = (path: string): Effect.Effect<StaticWordTable, EmbedderError> =>
  Effect.suspend(() => {
    const known = tables.get(path)
    if (known !== undefined) return Effect.succeed(known)
    let decoded: StaticWordTable | string
    try {
      decoded = decodeStaticTable(readFileSync(path))
    } catch (error) {
      decoded = `cannot read ${path}: ${(error as { code?: string }).code ?? String(error)}`
    }
    if (typeof decoded === "string") {
      return Effect.fail(
        new EmbedderError({
          provider: "embedded",
          failure: "unavailable",
          retryable: false,
          reason: `static word table ${path}: ${decoded}`,
        }),
      )
    }
    tables.set(path, decoded)
    return Effect.succeed(decoded)
  })

/** The vector of `text` under `table` (pure). */
export const staticVector = (
  table: StaticWordTable,
  text: string,
  sifA: number,
  removeCommon: boolean,
): Float32Array => {
  const { dim, logProb, mean } = table.header
  const v = new Float32Array(dim)
  let weightSum = 0
  for (const word of staticTokens(text)) {
    const row = lookupWord(table.index, word)
    if (row === undefined) continue
    const weight = sifA / (sifA + Math.exp(logProb[row] ?? 0))
    const scale = (table.scales[row] ?? 0) * weight
    const base = row * dim
    for (let i = 0; i < dim; i++) v[i] = (v[i] ?? 0) + (table.vectors[base + i] ?? 0) * scale
    weightSum += weight
  }
  if (weightSum === 0) return v
  if (removeCommon) for (let i = 0; i < dim; i++) v[i] = (v[i] ?? 0) - (mean[i] ?? 0) * weightSum
  return normalizeVector(v)
}

/** The static word-table embedder (dimension from the table: 512 for the shipped one). */
export const makeStaticTableEmbedder = (
  options: StaticTableOptions = {},
): Effect.Effect<Embedder, EmbedderError> =>
  Effect.gen(function* () {
    const path = options.tablePath ?? DEFAULT_STATIC_TABLE_PATH
    const table = yield* loadStaticTable(path)
    const sifA = options.sifA ?? 0.0003
    const removeCommon = options.removeCommon ?? false
    const embed = (text: string) => staticVector(table, text, sifA, removeCommon)
    const { name, dim } = table.header
    const embedder: Embedder = {
      info: {
        provider: "embedded",
        model: name,
        dim,
        fingerprint: `embedded/${name}@${table.digest}/${dim}/sif${sifA}${removeCommon ? "/centered" : ""}`,
        paid: false,
        maxBatch: 512,
        remote: false,
      },
      embedDocuments: (texts) => Effect.sync(() => texts.map(embed)),
      embedQuery: (text) => Effect.sync(() => embed(text)),
    }
    return embedder
  })

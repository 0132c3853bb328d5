/**
 * Query expansion for the lexical arm from the static word table: each content word of a
 * question brings its nearest table words (cosine of the distilled USE-lite word vectors), so
 * bm25 can match "payment declined" against "card charge failed". Measured on the retrieval eval
 * (README): paraphrased questions gain, keyword questions keep their score. Pure after the table
 * is loaded; no IO per query. Guarantees: the original terms come first and are all kept; at most
 * `perWord` additions per word, each at least `minSimilarity` similar, none repeated.
 */
import * as Effect from "effect/Effect"
import type { EmbedderError } from "../embedder.js"
import { lexicalQuery } from "../lexical-query.js"
import { readFileSync } from "node:fs"
import { DEFAULT_STATIC_TABLE_PATH, loadStaticTable } from "./embedded-static.js"
import { decodeNeighbourTable, lookupWord, staticTokens } from "./static-word-table.js"
import type { NeighbourTable, StaticWordTable } from "./static-word-table.js"

/** Options of {@link makeStaticQueryExpander}. */
export interface QueryExpansionOptions {
  readonly tablePath?: string
  /**
   * Precomputed neighbours (`scripts/build-static-neighbours.mjs`); default the table path with
   * `.bin` → `.neighbours.bin`. Used when it belongs to the table and covers `perWord` and
   * `minSimilarity`; otherwise each query word scans the table (tens of ms per word).
   */
  readonly neighboursPath?: string
  /** Most neighbours added per query word; default 4. */
  readonly perWord?: number
  /** Least cosine similarity of an added word; default 0.65. */
  readonly minSimilarity?: number
}

/** Nearest table words of row `row` (best first), above `minSimilarity`. */
const neighbours = (
  table: StaticWordTable,
  row: number,
  count: number,
  minSimilarity: number,
): string[] => {
  const { dim, words } = table.header
  const v = table.vectors
  const base = row * dim
  const scale = table.scales[row] ?? 0
  const best: Array<[number, number]> = []
  for (let r = 0; r < words.length; r++) {
    if (r === row) continue
    let s = 0
    const other = r * dim
    for (let i = 0; i < dim; i++) s += (v[base + i] ?? 0) * (v[other + i] ?? 0)
    s *= scale * (table.scales[r] ?? 0)
    if (s < minSimilarity) continue
    best.push([s, r])
  }
  best.sort((a, b) => b[0] - a[0] || a[1] - b[1])
  return best.slice(0, count).map(([, r]) => words[r] ?? "")
}

/** The precomputed neighbours of `table` at `path`, if the file exists and matches. */
const loadNeighbours = (path: string, table: StaticWordTable): NeighbourTable | undefined => {
  let bytes: Uint8Array
  try {
    bytes = readFileSync(path)
  } catch {
    return undefined
  }
  const decoded = decodeNeighbourTable(bytes, table.header.words.length)
  return typeof decoded === "string" || decoded.tableDigest !== table.digest ? undefined : decoded
}

/** Row `row`'s neighbours from the precomputed file, filtered like {@link neighbours}. */
const storedNeighbours = (
  table: StaticWordTable,
  stored: NeighbourTable,
  row: number,
  count: number,
  minSimilarity: number,
): string[] => {
  const out: string[] = []
  for (let j = 0; j < stored.perWord && out.length < count; j++) {
    const at = row * stored.perWord + j
    const r = stored.indices[at]!
    if (r === 0xffff) break
    if (stored.similarities[at]! < minSimilarity) break
    out.push(table.header.words[r] ?? "")
  }
  return out
}

/** A query expander: `lexicalQuery(text)` followed by the neighbours of its words. */
export const makeStaticQueryExpander = (
  options: QueryExpansionOptions = {},
): Effect.Effect<(query: string) => string, EmbedderError> =>
  loadStaticTable(options.tablePath ?? DEFAULT_STATIC_TABLE_PATH).pipe(
    Effect.map((table) => {
      const perWord = Math.max(0, Math.floor(options.perWord ?? 4))
      const minSimilarity = options.minSimilarity ?? 0.65
      const cache = new Map<string, ReadonlyArray<string>>()
      const path = options.tablePath ?? DEFAULT_STATIC_TABLE_PATH
      const file = loadNeighbours(
        options.neighboursPath ?? path.replace(/\.bin$/, ".neighbours.bin"),
        table,
      )
      const stored =
        file !== undefined && perWord <= file.perWord && minSimilarity >= file.minSimilarity
          ? file
          : undefined
      return (query: string): string => {
        const base = lexicalQuery(query)
        const seen = new Set(staticTokens(base))
        const extra: string[] = []
        for (const word of staticTokens(base)) {
          let near = cache.get(word)
          if (near === undefined) {
            const row = lookupWord(table.index, word)
            near =
              row === undefined
                ? []
                : stored !== undefined
                  ? storedNeighbours(table, stored, row, perWord, minSimilarity)
                  : neighbours(table, row, perWord, minSimilarity)
            if (cache.size < 10_000) cache.set(word, near)
          }
          for (const w of near) {
            if (!seen.has(w)) {
              seen.add(w)
              extra.push(w)
            }
          }
        }
        return extra.length === 0 ? base : `${base} ${extra.join(" ")}`
      }
    }),
  )

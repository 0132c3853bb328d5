/**
 * Weighted reciprocal rank fusion (RRF) of ranked id lists (bm25, KNN, …). Pure and total:
 * same input, same output. An id's score is Σ weight / (k + rank) over the lists that hold it
 * (rank 1-based; only an id's first occurrence in a list counts). Guarantees: output ordered by
 * score descending, ties broken by the best rank in any weighted list, then by the earliest list
 * holding that best rank, then by id ascending; every list name appears in every `ranks` record
 * (null where absent); ids held only by lists of weight 0 are omitted. Never throws: negative or
 * non-finite weights count as 0, a non-finite or negative `k` falls back to the default.
 */

/** One ranked list: ids best first, and the weight of this arm in the fused score. */
export interface FusionList {
  readonly name: string
  readonly weight: number
  readonly ids: ReadonlyArray<number>
}

/** One fused id with its score and its 1-based rank in each list (null when absent). */
export interface FusedRank {
  readonly id: number
  readonly score: number
  readonly ranks: Readonly<Record<string, number | null>>
}

/** Options of {@link fuseRanks}. */
export interface FusionOptions {
  /** The RRF constant; larger flattens the head. Default 60. */
  readonly k?: number
}

/** Default RRF constant (the value of the original RRF paper). */
export const DEFAULT_RRF_K = 60

interface Entry {
  readonly id: number
  score: number
  bestRank: number
  bestList: number
  readonly ranks: Record<string, number | null>
}

/**
 * Fuses ranked id lists by weighted reciprocal rank: an id scores Σ weight / (k + rank) over the
 * lists holding it. Ordered by score, ties by best rank, then earliest list, then id; every list
 * appears in every `ranks` record (null where absent). Never throws: negative or non-finite
 * weights count as 0, a bad `k` falls back to the default.
 */
export const fuseRanks = (
  lists: ReadonlyArray<FusionList>,
  options: FusionOptions = {},
): ReadonlyArray<FusedRank> => {
  const k =
    options.k !== undefined && Number.isFinite(options.k) && options.k >= 0
      ? options.k
      : DEFAULT_RRF_K
  const names = lists.map((l) => l.name)
  const entries = new Map<number, Entry>()
  lists.forEach((list, listIndex) => {
    const weight = Number.isFinite(list.weight) && list.weight > 0 ? list.weight : 0
    const seen = new Set<number>()
    let rank = 0
    for (const id of list.ids) {
      if (seen.has(id)) continue
      seen.add(id)
      rank += 1
      let entry = entries.get(id)
      if (entry === undefined) {
        // An id seen only in zero-weight lists keeps bestRank = Infinity and is dropped below.
        entry = { id, score: 0, bestRank: Infinity, bestList: Infinity, ranks: {} }
        for (const name of names) entry.ranks[name] = null
        entries.set(id, entry)
      }
      if (entry.ranks[list.name] === null) entry.ranks[list.name] = rank
      if (weight > 0) {
        entry.score += weight / (k + rank)
        if (rank < entry.bestRank || (rank === entry.bestRank && listIndex < entry.bestList)) {
          entry.bestRank = rank
          entry.bestList = listIndex
        }
      }
    }
  })
  return [...entries.values()]
    .filter((e) => e.bestRank !== Infinity)
    .sort(
      (a, b) =>
        b.score - a.score || a.bestRank - b.bestRank || a.bestList - b.bestList || a.id - b.id,
    )
    .map((e) => ({ id: e.id, score: e.score, ranks: e.ranks }))
}

/**
 * Deterministic pseudo-random source for fixture generators (mulberry32): the same seed always
 * yields the same ids, words and sizes.
 */

/** A seeded random source. */
export interface SeededRandom {
  /** Uniform in [0, 1). */
  readonly next: () => number
  readonly int: (min: number, maxInclusive: number) => number
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  /** A version-4-shaped UUID. */
  readonly uuid: () => string
  readonly hex: (length: number) => string
}

/** Creates a random source from `seed`. */
export const seededRandom = (seed: number): SeededRandom => {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, maxInclusive: number): number =>
    min + Math.floor(next() * (maxInclusive - min + 1))
  const hex = (length: number): string =>
    Array.from({ length }, () => "0123456789abcdef"[int(0, 15)]).join("")
  return {
    next,
    int,
    pick: <A>(items: ReadonlyArray<A>): A => items[int(0, items.length - 1)]!,
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[int(0, 3)]}${hex(3)}-${hex(12)}`,
    hex,
  }
}

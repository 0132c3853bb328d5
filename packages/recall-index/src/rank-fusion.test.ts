import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { DEFAULT_RRF_K, fuseRanks } from "./rank-fusion.js"

const idList = fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 25 })
const lists = fc.array(
  fc.record({ weight: fc.double({ min: 0, max: 5, noNaN: true }), ids: idList }),
  { minLength: 1, maxLength: 4 },
)
const named = (ls: ReadonlyArray<{ weight: number; ids: number[] }>) =>
  ls.map((l, i) => ({ name: `arm${i}`, weight: l.weight, ids: l.ids }))

describe("fuseRanks", () => {
  it("scores by weighted reciprocal rank and records 1-based ranks", () => {
    const fused = fuseRanks([
      { name: "lexical", weight: 2, ids: [10, 20, 30] },
      { name: "vector", weight: 1, ids: [30, 40] },
    ])
    const k = DEFAULT_RRF_K
    expect(fused.map((f) => f.id)).toEqual([30, 10, 20, 40])
    expect(fused[0]).toEqual({
      id: 30,
      score: 2 / (k + 3) + 1 / (k + 1),
      ranks: { lexical: 3, vector: 1 },
    })
    expect(fused[3]?.ranks).toEqual({ lexical: null, vector: 2 })
  })

  it("drops ids held only by zero-weight lists but keeps their ranks otherwise", () => {
    const fused = fuseRanks([
      { name: "a", weight: 1, ids: [1, 2] },
      { name: "b", weight: 0, ids: [2, 3] },
    ])
    expect(fused.map((f) => f.id)).toEqual([1, 2])
    expect(fused[1]?.ranks).toEqual({ a: 2, b: 1 })
  })

  it("counts only the first occurrence of an id in a list", () => {
    const fused = fuseRanks([{ name: "a", weight: 1, ids: [5, 5, 6] }], { k: 0 })
    expect(fused).toEqual([
      { id: 5, score: 1, ranks: { a: 1 } },
      { id: 6, score: 1 / 2, ranks: { a: 2 } },
    ])
  })

  it("breaks ties by best rank, then earlier list, then id", () => {
    const fused = fuseRanks([
      { name: "a", weight: 1, ids: [7, 8] },
      { name: "b", weight: 1, ids: [8, 7] },
      { name: "c", weight: 1, ids: [3] },
      { name: "d", weight: 1, ids: [2] },
    ])
    // 7 and 8 tie on score and best rank (1): 7 holds rank 1 in the earlier list.
    expect(fused.map((f) => f.id)).toEqual([7, 8, 3, 2])
  })

  it("property: sorted by score, every weighted id present once, ranks consistent", () => {
    fc.assert(
      fc.property(lists, fc.integer({ min: 0, max: 100 }), (ls, k) => {
        const input = named(ls)
        const fused = fuseRanks(input, { k })
        const expected = new Set(input.filter((l) => l.weight > 0).flatMap((l) => l.ids))
        expect(new Set(fused.map((f) => f.id))).toEqual(expected)
        expect(fused.length).toBe(expected.size)
        for (let i = 1; i < fused.length; i++) {
          expect(fused[i - 1]!.score).toBeGreaterThanOrEqual(fused[i]!.score)
        }
        for (const f of fused) {
          let score = 0
          for (const l of input) {
            const rank = l.ids.indexOf(f.id) + 1
            expect(f.ranks[l.name]).toBe(rank === 0 ? null : rank)
            if (rank > 0) score += l.weight / (k + rank)
          }
          expect(f.score).toBeCloseTo(score, 12)
        }
      }),
    )
  })

  it("property: deterministic, and independent of the order of the lists", () => {
    fc.assert(
      fc.property(lists, (ls) => {
        const input = named(ls)
        const a = fuseRanks(input)
        expect(fuseRanks(input)).toEqual(a)
        const reversed = fuseRanks([...input].reverse())
        const scores = (x: typeof a) => new Map(x.map((f) => [f.id, f.score]))
        const sa = scores(a)
        for (const [id, s] of scores(reversed)) expect(s).toBeCloseTo(sa.get(id)!, 12)
      }),
    )
  })

  it("property: raising an id in one list never lowers its fused position's score", () => {
    fc.assert(
      fc.property(lists, fc.nat(), (ls, pick) => {
        const input = named(ls)
        const target = input.find((l) => l.weight > 0 && l.ids.length > 1)
        if (target === undefined) return
        const at = 1 + (pick % (target.ids.length - 1))
        const id = target.ids[at]!
        const promoted = input.map((l) =>
          l === target ? { ...l, ids: [id, ...l.ids.filter((x) => x !== id)] } : l,
        )
        const before = fuseRanks(input).find((f) => f.id === id)!.score
        const after = fuseRanks(promoted).find((f) => f.id === id)!.score
        expect(after).toBeGreaterThanOrEqual(before)
      }),
    )
  })

  it("treats bad weights as 0 and a bad k as the default", () => {
    const fused = fuseRanks(
      [
        { name: "a", weight: Number.NaN, ids: [1] },
        { name: "b", weight: -1, ids: [2] },
        { name: "c", weight: 1, ids: [3] },
      ],
      { k: Number.POSITIVE_INFINITY },
    )
    expect(fused).toEqual([
      { id: 3, score: 1 / (DEFAULT_RRF_K + 1), ranks: { a: null, b: null, c: 1 } },
    ])
  })
})

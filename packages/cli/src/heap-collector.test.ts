import { describe, expect, it } from "vitest"
import { fullCollection, heapPacer } from "./heap-collector.js"

describe("heapPacer", () => {
  it("collects each time another `everyBytes` have been read", () => {
    let collections = 0
    const pace = heapPacer(10, () => () => {
      collections += 1
    })
    const seen = [3, 9, 10, 12, 19, 20, 45, 45].map((bytes) => {
      pace(bytes)
      return collections
    })
    expect(seen).toEqual([0, 0, 1, 1, 1, 2, 3, 3])
  })

  it("does nothing when the runtime hands out no collector", () => {
    const pace = heapPacer(1, () => null)
    expect(() => pace(100)).not.toThrow()
  })

  it("gets V8's full collection on this runtime", () => {
    const gc = fullCollection()
    expect(gc).toBeTypeOf("function")
    expect(() => gc?.()).not.toThrow()
  })
})

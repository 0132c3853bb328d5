import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { canonicalJson } from "./canonical-json.js"

describe("canonicalJson golden vectors", () => {
  it.each<[unknown, string]>([
    [{ b: 1, a: [2, { d: null, c: "é" }] }, '{"a":[2,{"c":"é","d":null}],"b":1}'],
    [{ id: "t", input: undefined, messages: [] }, '{"id":"t","messages":[]}'],
    [[undefined, Number.NaN, -0, 1e21], "[null,null,0,1e+21]"],
    ["\u2028\ud800", '"\u2028\\ud800"'],
    [{ B: 1, a: 2, "": 3 }, '{"":3,"B":1,"a":2}'],
  ])("%j", (value, expected) => {
    expect(canonicalJson(value)).toBe(expected)
  })

  it("hashes stably regardless of key order", () => {
    const digest = (v: unknown) => createHash("sha256").update(canonicalJson(v)).digest("hex")
    expect(digest({ x: 1, y: [1, 2] })).toBe(digest({ y: [1, 2], x: 1 }))
    expect(digest({ x: 1 })).toBe(
      "5041bf1f713df204784353e82f6a4a535931cb64f1f4b4a5aeaffcb720918b22",
    )
  })
})

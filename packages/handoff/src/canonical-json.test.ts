import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJson } from "./canonical-json.js"
import type { JsonValue } from "./canonical-json.js"
import { canonicalDigest } from "./digest.js"

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))

/** JSON values as JSON can carry them (JSON.parse ∘ JSON.stringify drops -0). */
const jsonValues = (stringUnit: "binary" | typeof codeUnit) =>
  fc.jsonValue({ stringUnit }).map((v) => JSON.parse(JSON.stringify(v)) as JsonValue)

// Expected digests were computed outside the code under test with `printf '%s' '<text>' | sha256sum`.
const golden: ReadonlyArray<{
  readonly name: string
  readonly value: JsonValue
  readonly text: string
  readonly sha256: string
}> = [
  {
    name: "sorts keys, keeps array order, no whitespace",
    value: { b: 1, a: [true, false, null], c: "x" },
    text: '{"a":[true,false,null],"b":1,"c":"x"}',
    sha256: "210bd8e5501c622e789c4b9e6cd70edbfbe598f4725066bac3c1ffe0176ff0e3",
  },
  {
    name: "orders keys by UTF-16 code unit (astral before U+FB01; upper before lower)",
    value: { z: 1, é: 2, B: 3, a: 4, ﬁ: 5, "😀": 6 },
    text: '{"B":3,"a":4,"z":1,"é":2,"😀":6,"ﬁ":5}',
    sha256: "1d675e8ef4a6c9dfe5490acbb8a83db49577b10e3f5edec0d8876840625dd5e5",
  },
  {
    name: "orders integer-like keys as strings, unlike JS property order",
    value: { "10": 1, "2": 2, "1": 3, a: 4 },
    text: '{"1":3,"10":1,"2":2,"a":4}',
    sha256: "ba15ff25db97d54a6ef384f4c445ea7cd00fec00d04d80d67bd0d6a4effe8e98",
  },
  {
    name: "keeps precomposed café (U+00E9)",
    value: "caf\u00e9",
    text: '"café"',
    sha256: "28380feb8724d669bc8d4cf5b5a5bb1adbdc61b81ebd06f3fabc567b4f3b0fc5",
  },
  {
    name: "keeps decomposed café (e + U+0301): no Unicode normalisation",
    value: "cafe\u0301",
    text: '"cafe\u0301"',
    sha256: "c7d7e72b8ad0dd91beb4044a4bb17c6c8a9672cc620c4c76e6584f3525d400d1",
  },
  {
    name: "escapes control characters and lone surrogates like JSON.stringify",
    value: "\b\f\r\u0000\u0001\u001f\u007f\u2028\ud800",
    text: String.raw`"\b\f\r\u0000\u0001\u001f` + "\u007f\u2028" + String.raw`\ud800"`,
    sha256: "77c479ff9ddc9a7cdf6b322978a948acbf0beadfdfe25a962c4d282bd705e62d",
  },
  {
    name: "writes numbers like JSON.stringify (-0 becomes 0)",
    value: [1.5e300, -0, 1e21, 0.1, -1.25e-7, 100],
    text: "[1.5e+300,0,1e+21,0.1,-1.25e-7,100]",
    sha256: "8d20bc1088b35ea6b2e71b80bd31ca4f754442fc5ff454767d58791b6b144654",
  },
  {
    name: "sorts nested objects, keeps empty containers",
    value: { c: { y: [{ b: 2, a: 1 }], x: "日本語" }, b: [], a: {} },
    text: '{"a":{},"b":[],"c":{"x":"日本語","y":[{"a":1,"b":2}]}}',
    sha256: "eb7c488fa51419050db0e140b0c3e09d8b09bcf6e403415e3608c4bcba8fcc00",
  },
  {
    name: "encodes the empty string",
    value: "",
    text: '""',
    sha256: "12ae32cb1ec02d01eda3581b127c1fee3b0dc53572ed6baf239721a03d82e126",
  },
]

describe("canonicalJson golden vectors", () => {
  for (const vector of golden) {
    it(vector.name, () => {
      expect(canonicalJson(vector.value)).toBe(vector.text)
      expect(canonicalDigest(vector.value)).toBe(vector.sha256)
    })
  }

  it("escapes quotes, backslashes, tabs and newlines", () => {
    expect(canonicalJson({ s: 'a "q" \\ b\tc\nd' })).toBe(String.raw`{"s":"a \"q\" \\ b\tc\nd"}`)
  })
})

describe("canonicalJson outside JsonValue behaves like JSON.stringify", () => {
  it("writes non-finite numbers as null", () => {
    expect(canonicalJson([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])).toBe(
      "[null,null,null]",
    )
  })

  it("skips undefined, function and symbol members and nulls them in arrays", () => {
    const value = { b: undefined, a: 1, f: () => 1, s: Symbol("s") } as unknown as JsonValue
    expect(canonicalJson(value)).toBe('{"a":1}')
    expect(canonicalJson([undefined, () => 1] as unknown as JsonValue)).toBe("[null,null]")
  })

  it("does not call toJSON and reads own enumerable keys only", () => {
    const value = Object.assign(Object.create({ inherited: 1 }) as object, {
      own: 2,
      toJSON: () => "replaced",
    }) as unknown as JsonValue
    expect(canonicalJson(value)).toBe('{"own":2}')
  })

  it("keeps a __proto__ key parsed from JSON as a plain key", () => {
    const parsed = JSON.parse('{"__proto__":{"x":1},"a":2}') as JsonValue
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"a":2}')
  })
})

describe("canonicalJson properties", () => {
  it("round-trips: JSON.parse(canonical(x)) deep-equals x", () => {
    fc.assert(
      fc.property(jsonValues("binary"), (value) => {
        expect(JSON.parse(canonicalJson(value))).toStrictEqual(value)
      }),
      { numRuns: 150 },
    )
  })

  it("round-trips strings made of arbitrary UTF-16 code units, lone surrogates included", () => {
    fc.assert(
      fc.property(jsonValues(codeUnit), (value) => {
        expect(JSON.parse(canonicalJson(value))).toStrictEqual(value)
      }),
      { numRuns: 300 },
    )
  })

  it("is idempotent: canonical(JSON.parse(canonical(x))) === canonical(x)", () => {
    fc.assert(
      fc.property(jsonValues(codeUnit), (value) => {
        const once = canonicalJson(value)
        expect(canonicalJson(JSON.parse(once) as JsonValue)).toBe(once)
      }),
      { numRuns: 300 },
    )
  })

  it("does not depend on key insertion order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ unit: codeUnit }), fc.jsonValue({ maxDepth: 2 })), {
          selector: ([key]) => key,
          maxLength: 12,
        }),
        (entries) => {
          const forward = Object.fromEntries(entries) as JsonValue
          const backward = Object.fromEntries([...entries].reverse()) as JsonValue
          expect(canonicalJson(forward)).toBe(canonicalJson(backward))
        },
      ),
      { numRuns: 300 },
    )
  })

  it("encodes every string exactly as JSON.stringify does, with no whitespace outside strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: codeUnit }), (s) => {
        expect(canonicalJson(s)).toBe(JSON.stringify(s))
        expect(canonicalJson([s, { k: s }])).toBe(
          `[${JSON.stringify(s)},{"k":${JSON.stringify(s)}}]`,
        )
      }),
      { numRuns: 300 },
    )
  })

  it("produces well-formed UTF-16, so the UTF-8 bytes are unambiguous", () => {
    fc.assert(
      fc.property(jsonValues(codeUnit), (value) => {
        expect(/\p{Cs}/u.test(canonicalJson(value))).toBe(false)
      }),
      { numRuns: 300 },
    )
  })
})

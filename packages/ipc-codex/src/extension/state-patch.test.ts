import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { PatchOperation } from "./envelope.js"
import { applyPatches } from "./state-patch.js"

const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}

const ok = (state: unknown, patches: ReadonlyArray<PatchOperation>): unknown => {
  const result = applyPatches(deepFreeze(state), patches)
  if (result._tag === "Failure") throw new Error(result.failure.message)
  return result.success
}

const problem = (state: unknown, patches: ReadonlyArray<PatchOperation>): string => {
  const result = applyPatches(deepFreeze(state), patches)
  if (result._tag === "Success") throw new Error("patch unexpectedly applied")
  return result.failure.problem
}

describe("applyPatches rules", () => {
  const base = { a: { b: 1, list: [10, 20, 30] }, s: "x" }

  it.each<[string, ReadonlyArray<PatchOperation>, unknown]>([
    [
      "add creates a key",
      [{ op: "add", path: ["a", "c"], value: 2 }],
      { a: { b: 1, c: 2, list: [10, 20, 30] }, s: "x" },
    ],
    [
      "add overwrites a key",
      [{ op: "add", path: ["s"], value: "y" }],
      { a: { b: 1, list: [10, 20, 30] }, s: "y" },
    ],
    [
      "replace an existing key",
      [{ op: "replace", path: ["a", "b"], value: { deep: true } }],
      { a: { b: { deep: true }, list: [10, 20, 30] }, s: "x" },
    ],
    [
      "remove an existing key",
      [{ op: "remove", path: ["s"] }],
      { a: { b: 1, list: [10, 20, 30] } },
    ],
    [
      "add inserts into an array",
      [{ op: "add", path: ["a", "list", 1], value: 15 }],
      { a: { b: 1, list: [10, 15, 20, 30] }, s: "x" },
    ],
    [
      "add at len appends",
      [{ op: "add", path: ["a", "list", 3], value: 40 }],
      { a: { b: 1, list: [10, 20, 30, 40] }, s: "x" },
    ],
    [
      'add "-" appends',
      [{ op: "add", path: ["a", "list", "-"], value: 40 }],
      { a: { b: 1, list: [10, 20, 30, 40] }, s: "x" },
    ],
    [
      "digit strings index arrays",
      [{ op: "replace", path: ["a", "list", "2"], value: 0 }],
      { a: { b: 1, list: [10, 20, 0] }, s: "x" },
    ],
    [
      "remove splices an array",
      [{ op: "remove", path: ["a", "list", 0] }],
      { a: { b: 1, list: [20, 30] }, s: "x" },
    ],
    ["empty path replaces the root", [{ op: "replace", path: [], value: [1] }], [1]],
    [
      "a batch applies in order",
      [
        { op: "add", path: ["n"], value: { list: [] } },
        { op: "add", path: ["n", "list", "-"], value: 1 },
        { op: "replace", path: ["n", "list", 0], value: 2 },
      ],
      { a: { b: 1, list: [10, 20, 30] }, s: "x", n: { list: [2] } },
    ],
  ])("%s", (_name, patches, expected) => {
    expect(ok(structuredClone(base), patches)).toEqual(expected)
  })

  it.each<[string, ReadonlyArray<PatchOperation>, RegExp]>([
    ["missing intermediate", [{ op: "add", path: ["zz", "c"], value: 1 }], /intermediate key "zz"/],
    [
      "intermediate is not a container",
      [{ op: "add", path: ["s", "c"], value: 1 }],
      /not an object or array/,
    ],
    [
      "replace of a missing key",
      [{ op: "replace", path: ["a", "nope"], value: 1 }],
      /replace of missing key/,
    ],
    ["remove of a missing key", [{ op: "remove", path: ["a", "nope"] }], /remove of missing key/],
    [
      "inherited keys are not own keys",
      [{ op: "replace", path: ["a", "toString"], value: 1 }],
      /missing key/,
    ],
    [
      "add past the end of an array",
      [{ op: "add", path: ["a", "list", 4], value: 1 }],
      /past the end/,
    ],
    [
      "replace past the end",
      [{ op: "replace", path: ["a", "list", 3], value: 1 }],
      /does not exist/,
    ],
    ["remove past the end", [{ op: "remove", path: ["a", "list", 3] }], /does not exist/],
    [
      "negative index",
      [{ op: "replace", path: ["a", "list", -1], value: 1 }],
      /not an array index/,
    ],
    [
      "fractional index",
      [{ op: "replace", path: ["a", "list", 1.5], value: 1 }],
      /not an array index/,
    ],
    ['"-" outside add', [{ op: "remove", path: ["a", "list", "-"] }], /only valid for add/],
    [
      "leading-zero index",
      [{ op: "replace", path: ["a", "list", "01"], value: 1 }],
      /not an array index/,
    ],
    ["remove of the root", [{ op: "remove", path: [] }], /cannot remove the root/],
    ["add without a value", [{ op: "add", path: ["q"] }], /needs a value/],
    [
      "__proto__ as the last key",
      [{ op: "add", path: ["__proto__"], value: { polluted: true } }],
      /forbidden key "__proto__"/,
    ],
    [
      "__proto__ as an intermediate",
      [{ op: "add", path: ["__proto__", "polluted"], value: true }],
      /forbidden key/,
    ],
    [
      "constructor anywhere",
      [{ op: "add", path: ["a", "constructor", "prototype", "x"], value: 1 }],
      /forbidden key "constructor"/,
    ],
    [
      "prototype anywhere",
      [{ op: "replace", path: ["a", "prototype"], value: 1 }],
      /forbidden key "prototype"/,
    ],
  ])("refuses %s", (_name, patches, expected) => {
    expect(problem(structuredClone(base), patches)).toMatch(expected)
  })

  it("never pollutes Object.prototype", () => {
    for (const path of [
      ["__proto__", "polluted"],
      ["a", "__proto__", "polluted"],
      ["constructor", "prototype", "polluted"],
    ]) {
      applyPatches({ a: {} }, [{ op: "add", path, value: true }])
    }
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("a failing batch leaves the input untouched, even after earlier patches applied", () => {
    const state = deepFreeze({ a: { list: [1] } })
    const result = applyPatches(state, [
      { op: "add", path: ["a", "list", "-"], value: 2 },
      { op: "remove", path: ["missing"] },
    ])
    expect(result._tag === "Failure" && result.failure.index).toBe(1)
    expect(state).toEqual({ a: { list: [1] } })
  })

  it("shares untouched subtrees and copies the touched path", () => {
    const state = { left: { big: [1, 2, 3] }, right: { n: 1 } }
    const next = ok(state, [{ op: "replace", path: ["right", "n"], value: 2 }]) as typeof state
    expect(next.left).toBe(state.left)
    expect(next.right).not.toBe(state.right)
    expect(state.right.n).toBe(1)
  })
})

type Container = Record<string, unknown> | Array<unknown>

// A naive reference implementation on a deep clone (same rules, mutable), for differential testing.
const reference = (
  state: unknown,
  patches: ReadonlyArray<PatchOperation>,
): { ok: true; value: unknown } | { ok: false } => {
  const forbidden = new Set(["__proto__", "prototype", "constructor"])
  let root: unknown = structuredClone(state)
  const index = (key: string | number): number | undefined =>
    typeof key === "number"
      ? Number.isSafeInteger(key) && key >= 0
        ? key
        : undefined
      : /^(0|[1-9]\d{0,14})$/.test(key)
        ? Number(key)
        : undefined
  for (const patch of patches) {
    if (patch.path.some((k) => typeof k === "string" && forbidden.has(k))) return { ok: false }
    if (patch.op !== "remove" && !("value" in patch)) return { ok: false }
    if (patch.path.length === 0) {
      if (patch.op === "remove") return { ok: false }
      root = structuredClone(patch.value)
      continue
    }
    let parent = root as Container
    for (const key of patch.path.slice(0, -1)) {
      if (typeof parent !== "object" || parent === null) return { ok: false }
      if (Array.isArray(parent)) {
        const i = index(key)
        if (i === undefined || i >= parent.length) return { ok: false }
        parent = parent[i] as Container
      } else {
        const k =
          typeof key === "number"
            ? Number.isSafeInteger(key) && key >= 0
              ? String(key)
              : undefined
            : key
        if (k === undefined || !Object.hasOwn(parent, k)) return { ok: false }
        parent = parent[k] as Container
      }
    }
    if (typeof parent !== "object" || parent === null) return { ok: false }
    const last = patch.path[patch.path.length - 1]!
    const value = structuredClone(patch.value)
    if (Array.isArray(parent)) {
      if (last === "-") {
        if (patch.op !== "add") return { ok: false }
        parent.push(value)
        continue
      }
      const i = index(last)
      if (i === undefined) return { ok: false }
      if (patch.op === "add") {
        if (i > parent.length) return { ok: false }
        parent.splice(i, 0, value)
      } else {
        if (i >= parent.length) return { ok: false }
        if (patch.op === "replace") parent[i] = value
        else parent.splice(i, 1)
      }
    } else {
      const k =
        typeof last === "number"
          ? Number.isSafeInteger(last) && last >= 0
            ? String(last)
            : undefined
          : last
      if (k === undefined) return { ok: false }
      if (patch.op !== "add" && !Object.hasOwn(parent, k)) return { ok: false }
      if (patch.op === "remove") delete parent[k]
      else parent[k] = value
    }
  }
  return { ok: true, value: root }
}

const keyArb = fc.constantFrom(
  "a",
  "b",
  "items",
  "0",
  "1",
  "-",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
)
const randomPathArb = fc.array(fc.oneof(keyArb, fc.integer({ min: -1, max: 4 })), { maxLength: 4 })
// Paths that usually exist in stateArb's shape, so that many batches apply.
const likelyPathArb = fc.constantFrom<ReadonlyArray<string | number>>(
  ["a"],
  ["a", "b"],
  ["a", "b", 0],
  ["a", "b", 1],
  ["a", "b", "1", "items"],
  ["a", "b", 1, "items", "-"],
  ["a", "b", 1, "items", 0],
  ["a", "b", "-"],
  ["a", "b", 2],
  ["a", "items"],
  ["a", "c"],
  ["b"],
  ["b", 0],
  ["b", "1"],
  ["b", "-"],
  ["c"],
)
const pathArb = fc.oneof(
  { arbitrary: likelyPathArb, weight: 4 },
  { arbitrary: randomPathArb, weight: 1 },
)
const patchArb: fc.Arbitrary<PatchOperation> = fc.oneof(
  fc.record({
    op: fc.constant("add" as const),
    path: pathArb,
    value: fc.jsonValue({ maxDepth: 2 }),
  }),
  fc.record({
    op: fc.constant("replace" as const),
    path: pathArb,
    value: fc.jsonValue({ maxDepth: 2 }),
  }),
  fc.record({ op: fc.constant("remove" as const), path: pathArb }),
)
// Each occurrence gets its own copy: wire JSON never aliases, and an aliased subtree made the
// reference (which mutates one clone in place) disagree with copy-on-write for some seeds.
const stateArb = fc.jsonValue({ maxDepth: 3 }).map((v) => ({
  a: { b: [1, { items: [] }], items: structuredClone(v) },
  b: [structuredClone(v), structuredClone(v)],
}))

describe("applyPatches properties", () => {
  it("matches the reference implementation and never mutates its input", () => {
    fc.assert(
      fc.property(stateArb, fc.array(patchArb, { maxLength: 6 }), (state, patches) => {
        const before = structuredClone(state)
        const result = applyPatches(state, patches)
        const expected = reference(state, patches)
        expect(state).toEqual(before)
        expect(result._tag === "Success").toBe(expected.ok)
        if (result._tag === "Success" && expected.ok) expect(result.success).toEqual(expected.value)
        expect(({} as Record<string, unknown>)["items"]).toBeUndefined()
      }),
      { numRuns: 1000 },
    )
  })

  it("refuses any path containing a forbidden key", () => {
    fc.assert(
      fc.property(
        stateArb,
        randomPathArb,
        fc.constantFrom("__proto__", "constructor", "prototype"),
        fc.nat(4),
        (state, path, bad, at) => {
          const poisoned = [...path.slice(0, at), bad, ...path.slice(at)]
          const result = applyPatches(state, [
            { op: "add", path: poisoned, value: { polluted: true } },
          ])
          expect(result._tag).toBe("Failure")
          expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
        },
      ),
    )
  })
})

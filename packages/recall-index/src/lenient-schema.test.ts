import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import Database from "better-sqlite3"
import { describe, expect, it } from "vitest"
import { hasUnknownKeys, lenient, parseJsonLine } from "./lenient-schema.js"

const Line = Schema.Struct({
  type: Schema.String,
  uuid: lenient(Schema.String),
  n: lenient(Schema.Number),
})
const decode = Schema.decodeUnknownOption(Line)

describe("lenient", () => {
  it("keeps good fields and drops a wrong-typed one instead of failing the record", () => {
    expect(decode({ type: "user", uuid: 5, n: 3, extra: true })).toEqual(
      Option.some({ type: "user", n: 3 }),
    )
    expect(decode({ type: "user", uuid: "u1" })).toEqual(Option.some({ type: "user", uuid: "u1" }))
  })

  it("still fails when a required field is wrong", () => {
    expect(Option.isNone(decode({ type: 1 }))).toBe(true)
  })
})

describe("parseJsonLine / hasUnknownKeys", () => {
  it("returns undefined for invalid JSON and reports unknown keys", () => {
    expect(parseJsonLine("{oops")).toBeUndefined()
    expect(parseJsonLine("[1]")).toEqual([1])
    expect(hasUnknownKeys({ a: 1, b: 2 }, new Set(["a"]))).toBe(true)
    expect(hasUnknownKeys({ a: 1 }, new Set(["a"]))).toBe(false)
  })

  it("turns each lone surrogate escape into one U+FFFD and keeps pairs and escaped backslashes", () => {
    const line = String.raw`{"a":"x\ud83dy","b":["\ude00",1],"c":"\ud83d\ude00","d":"\\ud83d","\udc00":null}`
    expect(parseJsonLine(line)).toEqual({
      a: "x\ufffdy",
      b: ["\ufffd", 1],
      c: "😀",
      d: String.raw`\ud83d`,
      "\ufffd": null,
    })
    // The result is what SQLite stores and gives back: one replacement character, not three.
    const parsed = parseJsonLine(line) as { a: string }
    const sqlite = new Database(":memory:")
    expect(sqlite.prepare<[string], string>("select ?").pluck().get(parsed.a)).toBe("x\ufffdy")
    sqlite.close()
    expect(parseJsonLine(String.raw`{"__proto__":"\ud83d"}`)).toEqual(
      JSON.parse(String.raw`{"__proto__":"\ufffd"}`),
    )
  })
})

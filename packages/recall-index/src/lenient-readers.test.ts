import fc from "fast-check"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import {
  lenient,
  readArray,
  readBoolean,
  readString,
  readStringOrArray,
  readStruct,
  readUnknown,
} from "./lenient-schema.js"

// The hand-written readers replace `Schema.Struct` + `lenient` decodes on the per-line hot path;
// these properties pin them to the schema semantics: same accepted values, same output (keys,
// values and key order, which `sanitizedJson` renders), same rejections.

const Inner = Schema.Struct({ sessionId: lenient(Schema.String) })
const Message = Schema.Struct({
  role: lenient(Schema.String),
  content: lenient(Schema.Union([Schema.String, Schema.Array(Schema.Unknown)])),
})
const Line = Schema.Struct({
  timestamp: lenient(Schema.String),
  type: Schema.String,
  flag: lenient(Schema.Boolean),
  payload: lenient(Schema.Unknown),
  items: lenient(Schema.Array(Schema.Unknown)),
  forkedFrom: lenient(Inner),
  message: lenient(Message),
})
const decodeLine = Schema.decodeUnknownOption(Line)

const readLine = readStruct(
  {
    timestamp: readString,
    type: readString,
    flag: readBoolean,
    payload: readUnknown,
    items: readArray,
    forkedFrom: readStruct({ sessionId: readString }),
    message: readStruct({ role: readString, content: readStringOrArray }),
  },
  ["type"],
)

const keys = ["timestamp", "type", "flag", "payload", "items", "forkedFrom", "message", "extra"]
const leaf = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.integer(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
)
const value = fc.oneof(
  leaf,
  fc.dictionary(fc.constantFrom("sessionId", "role", "content", "x"), leaf, { maxKeys: 3 }),
)
const line = fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length })

describe("lenient readers (property)", () => {
  it("decode exactly like the Schema struct they replace, key order included", () => {
    fc.assert(
      fc.property(line, (json) => {
        const expected = Option.getOrUndefined(decodeLine(json))
        const actual = readLine(json)
        expect(actual).toStrictEqual(expected)
        expect(JSON.stringify(actual)).toBe(JSON.stringify(expected))
      }),
      { numRuns: 2000 },
    )
  })

  it("reject non-objects and arrays like Schema.Struct", () => {
    for (const input of [null, 1, "x", true, [], [{ type: "user" }]]) {
      expect(readLine(input)).toBeUndefined()
      expect(Option.isNone(decodeLine(input))).toBe(true)
    }
  })
})

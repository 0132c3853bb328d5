import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJson } from "./canonical-json.js"
import type { HandoffValidationError } from "./errors.js"
import { handoffLimits } from "./handoff-schema.js"
import type { Handoff } from "./handoff-schema.js"
import {
  parseHandoffJson,
  parseHandoffJsonResult,
  validateHandoff,
  validateHandoffResult,
} from "./handoff-validation.js"

const githubToken = ["ghp_", "a1B2".repeat(9)].join("")

const failure = (
  result: Result.Result<Handoff, HandoffValidationError>,
): HandoffValidationError => {
  if (Result.isSuccess(result))
    throw new Error(`expected a failure, got ${canonicalJson(result.success)}`)
  return result.failure
}

const problems = (input: unknown) => {
  const error = failure(validateHandoffResult(input))
  if (error._tag !== "HandoffInvalid") throw new Error(`expected HandoffInvalid, got ${error._tag}`)
  return error.issues
}

describe("validateHandoff: accepted handoffs", () => {
  it('fills omitted optional fields (preserve, discard → [], nextStep → "")', () => {
    expect(validateHandoffResult({ summary: "x", resume: false })).toStrictEqual(
      Result.succeed({ summary: "x", preserve: [], discard: [], nextStep: "", resume: false }),
    )
  })

  it("keeps every string exactly as written (no trim, no normalisation)", () => {
    const input = {
      summary: "  café (cafe\u0301) 日本語 😀 𝄞\n",
      preserve: [" keep ", 'a "quoted" \\ path'],
      discard: ["old logs\t"],
      nextStep: " Run the tests ",
      resume: true,
    }
    expect(validateHandoffResult(input)).toStrictEqual(Result.succeed(input))
  })

  it("allows an empty or blank nextStep when resume is false", () => {
    expect(
      Result.isSuccess(validateHandoffResult({ summary: "x", nextStep: "", resume: false })),
    ).toBe(true)
    expect(
      Result.isSuccess(validateHandoffResult({ summary: "x", nextStep: " ", resume: false })),
    ).toBe(true)
  })

  it("accepts exactly 40 items per list", () => {
    const items = Array.from({ length: 40 }, (_, i) => `item ${i}`)
    const result = validateHandoffResult({
      summary: "x",
      preserve: items,
      discard: items,
      resume: false,
    })
    expect(Result.isSuccess(result)).toBe(true)
  })

  it("has the documented limits", () => {
    expect(handoffLimits).toStrictEqual({ maxBytes: 32_000, maxListItems: 40 })
  })
})

describe("validateHandoff: schema rules name the field and the rule", () => {
  const cases: ReadonlyArray<
    readonly [string, unknown, ReadonlyArray<{ path: string; rule: string }>]
  > = [
    ["null", null, [{ path: "", rule: "must be a JSON object (found null)" }]],
    ["an array", [], [{ path: "", rule: "must be a JSON object (found an array)" }]],
    ["a string", "handoff", [{ path: "", rule: "must be a JSON object (found a string)" }]],
    [
      "missing required fields",
      {},
      [
        { path: "summary", rule: "is required" },
        { path: "resume", rule: "is required" },
      ],
    ],
    [
      "a blank summary",
      { summary: " \n\t", resume: false },
      [{ path: "summary", rule: "must contain non-whitespace text" }],
    ],
    [
      "a string resume",
      { summary: "x", resume: "true" },
      [{ path: "resume", rule: "must be a boolean (true or false) (found a string)" }],
    ],
    [
      "resume without nextStep",
      { summary: "x", resume: true },
      [{ path: "nextStep", rule: "must contain non-whitespace text when resume is true" }],
    ],
    [
      "resume with a blank nextStep",
      { summary: "x", nextStep: "  ", resume: true },
      [{ path: "nextStep", rule: "must contain non-whitespace text when resume is true" }],
    ],
    [
      "a blank preserve item",
      { summary: "x", preserve: ["ok", " "], resume: false },
      [{ path: "preserve[1]", rule: "must contain non-whitespace text" }],
    ],
    [
      "a non-array discard",
      { summary: "x", discard: "logs", resume: false },
      [{ path: "discard", rule: "must be an array of strings (found a string)" }],
    ],
    [
      "a non-string discard item",
      { summary: "x", discard: [1], resume: false },
      [{ path: "discard[0]", rule: "must be a string (found a number)" }],
    ],
    [
      "an explicit undefined",
      { summary: "x", preserve: undefined, resume: false },
      [{ path: "preserve", rule: "must be an array of strings (found undefined)" }],
    ],
    [
      "41 preserve items",
      { summary: "x", preserve: Array.from({ length: 41 }, () => "a"), resume: false },
      [{ path: "preserve", rule: "must have at most 40 items" }],
    ],
    [
      "an unknown key",
      { summary: "x", resume: false, notes: "n" },
      [{ path: "notes", rule: "is not an allowed field" }],
    ],
    [
      "an unknown key that is not an identifier",
      { summary: "x", resume: false, "next step": "n" },
      [{ path: '["next step"]', rule: "is not an allowed field" }],
    ],
  ]
  for (const [name, input, expected] of cases) {
    it(`rejects ${name}`, () => {
      expect(problems(input)).toStrictEqual(expected)
    })
  }

  it("puts the first problem in path/rule and all problems in the message", () => {
    const error = failure(validateHandoffResult({ summary: "", resume: 1, extra: true }))
    expect(error).toMatchObject({
      _tag: "HandoffInvalid",
      path: "extra",
      rule: "is not an allowed field",
    })
    expect(error.message).toBe(
      "Invalid handoff (3 problems): extra is not an allowed field; summary must contain " +
        "non-whitespace text; resume must be a boolean (true or false) (found a number).",
    )
  })

  it("masks a secret used as an unknown key and never quotes wrong-typed values", () => {
    const error = failure(
      validateHandoffResult({ summary: 5, resume: false, [githubToken]: githubToken }),
    )
    expect(JSON.stringify(error)).not.toContain(githubToken)
    expect(error.message).not.toContain(githubToken)
    expect(error.message).toBe(
      'Invalid handoff (2 problems): ["[redacted github-token]"] is not an allowed field; ' +
        "summary must be a string (found a number).",
    )
  })

  it("caps the number of reported problems", () => {
    const issues = problems({
      summary: "x",
      resume: false,
      preserve: Array.from({ length: 30 }, () => 0),
    })
    expect(issues).toHaveLength(21)
    expect(issues[20]).toStrictEqual({ path: "", rule: "has 10 further problems" })
  })

  it("counts every problem in the message, not only the ones listed", () => {
    const error = failure(
      validateHandoffResult({
        summary: "x",
        resume: false,
        preserve: Array.from({ length: 30 }, () => 0),
      }),
    )
    expect(error).toMatchObject({ _tag: "HandoffInvalid", total: 30 })
    expect(error.message).toMatch(/^Invalid handoff \(30 problems, first 20 shown\): /)
    expect(error.message).not.toContain("further problems")
    expect(error.message.split("; ")).toHaveLength(20)
  })

  it("reports hostile objects (throwing getters, proxies) as unreadable", () => {
    const getter = Object.defineProperty({ resume: false }, "summary", {
      enumerable: true,
      get: () => {
        throw new Error("boom")
      },
    })
    const proxy = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("boom")
        },
      },
    )
    for (const input of [getter, proxy]) {
      expect(problems(input)).toStrictEqual([
        { path: "", rule: "could not be read as plain JSON data" },
      ])
    }
  })
})

describe("validateHandoff: size limit on the canonical UTF-8 encoding", () => {
  const overhead = canonicalJson({
    discard: [],
    nextStep: "",
    preserve: [],
    resume: false,
    summary: "",
  }).length

  it("accepts exactly 32000 bytes and rejects 32001 with both numbers", () => {
    const fits = { summary: "a".repeat(32_000 - overhead), resume: false }
    expect(Result.isSuccess(validateHandoffResult(fits))).toBe(true)
    const error = failure(validateHandoffResult({ ...fits, summary: `${fits.summary}a` }))
    expect(error).toMatchObject({ _tag: "HandoffTooLarge", bytes: 32_001, limit: 32_000 })
    expect(error.message).toBe(
      "Handoff is 32001 bytes of canonical JSON (UTF-8); the limit is 32000 bytes. " +
        "Shorten summary, preserve, discard or nextStep and try again.",
    )
  })

  it("counts UTF-8 bytes and JSON escapes, not characters", () => {
    // 😀 is 4 bytes, é 2, and "\n" is written as two bytes (backslash, n).
    const pad = "a".repeat((32_000 - overhead) % 4)
    const emoji = "😀".repeat(Math.floor((32_000 - overhead) / 4))
    expect(Result.isSuccess(validateHandoffResult({ summary: pad + emoji, resume: false }))).toBe(
      true,
    )
    expect(
      failure(validateHandoffResult({ summary: `${pad}${emoji}é`, resume: false })),
    ).toMatchObject({
      _tag: "HandoffTooLarge",
      bytes: 32_002,
    })
    expect(
      failure(validateHandoffResult({ summary: `${pad}${emoji}\n`, resume: false })),
    ).toMatchObject({
      _tag: "HandoffTooLarge",
      bytes: 32_002,
    })
  })

  it("measures the decoded handoff, so omitted optional fields count as written", () => {
    const summary = "a".repeat(32_000 - overhead)
    expect(Result.isSuccess(validateHandoffResult({ summary, resume: false }))).toBe(true)
    expect(
      Result.isSuccess(
        validateHandoffResult({ summary, resume: false, preserve: [], discard: [], nextStep: "" }),
      ),
    ).toBe(true)
  })
})

describe("validateHandoff: secret scan", () => {
  it("refuses a likely credential, naming the field and kind but never the secret", () => {
    const input = {
      summary: "Deploy fixed",
      preserve: ["a", "b", "c", `use ${githubToken} for the API`],
      nextStep: "Run tests with password=hunter2x",
      resume: true,
    }
    const error = failure(validateHandoffResult(input))
    expect(error).toMatchObject({
      _tag: "HandoffContainsSecret",
      findings: [
        { path: "preserve[3]", kind: "github-token" },
        { path: "nextStep", kind: "credential-assignment" },
      ],
    })
    expect(error.message).toBe(
      "Handoff refused: preserve[3] contains a GitHub token; nextStep contains a password, secret " +
        "or token assignment. Remove the secret and refer to it by name (for example an " +
        "environment variable) instead; handoffs are stored in plain text.",
    )
    const everything = [
      error.message,
      String(error),
      error.stack ?? "",
      JSON.stringify(error),
      JSON.stringify(Object.values(error)),
    ].join("\n")
    expect(everything).not.toContain(githubToken)
    expect(everything).not.toContain("hunter2x")
  })

  it("reports each kind once per field", () => {
    const error = failure(
      validateHandoffResult({ summary: `${githubToken} and ${githubToken}`, resume: false }),
    )
    expect(error).toMatchObject({ findings: [{ path: "summary", kind: "github-token" }] })
  })

  it("accepts prose about passwords and placeholders", () => {
    const input = {
      summary: "The password lives in 1Password; config uses password=${DB_PASSWORD}",
      preserve: ["api_key=<redacted>", "token: ***"],
      resume: false,
    }
    expect(Result.isSuccess(validateHandoffResult(input))).toBe(true)
  })
})

describe("check order: JSON → schema → size → secrets", () => {
  const huge = "a".repeat(40_000)

  it("reports schema problems before size", () => {
    expect(failure(validateHandoffResult({ summary: huge, resume: "no" }))._tag).toBe(
      "HandoffInvalid",
    )
  })

  it("reports size before secrets", () => {
    expect(
      failure(validateHandoffResult({ summary: `${githubToken} ${huge}`, resume: false }))._tag,
    ).toBe("HandoffTooLarge")
  })

  it("reports schema problems before secrets", () => {
    expect(failure(validateHandoffResult({ summary: githubToken, resume: "no" }))._tag).toBe(
      "HandoffInvalid",
    )
  })

  it("reports JSON syntax before anything else", () => {
    expect(failure(parseHandoffJsonResult(`{"summary":"${githubToken}",`))._tag).toBe(
      "HandoffInvalid",
    )
  })
})

describe("parseHandoffJson", () => {
  it("parses and validates JSON text", () => {
    expect(parseHandoffJsonResult('{"summary":"s","nextStep":"n","resume":true}')).toStrictEqual(
      Result.succeed({ summary: "s", preserve: [], discard: [], nextStep: "n", resume: true }),
    )
  })

  const syntax: ReadonlyArray<readonly [string, string]> = [
    ["{broken", "must be valid JSON: Expected property name or '}' at line 1, column 2"],
    [
      '{\n  "summary": "x",\n  "resume": false,\n}',
      "must be valid JSON: Expected double-quoted property name at line 4, column 1",
    ],
    ["", "must be valid JSON: unexpected end of input at line 1, column 1"],
    ['{"a":1}\n}', "must be valid JSON: Unexpected non-whitespace character at line 2, column 1"],
    ["[1,]", "must be valid JSON: unexpected token"],
  ]
  for (const [text, rule] of syntax) {
    it(`reports ${JSON.stringify(text)} as HandoffInvalid with a location`, () => {
      expect(failure(parseHandoffJsonResult(text))).toMatchObject({
        _tag: "HandoffInvalid",
        path: "",
        rule,
      })
    })
  }

  it("refuses a key repeated in one object (also when spelled with escapes), without quoting it", () => {
    for (const text of [
      '{"summary":"s","nextStep":"n","resume":true,"resume":false}',
      '{"summary":"s","resume":true,"preserve":[{"a":1}],"\\u0073ummary":"t"}',
    ]) {
      const error = failure(parseHandoffJsonResult(text))
      expect(error).toMatchObject({ _tag: "HandoffInvalid", path: "" })
      expect(error.message).toContain("must not repeat a key")
    }
    // The same key in different objects, and key-like strings in values and arrays, are fine.
    expect(
      Result.isSuccess(
        parseHandoffJsonResult(
          '{"summary":"x: \\"summary\\":","preserve":["summary",":"],"nextStep":"n","resume":true}',
        ),
      ),
    ).toBe(true)
  })

  it("refuses bytes that are not UTF-8 instead of replacing them (the digest binds the bytes)", () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"summary":"caf'),
      0xe9,
      ...new TextEncoder().encode('","resume":false}'),
    ])
    expect(failure(parseHandoffJsonResult(bytes))).toMatchObject({
      _tag: "HandoffInvalid",
      path: "",
    })
    expect(failure(parseHandoffJsonResult(bytes)).message).toContain("UTF-8")
    const good = new TextEncoder().encode('\uFEFF{"summary":"café","resume":false}')
    expect(Result.isSuccess(parseHandoffJsonResult(good))).toBe(true)
  })

  it("never quotes the input in a syntax error (V8 messages can)", () => {
    const text = `{"summary": "x" "${githubToken}"}\n{"x": tru}`
    for (const candidate of [text, `{"a":\n ${githubToken}}`]) {
      const error = failure(parseHandoffJsonResult(candidate))
      expect(JSON.stringify(error)).not.toContain(githubToken)
      expect(error.message).not.toContain(githubToken)
    }
  })

  it("ignores one leading byte-order mark", () => {
    expect(parseHandoffJsonResult('\uFEFF{"summary":"s","resume":false}')).toStrictEqual(
      Result.succeed({ summary: "s", preserve: [], discard: [], nextStep: "", resume: false }),
    )
  })

  it("rejects a non-string argument from untyped callers", () => {
    expect(failure(parseHandoffJsonResult(42 as unknown as string))).toMatchObject({
      rule: "must be JSON text (a string)",
    })
  })

  it("has an Effect form that fails with the same tagged error", () => {
    const exit = Effect.runSyncExit(parseHandoffJson("{broken"))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(Effect.runSync(Effect.flip(parseHandoffJson("{broken")))._tag).toBe("HandoffInvalid")
    expect(Effect.runSync(validateHandoff({ summary: "s", resume: false }))).toStrictEqual({
      summary: "s",
      preserve: [],
      discard: [],
      nextStep: "",
      resume: false,
    })
  })
})

const knownTags = new Set(["HandoffInvalid", "HandoffTooLarge", "HandoffContainsSecret"])

/** Checks the invariants every accepted handoff satisfies. */
const expectValidHandoff = (h: Handoff): void => {
  expect(h.summary.trim().length).toBeGreaterThan(0)
  expect(h.preserve.length).toBeLessThanOrEqual(40)
  expect(h.discard.length).toBeLessThanOrEqual(40)
  for (const item of [...h.preserve, ...h.discard]) expect(item.trim().length).toBeGreaterThan(0)
  if (h.resume) expect(h.nextStep.trim().length).toBeGreaterThan(0)
  expect(new TextEncoder().encode(canonicalJson(h)).length).toBeLessThanOrEqual(32_000)
  expect(Object.keys(h).sort()).toStrictEqual([
    "discard",
    "nextStep",
    "preserve",
    "resume",
    "summary",
  ])
}

const checkTotal = (input: unknown): void => {
  const result = validateHandoffResult(input)
  if (Result.isFailure(result)) {
    expect(knownTags.has(result.failure._tag)).toBe(true)
    expect(typeof result.failure.message).toBe("string")
    return
  }
  expectValidHandoff(result.success)
  // Accepted handoffs are fixed points: re-validating the decoded value or its JSON changes nothing.
  expect(validateHandoffResult(result.success)).toStrictEqual(result)
  expect(parseHandoffJsonResult(canonicalJson(result.success))).toStrictEqual(result)
}

describe("validation never throws", () => {
  it("on arbitrary JSON values", () => {
    fc.assert(fc.property(fc.jsonValue(), checkTotal), { numRuns: 500 })
  })

  it("on arbitrary JS values", () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withBoxedValues: true }), checkTotal),
      {
        numRuns: 500,
      },
    )
  })

  it("on objects that look almost like handoffs", () => {
    const text = fc.oneof(
      { weight: 30, arbitrary: fc.string({ maxLength: 30 }).map((s) => `a${s}`) },
      fc.constantFrom("", " ", "\n\t"),
      fc.string({ unit: "binary", maxLength: 30 }),
    )
    const list = fc.oneof(
      { weight: 8, arbitrary: fc.array(text, { maxLength: 42 }) },
      fc.anything({ maxDepth: 2 }),
    )
    const field = <T>(likely: fc.Arbitrary<T>) =>
      fc.oneof({ weight: 8, arbitrary: likely }, fc.anything({ maxDepth: 2 }))
    const extras = fc.oneof(
      { weight: 4, arbitrary: fc.constant({}) },
      fc.dictionary(fc.string(), fc.anything({ maxDepth: 1 }), { minKeys: 1, maxKeys: 2 }),
    )
    const almost = fc
      .tuple(
        fc.record(
          {
            summary: field(text),
            preserve: list,
            discard: list,
            nextStep: field(text),
            resume: field(fc.boolean()),
          },
          { requiredKeys: ["summary", "resume"] },
        ),
        extras,
      )
      .map(([fields, extra]) => ({ ...extra, ...fields }))
    let accepted = 0
    fc.assert(
      fc.property(almost, (input) => {
        checkTotal(input)
        if (Result.isSuccess(validateHandoffResult(input))) accepted++
      }),
      { numRuns: 400 },
    )
    // The generator must exercise the accepting path too, not only rejections.
    expect(accepted).toBeGreaterThan(20)
  })

  it("on arbitrary text given to parseHandoffJson", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const result = parseHandoffJsonResult(text)
        if (Result.isFailure(result)) expect(knownTags.has(result.failure._tag)).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it("in the Effect form (failures are typed, never defects)", () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        const exit = Effect.runSyncExit(validateHandoff(input))
        if (Exit.isFailure(exit)) {
          expect(Effect.runSync(Effect.flip(validateHandoff(input)))._tag).toMatch(/^Handoff/)
        }
      }),
      { numRuns: 300 },
    )
  })
})

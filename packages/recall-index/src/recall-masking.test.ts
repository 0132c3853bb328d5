// Masking gaps found by a black-box sweep: session titles (Claude `ai-title` / `custom-title` /
// legacy `summary`, Codex `thread_name_updated`), quoted secrets inside records rendered as JSON
// (a Bash tool call's `export X_PASSWORD="…"`, `"password": "…"` in a curl body, JSON strings
// holding JSON), and a raw record cut inside a surrogate pair.
import { describe, expect, it } from "vitest"
import { omissionMarker } from "./omission-marker.js"
import { boundedText, sanitizedJson } from "./raw-render.js"
import type { ParseResult } from "./transcript-model.js"
import { parseTranscriptBytes } from "./transcript-parser.js"

// Fake credentials, assembled at run time so that no credential-shaped literal sits in the repo.
const awsKey = ["AKIA", "Q3EGRSTUVWXY7ZAB"].join("")
const anthropicKey = ["sk-ant-", "api03-", "Zx9Qw8".repeat(6)].join("")
const githubToken = ["ghp_", "a1B2".repeat(9)].join("")
const password = ["Quoted", "Pw!123x"].join("")
const curlPassword = ["CurlJson", "Pw!77"].join("")
const hookKey = ["Hk9sEcReT", "vAlUe1234567"].join("")
const hookPassword = ["NestedPassw0rd", "!x"].join("")
const innerToken = ["InnerT0ken", "Value998877"].join("")
const innerSecret = ["Cl1entSecret", "Value55"].join("")

const encoder = new TextEncoder()
const SID = "0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c"
const claudeFile = { source: "claude" as const, path: `/p/-w/${SID}.jsonl` }
const claudeLines = (lines: ReadonlyArray<Record<string, unknown>>): ParseResult =>
  parseTranscriptBytes(
    claudeFile,
    encoder.encode(
      lines.map((l) => JSON.stringify({ sessionId: SID, cwd: "/w", ...l })).join("\n") + "\n",
    ),
  )
const user = (uuid: string, content: unknown) => ({
  type: "user",
  uuid,
  timestamp: "2026-03-01T10:00:00.000Z",
  message: { role: "user", content },
})
const assistant = (uuid: string, content: ReadonlyArray<unknown>) => ({
  type: "assistant",
  uuid,
  timestamp: "2026-03-01T10:00:01.000Z",
  message: { id: `msg-${uuid}`, role: "assistant", model: "claude-x", content },
})
const titleOf = (r: ParseResult) => r.sessions.find((s) => s.sessionId === SID)?.title
/** Every text the parse hands out: raw records, turn texts, session titles and first prompts. */
const everything = (r: ParseResult): string =>
  JSON.stringify([
    r.preamble.map((p) => p.text),
    r.turns.map((t) => [t.surface.map((s) => s.text), t.records.map((rec) => rec.text)]),
    r.sessions.map((s) => [s.title, s.firstPrompt]),
  ])

describe("session titles are masked", () => {
  const conversation = [user("u1", "hello"), assistant("a1", [{ type: "text", text: "hi" }])]

  it("masks a Claude ai-title, custom-title and legacy summary", () => {
    const ai = claudeLines([...conversation, { type: "ai-title", aiTitle: `Use key ${awsKey}` }])
    expect(titleOf(ai)).toBe("Use key [redacted aws-access-key-id]")
    const custom = claudeLines([
      ...conversation,
      { type: "custom-title", customTitle: `${anthropicKey} rotation` },
    ])
    expect(titleOf(custom)).toBe("[redacted anthropic-api-key] rotation")
    const summary = claudeLines([
      ...conversation,
      { type: "summary", summary: `Set password=${password} in config`, leafUuid: "a1" },
    ])
    expect(titleOf(summary)).toBe("Set password=[redacted credential-assignment] in config")
    for (const r of [ai, custom, summary]) {
      for (const secret of [awsKey, anthropicKey, password]) {
        expect(everything(r)).not.toContain(secret)
      }
    }
  })

  it("masks a Codex thread_name_updated title", () => {
    const id = "bcdd45be-d03f-4678-9881-efdf646a9628"
    const line = (i: number, type: string, payload: Record<string, unknown>) =>
      JSON.stringify({ timestamp: `2026-03-01T10:00:0${i}.000Z`, type, payload })
    const r = parseTranscriptBytes(
      {
        source: "codex" as const,
        path: `/c/sessions/2026/03/01/rollout-2026-03-01T10-00-00-${id}.jsonl`,
      },
      encoder.encode(
        [
          line(0, "session_meta", { id, timestamp: "2026-03-01T10:00:00.000Z", cwd: "/w" }),
          line(1, "response_item", {
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "fix the leak" }],
          }),
          line(2, "event_msg", {
            type: "thread_name_updated",
            thread_id: id,
            thread_name: `fix ${githubToken} leak`,
          }),
        ].join("\n") + "\n",
      ),
    )
    expect(r.sessions.find((s) => s.sessionId === id)?.title).toBe(
      "fix [redacted github-token] leak",
    )
    expect(everything(r)).not.toContain(githubToken)
  })
})

describe("quoted secrets inside records rendered as JSON are masked", () => {
  it('masks export X_PASSWORD="…" and a curl JSON body in a Bash tool call', () => {
    const r = claudeLines([
      user("u1", "run the migration"),
      assistant("a1", [
        {
          type: "tool_use",
          id: "toolu_1",
          name: "Bash",
          input: { command: `export DB_PASSWORD="${password}" && ./migrate` },
        },
        {
          type: "tool_use",
          id: "toolu_2",
          name: "Bash",
          input: {
            command: `curl -d '{"username": "bob", "password": "${curlPassword}"}' https://api.test`,
          },
        },
      ]),
    ])
    const all = everything(r)
    expect(all).not.toContain(password)
    expect(all).not.toContain(curlPassword)
    expect(all).toContain('DB_PASSWORD=\\\\\\"[redacted credential-assignment]')
  })

  it("masks JSON held in a JSON string: hook output and a double-encoded tool result", () => {
    const stdout = JSON.stringify({ api_key: hookKey, password: hookPassword })
    const nested = JSON.stringify({
      result: JSON.stringify({ token: innerToken, client_secret: innerSecret }),
    })
    const r = claudeLines([
      user("u1", "call the tool"),
      assistant("a1", [{ type: "tool_use", id: "toolu_1", name: "mcp__db__q", input: {} }]),
      user("u2", [{ type: "tool_result", tool_use_id: "toolu_1", content: nested }]),
      {
        type: "attachment",
        uuid: "h1",
        attachment: { type: "hook_success", hookName: "PostToolUse", stdout },
      },
      assistant("a2", [{ type: "text", text: "done" }]),
    ])
    const all = everything(r)
    for (const secret of [hookKey, hookPassword, innerToken, innerSecret]) {
      expect(all).not.toContain(secret)
    }
  })

  it("masks at any depth of JSON in JSON", () => {
    let value: unknown = { command: `export API_TOKEN="${password}" && deploy` }
    for (let depth = 0; depth < 4; depth++) {
      const { text } = boundedText(sanitizedJson(value, 16_384), 16_384)
      expect(text, `depth ${depth}`).not.toContain(password)
      expect(text).toContain("[redacted credential-assignment]")
      value = { wrapped: JSON.stringify(value) }
    }
  })
})

describe("a raw record's cut never splits a surrogate pair", () => {
  it("backs off one unit when the cap falls inside a pair", () => {
    const cap = 16_384
    const text = `${"x".repeat(cap - 1)}😀 and more`
    const cut = boundedText(text, cap)
    expect(cut.truncated).toBe(true)
    expect(cut.text.isWellFormed()).toBe(true)
    expect(cut.text.endsWith("😀 and more")).toBe(true)
    expect(cut.text.length).toBeLessThanOrEqual(cap)
    // The head's cut backs off a pair that would be split.
    const room = cap - Math.floor(cap / 4) - omissionMarker(text.length).length
    const headPair = `${"x".repeat(room - 1)}😀${"y".repeat(cap * 2)}`
    const head = boundedText(headPair, cap).text
    expect(head.isWellFormed()).toBe(true)
    expect(head.startsWith(`${"x".repeat(room - 1)}\n[…`)).toBe(true)
    // So does the tail's start.
    const tailPair = `${"y".repeat(cap * 2)}😀${"z".repeat(Math.floor(cap / 4) - 1)}`
    const tail = boundedText(tailPair, cap).text
    expect(tail.isWellFormed()).toBe(true)
    expect(tail.endsWith(`…]\n${"z".repeat(Math.floor(cap / 4) - 1)}`)).toBe(true)
    // A pair that fits whole is kept.
    expect(boundedText(`${"x".repeat(cap - 2)}😀`, cap).text).toBe(`${"x".repeat(cap - 2)}😀`)
  })

  it("keeps the window and long JSON strings well formed too", () => {
    const cap = 100
    // Over five caps the head and tail windows are masked apart: neither cut splits the pair.
    const split = boundedText(`${"x".repeat(cap * 4 - 1)}😀${"x".repeat(cap)}😀`, cap).text
    expect(split.isWellFormed()).toBe(true)
    expect(split.endsWith("😀")).toBe(true)
    // Up to five caps the whole text is masked first, so a key that shrinks leaves a text that
    // fits whole.
    const key = [
      "-----BEGIN RSA ",
      "PRIVATE KEY-----\n",
      "MIIEowIBAAKCAQEA".repeat(20),
      "\n-----END RSA ",
      "PRIVATE KEY-----\n",
    ].join("")
    const shrunk = boundedText(`${key}${"x".repeat(10)}😀 tail`, cap)
    expect(shrunk).toEqual({
      text: `[redacted private-key]\n${"x".repeat(10)}😀 tail`,
      truncated: false,
      masked: 1,
    })
    const long = `${"y".repeat(1_999)}😀${"z".repeat(100)}`
    const json = sanitizedJson({ text: long }, 16_384)
    expect(JSON.parse(json).text).toBe(`${"y".repeat(1_999)}…`)
  })
})

describe("a record over the cap keeps its head and its end", () => {
  const cap = 16_384
  const testRun = (lines: number): string =>
    [
      "> vitest run",
      ...Array.from({ length: lines }, (_, i) => ` ✓ suite ${i} > case passes (${i % 97} ms)`),
      " FAIL  src/retry-policy.test.ts > backs off after a 429",
      "AssertionError: expected 3 retries, got 5",
      " Tests  1 failed | 4999 passed (5000)",
    ].join("\n")

  it("keeps the closing lines of a long output, with the count of what it left out", () => {
    for (const lines of [500, 5_000]) {
      // 500 lines: under five caps (one masking pass); 5 000: head and tail windows masked apart.
      const text = testRun(lines)
      const cut = boundedText(text, cap)
      expect(cut.truncated).toBe(true)
      expect(cut.text.length).toBeLessThanOrEqual(cap)
      expect(cut.text.startsWith("> vitest run\n ✓ suite 0")).toBe(true)
      expect(cut.text.endsWith(" Tests  1 failed | 4999 passed (5000)")).toBe(true)
      expect(cut.text).toContain("AssertionError: expected 3 retries, got 5")
      const omitted = Number(/\[… (\d+) characters omitted …\]/.exec(cut.text)?.[1])
      expect(omitted).toBe(text.length - cut.text.length + omissionMarker(omitted).length)
    }
  })

  it("masks a secret in the kept end and keeps none from the middle", () => {
    const token = `ghp_${"A1b2C3d4".repeat(5)}`
    const middle = `export GITHUB_TOKEN=${token}\n`
    const text = `${"a".repeat(cap * 5)}${middle}${"b".repeat(cap * 5)}\nlast: token=${token}\n`
    const cut = boundedText(text, cap)
    expect(cut.text).not.toContain(token)
    expect(cut.text).not.toContain("GITHUB_TOKEN")
    expect(cut.text).toMatch(/last: token=\[redacted [a-z-]+\]\n$/)
    expect(cut.masked).toBeGreaterThanOrEqual(1)
  })

  it("is reached through the parser: grep-able end of a Claude tool result", () => {
    const result = claudeLines([
      user("u1", "run the tests"),
      user("u2", [{ type: "tool_result", tool_use_id: "t1", content: testRun(5_000) }]),
    ])
    const record = result.turns.flatMap((t) => t.records).find((r) => r.kind === "tool-output")
    expect(record?.truncated).toBe(true)
    expect(record?.text).toContain("AssertionError: expected 3 retries, got 5")
  })
})

// Base64 pasted as text (a data URL in a prompt, an MCP image result returned as a JSON string)
// becomes a short placeholder, so it is neither chunked, embedded nor ranked; nothing else does.
import { describe, expect, it } from "vitest"
import { maskTranscriptText, replaceBase64 } from "./secret-masking.js"
import { parseTranscriptBytes } from "./transcript-parser.js"
import type { Turn } from "./transcript-model.js"

const textOf = (t: Turn): string => t.surface.map((x) => x.text).join("\n\n")

/** Deterministic base64 of `bytes` pseudo-random bytes (what a PNG encodes to). */
const base64Of = (bytes: number, seed = 7): string => {
  const data = new Uint8Array(bytes)
  let x = seed
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    data[i] = x >> 16
  }
  return Buffer.from(data).toString("base64")
}

describe("replaceBase64", () => {
  it("replaces a data URL in a prompt with its media type and size", () => {
    const png = base64Of(270 * 1024)
    const out = maskTranscriptText(`what is wrong here? data:image/png;base64,${png} thanks`)
    expect(out).toEqual({
      text: "what is wrong here? [base64 image/png, 270 KB] thanks",
      masked: 0,
    })
  })

  it("replaces a long bare base64 run, also inside JSON", () => {
    const run = base64Of(3072)
    expect(replaceBase64(`blob: ${run}`)).toBe("blob: [base64 data, 3 KB]")
    expect(replaceBase64(`[{"type":"image","data":"${run}","mimeType":"image/png"}]`)).toBe(
      '[{"type":"image","data":"[base64 data, 3 KB]","mimeType":"image/png"}]',
    )
    expect(replaceBase64(`x ${base64Of(3 * 1024 * 1024)}`)).toBe("x [base64 data, 3.0 MB]")
  })

  it("leaves hashes, ids, paths, words, code and short base64 alone", () => {
    const keep = [
      "a3f1c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a3", // git SHA
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".repeat(4), // hex
      "0F1E2D3C4B5A69788796A5B4C3D2E1F0".repeat(8), // upper hex
      "123e4567-e89b-12d3-a456-426614174000",
      "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
      `/${"src/main/java/com/Example/Module2/Service3/".repeat(8)}Handler.java`,
      `/${"home/user/projects/app/node/modules/".repeat(8)}`,
      "supercalifragilisticexpialidocious".repeat(8),
      `const ${"aVeryLongGeneratedIdentifierName".repeat(8)}2 = 1`,
      `${"abcdefghij0".repeat(20)}XYZ`, // mostly lower case
      "function(){return a.b(c,d)+e[f]}".repeat(20), // minified code
      base64Of(120), // 160 characters
      "data:image/png;base64,", // no payload
      "metadata:image/png;base64,iVBORw0KGgoAAAANSUhEUg", // not a data URL
    ]
    for (const text of keep) expect(replaceBase64(text)).toBe(text)
  })

  it("still finds and counts secrets next to base64, and counts no placeholder", () => {
    const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    const out = maskTranscriptText(`token ${token} and data:image/gif;base64,${base64Of(600)}`)
    expect(out.masked).toBe(1)
    expect(out.text).not.toContain(token)
    expect(out.text).toContain("[base64 image/gif, 600 bytes]")
  })
})

describe("base64 in transcripts", () => {
  it("is stored and indexed as the placeholder, in the surface text and the raw record", () => {
    const png = base64Of(40 * 1024)
    const line = JSON.stringify({
      type: "user",
      sessionId: "5a0c1e7e-8f0b-4c55-9d1e-000000000002",
      uuid: "aaaaaaaa-0000-4000-8000-000000000001",
      timestamp: "2026-11-20T10:00:00.000Z",
      cwd: "/w/a",
      message: { role: "user", content: `look data:image/png;base64,${png} please` },
    })
    const r = parseTranscriptBytes(
      { source: "claude", path: "/c/projects/-w-a/5a0c1e7e-8f0b-4c55-9d1e-000000000002.jsonl" },
      new TextEncoder().encode(`${line}\n`),
    )
    expect(r.turns.map((t) => textOf(t))).toEqual(["look [base64 image/png, 40 KB] please"])
    expect(r.turns[0]?.records.map((x) => x.text).join("")).not.toContain(png.slice(0, 40))
    expect(r.stats.secretsMasked).toBe(0)
  })
})

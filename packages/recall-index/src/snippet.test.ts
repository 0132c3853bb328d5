import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { omissionMarker } from "./omission-marker.js"
import {
  capRecordText,
  capText,
  holdsQueryWord,
  queryTerms,
  snippetAt,
  snippetFor,
} from "./snippet.js"

describe("snippets", () => {
  const long = `${"lorem ipsum ".repeat(60)}the retry policy is exponential backoff ${"dolor sit ".repeat(60)}`

  it("centres on the first query term and stays bounded", () => {
    const s = snippetFor(long, queryTerms("what RETRY policy"), 120)
    expect(s).toContain("retry policy")
    expect(s.startsWith("…")).toBe(true)
    expect(s.endsWith("…")).toBe(true)
    expect(s.length).toBeLessThanOrEqual(122)
  })

  it("matches a stem for porter hits and falls back to the start", () => {
    expect(snippetFor("we keep retrying with jitter", queryTerms("retries"), 60)).toContain(
      "retrying",
    )
    expect(snippetFor(long, ["absent"], 50).startsWith("lorem")).toBe(true)
  })

  it("centres a CJK question written without spaces on the words the text shares", () => {
    const text = `${"今天的天气很好，我们去公园散步吧。".repeat(20)}我们决定把上传的重试策略改成指数退避。`
    const terms = queryTerms("上传的重试策略是什么？")
    expect(terms[0]).toBe("上传的重试策略是什么")
    expect(terms).toContain("重试")
    const s = snippetFor(text, terms, 60)
    expect(s).toContain("重试策略")
    // A bigram found early ("我们") does not pull the window away from a longer term's match.
    expect(snippetFor(`${"我们".repeat(100)}重试策略`, ["重试策略", "我们"], 20)).toContain(
      "重试策略",
    )

    // Without the whole question in the text, the longest piece it shares wins over the first
    // bigram found.
    const chat = `${"我们今天聊了很多别的事情，".repeat(20)}最后把重试策略改成了指数退避。`
    const centred = snippetFor(chat, queryTerms("我们的重试策略是什么"), 40)
    expect(centred).toContain("重试策略")
    expect(centred.startsWith("…")).toBe(true)
  })

  it("cuts around a known match and collapses whitespace", () => {
    const text = `${"a\n".repeat(300)}needle\n\tafter`
    const at = text.indexOf("needle")
    const s = snippetAt(text, at, 6, 40)
    expect(s).toContain("needle")
    expect(s).not.toContain("\n")
  })

  it("never exceeds the cap (plus ellipses) and never splits a surrogate pair", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 600 }),
        fc.integer({ min: 40, max: 300 }),
        (text, cap) => {
          const s = snippetFor(text, queryTerms(text.slice(100, 110)), cap)
          expect(s.replace(/^…|…$/g, "").length).toBeLessThanOrEqual(cap)
          const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
          if (!lone.test(text)) expect(lone.test(s)).toBe(false)
          const capped = capText(text, cap)
          expect(capped.truncated).toBe(text.length > cap)
        },
      ),
    )
  })
})

describe("capRecordText", () => {
  const output = [
    "$ pnpm test",
    ...Array.from({ length: 200 }, (_, i) => `ok ${i} - case ${i}`),
    "not ok 201 - retries after a 429",
    "[exit code 1]",
  ].join("\n")

  it("keeps a long record's head and end around the number left out", () => {
    const capped = capRecordText(output, 600)
    expect(capped.truncated).toBe(true)
    expect(capped.text.length).toBeLessThanOrEqual(600)
    expect(capped.text.startsWith("$ pnpm test\nok 0 - case 0")).toBe(true)
    expect(capped.text.endsWith("not ok 201 - retries after a 429\n[exit code 1]")).toBe(true)
    const omitted = Number(/\[… (\d+) characters omitted …\]/.exec(capped.text)?.[1])
    expect(omitted + capped.text.length - omissionMarker(omitted).length).toBe(output.length)
  })

  it("counts an index-time omission it leaves out, and never splits a surrogate pair", () => {
    const stored = `${"a".repeat(500)}${omissionMarker(90_000)}${"b".repeat(500)}`
    const capped = capRecordText(stored, 300)
    const omitted = Number(/\[… (\d+) characters omitted …\]/.exec(capped.text)?.[1])
    expect(capped.text.match(/characters omitted/g)).toHaveLength(1)
    expect(omitted).toBe(
      90_000 +
        stored.length -
        (capped.text.length - omissionMarker(omitted).length) -
        omissionMarker(90_000).length,
    )
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 400 }),
        fc.integer({ min: 1, max: 300 }),
        (text, cap) => {
          const r = capRecordText(text, cap)
          expect(r.text.isWellFormed()).toBe(true)
          expect(r.truncated).toBe(text.length > cap)
          expect(r.text.length).toBeLessThanOrEqual(cap + 1)
        },
      ),
    )
  })

  it("cuts a short cap or a fitting record as capText does", () => {
    expect(capRecordText(output, 100)).toEqual(capText(output, 100))
    expect(capRecordText("short", 600)).toEqual({ text: "short", truncated: false })
  })
})

describe("holdsQueryWord", () => {
  it("finds the query's own words as the word index would, and only those", () => {
    expect(holdsQueryWord("We settled the retries at three.", "retry policy")).toBe(true)
    expect(holdsQueryWord("Résumé sent to the café.", "cafe resume")).toBe(true)
    expect(holdsQueryWord("RETRY budget", "retry")).toBe(true)
    // A word the expander added ("operators" for "deployment") is not a word of the query.
    expect(holdsQueryWord("The operators were paged.", "blue green deployment")).toBe(false)
    // A query of emoji or symbols has no words: the query itself counts.
    expect(holdsQueryWord("Shipped 🚀 today", "🚀")).toBe(true)
    expect(holdsQueryWord("Shipped today", "🚀")).toBe(false)
    expect(holdsQueryWord("anything", "   ")).toBe(false)
  })
})

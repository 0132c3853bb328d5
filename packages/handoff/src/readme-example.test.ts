import { readFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { example } from "./readme-example.js"

const withoutImports = (code: string): string =>
  code.replace(/^import[\s\S]*?from "[^"]+"\n/gm, "").trim()

describe("README example", () => {
  it("is the code of src/readme-example.ts", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
    const block = /## Example[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
    const source = readFileSync(new URL("./readme-example.ts", import.meta.url), "utf8")
    const marked =
      /\/\/ README-EXAMPLE-START\n([\s\S]*?)\/\/ README-EXAMPLE-END/.exec(source)?.[1] ?? ""
    expect(withoutImports(block)).not.toBe("")
    expect(withoutImports(block)).toBe(marked.trim())
    expect(block).toContain('from "@baton/handoff"')
  })

  it("runs and renders the continuation turn", () => {
    const text = Effect.runSync(example)
    expect(text).toBe(
      [
        "Baton automatic continuation for job job-7.",
        "Context compaction has completed. This message resumes only the task that was authorized before compaction; it authorizes nothing else.",
        "Saved handoff: /jobs/thread-1.job-7.handoff.json",
        "The latest user instructions and permission boundaries take precedence over this message. If the user has asked you to stop, stop.",
        "Do only the handoff's nextStep. Do not schedule another compaction because of this message.",
        "The handoff's discard list refers to conversation context only; it never authorizes deleting files or any other data.",
        "Handoff (exact canonical JSON):",
        '{"discard":[],"nextStep":"Run the e2e suite and stop","preserve":[],"resume":true,"summary":"Parser ported; tests green"}',
      ].join("\n"),
    )
  })
})

// The README's example is the code of tests/readme-example.ts (type-checked there); it runs in
// readme-example.e2e.test.ts against the real Codex.
import { readFileSync } from "node:fs"
import { expect, test } from "vitest"

const section = (text: string, start: RegExp, end: RegExp): string => {
  const from = text.search(start)
  const rest = from < 0 ? "" : text.slice(from)
  const to = rest.search(end)
  return to < 0 ? "" : rest.slice(0, to)
}

test("the README example is the code of tests/readme-example.ts, imports included", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
  const block = /## Example[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
  const source = readFileSync(new URL("./readme-example.ts", import.meta.url), "utf8")
  const imports = section(source, /^import /m, /^\/\/ README-EXAMPLE-START/m)
  const marked = /\/\/ README-EXAMPLE-START\n([\s\S]*?)\/\/ README-EXAMPLE-END/.exec(source)?.[1]
  expect(marked ?? "").not.toBe("")
  expect(block).toBe(`${imports}${marked ?? ""}`)
  expect(block).toContain('from "@baton/wake"')
  expect(block).toContain("once: true")
})

test("the README's cadence line names the 60 s read after a stale reset hint", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
  const line = readme.split("\n").find((l) => l.startsWith("| `watcher-cadence.ts`")) ?? ""
  expect(line).toContain("`waitUnknownMs`")
  expect(line).toContain("60 s")
})

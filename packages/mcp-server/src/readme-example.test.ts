// The README's example, type-checked and run here; the block between the markers must appear
// verbatim in README.md (imports differ: the README imports from "@baton/mcp-server").
import { readFile } from "node:fs/promises"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import * as Data from "effect/Data"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { createBatonServer } from "./baton-server.js"
import { defineBatonTool, toolFailure, toolSuccess } from "./baton-tool.js"
import { handoffValidateTool } from "./handoff-validate-tool.js"

// README-EXAMPLE-START
class NoteMissing extends Data.TaggedError("NoteMissing")<{ readonly id: string }> {
  override get message(): string {
    return `No note ${this.id}; call note_list to see the ids.`
  }
}

const notes = new Map([["n1", "Ship the CLI"]])

const noteGetTool = defineBatonTool({
  name: "note_get",
  title: "Read a note",
  description: "Returns the text of a note by id.",
  inputSchema: { id: z.string() },
  outputSchema: { id: z.string(), text: z.string() },
  handler: ({ id }) => {
    const text = notes.get(id)
    return Promise.resolve(
      text === undefined ? toolFailure(new NoteMissing({ id })) : toolSuccess({ id, text }),
    )
  },
})

const server = createBatonServer({ tools: [handoffValidateTool, noteGetTool] })
// README-EXAMPLE-END

describe("README example", () => {
  it("appears verbatim in README.md", async () => {
    const source = await readFile(new URL("./readme-example.test.ts", import.meta.url), "utf8")
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8")
    const block = source.split("// README-EXAMPLE-START\n")[1]!.split("// README-EXAMPLE-END")[0]!
    expect(readme).toContain(block)
  })

  it("serves the note tool: structured content, or isError naming the _tag", async () => {
    const client = new Client({ name: "readme", version: "0" })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await Promise.all([server.connect(b), client.connect(a)])
    const found = await client.callTool({ name: "note_get", arguments: { id: "n1" } })
    expect(found.structuredContent).toEqual({ id: "n1", text: "Ship the CLI" })
    const missing = await client.callTool({ name: "note_get", arguments: { id: "n9" } })
    expect(missing.isError).toBe(true)
    expect(JSON.stringify(missing.content)).toContain(
      "NoteMissing: No note n9; call note_list to see the ids.",
    )
    await client.close()
  })
})

import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import * as Data from "effect/Data"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { createBatonServer } from "./baton-server.js"
import { defineBatonTool, toolFailure, toolSuccess } from "./baton-tool.js"
import type { BatonTool } from "./baton-tool.js"

class ShelfEmpty extends Data.TaggedError("ShelfEmpty")<{ readonly shelf: string }> {
  override get message(): string {
    return `Shelf ${this.shelf} is empty; restock it first.`
  }
}

const echoTool = defineBatonTool({
  name: "echo",
  title: "Echo",
  description: "Returns its text.",
  inputSchema: { text: z.string() },
  outputSchema: { text: z.string() },
  handler: ({ text }) => Promise.resolve(toolSuccess({ text })),
})

const failingTool = defineBatonTool({
  name: "take_from_shelf",
  title: "Take",
  description: "Always fails with a tagged error.",
  inputSchema: { shelf: z.string() },
  outputSchema: { item: z.string() },
  handler: ({ shelf }) => Promise.resolve(toolFailure(new ShelfEmpty({ shelf }))),
})

const brokenTool = defineBatonTool({
  name: "broken",
  title: "Broken",
  description: "Throws: a defect.",
  inputSchema: {},
  outputSchema: { never: z.string() },
  handler: () => Promise.reject<never>(new TypeError("cannot read properties of undefined")),
})

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

const connect = async (tools: readonly BatonTool[], defects: string[] = []) => {
  const server = createBatonServer({
    tools,
    version: "9.9.9",
    onDefect: (_, name) => void defects.push(name),
  })
  const client = new Client({ name: "test", version: "0" })
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)])
  closers.push(
    () => client.close(),
    () => server.close(),
  )
  return client
}

describe("createBatonServer", () => {
  it("introduces itself as baton and lists every tool with input and output schemas", async () => {
    const client = await connect([echoTool, failingTool])
    expect(client.getServerVersion()).toMatchObject({ name: "baton", version: "9.9.9" })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["echo", "take_from_shelf"])
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type).toBe("object")
    }
  })

  it("returns structuredContent with a text block mirroring it", async () => {
    const client = await connect([echoTool])
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } })
    expect(result).toEqual({
      content: [{ type: "text", text: '{"text":"hi"}' }],
      structuredContent: { text: "hi" },
    })
  })

  it("maps a tagged failure to isError naming the _tag, with its fields as JSON", async () => {
    const client = await connect([failingTool])
    const result = await client.callTool({ name: "take_from_shelf", arguments: { shelf: "B2" } })
    expect(result).toEqual({
      isError: true,
      content: [
        { type: "text", text: "ShelfEmpty: Shelf B2 is empty; restock it first." },
        { type: "text", text: '{"_tag":"ShelfEmpty","shelf":"B2"}' },
      ],
    })
  })

  it("maps a throwing handler to an isError defect result and logs it", async () => {
    const defects: string[] = []
    const client = await connect([brokenTool], defects)
    const result = await client.callTool({ name: "broken", arguments: {} })
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain(
      "Defect: broken failed unexpectedly (TypeError: cannot read properties of undefined). This is a bug in baton",
    )
    expect(defects).toEqual(["broken"])
  })

  it("refuses two tools with one name", () => {
    expect(() => createBatonServer({ tools: [echoTool, echoTool] })).toThrow(
      "tool 'echo' is registered twice",
    )
  })

  it("answers ping and other tools while a slow tool is still running", async () => {
    let release = (): void => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    let markStarted = (): void => undefined
    const started = new Promise<void>((resolve) => (markStarted = resolve))
    const slowTool = defineBatonTool({
      name: "slow",
      title: "Slow",
      description: "Waits until the test releases it.",
      inputSchema: {},
      outputSchema: { done: z.boolean() },
      handler: async () => {
        markStarted()
        await gate
        return toolSuccess({ done: true })
      },
    })
    const client = await connect([slowTool, echoTool])
    let slowFinished = false
    const slowCall = client.callTool({ name: "slow", arguments: {} }).then((result) => {
      slowFinished = true
      return result
    })
    await started

    await expect(client.ping()).resolves.toEqual({})
    const fast = await client.callTool({ name: "echo", arguments: { text: "still here" } })
    expect(fast.structuredContent).toEqual({ text: "still here" })
    expect(slowFinished).toBe(false)

    release()
    expect((await slowCall).structuredContent).toEqual({ done: true })
  })
})

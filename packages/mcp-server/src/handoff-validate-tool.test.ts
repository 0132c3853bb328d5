import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { canonicalJson, handoffDigest, validateHandoffResult } from "@baton/handoff"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { createBatonServer } from "./baton-server.js"
import { handoffValidateOutput, handoffValidateTool } from "./handoff-validate-tool.js"

const handoff = {
  summary: "Parser done; tests green.",
  preserve: ["src/argv-parser.ts"],
  resume: false,
}
let client: Client
const closers: Array<() => Promise<void>> = []

beforeAll(async () => {
  const server = createBatonServer({ tools: [handoffValidateTool] })
  client = new Client({ name: "test", version: "0" })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await Promise.all([server.connect(b), client.connect(a)])
  closers.push(
    () => client.close(),
    () => server.close(),
  )
})
afterAll(async () => {
  for (const close of closers) await close()
})

const expected = () => {
  const result = validateHandoffResult(handoff)
  if (result._tag !== "Success") throw new Error("fixture should be valid")
  return {
    valid: true,
    sizeBytes: new TextEncoder().encode(canonicalJson(result.success)).length,
    limitBytes: 32000,
    sha256: handoffDigest(result.success),
  }
}

const text = (result: Awaited<ReturnType<Client["callTool"]>>): string =>
  JSON.stringify(result.content)

describe("handoff_validate", () => {
  it("accepts the handoff as an object or as JSON text, with the same digest", async () => {
    const asObject = await client.callTool({ name: "handoff_validate", arguments: { handoff } })
    const asText = await client.callTool({
      name: "handoff_validate",
      arguments: { handoff: JSON.stringify(handoff) },
    })
    expect(asObject.structuredContent).toEqual(expected())
    expect(asText.structuredContent).toEqual(expected())
    expect(z.object(handoffValidateOutput).parse(asObject.structuredContent)).toEqual(expected())
  })

  it("names the field and rule of an invalid handoff", async () => {
    const result = await client.callTool({
      name: "handoff_validate",
      arguments: { handoff: { resume: true } },
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain("HandoffInvalid: Invalid handoff")
    expect(text(result)).toContain('\\"path\\":\\"summary\\",\\"rule\\":\\"is required\\"')
  })

  it("names the field of a secret without echoing it", async () => {
    const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
    const result = await client.callTool({
      name: "handoff_validate",
      arguments: { handoff: { summary: "ok", preserve: [`token ${secret}`], resume: false } },
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain(
      "HandoffContainsSecret: Handoff refused: preserve[0] contains a GitHub token",
    )
    expect(text(result)).not.toContain("0123456789abcdef")
  })

  it("reports malformed JSON text as HandoffInvalid", async () => {
    const result = await client.callTool({
      name: "handoff_validate",
      arguments: { handoff: "{oops" },
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain("must be valid JSON")
  })
})

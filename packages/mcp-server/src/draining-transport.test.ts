import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { DrainingTransport } from "./draining-transport.js"

const setup = async () => {
  const [client, server] = InMemoryTransport.createLinkedPair()
  const draining = new DrainingTransport(server)
  const received: JSONRPCMessage[] = []
  draining.onmessage = (message) => void received.push(message)
  await draining.start()
  await client.start()
  return { client, draining, received }
}

const isSettled = async (promise: Promise<void>): Promise<boolean> => {
  let settled = false
  void promise.then(() => (settled = true))
  await new Promise((resolve) => setImmediate(resolve))
  return settled
}

describe("DrainingTransport", () => {
  it("is drained at once when nothing is pending", async () => {
    const { draining } = await setup()
    expect(await isSettled(draining.drained())).toBe(true)
  })

  it("waits until every request has its response written", async () => {
    const { client, draining, received } = await setup()
    await client.send({ jsonrpc: "2.0", id: 1, method: "ping" })
    await client.send({ jsonrpc: "2.0", id: 2, method: "tools/list" })
    await client.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    expect(received).toHaveLength(3)
    const drained = draining.drained()
    await draining.send({ jsonrpc: "2.0", id: 1, result: {} })
    expect(await isSettled(drained)).toBe(false)
    await draining.send({ jsonrpc: "2.0", id: 2, error: { code: -32601, message: "no" } })
    expect(await isSettled(drained)).toBe(true)
  })

  it("settles a request the client cancelled", async () => {
    const { client, draining } = await setup()
    await client.send({ jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "slow" } })
    const drained = draining.drained()
    await client.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "a" },
    })
    expect(await isSettled(drained)).toBe(true)
  })
})

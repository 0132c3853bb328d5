import { PassThrough } from "node:stream"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { idOfDroppedLine, LineTransport } from "./line-transport.js"

const rig = async (maxLineBytes?: number) => {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const transport = new LineTransport({
    stdin,
    stdout,
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  })
  const received: Array<JSONRPCMessage> = []
  const errors: Array<string> = []
  let written = ""
  stdout.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")))
  transport.onmessage = (message) => received.push(message)
  transport.onerror = (error) => errors.push(error.message)
  await transport.start()
  const feed = async (...chunks: Array<string>) => {
    for (const chunk of chunks) stdin.write(chunk)
    await new Promise((resolve) => setImmediate(resolve))
  }
  const replies = () =>
    written
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { id: unknown; error?: { code: number; message: string } })
  return { transport, feed, received, errors, replies }
}

const ping = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`

describe("LineTransport", () => {
  it("assembles a message split across chunks, with CRLF, and skips blank lines", async () => {
    const { feed, received, errors } = await rig()
    const line = ping(1)
    await feed(line.slice(0, 5), line.slice(5, 20), `${line.slice(20, -1)}\r\n`, "\n  \n", ping(2))
    expect(received).toEqual([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "ping" },
    ])
    expect(errors).toEqual([])
  })

  it("drops a line over the limit, answers its id, and serves the next message", async () => {
    const { feed, received, errors, replies } = await rig(1000)
    const big = "x".repeat(3000)
    // The SDK client writes method and params first and the id last; others write the id first.
    const idLast = JSON.stringify({
      method: "tools/call",
      params: { arguments: { text: big } },
      jsonrpc: "2.0",
      id: 7,
    })
    const idFirst = JSON.stringify({ jsonrpc: "2.0", id: "r-8", method: "x", params: { big } })
    await feed(idLast.slice(0, 700), idLast.slice(700, 2500), `${idLast.slice(2500)}\n`)
    await feed(`${idFirst}\n`, ping(9))
    expect(replies().map((r) => [r.id, r.error?.code])).toEqual([
      [7, -32600],
      ["r-8", -32600],
    ])
    expect(replies()[0]!.error!.message).toContain("over this server's 1000-byte limit per message")
    expect(received).toEqual([{ jsonrpc: "2.0", id: 9, method: "ping" }])
    expect(errors).toHaveLength(2)
    expect(errors[0]).toMatch(/^ignored a message of \d+ bytes, over the .* line limit$/)
    expect(errors.join(" ")).not.toContain("xxx")
  })

  it("answers a JSON line with an id that is not JSON-RPC 2.0, and logs garbage without quoting it", async () => {
    const { feed, received, errors, replies } = await rig()
    await feed(
      '{"jsonrpc":"1.0","id":5,"method":"ping"}\n',
      '{"id":6,"method":"ping"}\n',
      '{"jsonrpc":"2.0","id":7,"method":"ping","params":"oops"}\n',
      '{"jsonrpc":"2.0","id":8,"method":42}\n',
      "not json secret-token-123\n",
      '{"jsonrpc":"2.0","id":null,"method":"ping","params":"oops"}\n',
      ping(10),
    )
    expect(replies().map((r) => [r.id, r.error?.code])).toEqual([
      [5, -32600],
      [6, -32600],
      [7, -32600],
      [8, -32600],
    ])
    expect(received).toEqual([{ jsonrpc: "2.0", id: 10, method: "ping" }])
    expect(errors).toHaveLength(6)
    expect(errors.join(" ")).not.toContain("secret-token-123")
  })

  it("stops reading when closed", async () => {
    const { transport, feed, received } = await rig()
    let closed = false
    transport.onclose = () => (closed = true)
    await transport.close()
    await feed(ping(1))
    expect(closed).toBe(true)
    expect(received).toEqual([])
  })
})

describe("idOfDroppedLine", () => {
  it("trusts only an id in the first or last member", () => {
    expect(idOfDroppedLine('{"jsonrpc":"2.0","id":3,"method"', "")).toBe(3)
    expect(idOfDroppedLine('{"id":"a\\"b","method"', "")).toBe('a"b')
    expect(idOfDroppedLine('{"method":"x"', ',"jsonrpc":"2.0","id":-4}')).toBe(-4)
    expect(idOfDroppedLine('{"method":"x"', ',"id":4,"jsonrpc":"2.0"}\n')).toBe(4)
    expect(idOfDroppedLine('{"method":"x","params":{"id":5', '"id":5}}')).toBeUndefined()
    expect(idOfDroppedLine('{"method":"x"', ',"id":null}')).toBeUndefined()
  })
})

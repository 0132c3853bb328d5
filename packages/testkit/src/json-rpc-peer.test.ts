import { describe, expect, it } from "vitest"
import { createJsonRpcPeer, JsonRpcError } from "./json-rpc-peer.js"

const setup = () => {
  const sent: Array<unknown> = []
  const handle = createJsonRpcPeer({
    send: (message) => sent.push(JSON.parse(message)),
    describe: () => " [test]",
  })
  return { sent, ...handle }
}

describe("createJsonRpcPeer", () => {
  it("sends requests without a jsonrpc member and resolves their results", async () => {
    const { sent, peer, receive } = setup()
    const pending = peer.request("thread/start", { cwd: "/w" })
    expect(sent).toEqual([{ id: 1, method: "thread/start", params: { cwd: "/w" } }])
    receive(JSON.stringify({ id: 1, result: { thread: { id: "t1" } }, trace: { x: 1 } }))
    await expect(pending).resolves.toEqual({ thread: { id: "t1" } })
  })

  it("rejects error responses with a JsonRpcError carrying the code", async () => {
    const { peer, receive } = setup()
    const pending = peer.request("account/rateLimits/read")
    receive(JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32600, message: "nope" } }))
    await expect(pending).rejects.toBeInstanceOf(JsonRpcError)
    await expect(pending).rejects.toMatchObject({ code: -32600, method: "account/rateLimits/read" })
  })

  it("keeps notifications without params, skips non-JSON lines, and finds past notifications", async () => {
    const { peer, receive } = setup()
    receive("not json at all")
    receive(JSON.stringify({ method: "initialized" }))
    receive(JSON.stringify({ method: "turn/completed", params: { turn: { id: "a" } } }))
    expect(peer.garbage()).toEqual(["not json at all"])
    expect(peer.notifications().map((n) => [n.method, n.params, n.index])).toEqual([
      ["initialized", undefined, 0],
      ["turn/completed", { turn: { id: "a" } }, 1],
    ])
    const found = await peer.waitForNotification((n) => n.method === "turn/completed")
    expect(found.index).toBe(1)
    const later = peer.waitForNotification((n) => n.method === "turn/completed", { since: 2 })
    receive(JSON.stringify({ method: "turn/completed", params: { turn: { id: "b" } } }))
    expect((await later).params).toEqual({ turn: { id: "b" } })
  })

  it("answers server requests through the handler, with -32601 by default", async () => {
    const { sent, peer, receive } = setup()
    receive(JSON.stringify({ id: 7, method: "item/tool/requestUserInput", params: {} }))
    await Promise.resolve()
    expect(sent).toEqual([
      { id: 7, error: { code: -32601, message: expect.stringContaining("no handler") } },
    ])
    peer.onServerRequest(() => ({ decision: "accept" }))
    receive(JSON.stringify({ id: "x", method: "item/commandExecution/requestApproval" }))
    await Promise.resolve()
    expect(sent.at(-1)).toEqual({ id: "x", result: { decision: "accept" } })
    expect(peer.serverRequests().map((r) => r.id)).toEqual([7, "x"])
  })

  it("rejects pending requests and waits when the transport closes", async () => {
    const { peer, close } = setup()
    const pending = peer.request("turn/start")
    const waiting = peer.waitForNotification(() => false)
    close("process exited")
    await expect(pending).rejects.toThrow(/connection closed \(process exited\) \[test\]/)
    await expect(waiting).rejects.toThrow(/connection closed/)
    await expect(peer.closed).resolves.toBeUndefined()
  })

  it("times out a wait with the methods seen so far", async () => {
    const { peer, receive } = setup()
    receive(JSON.stringify({ method: "warning", params: {} }))
    await expect(
      peer.waitForNotification((n) => n.method === "turn/completed", { timeoutMs: 20 }),
    ).rejects.toThrow(/nothing matched within 20 ms; seen since 0: \[warning\] \[test\]/)
  })
})

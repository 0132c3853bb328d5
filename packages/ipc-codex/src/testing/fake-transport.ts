/**
 * `CodexTransport` over the in-memory twin: the real `CodexConnection` and JSON-RPC core talking
 * to a `FakeAppServer` through an in-memory link.
 */
import type { Layer } from "effect"
import type { CodexTransport, CodexTransportShape } from "../codex-transport.js"
import { codexTransportLayer } from "../codex-transport.js"
import { makeCodexConnection } from "../codex-connection.js"
import type { ServerRequestPolicy } from "../server-request-policy.js"
import type { FakeAppServer } from "./fake-app-server.js"
import { inMemoryLink } from "./in-memory-link.js"

/** Options of `fakeTransport`. */
export interface FakeTransportOptions {
  /** Default `leave-pending` (like a shared daemon); `decline` mimics a private stdio server. */
  readonly serverRequests?: ServerRequestPolicy
  readonly requestTimeoutMs?: number
  readonly subscriberBuffer?: number
}

/** A transport whose connections talk to `server` in memory. */
export const fakeTransport = (
  server: FakeAppServer,
  options: FakeTransportOptions = {},
): CodexTransportShape => ({
  kind: "in-memory",
  endpoint: "in-memory fake app-server",
  connect: makeCodexConnection({
    transport: "in-memory",
    openLink: inMemoryLink(server.accept),
    serverRequests: options.serverRequests ?? "leave-pending",
    ...(options.requestTimeoutMs === undefined
      ? {}
      : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.subscriberBuffer === undefined
      ? {}
      : { subscriberBuffer: options.subscriberBuffer }),
  }),
})

/** A layer providing `CodexTransport` backed by `server`. */
export const fakeTransportLayer = (
  server: FakeAppServer,
  options: FakeTransportOptions = {},
): Layer.Layer<CodexTransport> => codexTransportLayer(fakeTransport(server, options))

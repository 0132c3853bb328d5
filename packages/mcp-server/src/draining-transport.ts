/**
 * A transport wrapper that knows which client requests still await a response, so the server
 * can stop only once every one is answered (a client may pipe requests and close stdin at once).
 * Guarantees: forwards every message and callback unchanged; a request leaves the pending set
 * when its response (result or error) has been written, or when the client cancels it.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js"
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
} from "@modelcontextprotocol/sdk/types.js"

const isRequest = (
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: RequestId; method: string } =>
  "method" in message && "id" in message

const isResponse = (message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } =>
  "id" in message && ("result" in message || "error" in message)

const cancelledRequest = (message: JSONRPCMessage): RequestId | undefined => {
  if (!("method" in message) || message.method !== "notifications/cancelled" || "id" in message)
    return undefined
  const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId
  return typeof requestId === "string" || typeof requestId === "number" ? requestId : undefined
}

/** Wraps `inner`, tracking requests received and not yet answered. */
export class DrainingTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined

  private readonly pending = new Set<RequestId>()
  private waiters: Array<() => void> = []

  constructor(private readonly inner: Transport) {}

  /** Starts the inner transport, routing its callbacks through this wrapper. */
  start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.()
    this.inner.onerror = (error) => this.onerror?.(error)
    this.inner.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
      if (isRequest(message)) this.pending.add(message.id)
      const cancelled = cancelledRequest(message)
      if (cancelled !== undefined) this.settle(cancelled)
      this.onmessage?.(message, extra)
    }
    return this.inner.start()
  }

  /** Sends through the inner transport; a response settles its request once written. */
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.inner.send(message, options)
    } finally {
      if (isResponse(message)) this.settle(message.id)
    }
  }

  /** Closes the inner transport. */
  close(): Promise<void> {
    return this.inner.close()
  }

  /** Resolves once no request awaits a response (at once if none does). */
  drained(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private settle(id: RequestId): void {
    this.pending.delete(id)
    if (this.pending.size > 0) return
    const waiters = this.waiters
    this.waiters = []
    for (const wake of waiters) wake()
  }
}

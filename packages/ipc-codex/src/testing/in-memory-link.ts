/**
 * An in-memory duplex carrying text frames between a client `FrameLink` and a server endpoint,
 * so tests and benchmarks exercise the real JSON-RPC core and its parsing. Delivery is always
 * asynchronous (a microtask), as on a real wire, so no side ever re-enters the other; frames
 * written before a close are delivered before the close, as on a socket.
 */
import * as Effect from "effect/Effect"
import type { FrameLink, FrameSink, OpenFrameLink } from "../json-rpc-connection.js"
import { DisconnectedError } from "../errors.js"

/** The server's end of one in-memory link. */
export interface InMemoryServerEnd {
  /** Delivers one frame to the client. Ignored after close. */
  readonly send: (frame: string) => void
  /** Closes the link from the server side (the client sees a disconnect with `reason`). */
  readonly close: (reason: string) => void
  readonly isOpen: () => boolean
}

/** Called for each link a client opens: wire the server end and return what handles client frames. */
export type AcceptInMemoryLink = (end: InMemoryServerEnd) => {
  readonly onFrame: (frame: string) => void
  readonly onClose: () => void
}

/** An `OpenFrameLink` that connects to an in-memory server through `accept`. */
export const inMemoryLink =
  (accept: AcceptInMemoryLink): OpenFrameLink<never> =>
  (sink: FrameSink) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        let open = true
        const shut = (reason: string, notifyServer: boolean) => {
          if (!open) return
          open = false
          queueMicrotask(() => {
            if (notifyServer) server.onClose()
            sink.closed(reason)
          })
        }
        const end: InMemoryServerEnd = {
          send: (frame) => {
            if (open) queueMicrotask(() => sink.frame(frame))
          },
          close: (reason) => shut(reason, true),
          isOpen: () => open,
        }
        const server = accept(end)
        const link: FrameLink = {
          send: (frame) =>
            open
              ? Effect.sync(() => queueMicrotask(() => server.onFrame(frame)))
              : Effect.fail(
                  new DisconnectedError({
                    transport: "in-memory",
                    reason: "link closed",
                    outcomeMayBeUnknown: false,
                  }),
                ),
          close: Effect.sync(() => shut("closed by client", true)),
        }
        return link
      }),
      (link) => link.close,
    )

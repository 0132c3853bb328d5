/**
 * A read-only answer to "does a live VS Code window own this thread?": resolve and trust-check
 * the endpoint, connect, `initialize`, run `thread-owner-discovery` with the bounded
 * `no-client-found` retries (safe: nothing is delivered), then disconnect. Never follows the
 * thread or sends a write.
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { randomUUID } from "node:crypto"
import { resolveExtensionEndpoint } from "./endpoint.js"
import type { EndpointEnvironment, IpcFileSystem } from "./endpoint.js"
import { IpcConnectError } from "./errors.js"
import type {
  EndpointError,
  IpcHandshakeError,
  IpcRequestError,
  OwnerNotFoundError,
} from "./errors.js"
import { DEFAULT_EXTENSION_TIMEOUTS } from "./extension-thread.js"
import { DEFAULT_MAX_FRAME_BYTES } from "./frame-codec.js"
import { openIpcConnection } from "./ipc-connection.js"
import type { IpcConnectionEvent } from "./ipc-connection.js"
import { extensionMethodVersions } from "./method-versions.js"
import type { ExtensionMethodVersions } from "./method-versions.js"
import { DEFAULT_DISCOVERY_DELAYS_MS, discoverOwner } from "./owner-discovery.js"
import { IpcSocketConnector } from "./socket-connector.js"

/** The owner found for a thread. */
export interface ExtensionOwner {
  readonly threadId: string
  readonly ownerId: string
  /** The id the router gave this probe's connection. */
  readonly clientId: string
  readonly endpoint: string
}

/** Options of {@link discoverExtensionOwner}. */
export interface ExtensionOwnerProbeOptions {
  readonly threadId: string
  readonly environment: EndpointEnvironment
  readonly clientType?: string
  readonly versionOverrides?: Partial<ExtensionMethodVersions>
  /** Delays before each discovery attempt (default 0/125/350/1000/1500 ms). */
  readonly discoveryDelaysMs?: ReadonlyArray<number>
}

/** Any way the owner probe can fail. */
export type ExtensionOwnerProbeError =
  EndpointError | IpcConnectError | IpcHandshakeError | IpcRequestError | OwnerNotFoundError

/** Finds the client that owns `threadId`, then disconnects. */
export const discoverExtensionOwner = (
  options: ExtensionOwnerProbeOptions,
): Effect.Effect<ExtensionOwner, ExtensionOwnerProbeError, IpcFileSystem | IpcSocketConnector> =>
  Effect.scoped(
    Effect.gen(function* () {
      const versions = extensionMethodVersions(options.versionOverrides)
      const endpoint = yield* resolveExtensionEndpoint(options.environment)
      const connector = yield* IpcSocketConnector
      const socket = yield* connector.connect(endpoint.path).pipe(
        Effect.timeoutOrElse({
          duration: DEFAULT_EXTENSION_TIMEOUTS.connectMs,
          orElse: () =>
            Effect.fail(new IpcConnectError({ path: endpoint.path, code: "ETIMEDOUT" })),
        }),
      )
      const events = yield* Queue.sliding<IpcConnectionEvent>(16)
      const connection = yield* openIpcConnection(socket, events, {
        clientType: options.clientType ?? "baton",
        versions,
        maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
        requestTimeoutMs: DEFAULT_EXTENSION_TIMEOUTS.requestMs,
        routerTimeoutMs: DEFAULT_EXTENSION_TIMEOUTS.routerTimeoutMs,
        newRequestId: randomUUID,
      })
      const ownerId = yield* discoverOwner(connection, options.threadId, {
        version: versions["thread-owner-discovery"],
        delaysMs: options.discoveryDelaysMs ?? DEFAULT_DISCOVERY_DELAYS_MS,
      })
      return {
        threadId: options.threadId,
        ownerId,
        clientId: connection.clientId,
        endpoint: endpoint.path,
      }
    }),
  )

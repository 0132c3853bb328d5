/**
 * Wiring for sessions against a {@link FakeExtensionRouter}: the endpoint environment that
 * points CODEX_HOME at the router's private directory, and the real node filesystem and
 * socket layers (the fake is a real socket, so the trust checks run for real). Test support.
 */
import * as Layer from "effect/Layer"
import type { EndpointEnvironment, IpcFileSystem } from "../endpoint.js"
import { nodeIpcFileSystemLayer } from "../node-file-system.js"
import { nodeIpcSocketConnectorLayer } from "../node-socket-connector.js"
import type { IpcSocketConnector } from "../socket-connector.js"
import type { FakeExtensionRouter } from "./fake-router.js"

/** An endpoint environment whose CODEX_HOME is the router's. */
export const fakeRouterEnvironment = (router: FakeExtensionRouter): EndpointEnvironment => ({
  platform: process.platform === "darwin" ? "darwin" : "linux",
  env: { CODEX_HOME: router.codexHome },
  homeDir: "/nonexistent-home",
  uid: typeof process.getuid === "function" ? process.getuid() : 0,
})

/** The real node filesystem and socket connector. */
export const nodeIpcLayer: Layer.Layer<IpcFileSystem | IpcSocketConnector> = Layer.mergeAll(
  nodeIpcFileSystemLayer,
  nodeIpcSocketConnectorLayer,
)

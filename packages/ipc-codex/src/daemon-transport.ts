/**
 * Daemon transport: WebSocket over the Codex daemon's Unix control socket (the socket speaks
 * RFC 6455, one JSON-RPC message per text frame; it is not JSONL). Before connecting, the socket
 * path passes the trust checks of socket-trust.ts and the connection goes to the verified real
 * socket. Server→client requests are left for the thread's owner (the user's TUI attached to the
 * same daemon receives them too). A tiny adapter: no business rules.
 */
import { homedir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { WebSocket } from "ws"
import type { CodexTransportShape } from "./codex-transport.js"
import type { CodexConnection } from "./codex-connection.js"
import { makeCodexConnection } from "./codex-connection.js"
import type { CodexConnectError } from "./errors.js"
import { DaemonNotRunningError, DisconnectedError } from "./errors.js"
import type { FrameLink, OpenFrameLink } from "./json-rpc-connection.js"
import type { SocketFileSystem } from "./socket-trust.js"
import { nodeSocketFileSystem, verifyDaemonSocket } from "./socket-trust.js"
import type { Scope } from "effect"

/** Options of the daemon transport. */
export interface DaemonTransportOptions {
  /** Explicit socket path; defaults to `<codexHome>/app-server-control/app-server-control.sock`. */
  readonly socketPath?: string
  /** Defaults to `$CODEX_HOME`, else `~/.codex`. */
  readonly codexHome?: string
  /** File-system view for the trust checks (tests inject foreign owners). */
  readonly fileSystem?: SocketFileSystem
  /** WebSocket upgrade timeout (default 5 s). */
  readonly connectTimeoutMs?: number
  readonly requestTimeoutMs?: number
  /** Timeout for the `initialize` answer (default 15 s). */
  readonly initializeTimeoutMs?: number
  readonly clientVersion?: string
}

/** `$CODEX_HOME` (or `~/.codex`) as Codex resolves it. */
export const defaultCodexHome = (env: NodeJS.ProcessEnv = process.env): string =>
  env["CODEX_HOME"] !== undefined && env["CODEX_HOME"] !== ""
    ? env["CODEX_HOME"]
    : join(homedir(), ".codex")

/** The daemon control socket path for a Codex home. */
export const daemonSocketPath = (codexHome: string = defaultCodexHome()): string =>
  join(codexHome, "app-server-control", "app-server-control.sock")

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null
    ? ((error as { code?: unknown }).code as string | undefined)
    : undefined

/** Opens a WebSocket on a Unix socket as a frame link. */
export const openUnixWebSocketLink =
  (
    socketPath: string,
    target: string,
    connectTimeoutMs: number,
  ): OpenFrameLink<DaemonNotRunningError> =>
  (sink) =>
    Effect.acquireRelease(
      Effect.callback<FrameLink, DaemonNotRunningError>((resume) => {
        let ws: WebSocket
        try {
          ws = new WebSocket(`ws+unix://${target}:/`, {
            perMessageDeflate: false,
            handshakeTimeout: connectTimeoutMs,
          })
        } catch (error) {
          // Never throw out of Effect code: a malformed path is reported like any connect failure.
          resume(
            Effect.fail(
              new DaemonNotRunningError({
                socketPath,
                reason: `cannot open the socket: ${String(error)}`,
              }),
            ),
          )
          return
        }
        let opened = false
        const fail = (reason: string, listener?: "foreign" | "unresponsive") => {
          if (ws.readyState !== WebSocket.CLOSED) ws.terminate()
          resume(
            Effect.fail(
              new DaemonNotRunningError({
                socketPath,
                reason,
                ...(listener === undefined ? {} : { listener }),
              }),
            ),
          )
        }
        ws.on("error", (error) => {
          if (opened) return
          const code = errorCode(error)
          if (code === "ECONNREFUSED")
            fail("the socket exists but nothing is listening (stale socket)")
          else if (code === "ENOENT") fail("the socket disappeared")
          else if (/handshake has timed out/i.test(error.message))
            fail(`no WebSocket upgrade within ${connectTimeoutMs} ms`, "unresponsive")
          else fail(`WebSocket connection failed: ${error.message}`)
        })
        ws.on("unexpected-response", (_request, response) => {
          fail(
            `the socket answered the WebSocket upgrade with HTTP ${response.statusCode}`,
            "foreign",
          )
        })
        ws.on("message", (data, isBinary) => {
          if (isBinary) return
          sink.frame(
            Array.isArray(data)
              ? Buffer.concat(data).toString("utf8")
              : Buffer.isBuffer(data)
                ? data.toString("utf8")
                : Buffer.from(data).toString("utf8"),
          )
        })
        ws.on("close", (code, reason) => {
          if (opened)
            sink.closed(
              `socket closed (code ${code}${reason.length > 0 ? `, ${reason.toString()}` : ""})`,
            )
        })
        ws.on("open", () => {
          opened = true
          resume(
            Effect.succeed({
              send: (frame) =>
                Effect.suspend(() => {
                  if (ws.readyState !== WebSocket.OPEN) {
                    return Effect.fail(
                      new DisconnectedError({
                        transport: "daemon",
                        reason: "socket not open",
                        outcomeMayBeUnknown: false,
                      }),
                    )
                  }
                  ws.send(frame)
                  return Effect.void
                }),
              close: Effect.sync(() => {
                if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)
                  ws.close(1000)
                // A peer that never completes the closing handshake must not keep the socket alive.
                setTimeout(() => ws.terminate(), 1_000).unref()
              }),
            }),
          )
        })
        return Effect.sync(() => ws.terminate())
      }),
      (link) => link.close,
    )

/** Verifies the daemon socket and opens an initialised connection over it (scoped). */
export const connectDaemon = (
  options: DaemonTransportOptions = {},
): Effect.Effect<CodexConnection, CodexConnectError, Scope.Scope> =>
  Effect.gen(function* () {
    const socketPath =
      options.socketPath ?? daemonSocketPath(options.codexHome ?? defaultCodexHome())
    const trusted = yield* verifyDaemonSocket(
      socketPath,
      options.fileSystem ?? nodeSocketFileSystem(),
    )
    return yield* makeCodexConnection({
      transport: "daemon",
      openLink: openUnixWebSocketLink(
        socketPath,
        trusted.target,
        options.connectTimeoutMs ?? 5_000,
      ),
      serverRequests: "leave-pending",
      ...(options.requestTimeoutMs === undefined
        ? {}
        : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.initializeTimeoutMs === undefined
        ? {}
        : { initializeTimeoutMs: options.initializeTimeoutMs }),
      ...(options.clientVersion === undefined ? {} : { clientVersion: options.clientVersion }),
    })
  })

/** The daemon transport as a `CodexTransport`. */
export const daemonTransport = (options: DaemonTransportOptions = {}): CodexTransportShape => ({
  kind: "daemon",
  endpoint: options.socketPath ?? daemonSocketPath(options.codexHome ?? defaultCodexHome()),
  connect: connectDaemon(options),
})

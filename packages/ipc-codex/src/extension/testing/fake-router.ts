/**
 * A scriptable fake of the Codex extension's IPC router and thread owner, for tests: a REAL
 * unix socket server at `<private temp dir>/codex-home/ipc/ipc.sock` (directory 0700, socket
 * 0600, so Baton's trust checks pass with `CODEX_HOME=<codexHome>`), speaking the same
 * length-prefixed codec. It plays the router (initialize, discovery, routing by
 * `targetClientId`, `client-discovery-request`) and a virtual owner window (follow slots, a
 * snapshot + patch stream with revisions, compact, start-turn and interrupt-turn handlers (an
 * interrupt marks the turn `interrupted` in the state and broadcasts a snapshot), per-method
 * version gates that answer `no-client-found` like a real client declining an unknown version).
 * Guarantees: records every envelope it receives, in order; writes frames to each connection
 * strictly in order in the configured chunking (whole, split after 2 header bytes, or byte by
 * byte); never uses timers — slow or missing replies are held until the test releases them.
 * Test support only: not for production use.
 */
import { chmod, mkdir, mkdtemp, rm, unlink } from "node:fs/promises"
import { createServer } from "node:net"
import type { Server, Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setImmediate as nextTurn } from "node:timers/promises"
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder, frameBytes } from "../frame-codec.js"

/** How frames are cut into socket writes. */
export type ChunkingMode = "whole" | "split-two" | "byte-by-byte"

/** A JSON object as received from the client. */
export type JsonObject = { readonly [key: string]: unknown }

/** One envelope the router received. */
export interface RecordedEnvelope {
  readonly connectionId: number
  readonly envelope: JsonObject
}

/** What the owner does with a request. */
export type ReplyAction =
  | { readonly _tag: "Result"; readonly result: unknown }
  | { readonly _tag: "Error"; readonly error: unknown }
  | { readonly _tag: "NoReply" }
  | { readonly _tag: "Disconnect" }

/** A request handler: returns the reply now or later (a held promise models a slow owner). */
export type RequestHandler = (request: JsonObject) => ReplyAction | Promise<ReplyAction>

/** Versions the virtual owner accepts (a mismatch is declined → `no-client-found`). */
export interface OwnerVersions {
  readonly "thread-owner-discovery": number
  readonly "thread-stream-following-changed": number
  readonly "thread-follower-compact-thread": number
  readonly "thread-follower-start-turn": number
  readonly "thread-follower-interrupt-turn": number
}

/** Options of {@link FakeExtensionRouter.start}. */
export interface FakeRouterOptions {
  readonly conversationId?: string
  readonly ownerId?: string | undefined
  readonly streamVersion?: number
  readonly ownerVersions?: Partial<OwnerVersions>
  readonly chunking?: ChunkingMode
  readonly state?: unknown
  /** Send a snapshot when a client follows (default true). */
  readonly snapshotOnFollow?: boolean
}

/** Reply with a result. */
export const replyWith = (result: unknown): ReplyAction => ({ _tag: "Result", result })
/** Reply with an error (`"no-client-found"` is the real router's shape). */
export const replyWithError = (error: unknown): ReplyAction => ({ _tag: "Error", error })
/** Never reply. */
export const withholdReply: ReplyAction = { _tag: "NoReply" }
/** Destroy the requesting connection instead of replying. */
export const dropConnection: ReplyAction = { _tag: "Disconnect" }

const DEFAULT_OWNER_VERSIONS: OwnerVersions = {
  "thread-owner-discovery": 1,
  "thread-stream-following-changed": 1,
  "thread-follower-compact-thread": 2,
  "thread-follower-start-turn": 3,
  "thread-follower-interrupt-turn": 4,
}

interface Connection {
  readonly id: number
  readonly socket: Socket
  readonly decoder: FrameDecoder
  clientId: string | undefined
  writes: Promise<void>
}

interface Waiter {
  readonly predicate: (recorded: RecordedEnvelope) => boolean
  readonly resolve: (recorded: RecordedEnvelope) => void
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** The fake router; create it with {@link FakeExtensionRouter.start}. */
export class FakeExtensionRouter {
  /** Every envelope received from clients, in order. */
  readonly received: Array<RecordedEnvelope> = []
  /** The thread this fake owns. */
  readonly conversationId: string
  /** The current owner client id (undefined: no window owns the thread). */
  ownerId: string | undefined
  /** The `thread-stream-state-changed` version the owner streams at. */
  streamVersion: number
  /** Versions the owner accepts. */
  ownerVersions: OwnerVersions
  /** Frame chunking for everything the router writes. */
  chunking: ChunkingMode
  /** The conversation state the next snapshot carries. */
  state: unknown
  /** The revision of the last state change sent. */
  revision = 0
  /** Send a snapshot when a client follows. */
  snapshotOnFollow: boolean
  /** Number of upcoming discovery requests answered `no-client-found`. */
  discoveryFailures = 0

  private server: Server | undefined
  private readonly connections = new Map<number, Connection>()
  private readonly followers = new Set<number>()
  private readonly handlers = new Map<string, RequestHandler>()
  private readonly waiters: Array<Waiter> = []
  private nextConnectionId = 1
  private nextClientNumber = 1
  private nextTurnNumber = 1

  private constructor(
    /** The private temp dir holding everything (removed by `close`). */
    readonly root: string,
    /** Use as CODEX_HOME. */
    readonly codexHome: string,
    /** The listening socket path. */
    readonly socketPath: string,
    options: FakeRouterOptions,
  ) {
    this.conversationId = options.conversationId ?? "thread-1"
    this.ownerId = "ownerId" in options ? options.ownerId : "owner-1"
    this.streamVersion = options.streamVersion ?? 11
    this.ownerVersions = { ...DEFAULT_OWNER_VERSIONS, ...options.ownerVersions }
    this.chunking = options.chunking ?? "split-two"
    this.state = options.state ?? {}
    this.snapshotOnFollow = options.snapshotOnFollow ?? true
  }

  /** Creates the private directory and starts listening. */
  static async start(options: FakeRouterOptions = {}): Promise<FakeExtensionRouter> {
    const root = await mkdtemp(join(tmpdir(), "baton-ipc-"))
    const codexHome = join(root, "codex-home")
    const ipcDir = join(codexHome, "ipc")
    await mkdir(ipcDir, { recursive: true, mode: 0o700 })
    await chmod(codexHome, 0o700)
    await chmod(ipcDir, 0o700)
    const router = new FakeExtensionRouter(root, codexHome, join(ipcDir, "ipc.sock"), options)
    await router.listen()
    return router
  }

  /** Number of open client connections. */
  get connectionCount(): number {
    return this.connections.size
  }

  /** Number of connections following the thread. */
  get followerCount(): number {
    return this.followers.size
  }

  /** Replaces the owner's handler for `method` (e.g. a held promise for a slow reply). */
  onRequest(method: string, handler: RequestHandler): void {
    this.handlers.set(method, handler)
  }

  /** Received envelopes of one type and method. */
  envelopes(type: string, method?: string): Array<JsonObject> {
    return this.received
      .map((recorded) => recorded.envelope)
      .filter(
        (envelope) =>
          envelope["type"] === type && (method === undefined || envelope["method"] === method),
      )
  }

  /** Requests received for `method`. */
  requests(method: string): Array<JsonObject> {
    return this.envelopes("request", method)
  }

  /** Resolves with the first recorded envelope (past or future) matching `predicate`. */
  waitFor(
    predicate: (recorded: RecordedEnvelope) => boolean,
    after = 0,
  ): Promise<RecordedEnvelope> {
    const found = this.received.slice(after).find(predicate)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve) => {
      this.waiters.push({ predicate, resolve })
    })
  }

  /** Resolves when the `n`th (1-based) request for `method` has been received. */
  waitForRequest(method: string, n = 1): Promise<JsonObject> {
    let seen = 0
    return this.waitFor(
      (r) => r.envelope["type"] === "request" && r.envelope["method"] === method && ++seen === n,
    ).then((r) => r.envelope)
  }

  /** Resolves when the `n`th follow (`following: true`) broadcast has been received. */
  waitForFollow(n = 1): Promise<JsonObject> {
    let seen = 0
    return this.waitFor((r) => {
      const params = r.envelope["params"]
      return (
        r.envelope["type"] === "broadcast" &&
        r.envelope["method"] === "thread-stream-following-changed" &&
        isObject(params) &&
        params["following"] === true &&
        ++seen === n
      )
    }).then((r) => r.envelope)
  }

  // -------------------------------------------------------------------------------------------
  // State stream
  // -------------------------------------------------------------------------------------------

  /** Sends a snapshot of `state` (or the current state) to every follower. */
  async sendSnapshot(state?: unknown, options: { readonly revision?: number } = {}): Promise<void> {
    if (state !== undefined) this.state = state
    this.revision = options.revision ?? this.revision + 1
    await this.broadcastState({
      type: "snapshot",
      revision: this.revision,
      conversationState: this.state,
    })
  }

  /**
   * Sends a patch batch to every follower. By default `baseRevision` is the last revision and
   * `revision` the next; override either (or pass `baseRevision: null` to omit it) for gaps.
   */
  async sendPatches(
    patches: ReadonlyArray<unknown>,
    options: { readonly baseRevision?: number | null; readonly revision?: number } = {},
  ): Promise<void> {
    const base = options.baseRevision === undefined ? this.revision : options.baseRevision
    this.revision = options.revision ?? this.revision + 1
    await this.broadcastState({
      type: "patches",
      ...(base === null ? {} : { baseRevision: base }),
      revision: this.revision,
      patches,
    })
  }

  /** Sends a `thread-stream-state-changed` with any change, version and source. */
  async broadcastState(
    change: unknown,
    options: {
      readonly version?: number
      readonly sourceClientId?: string
      readonly conversationId?: string
    } = {},
  ): Promise<void> {
    const envelope = {
      type: "broadcast",
      method: "thread-stream-state-changed",
      sourceClientId: options.sourceClientId ?? this.ownerId ?? "gone-owner",
      version: options.version ?? this.streamVersion,
      params: {
        hostId: "local",
        conversationId: options.conversationId ?? this.conversationId,
        change,
      },
    }
    await Promise.all([...this.followers].map((id) => this.sendTo(id, envelope)))
  }

  // -------------------------------------------------------------------------------------------
  // Ownership and connection faults
  // -------------------------------------------------------------------------------------------

  /**
   * The owner window leaves (announced with `client-status-changed`) and `next` (or nobody)
   * owns the thread from now on; followers are forgotten, as the new owner knows none.
   */
  async changeOwner(
    next: string | undefined,
    options: { readonly announce?: boolean } = {},
  ): Promise<void> {
    const previous = this.ownerId
    this.ownerId = next
    this.followers.clear()
    if (options.announce !== false && previous !== undefined)
      await this.broadcastAll({
        type: "broadcast",
        method: "client-status-changed",
        sourceClientId: previous,
        version: 0,
        params: { clientId: previous, status: "disconnected" },
      })
  }

  /** The owner asks followers to re-announce `following: true`. */
  async requestFollowStatus(): Promise<void> {
    await this.broadcastAll({
      type: "broadcast",
      method: "thread-stream-following-status-requested",
      sourceClientId: this.ownerId ?? "gone-owner",
      version: 1,
      params: { hostId: "local", conversationId: this.conversationId },
    })
  }

  /** Asks every client whether it can handle a request; returns the discovery request id. */
  async sendClientDiscoveryRequest(
    requestId = `discovery-${this.nextClientNumber}`,
  ): Promise<string> {
    await this.broadcastAll({
      type: "client-discovery-request",
      requestId,
      request: {
        type: "request",
        requestId: "other",
        method: "thread-follower-compact-thread",
        version: 2,
        params: {},
      },
    })
    return requestId
  }

  /** Sends one JSON envelope to every client. */
  async broadcastAll(envelope: unknown): Promise<void> {
    await Promise.all([...this.connections.keys()].map((id) => this.sendTo(id, envelope)))
  }

  /** Writes raw bytes (in the current chunking) to every client. */
  async sendRaw(bytes: Uint8Array): Promise<void> {
    await Promise.all(
      [...this.connections.values()].map((connection) => this.write(connection, bytes)),
    )
  }

  /** Sends a frame whose body is the given text (e.g. invalid JSON). */
  async sendTextFrame(text: string): Promise<void> {
    await this.sendRaw(frameBytes(new TextEncoder().encode(text)))
  }

  /** Sends a header declaring `length` bytes and no body (length 0 or over the cap). */
  async sendHeaderOnly(length: number): Promise<void> {
    const header = new Uint8Array(4)
    new DataView(header.buffer).setUint32(0, length, true)
    await this.sendRaw(header)
  }

  /** Destroys every client connection (window reload, router re-election). */
  async disconnectClients(): Promise<void> {
    const closing = [...this.connections.values()].map(
      (connection) =>
        new Promise<void>((resolve) => {
          connection.socket.once("close", () => {
            resolve()
          })
          connection.socket.destroy()
        }),
    )
    await Promise.all(closing)
  }

  /** Stops listening, drops clients, unlinks the socket and listens again (new inode). */
  async restart(): Promise<void> {
    await this.stopListening()
    await unlink(this.socketPath).catch(() => undefined)
    await this.listen()
  }

  /** Stops listening, drops every client and removes the socket file (nothing answers until `listen`). */
  async stopListening(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (server === undefined) return
    const closed = new Promise<void>((resolve) => {
      server.close(() => {
        resolve()
      })
    })
    await this.disconnectClients()
    await closed
  }

  /** Changes the socket's mode (e.g. 0o755 to simulate a shared socket). */
  async chmodSocket(mode: number): Promise<void> {
    await chmod(this.socketPath, mode)
  }

  /** Stops everything and removes the private temp dir. */
  async close(): Promise<void> {
    await this.stopListening()
    await this.disconnectClients()
    await rm(this.root, { recursive: true, force: true })
  }

  // -------------------------------------------------------------------------------------------
  // Internals
  // -------------------------------------------------------------------------------------------

  /** Starts listening on `socketPath` (0600). */
  async listen(): Promise<void> {
    const server = createServer((socket) => {
      this.accept(socket)
    })
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(this.socketPath, () => {
        server.off("error", reject)
        resolve()
      })
    })
    await chmod(this.socketPath, 0o600)
    this.server = server
  }

  private accept(socket: Socket): void {
    const connection: Connection = {
      id: this.nextConnectionId++,
      socket,
      decoder: new FrameDecoder(DEFAULT_MAX_FRAME_BYTES),
      clientId: undefined,
      writes: Promise.resolve(),
    }
    this.connections.set(connection.id, connection)
    socket.on("data", (chunk: Buffer) => {
      const step = connection.decoder.push(
        new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength),
      )
      for (const message of step.messages) if (isObject(message)) this.handle(connection, message)
      if (step.fatal !== undefined) socket.destroy()
    })
    socket.on("error", () => undefined)
    socket.on("close", () => {
      this.connections.delete(connection.id)
      this.followers.delete(connection.id)
    })
  }

  private record(connection: Connection, envelope: JsonObject): void {
    const recorded = { connectionId: connection.id, envelope }
    this.received.push(recorded)
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      const waiter = this.waiters[index]!
      if (waiter.predicate(recorded)) {
        this.waiters.splice(index, 1)
        waiter.resolve(recorded)
      }
    }
  }

  private handle(connection: Connection, envelope: JsonObject): void {
    this.record(connection, envelope)
    switch (envelope["type"]) {
      case "request":
        void this.handleRequest(connection, envelope)
        return
      case "broadcast":
        this.handleBroadcast(connection, envelope)
        return
      default:
        return
    }
  }

  private handleBroadcast(connection: Connection, envelope: JsonObject): void {
    if (envelope["method"] !== "thread-stream-following-changed") return
    const params = envelope["params"]
    const targets = envelope["targetClientIds"]
    if (!isObject(params) || this.ownerId === undefined) return
    if (envelope["version"] !== this.ownerVersions["thread-stream-following-changed"]) return
    if (!Array.isArray(targets) || !targets.includes(this.ownerId)) return
    if (params["conversationId"] !== this.conversationId || params["hostId"] !== "local") return
    if (params["following"] === true) {
      this.followers.add(connection.id)
      if (this.snapshotOnFollow) {
        this.revision += 1
        void this.sendTo(connection.id, {
          type: "broadcast",
          method: "thread-stream-state-changed",
          sourceClientId: this.ownerId,
          version: this.streamVersion,
          params: {
            hostId: "local",
            conversationId: this.conversationId,
            change: { type: "snapshot", revision: this.revision, conversationState: this.state },
          },
        })
      }
    } else {
      this.followers.delete(connection.id)
    }
  }

  private async handleRequest(connection: Connection, request: JsonObject): Promise<void> {
    const method = str(request["method"]) ?? ""
    const requestId = str(request["requestId"]) ?? ""
    const action = await this.route(connection, method, request)
    switch (action._tag) {
      case "NoReply":
        return
      case "Disconnect":
        connection.socket.destroy()
        return
      case "Result":
        await this.sendTo(connection.id, {
          type: "response",
          requestId,
          method,
          resultType: "success",
          handledByClientId: method === "initialize" ? connection.clientId : this.ownerId,
          result: action.result,
        })
        return
      case "Error":
        await this.sendTo(connection.id, {
          type: "response",
          requestId,
          method,
          resultType: "error",
          error: action.error,
        })
        return
    }
  }

  private async route(
    connection: Connection,
    method: string,
    request: JsonObject,
  ): Promise<ReplyAction> {
    const noClient = replyWithError("no-client-found")
    if (method === "initialize") {
      connection.clientId = `client-${this.nextClientNumber++}`
      return replyWith({ clientId: connection.clientId })
    }
    const custom = this.handlers.get(method)
    if (method === "thread-owner-discovery") {
      const params = request["params"]
      if (this.discoveryFailures > 0) {
        this.discoveryFailures -= 1
        return noClient
      }
      if (
        this.ownerId === undefined ||
        request["version"] !== this.ownerVersions["thread-owner-discovery"]
      )
        return noClient
      if (
        !isObject(params) ||
        params["conversationId"] !== this.conversationId ||
        params["hostId"] !== "local"
      )
        return noClient
      return custom === undefined ? replyWith({}) : custom(request)
    }
    if (method.startsWith("thread-follower-")) {
      const accepted = (this.ownerVersions as unknown as Record<string, number | undefined>)[method]
      if (this.ownerId === undefined || request["targetClientId"] !== this.ownerId) return noClient
      if (accepted !== undefined && request["version"] !== accepted) return noClient
      if (custom !== undefined) return custom(request)
      if (method === "thread-follower-compact-thread") return replyWith({ ok: true })
      if (method === "thread-follower-start-turn")
        return replyWith({
          result: { turn: { id: `turn-${this.nextTurnNumber++}`, status: "inProgress" } },
        })
      if (method === "thread-follower-interrupt-turn") return this.interruptTurn(request)
      return noClient
    }
    return custom === undefined ? noClient : custom(request)
  }

  /**
   * The owner stops the running turn named by `expectedTurnId` (or, with null, the running one):
   * marks it `interrupted`, the thread idle, broadcasts the new state as a snapshot, then
   * acknowledges with `interruptedTurnId` (null when no such turn is running).
   */
  private async interruptTurn(request: JsonObject): Promise<ReplyAction> {
    const params = request["params"]
    const expected = isObject(params) ? params["expectedTurnId"] : undefined
    const state = this.state
    const turns: ReadonlyArray<unknown> =
      isObject(state) && Array.isArray(state["turns"]) ? state["turns"] : []
    const turnIdOf = (turn: JsonObject) => str(turn["turnId"]) ?? str(turn["id"])
    const running = turns.find(
      (turn): turn is JsonObject =>
        isObject(turn) &&
        turn["status"] === "inProgress" &&
        (expected === null || expected === undefined || turnIdOf(turn) === expected),
    )
    if (!isObject(state) || running === undefined) return replyWith({ interruptedTurnId: null })
    this.state = {
      ...state,
      threadRuntimeStatus: { type: "idle", activeFlags: [] },
      turns: turns.map((turn) => (turn === running ? { ...running, status: "interrupted" } : turn)),
    }
    await this.sendSnapshot()
    return replyWith({ interruptedTurnId: turnIdOf(running) ?? null })
  }

  private async sendTo(connectionId: number, envelope: unknown): Promise<void> {
    const connection = this.connections.get(connectionId)
    if (connection === undefined) return
    const frame = encodeFrame(envelope)
    if (frame._tag === "Failure") return
    await this.write(connection, frame.success)
  }

  /** Queues `bytes` behind earlier writes on the connection, cut per the chunking mode. */
  private write(connection: Connection, bytes: Uint8Array): Promise<void> {
    const pieces: Array<Uint8Array> =
      this.chunking === "whole" || bytes.byteLength <= 2
        ? [bytes]
        : this.chunking === "split-two"
          ? [bytes.subarray(0, 2), bytes.subarray(2)]
          : Array.from({ length: bytes.byteLength }, (_, index) => bytes.subarray(index, index + 1))
    const run = async (): Promise<void> => {
      for (const piece of pieces) {
        if (connection.socket.destroyed) return
        await new Promise<void>((resolve) => {
          connection.socket.write(piece, () => {
            resolve()
          })
        })
        if (pieces.length > 1) await nextTurn()
      }
    }
    connection.writes = connection.writes.then(run, run)
    return connection.writes
  }
}

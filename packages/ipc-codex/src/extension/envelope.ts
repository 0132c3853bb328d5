/**
 * The extension IPC envelopes as effect/Schema codecs: `request`, `response`, `broadcast`,
 * `client-discovery-request`, `client-discovery-response`, and the params of the broadcasts
 * Baton reads. Guarantees: every incoming frame is decoded here before anything else looks
 * at it; unknown extra fields are tolerated (and dropped from the decoded value); `params`,
 * `result` and `conversationState` stay `unknown` so large states are not traversed twice.
 */
import * as Schema from "effect/Schema"

/** The `hostId` of the local VS Code host. */
export const LOCAL_HOST_ID = "local"

/** The literal `sourceClientId` of the `initialize` request. */
export const INITIALIZING_CLIENT_ID = "initializing-client"

/** A request envelope (sent by Baton; also forwarded inside discovery requests). */
export const RequestEnvelope = Schema.Struct({
  type: Schema.Literal("request"),
  requestId: Schema.String,
  sourceClientId: Schema.String,
  method: Schema.String,
  params: Schema.optionalKey(Schema.Unknown),
  version: Schema.Number,
  timeoutMs: Schema.optionalKey(Schema.Number),
  targetClientId: Schema.optionalKey(Schema.String),
  hostId: Schema.optionalKey(Schema.String),
})
/** A decoded request envelope. */
export type RequestEnvelope = typeof RequestEnvelope.Type

/** A response envelope; `error` is normally a string such as `"no-client-found"`. */
export const ResponseEnvelope = Schema.Struct({
  type: Schema.Literal("response"),
  requestId: Schema.String,
  method: Schema.optionalKey(Schema.String),
  resultType: Schema.Literals(["success", "error"]),
  handledByClientId: Schema.optionalKey(Schema.String),
  result: Schema.optionalKey(Schema.Unknown),
  error: Schema.optionalKey(Schema.Unknown),
})
/** A decoded response envelope. */
export type ResponseEnvelope = typeof ResponseEnvelope.Type

/** A broadcast envelope. */
export const BroadcastEnvelope = Schema.Struct({
  type: Schema.Literal("broadcast"),
  method: Schema.String,
  params: Schema.optionalKey(Schema.Unknown),
  sourceClientId: Schema.optionalKey(Schema.String),
  version: Schema.optionalKey(Schema.Number),
  targetClientIds: Schema.optionalKey(Schema.Array(Schema.String)),
  targetClientId: Schema.optionalKey(Schema.String),
})
/** A decoded broadcast envelope. */
export type BroadcastEnvelope = typeof BroadcastEnvelope.Type

/** The router asks whether this client can handle a request (Baton always answers false). */
export const ClientDiscoveryRequestEnvelope = Schema.Struct({
  type: Schema.Literal("client-discovery-request"),
  requestId: Schema.String,
  request: Schema.optionalKey(Schema.Unknown),
})
/** A decoded client-discovery request. */
export type ClientDiscoveryRequestEnvelope = typeof ClientDiscoveryRequestEnvelope.Type

/** A client's answer to a discovery request. */
export const ClientDiscoveryResponseEnvelope = Schema.Struct({
  type: Schema.Literal("client-discovery-response"),
  requestId: Schema.String,
  response: Schema.Struct({ canHandle: Schema.Boolean }),
})
/** A decoded client-discovery response. */
export type ClientDiscoveryResponseEnvelope = typeof ClientDiscoveryResponseEnvelope.Type

/** Any envelope that may arrive on the socket. */
export const IncomingEnvelope = Schema.Union([
  ResponseEnvelope,
  BroadcastEnvelope,
  ClientDiscoveryRequestEnvelope,
  RequestEnvelope,
  ClientDiscoveryResponseEnvelope,
])
/** A decoded incoming envelope. */
export type IncomingEnvelope = typeof IncomingEnvelope.Type

/** Decodes one frame's JSON into an envelope (`Result`; never throws). */
export const decodeIncomingEnvelope = Schema.decodeUnknownResult(IncomingEnvelope)

/** `initialize` result: the client id to use as `sourceClientId` from now on. */
export const IpcInitializeResult = Schema.Struct({ clientId: Schema.String })

/** One state patch operation as sent by the owner. */
export const PatchOperation = Schema.Struct({
  op: Schema.Literals(["add", "replace", "remove"]),
  path: Schema.Array(Schema.Union([Schema.String, Schema.Number])),
  value: Schema.optionalKey(Schema.Unknown),
})
/** A decoded patch operation. */
export type PatchOperation = typeof PatchOperation.Type

/** `change` of a `thread-stream-state-changed` broadcast: a snapshot or a patch batch. */
export const StreamChange = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("snapshot"),
    revision: Schema.Number,
    conversationState: Schema.Unknown,
  }),
  Schema.Struct({
    type: Schema.Literal("patches"),
    baseRevision: Schema.optionalKey(Schema.Number),
    revision: Schema.Number,
    patches: Schema.Array(PatchOperation),
  }),
])
/** A decoded stream change. */
export type StreamChange = typeof StreamChange.Type

/** Params of `thread-stream-state-changed`. */
export const StreamStateChangedParams = Schema.Struct({
  hostId: Schema.String,
  conversationId: Schema.String,
  change: StreamChange,
})

/** Params that identify a conversation on the local host (filtering only). */
export const ConversationRef = Schema.Struct({
  hostId: Schema.optionalKey(Schema.String),
  conversationId: Schema.String,
})

/** Params of `client-status-changed`. */
export const ClientStatusChangedParams = Schema.Struct({
  clientId: Schema.optionalKey(Schema.String),
  status: Schema.String,
})

/**
 * @baton/ipc-codex — Transports to live Codex threads (app-server stdio, daemon control socket, VS Code extension IPC) behind one interface.
 * The in-memory twin lives at `@baton/ipc-codex/testing`.
 */
export { CodexTransport, codexTransportLayer, retryWhenOverloaded } from "./codex-transport.js"
export type { CodexTransportShape, OverloadRetryOptions } from "./codex-transport.js"

export {
  CLIENT_NAME,
  DEFAULT_OPT_OUT_NOTIFICATIONS,
  makeCodexConnection,
} from "./codex-connection.js"
export type {
  AccountInfo,
  CodexConnection,
  CodexConnectionOptions,
  CompactionRequested,
  ConnectionStats,
  RateLimitsReadResult,
  ServerInfo,
  ThreadListQuery,
  ThreadPage,
  TurnStarted,
  UnsubscribeStatus,
} from "./codex-connection.js"

export { decodeNotification, normalizeCodexErrorInfo } from "./codex-event.js"
export type {
  CodexErrorInfo,
  CodexEvent,
  CodexTurnError,
  ServerRequestHandling,
} from "./codex-event.js"

export { THREAD_STATE_LIMITS, applyEvent, emptyThreadState, isThreadIdle } from "./thread-state.js"
export type {
  CompactionRequestView,
  CompactionView,
  ErrorView,
  ItemView,
  PendingServerRequest,
  ThreadState,
  ThreadStatusKind,
  ThreadStatusView,
  TokenUsageView,
  TurnStatus,
  TurnView,
} from "./thread-state.js"

export {
  applyRateLimitsRead,
  applyRateLimitsUpdate,
  mergeRateLimitSnapshot,
} from "./rate-limits.js"
export type { RateLimitsRead, RateLimitsState } from "./rate-limits.js"

export type {
  RateLimitSnapshot,
  RateLimitWindow,
  ThreadSummary,
  TokenUsageBreakdown,
} from "./protocol-schema.js"

export {
  ActiveWriterError,
  CodexBinaryNotFoundError,
  DaemonNotRunningError,
  DisconnectedError,
  NotAuthenticatedError,
  OverloadedError,
  ProtocolMismatchError,
  RequestTimeoutError,
  RpcError,
  SchemaGenerationError,
  SocketTrustError,
  SpawnError,
  ThreadNotFoundError,
  TurnNotSteerableError,
} from "./errors.js"
export type { CodexConnectError, CodexRequestError, TransportKind } from "./errors.js"

export { classifyRpcError, isRetryable } from "./rpc-error-classification.js"

export { DECLINED_CODE, declineAnswer } from "./server-request-policy.js"
export type { DeclineAnswer, ServerRequestPolicy } from "./server-request-policy.js"

export { makeJsonRpcConnection } from "./json-rpc-connection.js"
export type {
  FrameLink,
  FrameSink,
  IncomingMessage,
  JsonRpcConnection,
  JsonRpcConnectionOptions,
  JsonRpcStats,
  OpenFrameLink,
  RequestId,
  RequestOptions,
} from "./json-rpc-connection.js"

export { jsonlFrameLink, makeLineSplitter } from "./jsonl-link.js"
export type { JsonlLinkOptions, LineSplitter } from "./jsonl-link.js"

export {
  connectDaemon,
  daemonSocketPath,
  daemonTransport,
  defaultCodexHome,
} from "./daemon-transport.js"
export type { DaemonTransportOptions } from "./daemon-transport.js"

export { nodeSocketFileSystem, verifyDaemonSocket } from "./socket-trust.js"
export type { PathFacts, SocketFileSystem, TrustedSocket } from "./socket-trust.js"

export { connectStdio, stdioTransport } from "./stdio-transport.js"
export type { StdioConnection, StdioTransportOptions } from "./stdio-transport.js"

export {
  CODEX_BINARY_ENV,
  discoverCodexBinary,
  extensionPlatformDir,
  nodeBinaryHost,
  parseCodexVersion,
} from "./codex-binary.js"
export type { BinaryHost, CodexBinary, CodexBinarySource } from "./codex-binary.js"

export {
  extensionNotWired,
  probeDaemon,
  probeStdioBinary,
  selectTransport,
} from "./transport-selector.js"
export type {
  DaemonProbe,
  DaemonProbeResult,
  ExtensionProbe,
  ExtensionProbeResult,
  SelectTransportOptions,
  SelectedTransportKind,
  SelectionReason,
  StdioProbe,
  TransportSelection,
} from "./transport-selector.js"

export {
  COMPATIBILITY_CHECKER_VERSION,
  SCHEMA_BUNDLE_FILE,
  binaryIdentity,
  checkCompatibility,
  diffProtocolSurface,
  extractProtocolSurface,
  formatCompatibilityReport,
  generateSchemaBundle,
  loadSchemaBundle,
  probeCompatibility,
} from "./compatibility.js"
export type {
  BinaryIdentity,
  CompatibilityCheck,
  CompatibilityProbe,
  CompatibilityProbeOptions,
  CompatibilityReport,
  ProtocolSurface,
} from "./compatibility.js"

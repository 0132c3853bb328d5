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
  InvalidThreadIdError,
  NotAuthenticatedError,
  OverloadedError,
  ProtocolMismatchError,
  RequestTimeoutError,
  RpcError,
  RolloutReadError,
  SchemaGenerationError,
  SocketTrustError,
  SpawnError,
  ThreadNotFoundError,
  ThreadOwnerGoneError,
  TransportUnsupportedError,
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

export { connectStdio, stderrSummary, stdioTransport } from "./stdio-transport.js"
export type { StdioConnection, StdioTransportOptions } from "./stdio-transport.js"

export {
  CODEX_BINARY_ENV,
  discoverCodexBinary,
  extensionPlatformDir,
  nodeBinaryHost,
  parseCodexVersion,
  probeCodexVersion,
} from "./codex-binary.js"
export type {
  BinaryHost,
  CodexBinary,
  CodexBinarySource,
  CodexVersionProbe,
} from "./codex-binary.js"

export {
  probeDaemon,
  probeExtensionOwner,
  probeStdioBinary,
  selectTransport,
} from "./transport-selector.js"
export type {
  DaemonProbe,
  DaemonProbeResult,
  ExtensionProbe,
  ExtensionProbeOptions,
  ExtensionProbeResult,
  OpenThreadController,
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

export { connectionThreadController } from "./thread-controller.js"
export type {
  ControllerTurnInput,
  ExtensionOnlyError,
  ThreadController,
  ThreadControllerError,
  TurnInterruptAcknowledged,
} from "./thread-controller.js"

export { extensionErrorToControllerError, openExtensionController } from "./extension-controller.js"
export type { ExtensionControllerOptions } from "./extension-controller.js"

export { PENDING_TURN_SUBMISSION_FLAG, threadStateFromView } from "./extension-thread-state.js"

export { ROLLOUT_TAIL_BYTES, lastTokenUsage, readRolloutTokenUsage } from "./rollout-token-usage.js"
export type { RolloutTokenUsage } from "./rollout-token-usage.js"

export { CODEX_THREAD_ID_PATTERN, isCodexThreadId } from "./codex-thread-id.js"
export { probeThread } from "./thread-probe.js"
export type { ProbeTransportLine, ThreadProbeOptions, ThreadProbeReport } from "./thread-probe.js"

// VS Code extension IPC client (src/extension/)

export {
  DEFAULT_EXTENSION_RECOVERY,
  DEFAULT_EXTENSION_TIMEOUTS,
  openExtensionThread,
  recoveryDelayMs,
} from "./extension/extension-thread.js"
export type {
  ExtensionCompactAccepted,
  ExtensionLiveStatus,
  ExtensionRecoveryPolicy,
  ExtensionSessionEvent,
  ExtensionSessionEventKind,
  ExtensionSessionStatus,
  ExtensionThread,
  ExtensionThreadOptions,
  ExtensionTimeouts,
  ExtensionTurnInterrupted,
  ExtensionTurnStarted,
} from "./extension/extension-thread.js"

export type { FollowUpTurnInput } from "./extension/thread-writes.js"

export { discoverExtensionOwner } from "./extension/owner-probe.js"
export type {
  ExtensionOwner,
  ExtensionOwnerProbeError,
  ExtensionOwnerProbeOptions,
} from "./extension/owner-probe.js"

export {
  IpcFileSystem,
  WINDOWS_PIPE_PATH,
  resolveCodexHome,
  resolveExtensionEndpoint,
} from "./extension/endpoint.js"
export type {
  EndpointEnvironment,
  IpcEndpoint,
  IpcFileStat,
  IpcFileSystemShape,
  IpcFsFailure,
} from "./extension/endpoint.js"

export { IpcSocketConnector } from "./extension/socket-connector.js"
export type { IpcSocket, IpcSocketConnectorShape } from "./extension/socket-connector.js"

export {
  nodeEndpointEnvironment,
  nodeIpcFileSystem,
  nodeIpcFileSystemLayer,
} from "./extension/node-file-system.js"
export { nodeIpcSocketConnectorLayer } from "./extension/node-socket-connector.js"

export {
  NO_USER_INPUT_FINGERPRINT,
  decodeConversationState,
} from "./extension/conversation-state.js"
export type {
  ConversationView,
  ExtensionCompactionItemView,
  ExtensionItemView,
  ExtensionPendingRequestView,
  ExtensionTokenUsageView,
  ExtensionTurnView,
  UserBoundaryView,
} from "./extension/conversation-state.js"

export {
  DEFAULT_EXTENSION_METHOD_VERSIONS,
  extensionMethodVersions,
} from "./extension/method-versions.js"
export type { ExtensionMethod, ExtensionMethodVersions } from "./extension/method-versions.js"

export {
  EndpointAccessError,
  EndpointConfigError,
  EndpointKindError,
  EndpointMissingError,
  EndpointOwnerError,
  EndpointPermissionError,
  EndpointReplacedError,
  EndpointSymlinkError,
  EndpointUnsupportedPlatformError,
  FrameEmptyError,
  FrameEncodeError,
  FrameInvalidJsonError,
  FrameTooLargeError,
  IpcConnectError,
  IpcDisconnectedError,
  IpcHandshakeError,
  IpcRequestTimeoutError,
  IpcRouterError,
  MethodVersionMismatchError,
  NoClientFoundError,
  OwnerNotFoundError,
  RecoveryExhaustedError,
  SnapshotTimeoutError,
  StateLayoutError,
  StatePatchError,
  ThreadSessionClosedError,
  WriteNotReadyError,
  WriteOutcomeUnknownError,
  WriteRejectedError,
} from "./extension/errors.js"
export type {
  DisconnectReason,
  EndpointError,
  EndpointRole,
  FileKind,
  IpcRequestError,
  ThreadSessionFatalError,
  ThreadWriteError,
} from "./extension/errors.js"

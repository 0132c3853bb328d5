/**
 * @baton/testkit — Private test kit: loopback mock model servers and launchers for the real Codex
 * and Claude Code binaries.
 */

// Codex: mock OpenAI Responses server, isolated homes, exec / app-server / daemon launchers.
export {
  execCommandReply,
  functionCallItem,
  functionCallOutputs,
  functionCallReply,
  handlerReply,
  httpErrorReply,
  isCompactionRequest,
  messageItem,
  rateLimitHeaders,
  startMockResponses,
  streamReply,
  textReply,
  turnMetadata,
  usageLimitReply,
  userTexts,
} from "./mock-responses.js"
export type {
  MockBackendAnswer,
  MockHandlerReply,
  MockHttpErrorReply,
  MockRateLimits,
  MockRateLimitWindow,
  MockReply,
  MockResponsesOptions,
  MockResponsesServer,
  MockStreamOptions,
  MockStreamReply,
  MockUsage,
  RecordedRequest,
  RequestOrigin,
  UsageLimitOptions,
} from "./mock-responses.js"
export { decodeSseStream, encodeSseEvent } from "./sse.js"
export type { SseEvent } from "./sse.js"
export { usageAllowanceAnswer } from "./usage-allowance.js"
export type { UsageAllowanceOptions, UsageWindowAnswer } from "./usage-allowance.js"
export { codexConfigToml, createCodexHome, fakeIdToken, MOCK_API_KEY_ENV } from "./codex-home.js"
export type { CodexHome, CodexHomeOptions, FakeChatgptAuth, MockEndpoints } from "./codex-home.js"
export { resolveCodexBinary } from "./codex-binary.js"
export type { CodexBinary } from "./codex-binary.js"
export { runCodexExec, startCodexExec } from "./codex-exec.js"
export type {
  CodexExecEvent,
  CodexExecOptions,
  CodexExecResult,
  CodexExecRun,
} from "./codex-exec.js"
export { codexAppClient, startCodexAppServer } from "./codex-app-server.js"
export type {
  CodexAppClient,
  CodexAppServer,
  CodexAppServerOptions,
  CompletedCompaction,
  CompletedTurn,
} from "./codex-app-server.js"
export { startCodexDaemon } from "./codex-daemon.js"
export type { CodexDaemon, CodexDaemonConnection, CodexDaemonStopReport } from "./codex-daemon.js"
export { createJsonRpcPeer, JsonRpcError } from "./json-rpc-peer.js"
export type {
  JsonRpcNotification,
  JsonRpcPeer,
  JsonRpcPeerHandle,
  JsonRpcServerRequest,
  JsonRpcTransport,
  ServerRequestHandler,
  WaitOptions,
} from "./json-rpc-peer.js"
export {
  findRolloutFiles,
  findRolloutForThread,
  readRollout,
  rolloutEvents,
} from "./rollout-files.js"
export type { RolloutLine } from "./rollout-files.js"
export { findProcessesByEnv, spawnProcess } from "./process.js"
export type { ProcessExit, SpawnOptions, TestProcess } from "./process.js"

// Claude Code: mock Anthropic Messages server, isolated homes, `claude -p` / stream-json session
// launchers, transcript discovery.
export {
  classifyMessagesRequest,
  messagesBashReply,
  messagesErrorReply,
  messagesHandlerReply,
  messagesTextReply,
  messagesToolResults,
  messagesToolUseReply,
  messagesUserTexts,
  startMockMessages,
} from "./mock-messages.js"
export type {
  MessagesContentBlock,
  MessagesErrorReply,
  MessagesHandlerReply,
  MessagesMessageReply,
  MessagesReply,
  MessagesReplyOptions,
  MessagesReplySource,
  MessagesRequestKind,
  MessagesStopReason,
  MessagesToolResult,
  MessagesUsage,
  MockMessagesOptions,
  MockMessagesServer,
  RecordedMessagesRequest,
  WaitForMessagesRequestsOptions,
} from "./mock-messages.js"
export {
  CLAUDE_DUMMY_API_KEY,
  CLAUDE_TESTKIT_MARKER_ENV,
  claudeEnv,
  createClaudeHome,
} from "./claude-home.js"
export type { ClaudeHome, ClaudeHomeOptions, ClaudeModelEndpoint } from "./claude-home.js"
export { CLAUDE_BINARY_ENV, resolveClaudeBinary } from "./claude-binary.js"
export type { ClaudeBinary } from "./claude-binary.js"
export { runClaudePrint, startClaudeSession } from "./claude.js"
export type {
  ClaudeLaunchOptions,
  ClaudePermissionMode,
  ClaudePrintOptions,
  ClaudePrintRun,
  ClaudeResultMessage,
  ClaudeSendOptions,
  ClaudeSession,
  ClaudeStreamMessage,
} from "./claude.js"
export type { ChildExit } from "./claude-process.js"
export {
  claudeProjectDirName,
  claudeTranscriptPath,
  claudeTranscriptPrompts,
  findClaudeTranscripts,
  locateClaudeTranscript,
  readClaudeTranscript,
} from "./claude-transcripts.js"
export type { ClaudeTranscriptFile, ClaudeTranscriptRecord } from "./claude-transcripts.js"

// Corpus builder: real transcripts from both agents for the recall tests.
export { buildCorpus, CORPUS_COMPACTION_SUMMARY, defaultCorpusSessions } from "./corpus.js"
export type { Corpus, CorpusSession, CorpusSessionSpec, CorpusTurn } from "./corpus.js"

// A read-only file system (root only).
export { mountReadOnly } from "./read-only-mount.js"
export type { ReadOnlyMount } from "./read-only-mount.js"

/**
 * @baton/ipc-codex/testing — the in-memory twin of the Codex transports: a scriptable fake
 * app-server speaking the real wire, an in-memory frame link, and a `CodexTransport` over them.
 */
export { makeFakeAppServer } from "./fake-app-server.js"
export type {
  CompactionScript,
  FakeAppServer,
  FakeAppServerOptions,
  FakeThreadOptions,
  RateLimitsReadScript,
  ReceivedRequest,
  ServerRequestAnswer,
} from "./fake-app-server.js"
export { fakeTransport, fakeTransportLayer } from "./fake-transport.js"
export type { FakeTransportOptions } from "./fake-transport.js"
export { inMemoryLink } from "./in-memory-link.js"
export type { AcceptInMemoryLink, InMemoryServerEnd } from "./in-memory-link.js"
export { collectStates, turnCompleted, waitForThreadState } from "./wait-for-state.js"

// VS Code extension IPC: a fake router on a real unix socket, fixtures and wiring.
export {
  FakeExtensionRouter,
  dropConnection,
  replyWith,
  replyWithError,
  withholdReply,
} from "../extension/testing/fake-router.js"
export type {
  ChunkingMode,
  FakeRouterOptions,
  JsonObject,
  OwnerVersions,
  RecordedEnvelope,
  ReplyAction,
  RequestHandler,
} from "../extension/testing/fake-router.js"
export {
  approvalRequestFixture,
  conversationStateFixture,
  userInputRequestFixture,
} from "../extension/testing/conversation-fixtures.js"
export type { ConversationFixture } from "../extension/testing/conversation-fixtures.js"
export {
  fakeRouterEnvironment,
  nodeIpcLayer,
} from "../extension/testing/fake-router-environment.js"

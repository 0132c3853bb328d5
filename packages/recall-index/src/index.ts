/**
 * @baton/recall-index — A local index of past Claude Code and Codex sessions, searched by meaning and by words.
 * Now: the vector store probe, transcript discovery (through an injected file system), resumable
 * parsing of every Claude Code and Codex format era into sessions / turns / surface text / raw
 * records, chunking and secret masking. Storage, indexing and search come next.
 */
export { probeVectorStore } from "./vector-store-probe.js"
export {
  TranscriptDecompressError,
  TranscriptReadError,
  TranscriptResumeError,
  VectorStoreUnavailableError,
} from "./errors.js"
export { TranscriptFileSystem } from "./transcript-file-system.js"
export {
  nodeTranscriptFileSystem,
  nodeTranscriptFileSystemLayer,
} from "./node-transcript-file-system.js"
export { discoverTranscripts, transcriptRoots } from "./transcript-discovery.js"
export {
  createTranscriptParser,
  mergeParseResults,
  parseTranscriptBytes,
  parseTranscriptFile,
  sessionIdFromPath,
} from "./transcript-parser.js"
export {
  isClaudeCompactionSummary,
  isCodexCompactionBridge,
  stripClaudeHarness,
  stripCodexInjected,
} from "./harness-text.js"
export { chunkText, chunkTurns, normaliseChunkOptions } from "./chunker.js"
export { maskTranscriptText } from "./secret-masking.js"

export type { VectorStoreProbe } from "./vector-store-probe.js"
export type { TranscriptError, TranscriptFsOperation, VectorStoreProbeStage } from "./errors.js"
export type {
  TranscriptDirectoryEntry,
  TranscriptFileKind,
  TranscriptFileStat,
  TranscriptFileSystemShape,
} from "./transcript-file-system.js"
export type {
  DiscoveredTranscript,
  DiscoveryEnvironment,
  DiscoveryOptions,
  DiscoveryProblem,
  TranscriptDiscovery,
  TranscriptFileRole,
  TranscriptRoots,
} from "./transcript-discovery.js"
export type {
  ParseFileOptions,
  TranscriptFileRef,
  TranscriptInput,
  TranscriptParser,
} from "./transcript-parser.js"
export type {
  CodexParseState,
  OpenTurnState,
  ParseOptions,
  ParseResult,
  ParseState,
  ParseStats,
  RawRecord,
  RawRecordKind,
  SurfaceChannel,
  SurfaceText,
  TranscriptSession,
  TranscriptSource,
  Turn,
  TurnRole,
} from "./transcript-model.js"
export type { ChunkOptions, SurfaceChunk, TextChunk } from "./chunker.js"
export type { MaskedText } from "./secret-masking.js"

/**
 * @baton/recall-index — A local index of past Claude Code and Codex sessions, searched by meaning and by words.
 * Now: the vector store probe, transcript discovery (through an injected file system), resumable
 * parsing of every Claude Code and Codex format era into sessions / turns / surface text / raw
 * records, chunking and secret masking; the SQLite store (Kysely migrations, sqlite-vec, FTS5),
 * the incremental indexer, prune / forget / status and the escaped FTS5 lookup. Embedding and
 * hybrid search come next.
 */
export { probeVectorStore } from "./vector-store-probe.js"
export {
  TranscriptDecompressError,
  TranscriptReadError,
  TranscriptResumeError,
  VectorStoreUnavailableError,
  RecallStorageError,
  IndexBusyError,
} from "./errors.js"
export { batonDataDir, RECALL_DATABASE_FILE } from "./data-directory.js"
export { repoRootOf } from "./repo-root.js"
export {
  FTS_TOKENIZER,
  RECALL_SCHEMA_VERSION,
  recallMigrationProvider,
  recallMigrations,
} from "./recall-schema.js"
export { openRecallDatabase, RecallDatabase, recallDatabaseLayer } from "./recall-database.js"
export { decideFileChange, signatureKey } from "./file-change.js"
export { IndexerProcess, nodeIndexerProcessLayer } from "./index-lock.js"
export { indexTranscripts } from "./indexer.js"
export { forgetSessions, indexStatus, pruneDeleted } from "./index-maintenance.js"
export { ftsMatchExpression, matchChunks } from "./fts-query.js"
export { activateEmbedder } from "./vector-tables.js"
export { EmbedderError, normalizeVector } from "./embedder.js"
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
export type {
  RecallStorageOperation,
  TranscriptError,
  TranscriptFsOperation,
  VectorStoreProbeStage,
} from "./errors.js"
export type { FileStatus, RecallTables } from "./recall-schema.js"
export type { RecallDatabaseOptions, RecallDatabaseShape } from "./recall-database.js"
export type { FileChange, SignatureNow, SignatureStored } from "./file-change.js"
export type { IndexerProcessShape } from "./index-lock.js"
export type {
  IndexedFileMode,
  IndexFileFailure,
  IndexOptions,
  IndexProgressEvent,
  IndexRunReport,
} from "./indexer.js"
export type {
  ForgetTarget,
  IndexStatus,
  QuarantinedFile,
  RemovalCounts,
} from "./index-maintenance.js"
export type { ChunkMatch, FtsTermMode } from "./fts-query.js"
export type { ActiveEmbedder } from "./vector-tables.js"
export type {
  Embedder,
  EmbedderFailure,
  EmbedderInfo,
  Reranker,
  RerankResult,
} from "./embedder.js"
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

/**
 * @baton/recall-index — A local index of past Claude Code and Codex sessions, searched by meaning and by words.
 * Now: the vector store probe, transcript discovery (through an injected file system), resumable
 * parsing of every Claude Code and Codex format era into sessions / turns / surface text / raw
 * records, chunking and secret masking; the SQLite store (Kysely migrations, sqlite-vec, FTS5),
 * the incremental indexer, prune / forget / status and the escaped FTS5 lookup; hybrid search
 * (bm25 + KNN, weighted rank fusion, filters by source / repository / calendar day), cursors
 * into the raw history (expand, step), grep, recent sessions and status.
 */
export { probeVectorStore } from "./vector-store-probe.js"
export {
  TranscriptDecompressError,
  TranscriptReadError,
  TranscriptResumeError,
  VectorStoreUnavailableError,
  RecallStorageError,
  IndexBusyError,
  RecallNotFoundError,
  RecallQueryError,
} from "./errors.js"
export {
  batonDataDir,
  RECALL_DATABASE_FILE,
  RELATIVE_DATA_DIR_REASON,
  relativeDataDir,
  relativeDataDirMessage,
} from "./data-directory.js"
export { dataDirectoryProblem, probeDataDirectory } from "./data-directory-probe.js"
export { nodeDataDirectoryFileSystem } from "./node-data-directory-probe.js"
export { repoRootOf, repositoryUrlKey } from "./repo-root.js"
export { nodeRepositoryFiles, repositoryRootOf, resolveRepositoryRoot } from "./repository-root.js"
export {
  FTS_TOKENIZER,
  RECALL_SCHEMA_VERSION,
  recallMigrationProvider,
  recallMigrations,
  registerRecallFunctions,
} from "./recall-schema.js"
export {
  makeDirectory,
  openRecallDatabase,
  RecallDatabase,
  recallDatabaseLayer,
  WAL_SIZE_LIMIT_BYTES,
} from "./recall-database.js"
export { decideFileChange, signatureKey } from "./file-change.js"
export { IndexerProcess, nodeIndexerProcessLayer } from "./index-lock.js"
export { INDEX_SLICE_BYTES, indexTranscripts } from "./indexer.js"
export { hasCjk } from "./cjk-text.js"
export { ftsQueryTerms, ftsText, identifierWords } from "./fts-text.js"
export { forgetSessions, indexStatus, pruneDeleted } from "./index-maintenance.js"
export { vacuumIndex } from "./index-vacuum.js"
export type { VacuumReport } from "./index-vacuum.js"
export {
  DEFAULT_EXPANSION_MAX_DOC_SHARE,
  DEFAULT_MAX_DOC_SHARE,
  DEFAULT_MAX_SCORED_ROWS,
  DEFAULT_SCORING_MAX_DOC_SHARE,
  ftsMatchExpression,
  matchChunks,
  rankChunks,
} from "./fts-query.js"
export {
  addDays,
  dateRange,
  formatDate,
  hostTimeZone,
  isTimeZone,
  localDateOf,
  parseCalendarDate,
  relativeAge,
  resolveTimeZone,
  startOfDay,
  whenHuman,
} from "./time-format.js"
export { compileFilters, escapeLike, timestampClause } from "./recall-filters.js"
export { capText, queryTerms, snippetAt, snippetFor } from "./snippet.js"
export {
  DEFAULT_FUSION_PLAN,
  PREFILTER_BUDGET,
  PREFILTER_MAX_CHUNKS,
  checkSearchInput,
  projectOf,
  searchRecall,
} from "./search.js"
export { DEFAULT_RECORD_KINDS, expandAround, rebuildSurface, step } from "./navigation.js"
export {
  compileSafeRegex,
  escapeRegExp,
  MAX_PATTERN_CHARS,
  unsafePatternReason,
} from "./regex-safety.js"
export { checkGrepInput, GREP_WINDOW_CHARS, grepRecords } from "./record-grep.js"
export { GREP_REGEX_STOP_MS, GREP_SCAN_MS, GREP_WORKER_STARTUP_MS } from "./grep-limits.js"
export {
  GREP_WORKER_SLOTS,
  grepInConnection,
  grepRecordsIsolated,
  liveGrepWorkers,
} from "./grep-worker.js"
export { recentSessions } from "./recent-sessions.js"
export {
  applyCodexThreadNames,
  CODEX_THREAD_INDEX_FILE,
  parseThreadNames,
  readCodexThreadNames,
} from "./codex-thread-names.js"
export { recallStatus } from "./recall-status.js"
export { checkRecallIndexFile } from "./index-file-check.js"
export type { RecallIndexFileCheck } from "./index-file-check.js"
export { emptyIndexFacts } from "./empty-index.js"
export { activateEmbedder } from "./vector-tables.js"
export { EmbedderError, normalizeVector } from "./embedder.js"
export { EmbedderConfigError } from "./errors.js"
export {
  DEFAULT_EMBEDDED_EMBEDDER,
  EMBEDDED_FUSION_PLAN,
  USE_LITE_FUSION_PLAN,
  VOYAGE_FUSION_PLAN,
  embedderChoiceName,
  embedderConfigFromEnvironment,
  embedderFromConfig,
  embedderFromEnvironment,
  withIndexedDimensions,
} from "./embedder-config.js"
export {
  AUTO_LIMITS,
  autoChoiceForIndex,
  autoChoiceForSearch,
  configuredEmbedderSelection,
  embedderSelection,
  embedForIndex,
  embeddingForIndex,
  embeddingForSearch,
} from "./auto-embedder.js"
export {
  EMBED_COMMIT_LIMITS,
  embedBacklog,
  recordEmbedderSetupFailure,
} from "./embedding-backlog.js"
export {
  codesUsableFor,
  DEFAULT_POOL,
  MAX_KNN_K,
  ONE_SHOT_HOLD_BYTES,
  searchVectors,
  searchVectorsIn,
  warmVectorsIn,
} from "./vector-search.js"
export { convertVectorsToInt8, vectorElementsOf } from "./vector-code-store.js"
export type { VectorElements } from "./vector-code-store.js"
export { makeRecallDatabasePool } from "./recall-database-pool.js"
export type { RecallDatabasePool } from "./recall-database-pool.js"
export {
  builtVectorSearchModule,
  makeVectorSearchWorker,
  VectorWorkerUnavailable,
} from "./vector-search-worker.js"
export type { VectorSearchWorker, VectorSearchWorkerOptions } from "./vector-search-worker.js"
export { DEFAULT_RRF_K, fuseRanks } from "./rank-fusion.js"
export { lexicalQuery, speakerWords } from "./lexical-query.js"
export {
  DEFAULT_RETRY_POLICY,
  DEFAULT_TOKEN_BUDGET,
  EmbedderRetryNotices,
  estimateTokens,
  makeCostGuard,
} from "./embedders/call-policy.js"
export {
  makeUseLiteEmbedder,
  USE_LITE_DIM,
  useLiteSegments,
} from "./embedders/embedded-use-lite.js"
export { liveUseLiteWorkers, USE_LITE_IDLE_MS } from "./embedders/use-lite-pool.js"
export { DEFAULT_STATIC_TABLE_PATH, makeStaticTableEmbedder } from "./embedders/embedded-static.js"
export { staticTokens } from "./embedders/static-word-table.js"
export { makeSentenceReranker, sentencesOf } from "./embedders/sentence-reranker.js"
export { makeStaticQueryExpander } from "./embedders/static-query-expansion.js"
export { isLoopbackUrl, makeOpenAiCompatibleEmbedder } from "./embedders/openai-compatible.js"
export {
  makeVoyageEmbedder,
  makeVoyageReranker,
  VOYAGE_DEFAULT_MODEL,
  VOYAGE_DEFAULT_RERANK_MODEL,
  VOYAGE_FIXED_LENGTHS,
  VOYAGE_LOCAL_MODELS,
  voyageLength,
} from "./embedders/voyage.js"
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
  readCompressedSlices,
  sessionIdFromPath,
  TRANSCRIPT_PARSER_VERSION,
} from "./transcript-parser.js"
export {
  isClaudeCompactionSummary,
  isCodexCompactionBridge,
  stripClaudeHarness,
  stripCodexInjected,
} from "./harness-text.js"
export {
  chunkText,
  chunkTurns,
  DEFAULT_CHUNK_CHARS,
  DEFAULT_CHUNK_OVERLAP,
  normaliseChunkOptions,
} from "./chunker.js"
export { maskTranscriptText } from "./secret-masking.js"

export type { VectorStoreProbe } from "./vector-store-probe.js"
export type {
  DataDirectoryFileSystem,
  DataDirectoryPathKind,
  DataDirectoryProbe,
} from "./data-directory-probe.js"
export type {
  RecallQueryField,
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
  RunSkippedLines,
} from "./indexer.js"
export {
  addSkippedLines,
  decodeSkippedLines,
  encodeSkippedLines,
  OTHER_TYPES,
  skippedLinesOf,
  UNKNOWN_TYPES_KEPT,
} from "./skipped-lines.js"
export type { SkippedLines } from "./skipped-lines.js"
export type { CommitGroupLimits } from "./index-writer.js"
export {
  buildLookupIndexes,
  DEFER_LOOKUP_INDEXES_MIN_BYTES,
  dropLookupIndexes,
  hasLookupIndex,
  LOOKUP_INDEXES,
  missingLookupIndexes,
  shouldDeferLookupIndexes,
} from "./lookup-indexes.js"
export {
  deferLexicalIndex,
  finishLexicalBacklog,
  hasLexicalBacklog,
  lexicalBacklogSize,
  shouldDeferLexicalIndex,
} from "./lexical-backlog.js"
export { SKIPPED_FILES_LISTED } from "./index-maintenance.js"
export type {
  FileSkippedLines,
  ForgetTarget,
  IndexSkippedLines,
  IndexStatus,
  QuarantinedFile,
  RemovalCounts,
} from "./index-maintenance.js"
export type { ChunkMatch, FtsTermMode, MatchOptions, RankedChunk } from "./fts-query.js"
export type { CalendarDate, DateFilter, InstantRange } from "./time-format.js"
export type { CompiledFilters, RecallFilters, SqlClause } from "./recall-filters.js"
export type {
  HitScores,
  RecallHit,
  RecallSearchInput,
  RecallSearchProviders,
  RecallSearchResult,
  SearchArm,
  SearchArmsReport,
  VectorFilterMode,
} from "./search.js"
export type {
  ExpandInput,
  StepDirection,
  StepInput,
  TurnAnchor,
  TurnRecordView,
  TurnView,
  TurnViewOptions,
  TurnWindow,
} from "./navigation.js"
export type { GrepFailure, GrepHit, GrepInput, GrepResult } from "./record-grep.js"
export type { EmptyIndexFacts, EmptyIndexReason } from "./empty-index.js"
export type { RecentSession, RecentSessionsInput } from "./recent-sessions.js"
export type {
  RecallStatus,
  RecallStatusOptions,
  SourceCounts,
  StoredEmbedder,
} from "./recall-status.js"
export type { RepositoryFiles, RepositoryRootSource } from "./repository-root.js"
export type { ActiveEmbedder } from "./vector-tables.js"
export type {
  EmbeddedParts,
  Embedder,
  EmbedderFailure,
  EmbedderInfo,
  Reranker,
  RerankResult,
} from "./embedder.js"
export type {
  ConfiguredEmbedding,
  EmbeddedChoice,
  EmbeddedEmbedderName,
  EmbedderConfig,
  EmbedderEnvironment,
  FusionPlan,
} from "./embedder-config.js"
export type { AutoChoice, AutoLimits, EmbedderSelection, IndexEmbedding } from "./auto-embedder.js"
export type {
  EmbedBacklogOptions,
  EmbedBacklogProgress,
  EmbedBacklogReport,
  EmbeddingFailure,
} from "./embedding-backlog.js"
export type { CodeHolding, VectorHit, VectorSearchOptions } from "./vector-search.js"
export type { FusedRank, FusionList, FusionOptions } from "./rank-fusion.js"
export type { CostGuard, RetryPolicy } from "./embedders/call-policy.js"
export type { UseLiteOptions } from "./embedders/embedded-use-lite.js"
export type { StaticTableOptions } from "./embedders/embedded-static.js"
export type { SentenceRerankerOptions } from "./embedders/sentence-reranker.js"
export type { QueryExpansionOptions } from "./embedders/static-query-expansion.js"
export type { OpenAiCompatibleOptions } from "./embedders/openai-compatible.js"
export type { VoyageOptions } from "./embedders/voyage.js"
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
  KnownSignature,
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

/**
 * @baton/recall-index/testing — test support: the in-memory transcript file system and seeded
 * synthetic Claude Code / Codex trees with their expectations manifest.
 */
export { makeMemoryTranscriptFiles } from "./memory-file-system.js"
export { seededRandom } from "./seeded-random.js"
export { deterministicVector, makeDeterministicEmbedder } from "./deterministic-embedder.js"
export { generateFixtureCorpus } from "./fixture-corpus.js"
export { claudeExchange, generateBulkCorpus } from "./bulk-corpus.js"
export {
  encodeClaudeProjectDir,
  FIXTURE_ANTHROPIC_KEY,
  generateClaudeTree,
  longReply,
  prose,
} from "./claude-fixtures.js"
export { CODEX_BRIDGE_PREFIX, generateCodexTree, rolloutName } from "./codex-fixtures.js"

export type { MemoryTranscriptFiles } from "./memory-file-system.js"
export type { SeededRandom } from "./seeded-random.js"
export type { FixtureCorpusOptions, GeneratedFixtureCorpus } from "./fixture-corpus.js"
export type { BulkCorpus, BulkCorpusOptions, BulkSession } from "./bulk-corpus.js"
export type { ClaudeTree } from "./claude-fixtures.js"
export type { CodexTree } from "./codex-fixtures.js"
export type { ExpectedSurface, FixtureCorpus, FixtureExpectation } from "./fixture-manifest.js"

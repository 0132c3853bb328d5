/**
 * @baton/recall-index — A local index of past Claude Code and Codex sessions, searched by meaning and by words.
 * Now: the vector store probe (better-sqlite3 + sqlite-vec + FTS5) that recall builds on.
 */
export { VectorStoreUnavailableError } from "./errors.js"
export type { VectorStoreProbeStage } from "./errors.js"
export { probeVectorStore } from "./vector-store-probe.js"
export type { VectorStoreProbe } from "./vector-store-probe.js"

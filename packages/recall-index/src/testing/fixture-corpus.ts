/**
 * Generates a complete fake home — `~/.claude` (via `CLAUDE_CONFIG_DIR`) and `$CODEX_HOME` — with
 * the expectations manifest, deterministically from a seed (transcripts.md §5).
 */
import { generateClaudeTree } from "./claude-fixtures.js"
import { generateCodexTree } from "./codex-fixtures.js"
import type { FixtureCorpus } from "./fixture-manifest.js"
import { seededRandom } from "./seeded-random.js"

/** Options of {@link generateFixtureCorpus}. */
export interface FixtureCorpusOptions {
  readonly seed?: number
  /** Absolute home directory the trees are rooted at; default `/home/fixture`. */
  readonly homeDir?: string
  /** Base time of the sessions (ms since epoch); default 2026-01-02T03:04:05Z. */
  readonly baseMs?: number
}

/** The generated corpus plus the paths a test wires up as a broken symlink / unreadable file. */
export interface GeneratedFixtureCorpus extends FixtureCorpus {
  readonly brokenSymlink: string
  readonly unreadable: string
  /** An archived rollout a test may compress to `.jsonl.zst`. */
  readonly compressible: string
}

/** Generates the fixture corpus for `options.seed` (default 1). */
export const generateFixtureCorpus = (
  options: FixtureCorpusOptions = {},
): GeneratedFixtureCorpus => {
  const random = seededRandom(options.seed ?? 1)
  const homeDir = options.homeDir ?? "/home/fixture"
  const baseMs = options.baseMs ?? Date.UTC(2026, 0, 2, 3, 4, 5)
  const claudeConfigDir = `${homeDir}/.claude`
  const codexHome = `${homeDir}/.codex`
  const claude = generateClaudeTree(random, claudeConfigDir, homeDir, baseMs)
  const codex = generateCodexTree(random, codexHome, baseMs)
  return {
    homeDir,
    claudeConfigDir,
    codexHome,
    files: { ...claude.files, ...codex.files },
    expectations: [...claude.expectations, ...codex.expectations],
    brokenSymlink: claude.brokenSymlink,
    unreadable: claude.unreadable,
    compressible: codex.compressible,
  }
}

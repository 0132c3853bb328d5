/**
 * The expectations manifest the synthetic generators write next to their fake `~/.claude` and
 * `$CODEX_HOME` trees: per file, what discovery and the readers must report.
 */
import type { TranscriptSource, TurnRole } from "../transcript-model.js"

/** One expected surface text. */
export interface ExpectedSurface {
  readonly role: TurnRole
  readonly text: string
}

/** What the readers must find in one generated file (absent fields are not asserted). */
export interface FixtureExpectation {
  readonly path: string
  readonly source: TranscriptSource
  /** Short scenario name, e.g. `claude/typical`, `codex/era-bare`. */
  readonly scenario: string
  /** Listed by discovery (noise files are not). */
  readonly discovered: boolean
  readonly role?: "session" | "subagent"
  readonly sessionId?: string
  readonly headless?: boolean
  readonly subagent?: boolean
  readonly cwd?: string
  /** Surface texts in file order with default options (sidechains skipped). */
  readonly surface?: ReadonlyArray<ExpectedSurface>
  /** Surface texts with `includeSidechains: true`, when they differ. */
  readonly surfaceWithSidechains?: ReadonlyArray<ExpectedSurface>
  /** Substrings that must be in some raw record and in no surface text. */
  readonly rawOnly?: ReadonlyArray<string>
  /** Substrings that must appear nowhere in the output (secrets, signatures, base64). */
  readonly absent?: ReadonlyArray<string>
  readonly malformedLines?: number
  readonly invalidUtf8Lines?: number
  readonly truncatedTail?: boolean
  readonly unknownRecordTypes?: ReadonlyArray<string>
}

/** A generated tree: file contents by absolute path, plus the manifest. */
export interface FixtureCorpus {
  readonly homeDir: string
  readonly claudeConfigDir: string
  readonly codexHome: string
  readonly files: Readonly<Record<string, string | Uint8Array>>
  readonly expectations: ReadonlyArray<FixtureExpectation>
}

/**
 * Transcript discovery: finds Claude Code session files (all three subagent layouts) and Codex
 * rollouts (active and archived, plain and `.jsonl.zst`) and returns each with the signature an
 * incremental indexer compares (size, mtime, inode, hash of the first bytes).
 *
 * Guarantees: all IO goes through {@link TranscriptFileSystem}; a missing root is reported, not
 * an error; an unreadable entry is reported in `problems` and never aborts the walk; symlinked
 * directories are not followed (no loops); a plain rollout wins over its `.zst` twin; Codex
 * compression temp files and non-transcript files are ignored. Output is sorted by path.
 */
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { posix } from "node:path"
import type { TranscriptReadError } from "./errors.js"
import { TranscriptFileSystem } from "./transcript-file-system.js"
import type { TranscriptFileKind } from "./transcript-file-system.js"
import type { TranscriptSource } from "./transcript-model.js"

/** The environment discovery reads roots from; nothing ambient is consulted. */
export interface DiscoveryEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly homeDir: string
}

/** Where transcripts live. */
export interface TranscriptRoots {
  /** Claude `projects/` directories (first existing ones win nothing: all are walked). */
  readonly claudeProjects: ReadonlyArray<string>
  readonly codexSessions: string
  readonly codexArchivedSessions: string
}

/** Claude `CLAUDE_CONFIG_DIR` (else `~/.claude`, `~/.config/claude`, `$XDG_CONFIG_HOME/claude`); Codex `CODEX_HOME` (else `~/.codex`). */
export const transcriptRoots = (environment: DiscoveryEnvironment): TranscriptRoots => {
  const { env, homeDir } = environment
  const join = (...parts: ReadonlyArray<string>): string => posix.join(...parts)
  const configDir = env["CLAUDE_CONFIG_DIR"]
  const claude =
    configDir !== undefined && configDir !== ""
      ? [join(configDir, "projects")]
      : [
          join(homeDir, ".claude", "projects"),
          join(homeDir, ".config", "claude", "projects"),
          ...(env["XDG_CONFIG_HOME"] !== undefined && env["XDG_CONFIG_HOME"] !== ""
            ? [join(env["XDG_CONFIG_HOME"], "claude", "projects")]
            : []),
        ]
  const codexHome =
    env["CODEX_HOME"] !== undefined && env["CODEX_HOME"] !== ""
      ? env["CODEX_HOME"]
      : join(homeDir, ".codex")
  return {
    claudeProjects: [...new Set(claude)],
    codexSessions: join(codexHome, "sessions"),
    codexArchivedSessions: join(codexHome, "archived_sessions"),
  }
}

/** Main session file or subagent sidechain file. */
export type TranscriptFileRole = "session" | "subagent"

/** A transcript file and its signature. */
export interface DiscoveredTranscript {
  readonly source: TranscriptSource
  readonly path: string
  readonly compression: "none" | "zstd"
  readonly role: TranscriptFileRole
  /** Codex: under `archived_sessions/`. */
  readonly archived: boolean
  /** Claude `<session>/subagents/…` files: the parent session id from the directory name. */
  readonly parentSessionId?: string
  /** Claude current-era subagents: the sidecar `agent-<id>.meta.json`, when present. */
  readonly metaPath?: string
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
  /** SHA-256 hex of the first `headBytes` bytes. */
  readonly headHash: string
}

/** A path discovery could not look at. */
export interface DiscoveryProblem {
  readonly path: string
  readonly code: string
}

/** What discovery found. */
export interface TranscriptDiscovery {
  readonly files: ReadonlyArray<DiscoveredTranscript>
  readonly missingRoots: ReadonlyArray<string>
  readonly problems: ReadonlyArray<DiscoveryProblem>
}

/** A signature already on record for a path (see {@link DiscoveryOptions} `known`). */
export interface KnownSignature {
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
  readonly headHash: string
}

/** Discovery options. */
export interface DiscoveryOptions {
  /** Bytes hashed for `headHash`; default 4096. */
  readonly headBytes?: number
  readonly sources?: ReadonlyArray<TranscriptSource>
  /**
   * The signature indexed for a path, if any: a file whose size, mtime and inode all still match
   * keeps that head hash without being read (the quick check of make and rsync), so a no-change
   * rescan is one `stat` per file — no read, which matters when the files' pages are not cached
   * (the first run after a reboot or a large write). Any other file has its head read and hashed.
   */
  readonly known?: (path: string) => KnownSignature | undefined
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const claudeSessionFile = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i
const claudeAgentFile = /^agent-[A-Za-z0-9_-]+\.jsonl$/
const codexRollout = /^rollout-.+\.jsonl(\.zst)?$/

interface Candidate {
  readonly source: TranscriptSource
  readonly path: string
  readonly role: TranscriptFileRole
  readonly archived: boolean
  readonly parentSessionId?: string
  readonly metaPath?: string
}

interface Walk {
  readonly problems: Array<DiscoveryProblem>
  readonly missingRoots: Array<string>
}

const problem = (walk: Walk, error: TranscriptReadError): void => {
  walk.problems.push({ path: error.path, code: error.code })
}

/** Entries of `dir` with symlinks resolved to the kind of their target (broken ones reported). */
const listDirectory = (
  fs: TranscriptFileSystem["Service"],
  walk: Walk,
  dir: string,
  isRoot: boolean,
): Effect.Effect<ReadonlyArray<{ readonly name: string; readonly kind: TranscriptFileKind }>> =>
  fs.readDirectory(dir).pipe(
    Effect.catch((error) =>
      Effect.sync(() => {
        if (isRoot && error.code === "ENOENT") walk.missingRoots.push(dir)
        else problem(walk, error)
        return []
      }),
    ),
    Effect.flatMap((entries) =>
      Effect.forEach(entries, (entry) =>
        entry.kind !== "symlink"
          ? Effect.succeed(entry)
          : fs.stat(posix.join(dir, entry.name)).pipe(
              // A symlinked file is followed; a symlinked directory is not (no loops).
              Effect.map((st) => ({
                name: entry.name,
                kind: st.kind === "file" ? ("file" as const) : ("other" as const),
              })),
              Effect.catch((error) =>
                Effect.sync(() => {
                  problem(walk, error)
                  return { name: entry.name, kind: "other" as const }
                }),
              ),
            ),
      ),
    ),
  )

const claudeSubagents = (
  fs: TranscriptFileSystem["Service"],
  walk: Walk,
  dir: string,
  parentSessionId: string,
): Effect.Effect<ReadonlyArray<Candidate>> =>
  listDirectory(fs, walk, dir, false).pipe(
    Effect.flatMap((entries) => {
      const names = new Set(entries.map((e) => e.name))
      const here: Array<Candidate> = entries
        .filter((e) => e.kind === "file" && claudeAgentFile.test(e.name))
        .map((e) => {
          const meta = e.name.replace(/\.jsonl$/, ".meta.json")
          return {
            source: "claude",
            path: posix.join(dir, e.name),
            role: "subagent",
            archived: false,
            parentSessionId,
            ...(names.has(meta) ? { metaPath: posix.join(dir, meta) } : {}),
          }
        })
      return Effect.forEach(
        entries.filter((e) => e.kind === "directory"),
        (e) => claudeSubagents(fs, walk, posix.join(dir, e.name), parentSessionId),
      ).pipe(Effect.map((nested) => [...here, ...nested.flat()]))
    }),
  )

const claudeProject = (
  fs: TranscriptFileSystem["Service"],
  walk: Walk,
  dir: string,
): Effect.Effect<ReadonlyArray<Candidate>> =>
  listDirectory(fs, walk, dir, false).pipe(
    Effect.flatMap((entries) => {
      const files: Array<Candidate> = []
      for (const e of entries) {
        if (e.kind !== "file") continue
        if (claudeSessionFile.test(e.name)) {
          files.push({
            source: "claude",
            path: posix.join(dir, e.name),
            role: "session",
            archived: false,
          })
        } else if (claudeAgentFile.test(e.name)) {
          files.push({
            source: "claude",
            path: posix.join(dir, e.name),
            role: "subagent",
            archived: false,
          })
        }
      }
      const sessionDirs = entries.filter((e) => e.kind === "directory" && uuidPattern.test(e.name))
      return Effect.forEach(sessionDirs, (e) =>
        claudeSubagents(fs, walk, posix.join(dir, e.name, "subagents"), e.name).pipe(
          // A session directory without subagents/ is normal: drop that ENOENT.
          Effect.map((found) => found),
        ),
      ).pipe(Effect.map((nested) => [...files, ...nested.flat()]))
    }),
  )

const claudeRoot = (
  fs: TranscriptFileSystem["Service"],
  walk: Walk,
  root: string,
): Effect.Effect<ReadonlyArray<Candidate>> =>
  listDirectory(fs, walk, root, true).pipe(
    Effect.flatMap((entries) =>
      Effect.forEach(
        entries.filter((e) => e.kind === "directory"),
        (e) => claudeProject(fs, walk, posix.join(root, e.name)),
      ),
    ),
    Effect.map((nested) => nested.flat()),
  )

const codexTree = (
  fs: TranscriptFileSystem["Service"],
  walk: Walk,
  dir: string,
  archived: boolean,
  isRoot: boolean,
): Effect.Effect<ReadonlyArray<Candidate>> =>
  listDirectory(fs, walk, dir, isRoot).pipe(
    Effect.flatMap((entries) => {
      const names = new Set(entries.map((e) => e.name))
      const files: Array<Candidate> = entries
        .filter((e) => e.kind === "file" && codexRollout.test(e.name))
        // Plain wins over .zst when both exist (mid-compression).
        .filter((e) => !(e.name.endsWith(".zst") && names.has(e.name.slice(0, -4))))
        .map((e) => ({ source: "codex", path: posix.join(dir, e.name), role: "session", archived }))
      return Effect.forEach(
        entries.filter((e) => e.kind === "directory"),
        (e) => codexTree(fs, walk, posix.join(dir, e.name), archived, false),
      ).pipe(Effect.map((nested) => [...files, ...nested.flat()]))
    }),
  )

/** Drops the ENOENT problems of Claude session directories that simply have no `subagents/`. */
const isExpectedAbsence = (p: DiscoveryProblem): boolean =>
  p.code === "ENOENT" && p.path.endsWith("/subagents")

/**
 * Signs `candidates` in order: a stat each, and a head hash unless `known` vouches for the file
 * (same size, mtime and inode). The stats come in one `statMany` call, not an effect per file: a
 * no-change rescan of 10 000 files is mostly this loop.
 */
const signAll = (
  fs: TranscriptFileSystem["Service"],
  walk: Walk,
  candidates: ReadonlyArray<Candidate>,
  headBytes: number,
  known: DiscoveryOptions["known"],
): Effect.Effect<Array<DiscoveredTranscript>> =>
  Effect.gen(function* () {
    const files: Array<DiscoveredTranscript> = []
    const stats = yield* fs.statMany(candidates.map((c) => c.path))
    for (const [at, candidate] of candidates.entries()) {
      const stat = stats[at]!
      if (stat._tag === "Failure") {
        problem(walk, stat.failure)
        continue
      }
      const st = stat.success
      const onRecord = known?.(candidate.path)
      let headHash: string
      if (
        onRecord !== undefined &&
        onRecord.size === st.size &&
        onRecord.mtimeMs === st.mtimeMs &&
        onRecord.ino === st.ino
      ) {
        headHash = onRecord.headHash
      } else {
        const head = yield* Effect.result(fs.read(candidate.path, 0, headBytes))
        if (head._tag === "Failure") {
          problem(walk, head.failure)
          continue
        }
        headHash = headHashOf(head.success)
      }
      files.push({
        ...candidate,
        compression: candidate.path.endsWith(".zst") ? "zstd" : "none",
        size: st.size,
        mtimeMs: st.mtimeMs,
        ino: st.ino,
        headHash,
      })
    }
    return files
  })

/** A file's head hash: SHA-256 (hex) of its first bytes, as discovery records it. */
export const headHashOf = (head: Uint8Array): string =>
  createHash("sha256").update(head).digest("hex")

/** Lists transcript files under the roots of `environment`, with their signatures. */
export const discoverTranscripts = (
  environment: DiscoveryEnvironment,
  options: DiscoveryOptions = {},
): Effect.Effect<TranscriptDiscovery, never, TranscriptFileSystem> =>
  Effect.gen(function* () {
    const fs = yield* TranscriptFileSystem
    const roots = transcriptRoots(environment)
    const sources = options.sources ?? ["claude", "codex"]
    const headBytes = options.headBytes ?? 4096
    const walk: Walk = { problems: [], missingRoots: [] }
    const candidates: Array<Candidate> = []
    if (sources.includes("claude")) {
      // One directory under two names (a linked config directory) is walked once.
      const walked = new Set<string>()
      for (const root of roots.claudeProjects) {
        const real = fs.realPath === undefined ? undefined : yield* fs.realPath(root)
        if (real !== undefined) {
          if (walked.has(real)) continue
          walked.add(real)
        }
        candidates.push(...(yield* claudeRoot(fs, walk, root)))
      }
    }
    if (sources.includes("codex")) {
      candidates.push(...(yield* codexTree(fs, walk, roots.codexSessions, false, true)))
      candidates.push(...(yield* codexTree(fs, walk, roots.codexArchivedSessions, true, true)))
    }
    const files = yield* signAll(fs, walk, candidates, headBytes, options.known)
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    return {
      files,
      missingRoots: walk.missingRoots,
      problems: walk.problems.filter((p) => !isExpectedAbsence(p)),
    }
  })

/**
 * Gathers what `baton doctor` reports: file-system state of Baton's and the agents' directories,
 * `baton` and `claude` on PATH, the recall index (opened read-only), the Codex binary and its
 * version, the vector store probe, the embedder choice and whether Claude Code remembers Baton's
 * MCP server as failed. Guarantees: read-only — it stats, checks access, reads the index and
 * Claude Code's `mcp-needs-auth-cache.json` and runs `codex --version`, and never creates,
 * changes or deletes anything of Baton's (SQLite may add an index's `-wal`/`-shm` side files, as
 * any reader). The one write is a test: whether a directory of Baton's (or the nearest one above
 * a missing one) takes a write is tried by creating and removing a uniquely named empty directory
 * in it (@baton/recall-index's `probeDataDirectory`), since permission bits say nothing to root
 * and a read-only file system can pass `access`. Every probe failure becomes a fact, never a
 * throw. The Codex binary is found by @baton/ipc-codex's discovery (the one `baton codex probe`
 * and the transports use); both packages are imported only when the facts are gathered.
 */
import { constants } from "node:fs"
import { access, lstat, readFile, readlink, stat } from "node:fs/promises"
import { homedir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import {
  resolveClaudeConfigDir,
  resolveCodexHome,
  resolveDataDir,
  resolveJobsDir,
} from "./baton-paths.js"
import type { ResolvedPath } from "./baton-paths.js"
import type { CodexBinarySource, CodexVersionProbe } from "@baton/ipc-codex"
import type { RecallIndexFileCheck } from "@baton/recall-index"

/** The state of one directory Baton writes to. */
export type WritableDirFacts = ResolvedPath &
  (
    | {
        readonly _tag: "Present"
        readonly mode: number
        /** `access` allows a write and a test directory could be created in it. */
        readonly writable: boolean
        /** Why not, when not writable: the errno code (`EACCES`, `EROFS`, `EPERM`, ...). */
        readonly refusal?: string
        readonly ownedByUser: boolean
      }
    | {
        readonly _tag: "Missing"
        readonly nearestExisting: string | undefined
        /** `access` allows a write in `nearestExisting` and a test directory could be created. */
        readonly creatable: boolean
        /** Why not, when not creatable: the errno code (`EACCES`, `EROFS`, `EPERM`, ...). */
        readonly refusal?: string
      }
    | { readonly _tag: "NotADirectory" }
    /** The path, or a directory above it, is a symbolic link to nothing. */
    | { readonly _tag: "DanglingLink"; readonly link: string; readonly target: string }
    | { readonly _tag: "Inaccessible"; readonly reason: string }
    /** The variable holds a relative path, which Baton refuses. */
    | { readonly _tag: "Relative" }
  )

/** Whether a directory the agents own exists. */
export type PresenceFacts = ResolvedPath & {
  readonly exists: boolean
  readonly isDirectory: boolean
}

/** What the vector store probe reported. */
export type VectorStoreFacts =
  | {
      readonly _tag: "Available"
      readonly sqliteVersion: string
      readonly vecVersion: string
      readonly fts5: boolean
    }
  | { readonly _tag: "Unavailable"; readonly stage: string; readonly reason: string }

/** Where discovery found Codex and what `--version` said, or why it found none usable. */
export type CodexFacts =
  | {
      readonly _tag: "Found"
      readonly path: string
      readonly source: CodexBinarySource
      readonly version: CodexVersionProbe
    }
  /** `BATON_CODEX_BINARY` is set but unusable; discovery does not fall back while it is set. */
  | { readonly _tag: "Unusable"; readonly path: string; readonly reason: string }
  | { readonly _tag: "NotFound"; readonly searched: ReadonlyArray<string> }

/** Where a command was found on PATH, or undefined when it was not. */
export type CommandOnPath = string | undefined

/**
 * The recall index file in the data directory, as read-only inspection found it
 * (`checkRecallIndexFile`, with the error reduced to its message).
 */
export type RecallIndexFacts =
  | Exclude<RecallIndexFileCheck, { readonly _tag: "Unusable" }>
  | { readonly _tag: "Unusable"; readonly path: string; readonly message: string }

/** The key Claude Code gives the Baton plugin's MCP server, and the one of a hand-added server. */
const BATON_MCP_SERVER_KEYS = ["plugin:baton:baton", "baton"] as const

/**
 * Claude Code's `mcp-needs-auth-cache.json` (in its config directory): the MCP servers it marked
 * failed and does not start again until reconnected. Absent when the file is not there.
 */
export type McpNeedsAuthFacts =
  | { readonly _tag: "Absent"; readonly path: string }
  /** `batonKeys`: the entries of Baton's server it holds (none: Baton is not marked). */
  | { readonly _tag: "Read"; readonly path: string; readonly batonKeys: ReadonlyArray<string> }
  | { readonly _tag: "Unreadable"; readonly path: string; readonly reason: string }

/** Everything doctor assesses. */
export interface DoctorFacts {
  readonly nodeVersion: string
  /** `baton` on PATH: what the plugin's hook and MCP server start. */
  readonly batonOnPath: CommandOnPath
  readonly claudeOnPath: CommandOnPath
  readonly dataDir: WritableDirFacts
  readonly recallIndex: RecallIndexFacts
  readonly jobsDir: WritableDirFacts
  readonly codexHome: PresenceFacts
  readonly claudeConfig: PresenceFacts
  readonly claudeProjects: PresenceFacts
  readonly claudeMcpNeedsAuth: McpNeedsAuthFacts
  readonly codex: CodexFacts
  readonly vectorStore: VectorStoreFacts
  readonly embedder: EmbedderFacts
}

/** The embedder the environment selects (`BATON_EMBEDDER` and the rest), never a key's value. */
export type EmbedderFacts =
  | {
      readonly _tag: "Selected"
      /** `auto`, `use-static`, `use-lite`, `voyage`, `openai` or `none`. */
      readonly choice: string
      /** The remote endpoint as configured (redacted when assessed); undefined: the default. */
      readonly endpoint: string | undefined
      readonly model: string | undefined
      /** VOYAGE_API_KEY is set (it never selects Voyage by itself). */
      readonly voyageKeySet: boolean
      /** Embedded choices: whether the static word table (every embedded choice uses it) loads. */
      readonly staticTable:
        | { readonly _tag: "Loaded"; readonly fingerprint: string }
        | { readonly _tag: "Failed"; readonly reason: string }
        | undefined
    }
  | { readonly _tag: "Invalid"; readonly variable: string; readonly message: string }

/** Injected probes and limits, so tests and the real CLI share one gatherer. */
export interface DoctorProbes {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly home?: string
  readonly codexTimeoutMs: number
  readonly probeVectorStore: () => Promise<VectorStoreFacts>
  /** Reads the embedder choice from `env` and, for an embedded one, loads the word table. */
  readonly probeEmbedder: (env: DoctorProbes["env"]) => Promise<EmbedderFacts>
  /** Opens the recall index in `dataDir` read-only (never creates it). */
  readonly probeRecallIndex: (dataDir: string) => Promise<RecallIndexFacts>
}

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code

const canWrite = async (path: string): Promise<boolean> => {
  try {
    await access(path, constants.W_OK | constants.X_OK)
    return true
  } catch {
    return false
  }
}

const nearestExistingAncestor = async (path: string): Promise<string | undefined> => {
  for (let current = dirname(path); ; current = dirname(current)) {
    try {
      if ((await stat(current)).isDirectory()) return current
      return undefined
    } catch (error) {
      if (errorCode(error) !== "ENOENT") return undefined
    }
    if (dirname(current) === current) return undefined
  }
}

/** The first symbolic link to nothing on the way to `path` (which does not exist), if any. */
const danglingLinkOnPath = async (
  path: string,
): Promise<{ readonly link: string; readonly target: string } | undefined> => {
  const missing: Array<string> = []
  for (let current = path; ; current = dirname(current)) {
    try {
      await stat(current)
      break
    } catch {
      missing.push(current)
    }
    if (dirname(current) === current) break
  }
  for (const candidate of missing.reverse()) {
    try {
      if ((await lstat(candidate)).isSymbolicLink())
        return { link: candidate, target: await readlink(candidate) }
    } catch {
      // Not there at all: the next component cannot be a link either.
      return undefined
    }
  }
  return undefined
}

/** The first executable `name` in PATH's directories, or undefined. */
const findOnPath = async (name: string, env: DoctorProbes["env"]): Promise<CommandOnPath> => {
  for (const dir of (env["PATH"] ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, name)
    try {
      if (!(await stat(candidate)).isFile()) continue
      await access(candidate, constants.X_OK)
      return candidate
    } catch {
      // Not here.
    }
  }
  return undefined
}

/**
 * Why `path` (an existing directory, or a missing one judged by the nearest directory above)
 * cannot take a write, or undefined when it can: @baton/recall-index's probe, which tries a real
 * create. Falls back to `access` alone if the package cannot be loaded.
 */
const writeRefusal = async (path: string, existing: string): Promise<string | undefined> => {
  try {
    const recall = await import("@baton/recall-index")
    // Never rejects: only the import can throw here.
    const probe = await recall.probeDataDirectory(path, recall.nodeDataDirectoryFileSystem)
    return probe._tag === "Usable" ? undefined : probe.reason
  } catch {
    return (await canWrite(existing)) ? undefined : "EACCES"
  }
}

const inspectWritableDir = async (resolved: ResolvedPath): Promise<WritableDirFacts> => {
  // Refused by every command: looking at it from doctor's directory would mean nothing.
  if (resolved.relative === true) return { ...resolved, _tag: "Relative" }
  try {
    const info = await stat(resolved.path)
    if (!info.isDirectory()) return { ...resolved, _tag: "NotADirectory" }
    const uid = process.getuid?.()
    const refusal = await writeRefusal(resolved.path, resolved.path)
    return {
      ...resolved,
      _tag: "Present",
      mode: info.mode & 0o777,
      writable: refusal === undefined,
      ...(refusal === undefined ? {} : { refusal }),
      ownedByUser: uid === undefined || info.uid === uid,
    }
  } catch (error) {
    if (errorCode(error) !== "ENOENT") {
      return {
        ...resolved,
        _tag: "Inaccessible",
        reason: error instanceof Error ? error.message : String(error),
      }
    }
    const dangling = await danglingLinkOnPath(resolved.path)
    if (dangling !== undefined) return { ...resolved, _tag: "DanglingLink", ...dangling }
    const nearestExisting = await nearestExistingAncestor(resolved.path)
    if (nearestExisting === undefined)
      return { ...resolved, _tag: "Missing", nearestExisting, creatable: false }
    const refusal = await writeRefusal(resolved.path, nearestExisting)
    return {
      ...resolved,
      _tag: "Missing",
      nearestExisting,
      creatable: refusal === undefined,
      ...(refusal === undefined ? {} : { refusal }),
    }
  }
}

/**
 * Reads Claude Code's `mcp-needs-auth-cache.json` for Baton's server. An object keyed by server
 * name (an array of names is read too); anything else, or a file that cannot be read, is reported
 * as unreadable, never thrown.
 */
const inspectMcpNeedsAuth = async (claudeConfigDir: string): Promise<McpNeedsAuthFacts> => {
  const path = join(claudeConfigDir, "mcp-needs-auth-cache.json")
  let text: string
  try {
    text = await readFile(path, "utf8")
  } catch (error) {
    const code = errorCode(error)
    if (code === "ENOENT" || code === "ENOTDIR") return { _tag: "Absent", path }
    return { _tag: "Unreadable", path, reason: code ?? String(error) }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { _tag: "Unreadable", path, reason: "not valid JSON" }
  }
  const names: ReadonlyArray<unknown> | undefined = Array.isArray(parsed)
    ? parsed
    : typeof parsed === "object" && parsed !== null
      ? Object.keys(parsed)
      : undefined
  if (names === undefined)
    return { _tag: "Unreadable", path, reason: "not a JSON object of server names" }
  const batonKeys = BATON_MCP_SERVER_KEYS.filter((key) => names.includes(key))
  return { _tag: "Read", path, batonKeys }
}

const inspectPresence = async (resolved: ResolvedPath): Promise<PresenceFacts> => {
  try {
    const info = await stat(resolved.path)
    return { ...resolved, exists: true, isDirectory: info.isDirectory() }
  } catch {
    return { ...resolved, exists: false, isDirectory: false }
  }
}

const inspectCodex = async (probes: DoctorProbes, home: string): Promise<CodexFacts> => {
  try {
    const [Effect, Result, ipc] = await Promise.all([
      import("effect/Effect"),
      import("effect/Result"),
      import("@baton/ipc-codex"),
    ])
    const host = {
      ...ipc.nodeBinaryHost(),
      env: probes.env,
      homedir: home,
      // Doctor probes the version itself below, to tell a hang from a failure.
      readVersion: () => Effect.succeed(null),
    }
    const found = await Effect.runPromise(Effect.result(ipc.discoverCodexBinary(host)))
    if (Result.isFailure(found)) {
      const pinned = probes.env[ipc.CODEX_BINARY_ENV]
      return pinned !== undefined && pinned !== ""
        ? { _tag: "Unusable", path: pinned, reason: found.failure.searched.join("; ") }
        : { _tag: "NotFound", searched: found.failure.searched }
    }
    const { path, source } = found.success
    const version = await Effect.runPromise(
      ipc.probeCodexVersion(path, { timeoutMs: probes.codexTimeoutMs, env: { ...probes.env } }),
    )
    return { _tag: "Found", path, source, version }
  } catch (error) {
    return {
      _tag: "NotFound",
      searched: [
        `discovery could not run: ${error instanceof Error ? error.message : String(error)}`,
      ],
    }
  }
}

/** Runs every read-only probe doctor needs; independent probes run concurrently. */
export const gatherDoctorFacts = async (probes: DoctorProbes): Promise<DoctorFacts> => {
  const { env, cwd } = probes
  const home =
    probes.home ?? (env["HOME"] !== undefined && env["HOME"] !== "" ? env["HOME"] : homedir())
  const claudeConfig = resolveClaudeConfigDir(env, home, cwd)
  const dataDirPath = resolveDataDir(env, home)
  const [
    batonOnPath,
    claudeOnPath,
    recallIndex,
    dataDir,
    jobsDir,
    codexHome,
    claudeConfigFacts,
    claudeProjects,
    claudeMcpNeedsAuth,
    codex,
    vectorStore,
    embedder,
  ] = await Promise.all([
    findOnPath("baton", env),
    findOnPath("claude", env),
    probes.probeRecallIndex(dataDirPath.path),
    inspectWritableDir(dataDirPath),
    inspectWritableDir(resolveJobsDir(env, home, cwd)),
    inspectPresence(resolveCodexHome(env, home, cwd)),
    inspectPresence(claudeConfig),
    inspectPresence({ path: join(claudeConfig.path, "projects"), source: claudeConfig.source }),
    inspectMcpNeedsAuth(claudeConfig.path),
    inspectCodex(probes, home),
    probes.probeVectorStore(),
    probes.probeEmbedder(env),
  ])
  return {
    nodeVersion: process.versions.node,
    batonOnPath,
    claudeOnPath,
    dataDir,
    recallIndex,
    jobsDir,
    codexHome,
    claudeConfig: claudeConfigFacts,
    claudeProjects,
    claudeMcpNeedsAuth,
    codex,
    vectorStore,
    embedder,
  }
}

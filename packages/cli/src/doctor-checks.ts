/**
 * Turns doctor's facts into checks: each `ok | warn | fail` with a summary, a detail and a hint.
 * Guarantees: pure and total — the same facts always give the same checks, in a fixed order;
 * secrets are never echoed (an API key is reported as set or unset, a URL loses its credentials
 * and query string).
 */
import type {
  CodexFacts,
  CommandOnPath,
  DoctorFacts,
  McpNeedsAuthFacts,
  PresenceFacts,
  RecallIndexFacts,
  VectorStoreFacts,
  WritableDirFacts,
} from "./doctor-facts.js"

/** A check's verdict. */
export type CheckStatus = "ok" | "warn" | "fail"

/** One line of the doctor report; `id` is stable across versions. */
export interface DoctorCheck {
  readonly id: string
  readonly status: CheckStatus
  readonly summary: string
  readonly detail: string
  readonly hint: string | null
}

const origin = (source: string): string =>
  source === "default" ? "default location" : `from ${source}`

const check = (
  id: string,
  status: CheckStatus,
  summary: string,
  detail: string,
  hint: string | null = null,
) => ({
  id,
  status,
  summary,
  detail,
  hint,
})

/** Formats permission bits as four octal digits, e.g. `0700`. */
export const formatMode = (mode: number): string =>
  `0${(mode & 0o777).toString(8).padStart(3, "0")}`

/** Text from another program without terminal escapes or control characters (one line). */
const printable = (text: string): string =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, "")
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .trim()

const shellArg = (path: string): string =>
  /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`

/** The minimum Node major version Baton supports. */
export const minimumNodeMajor = 20

const assessNode = (version: string): DoctorCheck => {
  const major = Number.parseInt(version.split(".")[0] ?? "", 10)
  return major >= minimumNodeMajor
    ? check("node", "ok", `Node ${version}`, `Baton needs Node ${minimumNodeMajor} or newer`)
    : check(
        "node",
        "fail",
        `Node ${version} is too old`,
        `Baton needs Node ${minimumNodeMajor} or newer`,
        `Install Node ${minimumNodeMajor} or newer`,
      )
}

/** What a refused write means: `EROFS` a read-only file system, else permissions. */
const refusedBecause = (refusal: string | undefined): string =>
  refusal === undefined
    ? "is not writable"
    : /EROFS/.test(refusal)
      ? `is on a read-only file system (${refusal})`
      : `refused a test directory (${refusal})`

const assessWritableDir = (id: string, envName: string, dir: WritableDirFacts): DoctorCheck => {
  const from = origin(dir.source)
  switch (dir._tag) {
    case "Missing":
      return dir.creatable
        ? check(
            id,
            "ok",
            `${dir.path} — not created yet`,
            `will be created 0700 on first use (${from})`,
          )
        : check(
            id,
            "fail",
            `${dir.path} — not created yet, and cannot be`,
            dir.nearestExisting === undefined
              ? `no parent directory exists (${from})`
              : `nearest existing parent ${dir.nearestExisting} ${refusedBecause(dir.refusal)} (${from})${id === "data-dir" ? "; index runs, the plugins' SessionStart hook included, fail until then" : ""}`,
            `Set ${envName} to a directory you can write, or create it (mkdir -p -m 700 ${shellArg(dir.path)}) or fix the permissions of ${dir.nearestExisting === undefined ? "its parent" : shellArg(dir.nearestExisting)}`,
          )
    case "DanglingLink":
      return check(
        id,
        "fail",
        `${dir.path} — under a symbolic link to nothing`,
        `${dir.link} points to ${dir.target}, which does not exist (${from})`,
        `Create ${shellArg(dir.target)}, remove the link, or set ${envName}`,
      )
    case "NotADirectory":
      return check(
        id,
        "fail",
        `${dir.path} — not a directory`,
        from,
        `Move the file away, or set ${envName}`,
      )
    case "Inaccessible":
      return check(
        id,
        "fail",
        `${dir.path} — cannot be inspected`,
        `${dir.reason} (${from})`,
        `Check permissions on ${dir.path}`,
      )
    case "Relative":
      return check(
        id,
        "fail",
        `${dir.path} — a relative path`,
        `${envName} must be absolute: a relative one is read from each process's own working directory, so the hook, the MCP server and a terminal would each use a different one`,
        `Set ${envName} to an absolute path`,
      )
    case "Present": {
      const mode = formatMode(dir.mode)
      const isPrivate = (dir.mode & 0o077) === 0
      const facts = [
        `mode ${mode}`,
        isPrivate ? "private" : "readable by others",
        dir.writable
          ? "writable"
          : dir.refusal === undefined
            ? "not writable"
            : /EROFS/.test(dir.refusal)
              ? `not writable: a read-only file system (${dir.refusal})`
              : `not writable (${dir.refusal})`,
      ]
      if (!dir.ownedByUser) facts.push("owned by another user")
      const detail = `${facts.join(", ")} (${from})`
      if (!dir.writable)
        return check(
          id,
          "fail",
          `${dir.path} — not writable`,
          detail,
          dir.refusal !== undefined && /EROFS/.test(dir.refusal)
            ? `Set ${envName} to a directory on a writable disk, or remount it read-write`
            : `As its owner, run: chmod 700 ${shellArg(dir.path)}, or set ${envName} to a directory you can write`,
        )
      if (!isPrivate)
        return check(
          id,
          "warn",
          `${dir.path} — not private (${mode})`,
          detail,
          `Run: chmod 700 ${shellArg(dir.path)}`,
        )
      if (!dir.ownedByUser)
        return check(
          id,
          "warn",
          `${dir.path} — owned by another user`,
          detail,
          `Give ${shellArg(dir.path)} to your user (chown), or set ${envName}`,
        )
      return check(id, "ok", dir.path, detail)
    }
  }
}

const assessBatonCommand = (found: CommandOnPath): DoctorCheck =>
  found === undefined
    ? check(
        "baton-command",
        "warn",
        "baton is not on PATH",
        "the Codex and Claude Code plugins start `baton` for their SessionStart hook and MCP server; without it the agents have no Baton tools",
        "Install it from a checkout of the Baton repository: pnpm install --frozen-lockfile && pnpm build && npm install -g ./packages/cli (the packages are not on the npm registry yet; see Install in its README)",
      )
    : check("baton-command", "ok", found, "what the plugins' hook and MCP server start")

const assessRecallIndex = (index: RecallIndexFacts, dataDir: WritableDirFacts): DoctorCheck[] => {
  // A data directory that cannot hold an index is the data-dir check's failure already (and no
  // index run, the hook's neither, will build a missing one there).
  if (dataDir._tag !== "Present" || (!dataDir.writable && index._tag === "Missing")) return []
  switch (index._tag) {
    case "Missing":
      return [
        check(
          "recall-index",
          "ok",
          "no index yet",
          "'baton recall index' builds it (the plugins' SessionStart hook does it in the background)",
        ),
      ]
    case "Readable": {
      const sessions = `${index.sessions.toLocaleString("en-US")} ${index.sessions === 1 ? "session" : "sessions"}`
      const size = `${(index.bytes / (1024 * 1024)).toFixed(1)} MiB`
      const schema =
        index.schemaVersion === undefined
          ? "schema not migrated yet"
          : `schema ${index.schemaVersion}`
      return [check("recall-index", "ok", index.path, `${sessions}, ${size}, ${schema}`)]
    }
    case "Unusable":
      return [
        check(
          "recall-index",
          "fail",
          `${index.path} — cannot be used`,
          index.message,
          "Do what the line above says; recall searches and index runs fail until then",
        ),
      ]
  }
}

const assessClaudeBinary = (found: CommandOnPath): DoctorCheck =>
  found === undefined
    ? check(
        "claude-binary",
        "warn",
        "claude not found on PATH",
        "recall still indexes Claude Code's transcripts; the Claude Code plugin needs the claude command",
        "Install Claude Code (npm i -g @anthropic-ai/claude-code) if you use it",
      )
    : check("claude-binary", "ok", found, "found on PATH")

const assessCodexHome = (home: PresenceFacts): DoctorCheck => {
  const from = origin(home.source)
  if (!home.exists)
    return check(
      "codex-home",
      "warn",
      `${home.path} — not found`,
      `Codex has not run as this user, or CODEX_HOME points elsewhere (${from})`,
      "Run codex once, or set CODEX_HOME",
    )
  if (!home.isDirectory)
    return check(
      "codex-home",
      "fail",
      `${home.path} — not a directory`,
      from,
      "Set CODEX_HOME to Codex's directory",
    )
  return check("codex-home", "ok", home.path, `exists (${from})`)
}

const assessClaude = (config: PresenceFacts, projects: PresenceFacts): DoctorCheck => {
  const from = origin(config.source)
  if (!config.exists)
    return check(
      "claude-config",
      "warn",
      `${config.path} — not found`,
      `Claude Code has not run as this user, or CLAUDE_CONFIG_DIR points elsewhere (${from})`,
      "Run claude once, or set CLAUDE_CONFIG_DIR",
    )
  if (!config.isDirectory)
    return check(
      "claude-config",
      "fail",
      `${config.path} — not a directory`,
      from,
      "Set CLAUDE_CONFIG_DIR to Claude Code's directory",
    )
  if (!projects.exists || !projects.isDirectory)
    return check(
      "claude-config",
      "warn",
      `${config.path} — no projects/ directory`,
      `no Claude Code sessions recorded yet (${from})`,
      "Run a Claude Code session, or set CLAUDE_CONFIG_DIR",
    )
  return check("claude-config", "ok", config.path, `exists, with projects/ (${from})`)
}

/**
 * Claude Code marks a plugin MCP server that failed to start (`baton` not on PATH then) in
 * `mcp-needs-auth-cache.json` and does not start it again, even once `baton` is installed.
 * No line when the file is absent; a file that cannot be read is said, never failed on.
 */
const assessClaudeMcpNeedsAuth = (cache: McpNeedsAuthFacts): DoctorCheck[] => {
  switch (cache._tag) {
    case "Absent":
      return []
    case "Unreadable":
      return [
        check(
          "claude-mcp",
          "warn",
          `${cache.path} — could not be read`,
          `${cache.reason}: whether Claude Code marked Baton's MCP server failed is unknown`,
          "If Claude Code sessions have no Baton tools, run /mcp in Claude Code and reconnect plugin:baton:baton",
        ),
      ]
    case "Read": {
      if (cache.batonKeys.length === 0)
        return [
          check(
            "claude-mcp",
            "ok",
            "Baton's MCP server is not marked failed",
            `no Baton entry in ${cache.path}`,
          ),
        ]
      const keys = cache.batonKeys.join(", ")
      return [
        check(
          "claude-mcp",
          "warn",
          `Claude Code marked Baton's MCP server failed (${keys})`,
          `${cache.path} lists it: Claude Code does not start it again (a session started when baton was not on PATH?), so sessions have the skills but no Baton tools`,
          `Run /mcp in Claude Code and reconnect ${cache.batonKeys[0]!}, or remove its entry from ${shellArg(cache.path)}`,
        ),
      ]
    }
  }
}

const installCodexHint =
  "Install Codex (npm i -g @openai/codex) or set BATON_CODEX_BINARY to its path"

const codexSourceLabel = (source: Extract<CodexFacts, { _tag: "Found" }>["source"]): string => {
  switch (source) {
    case "env":
      return "$BATON_CODEX_BINARY"
    case "path":
      return "PATH"
    case "vscode-extension":
      return "VS Code extension"
  }
}

const assessCodexBinary = (codex: CodexFacts): DoctorCheck => {
  switch (codex._tag) {
    case "NotFound":
      return check(
        "codex-binary",
        "warn",
        "codex not found",
        `BATON_CODEX_BINARY is unset; searched: ${codex.searched.join("; ")}`,
        installCodexHint,
      )
    case "Unusable":
      return check(
        "codex-binary",
        "fail",
        `${codex.path} — cannot be used`,
        codex.reason,
        "Point BATON_CODEX_BINARY at an executable codex (absolute path), or unset it to search PATH",
      )
    case "Found": {
      const source = `(source: ${codexSourceLabel(codex.source)})`
      const where = `${codex.path} ${source}`
      switch (codex.version._tag) {
        case "Version":
          return check("codex-binary", "ok", `${codex.version.text} ${source}`, codex.path)
        case "TimedOut":
          return check(
            "codex-binary",
            "warn",
            `codex --version did not answer within ${codex.version.afterMs} ms`,
            where,
            "Run 'codex --version' by hand to see what it waits for",
          )
        case "Failed":
          return check(
            "codex-binary",
            "warn",
            `codex --version failed: ${printable(codex.version.reason)}`,
            where,
            installCodexHint,
          )
      }
    }
  }
}

const assessVectorStore = (store: VectorStoreFacts): DoctorCheck => {
  const rebuildHint =
    "Reinstall @baton/cli so better-sqlite3 and sqlite-vec match this Node and platform"
  if (store._tag === "Unavailable")
    return check(
      "vector-store",
      "fail",
      `vector store unavailable (${store.stage})`,
      store.reason,
      rebuildHint,
    )
  const versions = `sqlite-vec ${store.vecVersion} on SQLite ${store.sqliteVersion}`
  return store.fts5
    ? check(
        "vector-store",
        "ok",
        `${versions}, FTS5`,
        "vec0 KNN query and FTS5 table work in an in-memory database",
      )
    : check(
        "vector-store",
        "fail",
        `${versions}, no FTS5`,
        "recall's word search needs FTS5",
        rebuildHint,
      )
}

/** Shows an endpoint without credentials, query or fragment; undefined when it is not http(s). */
export const redactEndpoint = (raw: string): string | undefined => {
  try {
    const url = new URL(raw)
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
    return `${url.protocol}//${url.host}${url.pathname}`
  } catch {
    return undefined
  }
}

const EMBEDDED_SUMMARY: Record<string, string> = {
  auto: "embedded, offline: auto (USE-lite for a history of up to 3 million characters, the static word table beyond)",
  "use-static": "embedded, offline: the static word table",
  "use-lite": "embedded, offline: USE-lite",
}

const isLoopback = (endpoint: string): boolean => {
  try {
    const host = new URL(endpoint).hostname
    return host === "localhost" || host === "::1" || host === "[::1]" || host.startsWith("127.")
  } catch {
    return false
  }
}

const assessEmbedder = (embedder: DoctorFacts["embedder"]): DoctorCheck => {
  if (embedder._tag === "Invalid")
    return check(
      "embedder",
      "fail",
      embedder.message,
      `from ${embedder.variable}`,
      embedder.variable === "BATON_EMBEDDER" ||
        embedder.variable === "BATON_EMBED_MAX_TOKENS" ||
        embedder.variable === "BATON_EMBED_TIMEOUT_MS"
        ? `Fix ${embedder.variable}, or unset it${embedder.variable === "BATON_EMBEDDER" ? " for the offline embedded default" : ""}`
        : `Fix ${embedder.variable}, or unset BATON_EMBEDDER for the offline embedded default`,
    )
  const unusedKey = embedder.voyageKeySet
    ? "; VOYAGE_API_KEY is set but unused (BATON_EMBEDDER=voyage opts in)"
    : ""
  switch (embedder.choice) {
    case "none":
      return check(
        "embedder",
        "ok",
        "embeddings off (BATON_EMBEDDER=none): recall searches words only",
        `unset BATON_EMBEDDER for the offline embedded default${unusedKey}`,
      )
    case "voyage":
    case "openai": {
      const endpoint =
        embedder.endpoint === undefined ? undefined : redactEndpoint(embedder.endpoint)
      if (embedder.endpoint !== undefined && endpoint === undefined) {
        const variable =
          embedder.choice === "voyage" ? "BATON_VOYAGE_BASE_URL" : "BATON_EMBEDDINGS_URL"
        return check(
          "embedder",
          "fail",
          `${variable} is not an http(s) URL`,
          `BATON_EMBEDDER=${embedder.choice}`,
          `Set ${variable} to an http(s) base URL such as http://127.0.0.1:8080/v1`,
        )
      }
      const local = embedder.endpoint !== undefined && isLoopback(embedder.endpoint)
      const where = endpoint === undefined ? "" : ` at ${endpoint}`
      return check(
        "embedder",
        "ok",
        embedder.choice === "voyage"
          ? `Voyage${embedder.model === undefined ? "" : ` ${embedder.model}`}${where}`
          : `OpenAI-compatible endpoint${where} (model ${embedder.model ?? "?"})`,
        local
          ? "the endpoint is on this machine"
          : "chunk text is sent to the provider when indexing (queries when searching)",
      )
    }
    default: {
      const table = embedder.staticTable
      if (table?._tag === "Failed")
        return check(
          "embedder",
          "fail",
          "the embedded word table does not load",
          table.reason,
          "Reinstall @baton/cli (the table ships in @baton/recall-index), or set BATON_EMBEDDER=none",
        )
      return check(
        "embedder",
        "ok",
        EMBEDDED_SUMMARY[embedder.choice] ?? `embedded, offline: ${embedder.choice}`,
        `nothing leaves this machine${table === undefined ? "" : `; word table ${table.fingerprint}`}${unusedKey}`,
      )
    }
  }
}

/** Assesses every fact, in report order. */
export const assessDoctorFacts = (facts: DoctorFacts): readonly DoctorCheck[] => [
  assessNode(facts.nodeVersion),
  assessBatonCommand(facts.batonOnPath),
  assessWritableDir("data-dir", "BATON_DATA_DIR", facts.dataDir),
  ...assessRecallIndex(facts.recallIndex, facts.dataDir),
  assessWritableDir("jobs-dir", "BATON_JOBS_DIR", facts.jobsDir),
  assessCodexHome(facts.codexHome),
  assessClaude(facts.claudeConfig, facts.claudeProjects),
  ...assessClaudeMcpNeedsAuth(facts.claudeMcpNeedsAuth),
  assessClaudeBinary(facts.claudeOnPath),
  assessCodexBinary(facts.codex),
  assessVectorStore(facts.vectorStore),
  assessEmbedder(facts.embedder),
]

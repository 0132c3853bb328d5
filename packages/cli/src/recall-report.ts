/**
 * Text renderings of recall results for people: search hits, recent sessions, grep matches,
 * turn windows, status, index summaries and the "nothing indexed yet" note. Guarantees: pure
 * (data in, text out, type-only imports); every hit and turn shows the full session and turn
 * ids to copy into `baton recall expand`; long text is already bounded by the library, and
 * each line here is indented so multi-line text stays readable; transcript text never reaches
 * the terminal with a control character that acts (`inertText`).
 */
import type {
  EmbedderSelection,
  EmptyIndexFacts,
  EmbedBacklogReport,
  EmbeddingFailure,
  GrepResult,
  IndexRunReport,
  RecallSearchResult,
  RecallStatus,
  RecentSession,
  SkippedLines,
  TranscriptRoots,
  TurnWindow,
  VacuumReport,
} from "@baton/recall-index"
import { inertText } from "./terminal-text.js"

const n = (value: number): string => value.toLocaleString("en-US")
const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`
const indent = (text: string, prefix = "   "): string =>
  text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n")
/** An agent's name as people read it. */
export const sourceName = (source: string): string =>
  source === "claude" ? "Claude Code" : "Codex"

/** Every place transcripts are looked for, marking the ones missing on disk. */
export const renderRoots = (roots: TranscriptRoots, missing: ReadonlyArray<string>): string =>
  [...roots.claudeProjects, roots.codexSessions, roots.codexArchivedSessions]
    .map((root) => `  ${root}${missing.includes(root) ? " (missing)" : ""}`)
    .join("\n")

/** What is known about an index that holds no session yet, and where it would be. */
export interface EmptyIndexReport extends EmptyIndexFacts {
  readonly databasePath: string
  /** Whether the index file exists. */
  readonly indexed: boolean
}

/** `count` and the noun, singular for one ("1 transcript", "2 transcripts"). */
export const counted = (count: number, noun: string, plural = `${noun}s`): string =>
  `${n(count)} ${count === 1 ? noun : plural}`
const transcriptCount = (count: number): string => counted(count, "transcript")

/**
 * The note for an empty index: not an error, just why it is empty, what to run, and where
 * transcripts are looked for.
 */
export const renderNothingIndexed = (facts: EmptyIndexReport): string => {
  const found = transcriptCount(facts.transcripts)
  const headline = (() => {
    switch (facts.reason) {
      case "indexing":
        return `Nothing indexed yet: an index run (pid ${facts.indexing!.pid}, since ${facts.indexing!.since}) is writing the first sessions; try again in a moment.`
      case "failing":
        return `Nothing indexed yet: ${found} found, and ${n(facts.failing)} failed to index ('baton recall status' lists them).`
      case "forgotten":
        return `Nothing indexed: the ${found} found ${facts.transcripts === 1 ? "belongs" : "belong"} to forgotten sessions, which index runs leave out on purpose ('baton recall forget'; 'baton recall forget --all' starts over and indexes them again).`
      case "waiting":
        return facts.indexed
          ? `Nothing indexed yet: ${found} found, none indexed. Run 'baton recall index'.`
          : `Nothing indexed yet (no index at ${facts.databasePath}): ${found} found. Run 'baton recall index' first.`
      case "none-found":
        return facts.indexed
          ? "Nothing indexed yet: no Claude Code or Codex transcripts were found."
          : `Nothing indexed yet (no index at ${facts.databasePath}), and no Claude Code or Codex transcripts were found.`
    }
  })()
  return [
    headline,
    "Looked for transcripts in:",
    renderRoots(facts.roots, facts.missingRoots),
    "Set CLAUDE_CONFIG_DIR or CODEX_HOME if your history lives elsewhere.",
    "",
  ].join("\n")
}

const scoreNote = (h: RecallSearchResult["hits"][number]): string => {
  const parts: Array<string> = []
  if (h.scores.lexicalRank !== null) parts.push(`words #${h.scores.lexicalRank}`)
  if (h.scores.vectorRank !== null) parts.push(`meaning #${h.scores.vectorRank}`)
  if (h.scores.rerank !== null) parts.push(`rerank ${h.scores.rerank.toFixed(3)}`)
  // Found by no arm: it came in next to a hit (conversation context), e.g. an answer.
  return parts.length === 0 ? "next to a hit" : parts.join(", ")
}

/**
 * The filters a search, grep or recent applied, in words ("" when none): a command that found
 * nothing says them.
 */
export const appliedFilters = (applied: RecallSearchResult["applied"]): string => {
  const parts: Array<string> = []
  if (applied.scopeRoot !== null) parts.push(`in ${applied.scopeRoot}`)
  if (applied.source !== null) parts.push(`${sourceName(applied.source)} only`)
  const { startDate: from, endDate: to } = applied
  const days =
    from !== null && to !== null
      ? from === to
        ? `on ${from}`
        : `from ${from} to ${to}`
      : from !== null
        ? `since ${from}`
        : to !== null
          ? `until ${to}`
          : null
  if (days !== null) parts.push(`${days}, ${applied.timezone} time`)
  return parts.join(", ")
}

const searchedNote = (searched: string): string =>
  searched === "" ? "" : ` (searched ${searched})`

/** Search hits, best first. */
export const renderSearch = (result: RecallSearchResult): string => {
  const lines: Array<string> = []
  if (result.hits.length === 0) {
    lines.push(`No hits for "${result.query}"${searchedNote(appliedFilters(result.applied))}.`)
  }
  for (const h of result.hits) {
    const where = [sourceName(h.source), h.project ?? h.cwd ?? "?", h.whenHuman, h.role]
    if (h.headless) where.push("headless")
    if (h.subagent) where.push("subagent")
    if (h.forkedFrom !== null) where.push(`forked from ${h.forkedFrom}`)
    if (h.sameTextSessions > 0)
      where.push(
        `same text in ${h.sameTextSessions} other session${h.sameTextSessions === 1 ? "" : "s"} (grep lists each)`,
      )
    lines.push(`${h.rank}. ${where.join(" · ")}  (${scoreNote(h)})`)
    lines.push(indent(h.snippet))
    lines.push(`   baton recall expand ${h.sessionId} ${h.turnId}`)
    lines.push("")
  }
  if (result.degraded !== null) lines.push(`Note: ${result.degraded}.`)
  if (result.meaningOnly !== null) lines.push(`Note: ${result.meaningOnly}.`)
  const skipped = result.arms.vector.skipped ?? "no vector search"
  // Said once: a skip the degraded note already names is not repeated.
  if (
    !result.arms.vector.ran &&
    result.arms.lexical.ran &&
    skipped !== "not requested" &&
    !(result.degraded ?? "").includes(skipped)
  ) {
    lines.push(`Words only: ${skipped}.`)
  }
  return inertText(`${lines.join("\n").replace(/\n+$/, "")}\n`)
}

/**
 * Why a search asked for the vector arm alone (`--vector-only`) has no answer — "vector search
 * unavailable: <reason>" — or null when the arm ran. `configProblem`: the embedder configuration
 * that could not be used, when that is why.
 */
export const vectorUnavailable = (
  result: RecallSearchResult,
  configProblem?: string,
): string | null => {
  if (result.arms.vector.ran) return null
  const reason =
    configProblem !== undefined
      ? `embedder configuration: ${configProblem}`
      : (result.arms.vector.skipped ?? "no vector search")
  return `vector search unavailable: ${reason}`
}

/**
 * The note for a `--scope` directory that does not exist here: the command still ran (the index
 * keeps sessions recorded in a directory since removed), but a mistyped path should show.
 */
export const renderMissingScope = (dir: string): string =>
  `Note: ${dir} (--scope) does not exist on this machine; only sessions recorded there before it went away can match.\n`

/** The note for a `--scope` that names a file: the project holding it is searched. */
export const renderScopeFile = (path: string): string =>
  `Note: ${path} (--scope) is a file, not a directory; searching the project that holds it.\n`

/** Recent sessions, newest first. */
export const renderRecent = (sessions: ReadonlyArray<RecentSession>, searched = ""): string => {
  if (sessions.length === 0) return `No sessions match${searchedNote(searched)}.\n`
  return inertText(
    `${sessions
      .map((s) => {
        const head = [
          s.lastActivityHuman,
          sourceName(s.source),
          s.project ?? s.cwd ?? "?",
          counted(s.turns, "turn"),
          ...(s.headless ? ["headless"] : []),
          ...(s.subagent ? ["subagent"] : []),
          ...(s.forkedFrom !== null ? [`forked from ${s.forkedFrom}`] : []),
          ...(s.transcript === "missing" ? ["transcript deleted, kept in the index"] : []),
          ...(s.transcript === "changed"
            ? ["transcript changed since indexed ('baton recall index' brings it in)"]
            : []),
          ...(s.indexedAgo === null ? [] : [`indexed ${s.indexedAgo}`]),
        ].join(" · ")
        // The command that opens the session where it left off (its last turns).
        return `${head}\n   ${s.title ?? "(no prompt)"}\n   baton recall step ${s.sessionId} prev --count 3`
      })
      .join("\n\n")}\n`,
  )
}

/** Grep matches, newest first. */
export const renderGrep = (result: GrepResult, searched = ""): string => {
  const lines: Array<string> = []
  if (result.hits.length === 0)
    lines.push(
      `No match for ${result.mode === "regex" ? `/${result.pattern}/` : `"${result.pattern}"`}${searchedNote(searched)}.`,
    )
  for (const h of result.hits) {
    lines.push(
      `${[
        sourceName(h.source),
        h.project ?? h.cwd ?? "?",
        h.whenHuman,
        h.kind,
        ...(h.headless ? ["headless"] : []),
        ...(h.subagent ? ["subagent"] : []),
      ].join(" · ")}`,
    )
    lines.push(indent(h.snippet))
    lines.push(
      h.turnId === null
        ? `   baton recall step ${h.sessionId} next   # this record comes before the first turn`
        : `   baton recall expand ${h.sessionId} ${h.turnId}`,
    )
    lines.push("")
  }
  if (result.truncated)
    lines.push(`More matches exist; raise --limit (showing ${result.hits.length}).`)
  if (result.copiesSkipped > 0)
    lines.push(
      `${counted(result.copiesSkipped, "copy", "copies")} of these records in forked sessions not shown (--all-records shows them).`,
    )
  if (result.timedOut)
    lines.push(
      `Stopped after the time budget with ${Math.floor(result.searchedShare * 100)} % of the history searched (newest first); narrow the search with --source, --scope or dates.`,
    )
  return inertText(`${lines.join("\n").replace(/\n+$/, "")}\n`)
}

/** A window of turns. */
export const renderWindow = (window: TurnWindow, emptyNote: string): string => {
  const lines = [
    `${sourceName(window.source)} · ${window.project ?? "?"} · session ${window.sessionId}${window.cwd === null ? "" : ` (${window.cwd})`}`,
  ]
  if (window.turns.length === 0) lines.push(emptyNote)
  for (const t of window.turns) {
    lines.push("")
    lines.push(`── ${t.role} · ${t.whenHuman}${t.isAnchor ? " · ◀ anchor" : ""}`)
    lines.push(`   turn ${t.turnId}`)
    if (t.text !== "") lines.push(indent(t.text))
    for (const r of t.records) lines.push(indent(`[${r.kind}] ${r.text}`, "   │ "))
    if (t.omittedRecords > 0) lines.push(`   │ (${t.omittedRecords} more records; use --full)`)
  }
  return inertText(`${lines.join("\n")}\n`)
}

const renderSelection = (e: EmbedderSelection): string => {
  if (e.problem !== null) return `Embedder: not usable (${e.problem}); search uses words only`
  if (e.auto === null || e.limits === null)
    return `Embedder: ${e.configured ?? "?"} (BATON_EMBEDDER)`
  const { auto, limits } = e
  const size =
    auto.chunks > limits.maxChunks
      ? `more than ${n(limits.maxChunks)} chunks`
      : `${n(auto.chunks)} of ${n(limits.maxChunks)} chunks, ${n(auto.chars)} of ${n(limits.maxChars)} characters`
  const next =
    auto.name === "use-lite" ? "; past either limit the next run re-embeds with use-static" : ""
  return `Embedder: auto → ${auto.name} (${size}${next})`
}

/** Free space inside the index file worth pointing out (smaller amounts are not worth a rewrite). */
const FREE_NOTE_BYTES = 16 * 1_048_576

/**
 * What the status says of a space an earlier version stored as float32: the next embedding run in
 * that space rewrites it as int8; a space no run embeds with stays as it is (searched exactly,
 * correct, only larger).
 */
const floatNote = (e: RecallStatus["embedders"][number]): string =>
  e.elements !== "float32"
    ? ""
    : e.active
      ? ", float32 until the next 'baton recall index' stores them as int8"
      : ", float32 until an index run embeds with it again"

/** The files the indexer failed on (retried next run) and those it quarantined. */
export const failureLines = (status: RecallStatus): Array<string> => [
  ...(status.failingFiles > 0
    ? [`Failing files: ${n(status.failingFiles)} (retried next run)`]
    : []),
  ...status.failing.map(
    (f) =>
      `  ${f.path} — ${f.lastError ?? "unknown error"} (${f.failures === 1 ? "1 failure" : `${n(f.failures)} failures`})`,
  ),
  ...(status.failingFiles > status.failing.length
    ? [`  … and ${n(status.failingFiles - status.failing.length)} more`]
    : []),
  ...status.quarantined.map((q) => `Quarantined: ${q.path} — ${q.lastError ?? "unknown error"}`),
]

/**
 * Why lines were skipped: "2 not JSON, 1 not a record, 10 of unknown record types (progress 7,
 * queue-operation 3)".
 */
export const skippedReasons = (s: SkippedLines): string => {
  const types = Object.entries(s.unknownTypes)
  const unknown = types.reduce((a, [, c]) => a + c, 0)
  return [
    ...(s.malformed > 0 ? [`${n(s.malformed)} not a JSON object`] : []),
    ...(s.invalid > 0 ? [`${n(s.invalid)} not a record`] : []),
    ...(unknown > 0
      ? [
          `${n(unknown)} of ${types.length === 1 ? "an unknown record type" : "unknown record types"} (${types.map(([t, c]) => `${t} ${n(c)}`).join(", ")})`,
        ]
      : []),
  ].join(", ")
}

/** The lines the parsers skipped in indexed transcripts, and the files with most. */
export const skippedLines = (status: RecallStatus): Array<string> => {
  // A status of an earlier version has none.
  const s = status.skippedLines ?? null
  if (s === null) return []
  return [
    `Skipped lines: ${n(s.lines)} in ${transcriptCount(s.files)}, not searchable: ${skippedReasons(s)}`,
    ...s.listed.map(
      (f) => `  ${f.path} — ${counted(f.skipped.lines, "line")}: ${skippedReasons(f.skipped)}`,
    ),
    ...(s.files > s.listed.length ? [`  … and ${n(s.files - s.listed.length)} more`] : []),
  ]
}

/** Why a path discovery could not read means, in words. */
const unreadableWhy = (code: string): string =>
  code === "EACCES" || code === "EPERM"
    ? "no permission to read it"
    : code === "ELOOP"
      ? "a symlink loop"
      : code === "ENOENT"
        ? "a dangling symlink"
        : code

/** The transcripts or folders discovery could not read (not indexed, retried every run). */
const unreadableLines = (
  problems: ReadonlyArray<{ readonly path: string; readonly code: string }>,
): Array<string> =>
  problems.length === 0
    ? []
    : [
        `Could not read ${counted(problems.length, "path")} (not indexed; tried again every run):`,
        ...problems.slice(0, 5).map((p) => `  ${p.path}: ${unreadableWhy(p.code)}`),
        ...(problems.length > 5 ? [`  … and ${n(problems.length - 5)} more`] : []),
      ]

/** What the next index run does after an embedding failure of this kind. */
const nextEmbeddingRun = (failure: EmbeddingFailure["failure"]): string =>
  failure === "cost_guard"
    ? "'baton recall index' is refused the same way until BATON_EMBED_MAX_TOKENS is raised"
    : failure === "configuration"
      ? "'baton recall index' indexes words only until the setting is fixed"
      : "'baton recall index' tries again"

/** Status for people. */
export const renderStatus = (status: RecallStatus, embedder?: EmbedderSelection): string => {
  const lines = [
    `Index: ${status.databasePath} (${mib(status.dbBytes)}${status.freeBytes >= FREE_NOTE_BYTES ? `, ${mib(status.freeBytes)} of it free: 'baton recall vacuum' gives it back` : ""})`,
    `Sessions: ${n(status.sessions)} (${n(status.bySource.claude.sessions)} Claude Code, ${n(status.bySource.codex.sessions)} Codex) · turns ${n(status.turns)} · chunks ${n(status.chunks)} · records ${n(status.rawRecords)}`,
    `Newest activity: ${status.newestActivityHuman ?? "none"}`,
    `Last run: ${status.lastRun === null ? "never" : `${status.lastRunAgo} (${counted(status.lastRun.indexedNew + status.lastRun.appended + status.lastRun.rewritten + status.lastRun.reparsed, "file")} indexed, ${n(status.lastRun.unchanged)} unchanged)`}`,
  ]
  if (status.indexing !== null)
    lines.push(`Indexing now: pid ${status.indexing.pid} since ${status.indexing.since}`)
  lines.push(
    `Embeddings: ${status.embedders.length === 0 ? "none yet" : status.embedders.map((e) => `${e.fingerprint} (${n(e.vectors)} vectors${e.active ? ", active" : ""}${e.endpoint === null ? "" : `, from ${e.endpoint}`}${floatNote(e)})`).join("; ")} · backlog ${counted(status.embeddingBacklog, "chunk")}`,
  )
  if (status.embeddingFailure !== null)
    lines.push(
      `Last embedding failed (${status.embeddingFailure.at}, ${status.embeddingFailure.fingerprint}): ${status.embeddingFailure.reason}; ${nextEmbeddingRun(status.embeddingFailure.failure)}`,
    )
  if (embedder !== undefined) lines.push(renderSelection(embedder))
  if (status.missingFiles > 0) {
    lines.push(
      `Kept after deletion: ${counted(status.retainedSessions, "session")} from ${counted(status.missingFiles, "deleted transcript")} ('baton recall prune' drops ${status.retainedSessions === 1 ? "it" : "them"})`,
    )
  }
  if (status.missingLookupIndexes.length > 0) {
    const names = status.missingLookupIndexes.join(", ")
    lines.push(
      status.indexing !== null
        ? `Lookup indexes: ${names} deferred by the running indexer (built when it finishes; searches are slower until then)`
        : `Lookup indexes: ${names} missing, left by an indexing run that stopped early; searches are slower until 'baton recall index' builds them`,
    )
  }
  if (status.olderParserFiles > 0)
    lines.push(
      `Parser: ${transcriptCount(status.olderParserFiles)} read by an earlier version of Baton; ${status.indexing !== null ? "the running index run reads them again" : "the next 'baton recall index' reads them again (the plugin's SessionStart hook runs one)"}`,
    )
  if (status.lexicalBacklog > 0) {
    const waiting = counted(status.lexicalBacklog, "chunk")
    lines.push(
      status.indexing !== null
        ? `Full-text index: ${waiting} added when the running indexer finishes (search does not find their words until then)`
        : `Full-text index: ${waiting} left out by an indexing run that stopped early; search does not find their words until 'baton recall index' adds them`,
    )
  }
  lines.push(
    ...failureLines(status),
    ...unreadableLines(status.lastRun?.problems ?? []),
    ...skippedLines(status),
  )
  if (status.roots !== null) {
    lines.push(
      "Transcripts looked for in:",
      renderRoots(status.roots, status.lastRun?.missingRoots ?? []),
    )
  }
  return `${lines.join("\n")}\n`
}

/** The summary of one `baton recall index` run. */
export const renderIndexSummary = (
  report: IndexRunReport,
  embedding: EmbedBacklogReport | null,
  embeddingNote: string | null,
): string => {
  const changed = report.indexedNew + report.appended + report.rewritten + report.reparsed
  const seconds = ((report.finishedAt - report.startedAt) / 1000).toFixed(1)
  // The headline agrees with the exit code: a run in which a file failed is not "up to date".
  const failed = report.failed.length
  const lines = [
    changed === 0 && report.moved === 0
      ? failed === 0
        ? `Up to date: ${transcriptCount(report.discovered)}, none changed (${seconds} s).`
        : `${n(Math.max(0, report.discovered - failed))} of ${transcriptCount(report.discovered)} up to date, none changed; ${n(failed)} failed (${seconds} s).`
      : `Indexed ${transcriptCount(changed)} (${n(report.indexedNew)} new, ${n(report.appended)} appended, ${n(report.rewritten)} rewritten${report.reparsed > 0 ? `, ${n(report.reparsed)} read again by this version's parser` : ""}${report.moved > 0 ? `, ${n(report.moved)} moved` : ""}) in ${seconds} s: ${counted(report.turnsAdded, "turn")}, ${counted(report.chunksAdded, "chunk")}; ${n(report.unchanged)} unchanged${failed === 0 ? "" : `; ${n(failed)} failed`}.`,
  ]
  if (report.skippedForgotten > 0)
    lines.push(
      `${transcriptCount(report.skippedForgotten)} of forgotten sessions left out, as asked ('baton recall forget').`,
    )
  if (report.markedMissing > 0)
    lines.push(
      report.markedMissing === 1
        ? "1 transcript is gone from disk; its history is kept."
        : `${n(report.markedMissing)} transcripts are gone from disk; their history is kept.`,
    )
  lines.push(...unreadableLines(report.problems ?? []))
  if (report.failed.length > 0) {
    lines.push(`${transcriptCount(report.failed.length)} failed (retried next run):`)
    for (const f of report.failed.slice(0, 5)) lines.push(`  ${f.path}: ${f.error}`)
  }
  // A report of an earlier version has none.
  const s = report.skippedLines ?? null
  if (s !== null) {
    lines.push(
      `Skipped ${counted(s.lines, "line")} in ${transcriptCount(s.files)} that could not be read: ${skippedReasons(s)}. 'baton recall status' lists the files.`,
    )
  }
  if (embedding !== null) {
    lines.push(
      embedding.embedded + embedding.reused === 0 && embedding.total === 0
        ? `Embeddings up to date (${embedding.fingerprint}).`
        : `Embedded ${counted(embedding.embedded, "text")} with ${embedding.fingerprint}${embedding.reused > 0 ? ` (${n(embedding.reused)} reused)` : ""}; backlog ${n(embedding.remaining)}.`,
    )
    // A change of embedder embeds the whole history again in the new space: say so.
    if (embedding.switchedFrom !== null)
      lines.push(
        `The embedder changed (was ${embedding.switchedFrom}): search now uses ${embedding.fingerprint}'s vectors; the earlier ones are kept for switching back.`,
      )
    // The OpenAI-compatible server moved (same vectors from the new address): its space is kept.
    const moved = embedding.endpointMoved ?? null
    if (moved !== null)
      lines.push(
        `The embedding server moved from ${moved.from} to ${moved.to}${moved.cosine === null ? "" : " and gives the same vectors"}; ${embedding.fingerprint} keeps its ${counted(moved.vectors, "vector")}.`,
      )
  }
  if (embedding !== null && embedding.vectorsConverted > 0) {
    lines.push(
      `Stored ${n(embedding.vectorsConverted)} vectors of an earlier version as int8 (a quarter of their space; later writes reuse the freed pages).`,
    )
  }
  if (embeddingNote !== null) lines.push(embeddingNote)
  return `${lines.join("\n")}\n`
}

/** The summary of one `baton recall vacuum` run. */
export const renderVacuum = (report: VacuumReport): string => {
  const seconds = (report.ms / 1000).toFixed(1)
  return report.bytesAfter < report.bytesBefore
    ? `Vacuumed the recall index: ${mib(report.bytesBefore)} → ${mib(report.bytesAfter)} (${mib(report.bytesBefore - report.bytesAfter)} given back) in ${seconds} s.\n`
    : `Vacuumed the recall index: ${mib(report.bytesAfter)}, nothing to give back (${seconds} s).\n`
}

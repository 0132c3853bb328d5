import { describe, expect, it } from "vitest"
import type {
  EmbedBacklogReport,
  GrepResult,
  IndexRunReport,
  RecallSearchResult,
  RecallStatus,
  RecentSession,
  TurnWindow,
} from "@baton/recall-index"
import {
  renderGrep,
  renderIndexSummary,
  renderNothingIndexed,
  renderRecent,
  renderSearch,
  renderStatus,
  renderVacuum,
  renderWindow,
  vectorUnavailable,
} from "./recall-report.js"

const roots = {
  claudeProjects: ["/h/.claude/projects"],
  codexSessions: "/h/.codex/sessions",
  codexArchivedSessions: "/h/.codex/archived_sessions",
}

/** A status of a one-session index (the fields the renderer reads). */
const statusOf = (): RecallStatus =>
  ({
    databasePath: "/d/recall-index.db",
    dbBytes: 777 * 1_048_576,
    freeBytes: 308 * 1_048_576,
    sessions: 1,
    bySource: { claude: { sessions: 1 }, codex: { sessions: 0 } },
    turns: 2,
    chunks: 2,
    rawRecords: 4,
    newestActivityHuman: null,
    lastRun: null,
    indexing: null,
    embeddingFailure: null,
    embedders: [],
    embeddingBacklog: 0,
    missingFiles: 0,
    missingLookupIndexes: [],
    lexicalBacklog: 0,
    olderParserFiles: 0,
    failingFiles: 0,
    failing: [],
    quarantined: [],
    roots: null,
    skippedLines: null,
  }) as unknown as RecallStatus

describe("recall reports", () => {
  it("says nothing is indexed yet and lists every root, marking missing ones", () => {
    const facts = {
      roots,
      missingRoots: ["/h/.codex/sessions"],
      databasePath: "/h/db",
      indexed: true,
      transcripts: 0,
      indexing: null,
      failing: 0,
      forgotten: 0,
      reason: "none-found" as const,
    }
    expect(renderNothingIndexed(facts)).toBe(
      [
        "Nothing indexed yet: no Claude Code or Codex transcripts were found.",
        "Looked for transcripts in:",
        "  /h/.claude/projects",
        "  /h/.codex/sessions (missing)",
        "  /h/.codex/archived_sessions",
        "Set CLAUDE_CONFIG_DIR or CODEX_HOME if your history lives elsewhere.",
        "",
      ].join("\n"),
    )
    const headline = (changes: Partial<typeof facts> | object) =>
      renderNothingIndexed({ ...facts, ...changes }).split("\n")[0]
    expect(headline({ indexed: false })).toBe(
      "Nothing indexed yet (no index at /h/db), and no Claude Code or Codex transcripts were found.",
    )
    expect(headline({ indexed: false, transcripts: 1, reason: "waiting" })).toBe(
      "Nothing indexed yet (no index at /h/db): 1 transcript found. Run 'baton recall index' first.",
    )
    expect(headline({ transcripts: 1200, reason: "waiting" })).toBe(
      "Nothing indexed yet: 1,200 transcripts found, none indexed. Run 'baton recall index'.",
    )
    // After `forget --project`, not a loop of "run 'baton recall index'".
    expect(headline({ transcripts: 200, forgotten: 200, reason: "forgotten" })).toBe(
      "Nothing indexed: the 200 transcripts found belong to forgotten sessions, which index runs leave out on purpose ('baton recall forget'; 'baton recall forget --all' starts over and indexes them again).",
    )
    expect(headline({ transcripts: 3, failing: 2, reason: "failing" })).toBe(
      "Nothing indexed yet: 3 transcripts found, and 2 failed to index ('baton recall status' lists them).",
    )
    expect(
      headline({
        transcripts: 3,
        failing: 2,
        indexing: { pid: 42, since: "2026-12-02T10:00:00Z" },
        reason: "indexing",
      }),
    ).toBe(
      "Nothing indexed yet: an index run (pid 42, since 2026-12-02T10:00:00Z) is writing the first sessions; try again in a moment.",
    )
  })

  it("shows each hit with where, when, evidence, snippet and the expand command", () => {
    const result: RecallSearchResult = {
      query: "retry",
      hits: [
        {
          rank: 1,
          source: "codex",
          sessionId: "s1",
          turnId: "t1",
          chunkId: 4,
          role: "assistant",
          cwd: "/work/pay",
          project: "pay",
          timestamp: "2026-03-12T08:00:00.000Z",
          whenHuman: "2026-03-12 08:00 UTC (3 days ago)",
          headless: true,
          subagent: false,
          forkedFrom: null,
          sameTextSessions: 0,
          text: "Use backoff.",
          textTruncated: false,
          snippet: "Use backoff.",
          scores: {
            fused: 0.03,
            lexicalRank: 1,
            bm25: -2,
            vectorRank: 4,
            similarity: 0.5,
            rerank: null,
            rerankRank: null,
          },
        },
      ],
      arms: {
        lexical: { ran: true, candidates: 1 },
        vector: {
          ran: false,
          candidates: 0,
          fingerprint: null,
          filterMode: null,
          skipped: "no embedder configured",
        },
        rerank: { ran: false, model: null },
      },
      degraded: null,
      indexEmpty: false,
      meaningOnly: null,
      applied: { source: null, scopeRoot: null, startDate: null, endDate: null, timezone: "UTC" },
    }
    expect(renderSearch(result)).toBe(
      [
        "1. Codex · pay · 2026-03-12 08:00 UTC (3 days ago) · assistant · headless  (words #1, meaning #4)",
        "   Use backoff.",
        "   baton recall expand s1 t1",
        "",
        "Words only: no embedder configured.",
        "",
      ].join("\n"),
    )
    expect(
      renderSearch({ ...result, hits: [{ ...result.hits[0]!, subagent: true }] }).split("\n")[0],
    ).toContain(" · assistant · headless · subagent  (")
    expect(renderSearch({ ...result, hits: [] })).toContain('No hits for "retry".')
    // A vector skip the degraded note already names is said once.
    const skippedTwice = renderSearch({
      ...result,
      degraded: "lexical only: no vectors for x yet",
      arms: { ...result.arms, vector: { ...result.arms.vector, skipped: "no vectors for x yet" } },
    })
    expect(skippedTwice).toContain("Note: lexical only: no vectors for x yet.")
    expect(skippedTwice).not.toContain("Words only")
    // Only the vector arm asked for: no "Words only" (no words arm ran), and why it failed.
    const vectorOnly = {
      ...result,
      arms: { ...result.arms, lexical: { ran: false, candidates: 0 } },
    }
    expect(renderSearch(vectorOnly)).not.toContain("Words only")
    expect(vectorUnavailable(vectorOnly)).toBe("vector search unavailable: no embedder configured")
    expect(vectorUnavailable(vectorOnly, "set VOYAGE_API_KEY")).toBe(
      "vector search unavailable: embedder configuration: set VOYAGE_API_KEY",
    )
    expect(
      vectorUnavailable({
        ...result,
        arms: { ...result.arms, vector: { ...result.arms.vector, ran: true } },
      }),
    ).toBeNull()
    // Hits by meaning alone carry the library's caution.
    expect(renderSearch({ ...result, meaningOnly: "only the nearest by meaning" })).toContain(
      "\nNote: only the nearest by meaning.\n",
    )
    const filtered = (applied: Partial<RecallSearchResult["applied"]>) =>
      renderSearch({ ...result, hits: [], applied: { ...result.applied, ...applied } }).split(
        "\n",
      )[0]
    expect(filtered({ scopeRoot: "/work/x", source: "codex" })).toBe(
      'No hits for "retry" (searched in /work/x, Codex only).',
    )
    expect(
      filtered({ startDate: "2026-11-25", endDate: "2026-11-25", timezone: "Asia/Tokyo" }),
    ).toBe('No hits for "retry" (searched on 2026-11-25, Asia/Tokyo time).')
    expect(filtered({ startDate: "2026-11-25", endDate: "2026-12-02" })).toBe(
      'No hits for "retry" (searched from 2026-11-25 to 2026-12-02, UTC time).',
    )
    expect(filtered({ startDate: "2026-11-25" })).toBe(
      'No hits for "retry" (searched since 2026-11-25, UTC time).',
    )
    expect(filtered({ endDate: "2026-11-25", source: "claude" })).toBe(
      'No hits for "retry" (searched Claude Code only, until 2026-11-25, UTC time).',
    )
    // A hit no arm found came in next to one (conversation context).
    const neighbour = {
      ...result.hits[0]!,
      scores: { ...result.hits[0]!.scores, lexicalRank: null, vectorRank: null },
    }
    expect(renderSearch({ ...result, hits: [neighbour] })).toContain(
      "· assistant · headless  (next to a hit)",
    )
    // A hit in a fork names the session it came from.
    expect(
      renderSearch({ ...result, hits: [{ ...result.hits[0]!, forkedFrom: "root-1" }] }),
    ).toContain("· assistant · headless · forked from root-1  (words #1, meaning #4)")
    // The same text in other sessions is one hit that says how many more hold it.
    expect(
      renderSearch({ ...result, hits: [{ ...result.hits[0]!, sameTextSessions: 2 }] }),
    ).toContain("· headless · same text in 2 other sessions (grep lists each)  (words #1")
  })

  it("lists recent sessions, naming the one a fork came from", () => {
    const session: RecentSession = {
      source: "claude",
      sessionId: "fork-1",
      project: "garden",
      cwd: "/work/garden",
      title: "Try Postgres instead",
      titleSource: "first-prompt",
      startedAt: "2026-03-12T08:00:00.000Z",
      lastActivity: "2026-03-12T08:00:00.000Z",
      lastActivityHuman: "2026-03-12 08:00 UTC (3 days ago)",
      turns: 6,
      headless: false,
      subagent: false,
      forkedFrom: "root-1",
      transcript: "indexed",
      indexedAt: null,
      indexedAgo: null,
    }
    expect(renderRecent([session])).toBe(
      [
        "2026-03-12 08:00 UTC (3 days ago) · Claude Code · garden · 6 turns · forked from root-1",
        "   Try Postgres instead",
        "   baton recall step fork-1 prev --count 3",
        "",
      ].join("\n"),
    )
    expect(renderRecent([{ ...session, forkedFrom: null }])).not.toContain("forked")
    const labels = renderRecent([{ ...session, subagent: true, transcript: "changed" }])
    expect(labels.split("\n")[0]).toContain(
      " · subagent · forked from root-1 · transcript changed since indexed ('baton recall index' brings it in)",
    )
    expect(renderRecent([session])).not.toMatch(/subagent|changed/)
    expect(renderRecent([])).toBe("No sessions match.\n")
    expect(renderRecent([], "in /work/x")).toBe("No sessions match (searched in /work/x).\n")
  })

  it("says how much of the history a grep stopped by its time budget searched", () => {
    const stopped: GrepResult = {
      pattern: "zzqq",
      mode: "literal",
      caseSensitive: false,
      hits: [],
      truncated: false,
      timedOut: true,
      scanned: 0,
      searchedShare: 0.437,
      copiesSkipped: 0,
    }
    expect(renderGrep(stopped)).toContain(
      "Stopped after the time budget with 43 % of the history searched (newest first)",
    )
    expect(renderGrep({ ...stopped, timedOut: false, searchedShare: 1 })).not.toContain("Stopped")
    expect(renderGrep({ ...stopped, hits: [] }, "Codex only").split("\n")[0]).toMatch(
      / \(searched Codex only\)\.$/,
    )
  })

  it("prints transcript text with its control characters shown, not acting", () => {
    const hit = {
      source: "claude",
      sessionId: "s-1",
      turnId: "t-1",
      project: "garden",
      cwd: "/work/garden",
      whenHuman: "today",
      kind: "message",
      snippet: "nul\u0000marker \u001b]0;title\u0007",
    } as unknown as GrepResult["hits"][number]
    const grep: GrepResult = {
      pattern: "nul",
      mode: "literal",
      caseSensitive: false,
      hits: [hit],
      truncated: false,
      timedOut: false,
      scanned: 1,
      searchedShare: 1,
      copiesSkipped: 0,
    }
    const window = {
      source: "claude",
      sessionId: "s-1",
      cwd: "/work/garden",
      project: "garden",
      atStart: true,
      atEnd: true,
      turns: [
        {
          source: "claude",
          sessionId: "s-1",
          turnId: "t-1",
          role: "user",
          timestamp: null,
          whenHuman: "today",
          isAnchor: true,
          text: "nul\u0000marker",
          textTruncated: false,
          records: [{ kind: "tool_result", text: "\u001b[31mred\u001b[0m\r\nbell\u0007" }],
          omittedRecords: 0,
        },
      ],
    } as unknown as TurnWindow
    expect(renderGrep(grep).split("\n")[0]).toBe("Claude Code · garden · today · message")
    expect(
      renderGrep({ ...grep, hits: [{ ...hit, headless: true, subagent: true }] }).split("\n")[0],
    ).toBe("Claude Code · garden · today · message · headless · subagent")
    for (const text of [renderGrep(grep), renderWindow(window, "(no turns)")]) {
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
      expect(text).toContain("nul\\x00marker")
    }
    expect(renderWindow(window, "")).toContain("   │ [tool_result] red\n   │ bell\\x07")
  })

  it("counts one of a thing in the singular in an index summary", () => {
    const run = (changes: object) =>
      ({
        startedAt: 0,
        finishedAt: 250,
        discovered: 1,
        unchanged: 0,
        indexedNew: 1,
        appended: 0,
        rewritten: 0,
        reparsed: 0,
        moved: 0,
        markedMissing: 1,
        turnsAdded: 1,
        chunksAdded: 1,
        failed: [{ path: "/h/a.jsonl", error: "EIO" }],
        ...changes,
      }) as unknown as IndexRunReport
    const one = {
      fingerprint: "f",
      vecTable: "vec_1",
      total: 1,
      resolved: 1,
      embedded: 1,
      reused: 0,
      batches: 1,
      remaining: 0,
      vectorsConverted: 0,
      switchedFrom: null,
    }
    expect(renderIndexSummary(run({}), one, null)).toBe(
      [
        "Indexed 1 transcript (1 new, 0 appended, 0 rewritten) in 0.3 s: 1 turn, 1 chunk; 0 unchanged; 1 failed.",
        "1 transcript is gone from disk; its history is kept.",
        "1 transcript failed (retried next run):",
        "  /h/a.jsonl: EIO",
        "Embedded 1 text with f; backlog 0.",
        "",
      ].join("\n"),
    )
    expect(
      renderIndexSummary(
        run({ indexedNew: 0, markedMissing: 0, failed: [], skippedForgotten: 200 }),
        null,
        null,
      ),
    ).toBe(
      [
        "Up to date: 1 transcript, none changed (0.3 s).",
        "200 transcripts of forgotten sessions left out, as asked ('baton recall forget').",
        "",
      ].join("\n"),
    )
    // A change of embedder is said once, with the space it left.
    expect(
      renderIndexSummary(run({}), { ...one, switchedFrom: "embedded/use-lite/512/x" }, null),
    ).toContain(
      "The embedder changed (was embedded/use-lite/512/x): search now uses f's vectors; the earlier ones are kept for switching back.",
    )
    // A server that moved and gives the same vectors keeps its space: said once.
    const moved = { from: "http://a:1/v1", to: "http://b:2/v1", vectors: 1200, cosine: 0.999 }
    expect(renderIndexSummary(run({}), { ...one, endpointMoved: moved }, null)).toContain(
      "The embedding server moved from http://a:1/v1 to http://b:2/v1 and gives the same vectors; f keeps its 1,200 vectors.",
    )
    expect(renderIndexSummary(run({}), one, null)).not.toContain("moved")
    const many = run({ indexedNew: 2, turnsAdded: 3, chunksAdded: 4, markedMissing: 2 })
    expect(renderIndexSummary(many, { ...one, embedded: 5 }, null)).toContain(
      "Indexed 2 transcripts (2 new, 0 appended, 0 rewritten) in 0.3 s: 3 turns, 4 chunks;",
    )
    expect(renderIndexSummary(many, null, null)).toContain("2 transcripts are gone from disk")
    // Files an older parser indexed, read again after an upgrade, count as indexed.
    const upgraded = run({ indexedNew: 0, reparsed: 3, markedMissing: 0 })
    expect(renderIndexSummary(upgraded, null, null)).toContain(
      "Indexed 3 transcripts (0 new, 0 appended, 0 rewritten, 3 read again by this version's parser) in 0.3 s",
    )
    expect(
      renderIndexSummary(run({ indexedNew: 0, discovered: 1, failed: [] }), null, null),
    ).toMatch(/^Up to date: 1 transcript, none changed/)
  })

  it("does not call a run with a failed file up to date (its exit code is 1)", () => {
    const report = {
      startedAt: 0,
      finishedAt: 500,
      discovered: 5,
      unchanged: 4,
      indexedNew: 0,
      appended: 0,
      rewritten: 0,
      reparsed: 0,
      moved: 0,
      markedMissing: 0,
      turnsAdded: 0,
      chunksAdded: 0,
      failed: [{ path: "/c/rollout-9.jsonl.zst", error: "zstd: invalid zstd data" }],
    } as unknown as IndexRunReport
    const text = renderIndexSummary(report, null, null)
    expect(text).not.toContain("Up to date")
    expect(text).toBe(
      [
        "4 of 5 transcripts up to date, none changed; 1 failed (0.5 s).",
        "1 transcript failed (retried next run):",
        "  /c/rollout-9.jsonl.zst: zstd: invalid zstd data",
        "",
      ].join("\n"),
    )
  })

  it("says which lines a run skipped, and status lists the files with most", () => {
    const report = {
      startedAt: 0,
      finishedAt: 100,
      discovered: 2,
      unchanged: 0,
      indexedNew: 0,
      appended: 2,
      rewritten: 0,
      reparsed: 0,
      moved: 0,
      markedMissing: 0,
      turnsAdded: 0,
      chunksAdded: 0,
      failed: [],
      skippedLines: {
        files: 2,
        lines: 6,
        malformed: 2,
        invalid: 1,
        unknownTypes: { "future-record": 2, brand_new: 1 },
      },
    } as unknown as IndexRunReport
    expect(renderIndexSummary(report, null, null)).toContain(
      "\nSkipped 6 lines in 2 transcripts that could not be read: 2 not a JSON object, 1 not a record, 3 of unknown record types (future-record 2, brand_new 1). 'baton recall status' lists the files.\n",
    )
    expect(
      renderIndexSummary(
        {
          ...report,
          skippedLines: { files: 1, lines: 1, malformed: 0, invalid: 0, unknownTypes: { x: 1 } },
        },
        null,
        null,
      ),
    ).toContain(
      "Skipped 1 line in 1 transcript that could not be read: 1 of an unknown record type (x 1).",
    )
    expect(renderIndexSummary({ ...report, skippedLines: null }, null, null)).not.toContain(
      "Skipped",
    )
    const file = (path: string, lines: number) => ({
      path,
      skipped: { lines, malformed: lines, invalid: 0, unknownTypes: {} },
    })
    const status = {
      ...statusOf(),
      skippedLines: {
        files: 12,
        lines: 30,
        malformed: 29,
        invalid: 1,
        unknownTypes: {},
        listed: Array.from({ length: 10 }, (_, i) => file(`/h/${i}.jsonl`, 10 - i)),
      },
    } as unknown as RecallStatus
    expect(renderStatus(status)).toContain(
      [
        "Skipped lines: 30 in 12 transcripts, not searchable: 29 not a JSON object, 1 not a record",
        "  /h/0.jsonl — 10 lines: 10 not a JSON object",
        "  /h/1.jsonl — 9 lines: 9 not a JSON object",
      ].join("\n"),
    )
    expect(renderStatus(status)).toContain(
      "  /h/9.jsonl — 1 line: 1 not a JSON object\n  … and 2 more\n",
    )
    expect(renderStatus(statusOf())).not.toContain("Skipped")
    // Transcripts an earlier version's parser read: the next run reads them again.
    expect(renderStatus({ ...statusOf(), olderParserFiles: 218 })).toContain(
      "Parser: 218 transcripts read by an earlier version of Baton; the next 'baton recall index' reads them again (the plugin's SessionStart hook runs one)\n",
    )
    expect(renderStatus(statusOf())).not.toContain("Parser:")
    // The last embedding run's failure, shown until a run succeeds.
    const failed = {
      ...statusOf(),
      embeddingFailure: {
        at: "2026-12-03T06:00:00.000Z",
        fingerprint: "voyage/voyage-4-large/1024",
        failure: "unauthorized" as const,
        reason: "the voyage embedder failed (unauthorized): HTTP 401",
      },
    }
    expect(renderStatus(failed)).toContain(
      "Last embedding failed (2026-12-03T06:00:00.000Z, voyage/voyage-4-large/1024): the voyage embedder failed (unauthorized): HTTP 401; 'baton recall index' tries again",
    )
    // Refused by the cost guard or misconfigured, the next run does not simply try again.
    const refused = {
      ...failed,
      embeddingFailure: { ...failed.embeddingFailure, failure: "cost_guard" as const },
    }
    expect(renderStatus(refused)).toContain(
      "; 'baton recall index' is refused the same way until BATON_EMBED_MAX_TOKENS is raised",
    )
    expect(renderStatus(refused)).not.toContain("tries again")
    const misconfigured = {
      ...failed,
      embeddingFailure: {
        at: "2026-12-03T06:00:00.000Z",
        fingerprint: "VOYAGE_API_KEY",
        failure: "configuration" as const,
        reason: "BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY",
      },
    }
    expect(renderStatus(misconfigured)).toContain(
      "Last embedding failed (2026-12-03T06:00:00.000Z, VOYAGE_API_KEY): BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY; 'baton recall index' indexes words only until the setting is fixed",
    )
    expect(renderStatus(statusOf())).not.toContain("Last embedding failed")
  })

  it("names the paths discovery could not read, in the run's summary and in status", () => {
    const problems = [
      { path: "/h/.claude/projects/p/a.jsonl", code: "EACCES" },
      { path: "/h/.codex/sessions/loop", code: "ELOOP" },
    ]
    const report = {
      startedAt: 0,
      finishedAt: 100,
      discovered: 1,
      unchanged: 1,
      indexedNew: 0,
      appended: 0,
      rewritten: 0,
      reparsed: 0,
      moved: 0,
      markedMissing: 0,
      failed: [],
      problems,
      skippedLines: null,
    } as unknown as IndexRunReport
    const lines = [
      "Could not read 2 paths (not indexed; tried again every run):",
      "  /h/.claude/projects/p/a.jsonl: no permission to read it",
      "  /h/.codex/sessions/loop: a symlink loop",
    ].join("\n")
    expect(renderIndexSummary(report, null, null)).toContain(`\n${lines}\n`)
    expect(renderStatus({ ...statusOf(), lastRun: report })).toContain(`\n${lines}\n`)
    expect(renderIndexSummary({ ...report, problems: [] }, null, null)).not.toContain("Could not")
  })

  it("says when an embedding run stored an earlier version's float vectors as int8", () => {
    const run = {
      startedAt: 0,
      finishedAt: 1500,
      discovered: 3,
      unchanged: 3,
      indexedNew: 0,
      appended: 0,
      rewritten: 0,
      reparsed: 0,
      moved: 0,
      markedMissing: 0,
      failed: [],
    } as unknown as IndexRunReport
    const embedding: EmbedBacklogReport = {
      fingerprint: "embedded/use-static/512",
      vecTable: "vec_1",
      total: 0,
      resolved: 0,
      embedded: 0,
      reused: 0,
      batches: 0,
      remaining: 0,
      vectorsConverted: 209_496,
      switchedFrom: null,
    }
    expect(renderIndexSummary(run, embedding, null)).toContain(
      "Stored 209,496 vectors of an earlier version as int8",
    )
    expect(renderIndexSummary(run, { ...embedding, vectorsConverted: 0 }, null)).not.toContain(
      "int8",
    )
  })

  it("points at vacuum when the file holds much free space, and says what a vacuum gave back", () => {
    const status = statusOf()
    expect(renderStatus(status)).toContain(
      "Index: /d/recall-index.db (777.0 MiB, 308.0 MiB of it free: 'baton recall vacuum' gives it back)",
    )
    expect(renderStatus({ ...status, freeBytes: 4096 })).toContain(
      "Index: /d/recall-index.db (777.0 MiB)\n",
    )
    const embedder = { fingerprint: "e/m/512", dim: 512, vectors: 20, active: true, endpoint: null }
    expect(
      renderStatus({ ...status, embedders: [{ ...embedder, elements: "float32" }] }),
    ).toContain(
      "Embeddings: e/m/512 (20 vectors, active, float32 until the next 'baton recall index' stores them as int8)",
    )
    // Only a run in that space converts it.
    expect(
      renderStatus({ ...status, embedders: [{ ...embedder, active: false, elements: "float32" }] }),
    ).toContain("e/m/512 (20 vectors, float32 until an index run embeds with it again)")
    expect(renderStatus({ ...status, embedders: [{ ...embedder, elements: "int8" }] })).toContain(
      "Embeddings: e/m/512 (20 vectors, active) ·",
    )
    // An OpenAI-compatible space names the server its vectors came from.
    expect(
      renderStatus({
        ...status,
        embedders: [{ ...embedder, endpoint: "http://127.0.0.1:8080/v1", elements: "int8" }],
      }),
    ).toContain("Embeddings: e/m/512 (20 vectors, active, from http://127.0.0.1:8080/v1) ·")
    // Failing files come with their last error; past the listed ones, how many more.
    const failing = renderStatus({
      ...status,
      failingFiles: 3,
      failing: [
        { path: "/h/a.jsonl", failures: 1, lastError: "read failed: EIO" },
        { path: "/h/b.jsonl", failures: 2, lastError: null },
      ],
      quarantined: [{ path: "/h/c.jsonl", failures: 3, lastError: "read failed: EACCES" }],
    })
    expect(failing).toContain(
      [
        "Failing files: 3 (retried next run)",
        "  /h/a.jsonl — read failed: EIO (1 failure)",
        "  /h/b.jsonl — unknown error (2 failures)",
        "  … and 1 more",
        "Quarantined: /h/c.jsonl — read failed: EACCES",
      ].join("\n"),
    )
    const mib = 1_048_576
    expect(
      renderVacuum({
        bytesBefore: 777 * mib,
        bytesAfter: 465.5 * mib,
        freeBytesBefore: 0,
        ms: 14_500,
      }),
    ).toBe("Vacuumed the recall index: 777.0 MiB → 465.5 MiB (311.5 MiB given back) in 14.5 s.\n")
  })
})

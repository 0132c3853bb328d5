/**
 * Synthetic Claude Code trees (transcripts.md §5.3): every record type and era the readers must
 * handle, written as `~/.claude/projects/<encoded cwd>/…` files with expectations. Never derived
 * from a real transcript; deterministic from the seed.
 */
import type { ExpectedSurface, FixtureExpectation } from "./fixture-manifest.js"
import type { SeededRandom } from "./seeded-random.js"

/** A fake secret and how the readers must mask it. */
export const FIXTURE_ANTHROPIC_KEY = "sk-ant-api03-Zq8v0XnUu2t6bLw3RkYp4sHcJ9aMdE1fG7iO5"

/** Claude's project-directory encoding: every non-alphanumeric character becomes `-`. */
export const encodeClaudeProjectDir = (cwd: string): string => cwd.replace(/[^A-Za-z0-9]/g, "-")

const words = [
  "retry",
  "cache",
  "schema",
  "migration",
  "webhook",
  "planner",
  "index",
  "vector",
  "cursor",
  "timeout",
  "budget",
  "token",
  "garden",
  "frost",
  "ledger",
  "queue",
  "shard",
  "replica",
]

/** A sentence of seeded words. */
export const prose = (random: SeededRandom, count: number): string => {
  const out: Array<string> = []
  for (let i = 0; i < count; i++) out.push(random.pick(words))
  const text = out.join(" ")
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`
}

/** A long multi-paragraph reply of about `chars` characters. */
export const longReply = (random: SeededRandom, chars: number): string => {
  const paragraphs: Array<string> = []
  let size = 0
  while (size < chars) {
    const sentences = Array.from({ length: random.int(3, 8) }, () =>
      prose(random, random.int(6, 14)),
    )
    const p = sentences.join(" ")
    paragraphs.push(p)
    size += p.length + 2
  }
  return paragraphs.join("\n\n")
}

interface ClaudeFileBuilder {
  readonly lines: Array<string>
  readonly surface: Array<ExpectedSurface>
  readonly sidechainSurface: Array<ExpectedSurface>
}

interface EnvelopeOptions {
  readonly sessionId: string
  readonly cwd: string
  readonly entrypoint?: string
  readonly extra?: Readonly<Record<string, unknown>>
}

/** Writes Claude records with a running clock and parent chain. */
const claudeWriter = (random: SeededRandom, options: EnvelopeOptions, startMs: number) => {
  const file: ClaudeFileBuilder = { lines: [], surface: [], sidechainSurface: [] }
  let clock = startMs
  let parent: string | null = null
  const envelope = (type: string, fields: Record<string, unknown>): Record<string, unknown> => {
    const uuid = random.uuid()
    clock += random.int(200, 4000)
    const record = {
      parentUuid: parent,
      isSidechain: false,
      userType: "external",
      cwd: options.cwd,
      sessionId: options.sessionId,
      version: "2.1.90",
      gitBranch: "main",
      ...(options.entrypoint !== undefined ? { entrypoint: options.entrypoint } : {}),
      ...options.extra,
      type,
      uuid,
      timestamp: new Date(clock).toISOString(),
      ...fields,
    }
    parent = uuid
    return record
  }
  const push = (record: unknown): void => {
    file.lines.push(typeof record === "string" ? record : JSON.stringify(record))
  }
  return {
    file,
    push,
    envelope,
    user: (content: unknown, fields: Record<string, unknown> = {}) =>
      push(envelope("user", { message: { role: "user", content }, ...fields })),
    assistant: (
      messageId: string,
      content: ReadonlyArray<unknown>,
      fields: Record<string, unknown> = {},
    ) =>
      push(
        envelope("assistant", {
          message: {
            id: messageId,
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-5",
            content,
            stop_reason: "end_turn",
            usage: { input_tokens: 10, output_tokens: 5 },
          },
          requestId: `req_${random.hex(8)}`,
          ...fields,
        }),
      ),
    expect: (role: ExpectedSurface["role"], text: string) => file.surface.push({ role, text }),
    expectSidechain: (role: ExpectedSurface["role"], text: string) =>
      file.sidechainSurface.push({ role, text }),
    noise: (type: string, fields: Record<string, unknown> = {}) =>
      push({ type, sessionId: options.sessionId, ...fields }),
  }
}

/** The generated Claude tree. */
export interface ClaudeTree {
  readonly files: Record<string, string | Uint8Array>
  readonly expectations: Array<FixtureExpectation>
  /** Paths of special cases the test wires up itself (symlinks, unreadable files). */
  readonly brokenSymlink: string
  readonly unreadable: string
}

const jsonl = (lines: ReadonlyArray<string>, eol = "\n"): string =>
  lines.map((l) => `${l}${eol}`).join("")

/** Generates the Claude tree under `configDir` (`<configDir>/projects/…`). */
export const generateClaudeTree = (
  random: SeededRandom,
  configDir: string,
  homeDir: string,
  baseMs: number,
): ClaudeTree => {
  const files: Record<string, string | Uint8Array> = {}
  const expectations: Array<FixtureExpectation> = []
  const projects = `${configDir}/projects`
  const cwd = `${homeDir}/code/my.proj_x v2/ünï`
  const projectDir = `${projects}/${encodeClaudeProjectDir(cwd)}`

  // ---- typical main session -------------------------------------------------------------
  const sessionId = random.uuid()
  const w = claudeWriter(random, { sessionId, cwd, entrypoint: "cli" }, baseMs)
  const p1 = prose(random, 9)
  w.push({
    type: "file-history-snapshot",
    messageId: random.uuid(),
    snapshot: { trackedFileBackups: {}, timestamp: new Date(baseMs).toISOString() },
    isSnapshotUpdate: false,
  })
  w.noise("queue-operation", {
    operation: "enqueue",
    timestamp: new Date(baseMs).toISOString(),
    content: p1,
  })
  w.noise("queue-operation", { operation: "dequeue", timestamp: new Date(baseMs).toISOString() })
  w.noise("permission-mode", { permissionMode: "default" })
  w.user(
    `${p1}\n\n<system-reminder>\nREMINDER-MARK: the user may be on a train.\n</system-reminder>`,
    { promptId: random.uuid() },
  )
  w.expect("user", p1)
  w.push(w.envelope("attachment", { attachment: { type: "date", date: "2026-01-02" } }))
  w.push(
    w.envelope("attachment", {
      attachment: { type: "prompt_snapshot", systemPrompt: ["PROMPT-SNAPSHOT-MARK"] },
    }),
  )
  w.push(w.envelope("progress", { data: { type: "hook_progress", hookName: "SessionStart" } }))
  w.noise("atis-latch", { atis: "" })
  w.noise("api-request-shape", { shapeHash: random.hex(64), shape: { system: [] } })
  w.noise("api-request-blob", {
    hash: random.hex(64),
    message: { role: "user", content: [{ type: "text", text: `${p1} BLOB-LEAK-MARK` }] },
  })
  w.noise("api-request", {
    id: random.uuid(),
    querySource: "repl",
    params: { messages: [{ role: "user", content: p1 }] },
  })
  const signature = "SIGNATURE-MARK".padEnd(5200, "A")
  const a1 = prose(random, 12)
  w.assistant("msg_1", [
    { type: "thinking", thinking: "THINKING-MARK weighing options", signature },
  ])
  w.assistant("msg_1", [{ type: "text", text: a1 }])
  w.expect("assistant", a1)
  w.assistant("msg_1", [
    {
      type: "tool_use",
      id: "toolu_1",
      name: "Bash",
      input: { command: "ls -la", description: "list" },
    },
  ])
  w.user(
    [
      {
        tool_use_id: "toolu_1",
        type: "tool_result",
        content: "TOOL-OUTPUT-MARK files=3",
        is_error: false,
      },
    ],
    {
      toolUseResult: { stdout: "TOOL-OUTPUT-MARK files=3", stderr: "", interrupted: false },
      sourceToolAssistantUUID: random.uuid(),
    },
  )
  const a2 = prose(random, 7)
  w.assistant("msg_2", [{ type: "text", text: a2 }])
  w.expect("assistant", a2)
  w.noise("cost-state", { totalCostUSD: 0.01 })
  w.noise("last-prompt", { lastPrompt: p1, leafUuid: random.uuid() })
  w.user(
    "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
  )
  w.user("<local-command-stdout>LOCAL-STDOUT-MARK</local-command-stdout>")
  w.user(
    "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
  )
  w.user("<task-notification>TASK-NOTE-MARK done</task-notification>")
  w.user("<bash-input>pwd</bash-input>")
  w.user("<bash-stdout>/home/BASH-OUT-MARK</bash-stdout><bash-stderr></bash-stderr>")
  const p2 = "Why does my template contain <system-reminder> without a closing tag?"
  w.user(p2)
  w.expect("user", p2)
  w.user("SKILL-BODY-MARK: follow these steps exactly.", { isMeta: true })
  const p3 = prose(random, 6)
  w.user([
    { type: "text", text: p3 },
    {
      type: "image",
      source: {
        type: "base64",
        media_type: "image/png",
        data: "QkFTRTY0LUlNQUdFLU1BUks=".repeat(400),
      },
    },
  ])
  w.expect("user", p3)
  w.user([{ type: "text", text: "[Request interrupted by user]" }])
  w.push(
    w.envelope("assistant", {
      message: {
        id: "msg_3",
        role: "assistant",
        model: "<synthetic>",
        content: [{ type: "text", text: "API Error: 500 SYNTHETIC-MARK" }],
      },
      isApiErrorMessage: true,
    }),
  )
  const huge = longReply(random, 7000)
  w.assistant("msg_4", [{ type: "text", text: huge }])
  w.expect("assistant", huge)
  w.assistant("msg_5", [
    {
      type: "tool_use",
      id: "toolu_2",
      name: "Read",
      input: { file_path: "/tmp/a.ts" },
      caller: { type: "direct" },
    },
  ])
  w.user([
    {
      tool_use_id: "toolu_2",
      type: "tool_result",
      content: [
        { type: "text", text: "READ-RESULT-MARK" },
        { type: "tool_reference", tool_name: "Read" },
      ],
    },
  ])
  w.assistant("msg_6", [{ type: "tool_use", id: "toolu_3", name: "mcp__server__tool", input: {} }])
  w.user([{ tool_use_id: "toolu_3", type: "tool_result", content: null, is_error: true }])
  w.push(w.envelope("system", { subtype: "turn_duration", durationMs: 1234, level: "info" }))
  w.push(
    w.envelope("system", {
      subtype: "api_error",
      level: "error",
      error: { status: 500 },
      retryAttempt: 1,
      maxRetries: 10,
      retryInMs: 500,
    }),
  )
  const sc1 = prose(random, 5)
  const sc2 = prose(random, 5)
  w.push(
    w.envelope("user", {
      isSidechain: true,
      agentId: "a1b2c3d4",
      message: { role: "user", content: sc1 },
    }),
  )
  w.push(
    w.envelope("assistant", {
      isSidechain: true,
      agentId: "a1b2c3d4",
      message: {
        id: "msg_sc",
        role: "assistant",
        model: "claude-haiku",
        content: [{ type: "text", text: sc2 }],
      },
    }),
  )
  w.push(
    w.envelope("progress", {
      data: { type: "agent_progress", message: { content: "AGENT-PROGRESS-MARK" } },
    }),
  )
  w.push(
    w.envelope("system", {
      parentUuid: null,
      logicalParentUuid: random.uuid(),
      subtype: "compact_boundary",
      content: "Conversation compacted",
      compactMetadata: { trigger: "auto", preTokens: 150000 },
    }),
  )
  w.user(
    "This session is being continued from a previous conversation that ran out of context. SUMMARY-MARK: the user wants retries.",
    { isCompactSummary: true, isVisibleInTranscriptOnly: true },
  )
  w.push(
    w.envelope("system", {
      subtype: "microcompact_boundary",
      microcompactMetadata: { compactedToolIds: ["toolu_1"] },
    }),
  )
  w.push({ type: "summary", summary: "LEGACY-SUMMARY-MARK", leafUuid: random.uuid() })
  const p4Prefix = "Deploy with key "
  w.user(`${p4Prefix}${FIXTURE_ANTHROPIC_KEY} please`)
  w.expect("user", `${p4Prefix}[redacted anthropic-api-key] please`)
  const a4 = prose(random, 8)
  w.push(
    w.envelope("assistant", {
      cwd: `${cwd}/.claude/worktrees/w1`,
      gitBranch: "feature/x",
      message: { id: "msg_7", role: "assistant", content: [{ type: "text", text: a4 }] },
    }),
  )
  w.expect("assistant", a4)
  w.push({ type: "future-record-type", sessionId, payload: 1 })
  w.push("{not json at all")
  w.push("[1,2,3]")
  w.push("42")
  w.push('"just a string"')
  w.push("")
  w.push("   ")
  const p5 = prose(random, 6)
  const p5Record = w.envelope("user", {
    message: { role: "user", content: p5 },
    brandNewField: { nested: true },
  })
  delete p5Record["timestamp"]
  w.push(p5Record)
  w.expect("user", p5)
  const a5 = prose(random, 6)
  w.push(
    w.envelope("assistant", {
      timestamp: "2026-01-02T03:04:05.678",
      message: { id: "msg_8", role: "assistant", content: [{ type: "text", text: a5 }] },
    }),
  )
  w.expect("assistant", a5)
  w.noise("ai-title", { aiTitle: "AI title" })
  w.noise("custom-title", { customTitle: "Custom title wins" })
  const typicalPath = `${projectDir}/${sessionId}.jsonl`
  // One line with invalid UTF-8 inside a string (bytes 0xff 0xfe).
  const text = jsonl(w.file.lines)
  const encoder = new TextEncoder()
  const badLine = encoder.encode(`{"type":"tag","tag":"bad-`)
  const bytes = new Uint8Array([
    ...encoder.encode(text),
    ...badLine,
    0xff,
    0xfe,
    ...encoder.encode(`","sessionId":"${sessionId}"}\n`),
  ])
  files[typicalPath] = bytes
  expectations.push({
    path: typicalPath,
    source: "claude",
    scenario: "claude/typical",
    discovered: true,
    role: "session",
    sessionId,
    headless: false,
    subagent: false,
    surface: w.file.surface,
    rawOnly: [
      "REMINDER-MARK",
      "THINKING-MARK",
      "TOOL-OUTPUT-MARK",
      "LOCAL-STDOUT-MARK",
      "TASK-NOTE-MARK",
      "BASH-OUT-MARK",
      "SKILL-BODY-MARK",
      "READ-RESULT-MARK",
      "SYNTHETIC-MARK",
      "SUMMARY-MARK",
      "LEGACY-SUMMARY-MARK",
      "AGENT-PROGRESS-MARK",
    ],
    absent: ["BLOB-LEAK-MARK", "SIGNATURE-MARK", "QkFTRTY0LUlNQUdFLU1BUks", FIXTURE_ANTHROPIC_KEY],
    malformedLines: 4,
    invalidUtf8Lines: 1,
    truncatedTail: false,
    unknownRecordTypes: ["future-record-type"],
  })

  // ---- headless `claude -p`, with a BOM and CRLF line endings -------------------------------
  const headlessId = random.uuid()
  const h = claudeWriter(
    random,
    { sessionId: headlessId, cwd, entrypoint: "sdk-cli", extra: { promptSource: "sdk" } },
    baseMs + 3_600_000,
  )
  const hp = prose(random, 7)
  const ha = prose(random, 7)
  h.user(hp)
  h.expect("user", hp)
  h.assistant("msg_h", [{ type: "text", text: ha }])
  h.expect("assistant", ha)
  const headlessPath = `${projectDir}/${headlessId}.jsonl`
  files[headlessPath] = `\uFEFF${jsonl(h.file.lines, "\r\n")}`
  expectations.push({
    path: headlessPath,
    source: "claude",
    scenario: "claude/headless-bom-crlf",
    discovered: true,
    role: "session",
    sessionId: headlessId,
    headless: true,
    subagent: false,
    surface: h.file.surface,
    malformedLines: 0,
  })

  // ---- live file: last line cut mid-record ---------------------------------------------------
  const liveId = random.uuid()
  const l = claudeWriter(random, { sessionId: liveId, cwd, entrypoint: "cli" }, baseMs + 7_200_000)
  const lp = prose(random, 5)
  l.user(lp)
  l.expect("user", lp)
  l.assistant("msg_l", [{ type: "text", text: "LIVE-TAIL-MARK unfinished answer" }])
  const livePath = `${projectDir}/${liveId}.jsonl`
  const last = l.file.lines.pop()!
  files[livePath] = `${jsonl(l.file.lines)}${last.slice(0, Math.floor(last.length / 2))}`
  expectations.push({
    path: livePath,
    source: "claude",
    scenario: "claude/live-truncated",
    discovered: true,
    role: "session",
    sessionId: liveId,
    surface: l.file.surface,
    truncatedTail: true,
  })

  // ---- resumed (older versions): copy of another session's records, then the new session ------
  const oldId = random.uuid()
  const resumedId = random.uuid()
  const o = claudeWriter(random, { sessionId: oldId, cwd, entrypoint: "cli" }, baseMs - 86_400_000)
  o.user("OLD-PROMPT copied on resume")
  o.assistant("msg_o", [{ type: "text", text: "OLD-ANSWER copied on resume" }])
  const r = claudeWriter(
    random,
    { sessionId: resumedId, cwd, entrypoint: "cli" },
    baseMs + 10_000_000,
  )
  r.user("NEW-PROMPT after resume")
  r.assistant("msg_r", [{ type: "text", text: "NEW-ANSWER after resume" }])
  const resumedPath = `${projectDir}/${resumedId}.jsonl`
  files[resumedPath] = jsonl([...o.file.lines, ...r.file.lines])
  expectations.push({
    path: resumedPath,
    source: "claude",
    scenario: "claude/resumed-copy",
    discovered: true,
    role: "session",
    sessionId: resumedId,
    surface: [
      { role: "user", text: "OLD-PROMPT copied on resume" },
      { role: "assistant", text: "OLD-ANSWER copied on resume" },
      { role: "user", text: "NEW-PROMPT after resume" },
      { role: "assistant", text: "NEW-ANSWER after resume" },
    ],
  })

  // ---- fork: forkedFrom on every record --------------------------------------------------------
  const forkId = random.uuid()
  const f = claudeWriter(
    random,
    {
      sessionId: forkId,
      cwd,
      entrypoint: "cli",
      extra: { forkedFrom: { sessionId, messageUuid: random.uuid() } },
    },
    baseMs + 20_000_000,
  )
  f.user("FORK-PROMPT")
  f.expect("user", "FORK-PROMPT")
  f.assistant("msg_f", [{ type: "text", text: "FORK-ANSWER" }])
  f.expect("assistant", "FORK-ANSWER")
  const forkPath = `${projectDir}/${forkId}.jsonl`
  files[forkPath] = jsonl(f.file.lines)
  expectations.push({
    path: forkPath,
    source: "claude",
    scenario: "claude/fork",
    discovered: true,
    role: "session",
    sessionId: forkId,
    surface: f.file.surface,
  })

  // ---- compaction continued in a new file (first line = compact_boundary) ----------------------
  const contId = random.uuid()
  const c = claudeWriter(random, { sessionId: contId, cwd, entrypoint: "cli" }, baseMs + 30_000_000)
  c.push(
    c.envelope("system", {
      parentUuid: null,
      logicalParentUuid: random.uuid(),
      subtype: "compact_boundary",
      compactMetadata: { trigger: "manual", preTokens: 9000 },
    }),
  )
  c.user(
    "This session is being continued from a previous conversation that ran out of context. CONT-SUMMARY-MARK",
    { isCompactSummary: true },
  )
  c.user("CONT-PROMPT after compaction")
  c.expect("user", "CONT-PROMPT after compaction")
  c.assistant("msg_c", [{ type: "text", text: "CONT-ANSWER" }])
  c.expect("assistant", "CONT-ANSWER")
  const contPath = `${projectDir}/${contId}.jsonl`
  files[contPath] = jsonl(c.file.lines)
  expectations.push({
    path: contPath,
    source: "claude",
    scenario: "claude/compaction-new-file",
    discovered: true,
    role: "session",
    sessionId: contId,
    surface: c.file.surface,
    rawOnly: ["CONT-SUMMARY-MARK"],
  })

  // ---- subagents in the later and current layouts -----------------------------------------------
  const subagentFile = (
    path: string,
    agentId: string,
    parent: string,
    scenario: string,
    text: string,
  ): void => {
    const s = claudeWriter(
      random,
      { sessionId: parent, cwd, entrypoint: "cli", extra: { isSidechain: true, agentId } },
      baseMs + 40_000_000,
    )
    s.user(`${text} task`)
    s.assistant(`msg_${agentId}`, [{ type: "text", text: `${text} report` }])
    files[path] = jsonl(s.file.lines)
    expectations.push({
      path,
      source: "claude",
      scenario,
      discovered: true,
      role: "subagent",
      subagent: true,
      surface: [],
      surfaceWithSidechains: [
        { role: "user", text: `${text} task` },
        { role: "assistant", text: `${text} report` },
      ],
    })
  }
  subagentFile(
    `${projectDir}/agent-1a2b3c4d.jsonl`,
    "1a2b3c4d",
    sessionId,
    "claude/subagent-top-level",
    "TOPLEVEL-AGENT",
  )
  const agentId = random.hex(17)
  const subDir = `${projectDir}/${sessionId}/subagents`
  subagentFile(
    `${subDir}/agent-${agentId}.jsonl`,
    agentId,
    sessionId,
    "claude/subagent-current",
    "CURRENT-AGENT",
  )
  files[`${subDir}/agent-${agentId}.meta.json`] = JSON.stringify({
    agentType: "general-purpose",
    description: "d",
    toolUseId: "toolu_9",
  })
  const corruptAgent = random.hex(17)
  subagentFile(
    `${subDir}/agent-${corruptAgent}.jsonl`,
    corruptAgent,
    sessionId,
    "claude/subagent-corrupt-meta",
    "CORRUPT-META-AGENT",
  )
  files[`${subDir}/agent-${corruptAgent}.meta.json`] = "{not json"
  subagentFile(
    `${subDir}/workflows/wf_x/agent-${random.hex(17)}.jsonl`,
    "wf",
    sessionId,
    "claude/subagent-workflow",
    "WORKFLOW-AGENT",
  )

  // ---- noise and edge files ----------------------------------------------------------------------
  files[`${projectDir}/notes.jsonl`] = '{"note":"not a session"}\n'
  files[`${projectDir}/${random.uuid()}.jsonl.bak`] = jsonl(w.file.lines.slice(0, 3))
  files[`${projectDir}/memory/MEMORY.md`] = "# memory\n"
  const emptyId = random.uuid()
  files[`${projectDir}/${emptyId}.jsonl`] = ""
  expectations.push({
    path: `${projectDir}/${emptyId}.jsonl`,
    source: "claude",
    scenario: "claude/empty",
    discovered: true,
    role: "session",
    surface: [],
  })
  const metaOnlyId = random.uuid()
  files[`${projectDir}/${metaOnlyId}.jsonl`] = jsonl([
    JSON.stringify({
      type: "file-history-snapshot",
      messageId: random.uuid(),
      snapshot: {},
      isSnapshotUpdate: false,
    }),
    JSON.stringify({ type: "ai-title", aiTitle: "Only a title", sessionId: metaOnlyId }),
  ])
  expectations.push({
    path: `${projectDir}/${metaOnlyId}.jsonl`,
    source: "claude",
    scenario: "claude/metadata-only",
    discovered: true,
    role: "session",
    surface: [],
  })
  // A home-directory project and a Windows-style cwd.
  const winId = random.uuid()
  const win = claudeWriter(
    random,
    { sessionId: winId, cwd: "C:\\Code\\x", entrypoint: "cli" },
    baseMs + 50_000_000,
  )
  win.user("WINDOWS-PROMPT in C:\\Code\\x")
  win.expect("user", "WINDOWS-PROMPT in C:\\Code\\x")
  const winPath = `${projects}/${encodeClaudeProjectDir("C:\\Code\\x")}/${winId}.jsonl`
  files[winPath] = jsonl(win.file.lines)
  expectations.push({
    path: winPath,
    source: "claude",
    scenario: "claude/windows-cwd",
    discovered: true,
    role: "session",
    sessionId: winId,
    cwd: "C:\\Code\\x",
    surface: win.file.surface,
  })

  return {
    files,
    expectations,
    brokenSymlink: `${projectDir}/${random.uuid()}.jsonl`,
    unreadable: `${projects}/${encodeClaudeProjectDir(homeDir)}/${random.uuid()}.jsonl`,
  }
}

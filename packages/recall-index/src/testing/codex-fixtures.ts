/**
 * Synthetic `$CODEX_HOME` trees (transcripts.md §5.4): rollouts of every format era, subagent,
 * fork, resume and headless threads, malformed and live files, archive and compression states,
 * with expectations. Never derived from a real rollout; deterministic from the seed.
 */
import type { ExpectedSurface, FixtureExpectation } from "./fixture-manifest.js"
import { prose } from "./claude-fixtures.js"
import type { SeededRandom } from "./seeded-random.js"

/** The compaction bridge text Codex inserts after compacting (the summary follows it). */
export const CODEX_BRIDGE_PREFIX =
  "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\n"

const pad = (n: number): string => String(n).padStart(2, "0")

/** `rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl` and its `YYYY/MM/DD` directory for a (local) time. */
export const rolloutName = (
  ms: number,
  id: string,
): { readonly dir: string; readonly name: string } => {
  const d = new Date(ms)
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
  const time = `${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}`
  return {
    dir: `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}`,
    name: `rollout-${date}T${time}-${id}.jsonl`,
  }
}

const rolloutWriter = (random: SeededRandom, startMs: number, bare = false) => {
  const lines: Array<string> = []
  const surface: Array<ExpectedSurface> = []
  let clock = startMs
  let ordinal = 0
  const line = (type: string, payload: unknown, extra: Record<string, unknown> = {}): void => {
    clock += random.int(50, 900)
    lines.push(
      JSON.stringify(
        bare
          ? payload
          : {
              timestamp: new Date(clock).toISOString(),
              ordinal: ordinal++,
              type,
              payload,
              ...extra,
            },
      ),
    )
  }
  const userItem = (text: string | ReadonlyArray<string>) =>
    line("response_item", {
      type: "message",
      role: "user",
      content: (typeof text === "string" ? [text] : text).map((t) => ({
        type: "input_text",
        text: t,
      })),
    })
  const assistantItem = (
    text: string,
    extra: Record<string, unknown> = {},
    envelope: Record<string, unknown> = {},
  ) =>
    line(
      "response_item",
      { type: "message", role: "assistant", content: [{ type: "output_text", text }], ...extra },
      envelope,
    )
  const event = (type: string, fields: Record<string, unknown> = {}) =>
    line("event_msg", { type, ...fields })
  const itemCompleted = (item: Record<string, unknown>) =>
    event("item_completed", { thread_id: "t", turn_id: "u", item: { id: random.uuid(), ...item } })
  return {
    lines,
    surface,
    line,
    userItem,
    assistantItem,
    event,
    itemCompleted,
    raw: (text: string) => lines.push(text),
    expect: (role: ExpectedSurface["role"], text: string) => surface.push({ role, text }),
  }
}

const envContext = (cwd: string): string =>
  `<environment_context>\n  <cwd>${cwd}</cwd>\n  <shell>bash</shell>\n  <current_date>2026-01-02</current_date>\n</environment_context>`

const jsonl = (lines: ReadonlyArray<string>): string => lines.map((l) => `${l}\n`).join("")

/** The generated Codex tree. */
export interface CodexTree {
  readonly files: Record<string, string | Uint8Array>
  readonly expectations: Array<FixtureExpectation>
  /** An archived rollout a test may compress to `.jsonl.zst` (expectations stay valid). */
  readonly compressible: string
}

/** Generates the Codex tree under `codexHome`. */
export const generateCodexTree = (
  random: SeededRandom,
  codexHome: string,
  baseMs: number,
): CodexTree => {
  const files: Record<string, string | Uint8Array> = {}
  const expectations: Array<FixtureExpectation> = []
  const cwd = "/work/payments service"
  const add = (
    scenario: string,
    ms: number,
    id: string,
    lines: ReadonlyArray<string>,
    expectation: Partial<FixtureExpectation>,
    options: { readonly archived?: boolean; readonly tail?: string } = {},
  ): string => {
    const { dir, name } = rolloutName(ms, id)
    const path =
      options.archived === true
        ? `${codexHome}/archived_sessions/${name}`
        : `${codexHome}/sessions/${dir}/${name}`
    files[path] = `${jsonl(lines)}${options.tail ?? ""}`
    expectations.push({
      path,
      source: "codex",
      scenario,
      discovered: true,
      role: "session",
      sessionId: id,
      ...expectation,
    })
    return path
  }
  const meta = (id: string, fields: Record<string, unknown> = {}) => ({
    id,
    session_id: id,
    timestamp: new Date(baseMs).toISOString(),
    cwd,
    originator: "codex-tui",
    cli_version: "0.150.0",
    source: "cli",
    ...fields,
  })

  // ---- era 1: bare lines, no envelope, cwd only in <environment_context> ----------------------
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs, true)
    w.line("", {
      id,
      timestamp: "2025-09-01T10:00:00.000Z",
      instructions: "INSTRUCTIONS-MARK",
      git: { branch: "main" },
    })
    w.line("", { record_type: "state" })
    w.line("", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: envContext("/work/bare") }],
    })
    w.line("", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "BARE-PROMPT list files" }],
    })
    w.expect("user", "BARE-PROMPT list files")
    w.line("", { type: "reasoning", summary: [], encrypted_content: "ENCRYPTED-MARK".repeat(50) })
    w.line("", {
      type: "function_call",
      name: "shell",
      arguments: '{"command":["ls"]}',
      call_id: "c1",
    })
    w.line("", { type: "function_call_output", call_id: "c1", output: "BARE-TOOL-OUT-MARK" })
    w.line("", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "BARE-ANSWER two files" }],
    })
    w.expect("assistant", "BARE-ANSWER two files")
    add("codex/era-bare", Date.UTC(2025, 8, 1, 10), id, w.lines, {
      surface: w.surface,
      cwd: "/work/bare",
      rawOnly: ["BARE-TOOL-OUT-MARK"],
      absent: ["ENCRYPTED-MARK", "INSTRUCTIONS-MARK"],
    })
  }

  // ---- era 2: wrapped, events + response items for every message (dedupe), same text twice -----
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 1_000_000)
    w.line("session_meta", {
      id,
      timestamp: new Date(baseMs).toISOString(),
      cwd,
      originator: "codex_cli_rs",
      cli_version: "0.40.0",
      instructions: "OLD-INSTRUCTIONS-MARK",
    })
    for (let turn = 0; turn < 2; turn++) {
      w.event("task_started", { turn_id: `turn-${turn}` })
      if (turn === 0) w.userItem(envContext(cwd))
      w.userItem("yes")
      w.event("user_message", { message: "yes", kind: "plain" })
      w.expect("user", "yes")
      w.event("agent_reasoning", { text: "REASONING-EVENT-MARK" })
      w.event("exec_command_end", {
        call_id: "e",
        command: ["ls"],
        aggregated_output: "WRAPPED-EXEC-OUT-MARK",
        exit_code: 0,
      })
      const answer = prose(random, 8)
      w.assistantItem(answer)
      w.event("agent_message", { message: answer })
      w.expect("assistant", answer)
      w.event("task_complete", { turn_id: `turn-${turn}`, last_agent_message: answer })
    }
    add("codex/era-wrapped", baseMs + 1_000_000, id, w.lines, {
      surface: w.surface,
      headless: false,
      subagent: false,
      rawOnly: ["WRAPPED-EXEC-OUT-MARK", "REASONING-EVENT-MARK"],
      absent: ["OLD-INSTRUCTIONS-MARK"],
    })
  }

  // ---- eras 3-5: meta drift, legacy history, every response item and event shape -----------------
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 2_000_000)
    w.line(
      "session_meta",
      meta(id, {
        base_instructions: { text: "BASE-INSTRUCTIONS-MARK ".repeat(900) },
        model_provider: "openai",
        history_mode: "legacy",
        context_window: { window_id: random.uuid() },
        thread_source: "user",
        git: {
          commit_hash: random.hex(40),
          branch: "feature/retry",
          repository_url: "git@example.com:x/y.git",
        },
        future_meta_field: { x: 1 },
      }),
    )
    w.line("turn_context", {
      turn_id: "t1",
      cwd: `${cwd}/sub`,
      model: "gpt-5",
      approval_policy: "on-request",
    })
    w.event("task_started", { turn_id: "t1" })
    w.userItem([
      envContext(cwd),
      "# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>\nAGENTS-MARK\n</INSTRUCTIONS>",
    ])
    w.line("response_item", {
      type: "message",
      role: "developer",
      content: [
        {
          type: "input_text",
          text: "<permissions instructions>DEVELOPER-MARK</permissions instructions>",
        },
      ],
    })
    const p = `How should retries work with token ghp_${"a1B2c3D4e5".repeat(4)} here?`
    w.userItem(p)
    w.event("user_message", { message: p, images: [], local_images: [], text_elements: [] })
    w.expect("user", "How should retries work with token [redacted github-token] here?")
    w.line("response_item", {
      type: "reasoning",
      summary: [{ type: "summary_text", text: "REASONING-SUMMARY-MARK" }],
      encrypted_content: "ENC-MODERN-MARK".repeat(100),
    })
    w.assistantItem("COMMENTARY-MARK checking the code", { phase: "commentary" })
    w.event("agent_message", { message: "COMMENTARY-MARK checking the code", phase: "commentary" })
    w.expect("assistant", "COMMENTARY-MARK checking the code")
    w.line("response_item", {
      type: "function_call",
      name: "shell",
      arguments: "{not valid json",
      call_id: "f1",
    })
    w.line("response_item", {
      type: "function_call_output",
      call_id: "f1",
      output: [{ type: "input_text", text: "CONTENT-ITEMS-OUT-MARK" }],
    })
    w.line("response_item", {
      type: "function_call",
      name: "shell",
      arguments: '{"command":["sleep","9"]}',
      call_id: "f2",
    })
    w.line("response_item", {
      type: "custom_tool_call",
      name: "apply_patch",
      input: `*** Begin Patch\nPATCH-MARK\n${"+line\n".repeat(2000)}*** End Patch`,
      call_id: "p1",
      status: "completed",
    })
    w.line("response_item", { type: "custom_tool_call_output", call_id: "p1", output: "Success" })
    w.line("response_item", {
      type: "local_shell_call",
      call_id: "l1",
      status: "completed",
      action: { type: "exec", command: ["echo", "LOCAL-SHELL-MARK"] },
    })
    w.line("response_item", {
      type: "web_search_call",
      status: "completed",
      action: { type: "search", query: "WEB-SEARCH-MARK" },
    })
    w.line("response_item", {
      type: "image_generation_call",
      result: "SU1BR0UtQkFTRTY0".repeat(1000),
    })
    w.line("response_item", { type: "future_item_type", x: 1 })
    w.event("future_event_type", { x: 1 })
    w.line("future_line_type", { x: 1 })
    w.event("token_count", {
      info: null,
      rate_limits: { primary: { used_percent: 12.5, window_minutes: 300, resets_in_seconds: 100 } },
    })
    const final = prose(random, 10)
    w.assistantItem(final, { phase: "final_answer" })
    w.event("agent_message", { message: final, phase: "final_answer" })
    w.expect("assistant", final)
    w.event("thread_name_updated", { thread_name: "Modern title" })
    w.event("turn_aborted", { turn_id: "t1", reason: "interrupted" })
    w.event("task_started", { turn_id: "t2" })
    w.userItem("<turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>")
    const p2 = prose(random, 6)
    w.userItem(p2)
    w.event("user_message", { message: p2 })
    w.expect("user", p2)
    add("codex/era-modern", baseMs + 2_000_000, id, w.lines, {
      surface: w.surface,
      cwd: `${cwd}/sub`,
      rawOnly: [
        "AGENTS-MARK",
        "DEVELOPER-MARK",
        "REASONING-SUMMARY-MARK",
        "CONTENT-ITEMS-OUT-MARK",
        "PATCH-MARK",
        "LOCAL-SHELL-MARK",
        "WEB-SEARCH-MARK",
      ],
      absent: ["BASE-INSTRUCTIONS-MARK", "ENC-MODERN-MARK", "SU1BR0UtQkFTRTY0", "ghp_a1B2"],
      unknownRecordTypes: [
        "response_item/future_item_type",
        "event_msg/future_event_type",
        "future_line_type",
      ],
    })
  }

  // ---- paginated: words only in item_completed TurnItems ---------------------------------------
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 3_000_000)
    w.line("session_meta", meta(id, { history_mode: "paginated", source: "vscode" }))
    w.event("task_started", { turn_id: "t1" })
    const p = prose(random, 7)
    w.itemCompleted({
      type: "UserMessage",
      content: [{ type: "text", text: p, text_elements: [] }],
    })
    w.expect("user", p)
    w.itemCompleted({ type: "Reasoning", text: "PAGINATED-REASONING-MARK" })
    w.itemCompleted({ type: "Plan", text: "PLAN-MARK" })
    const a = prose(random, 7)
    w.itemCompleted({ type: "AgentMessage", content: [{ type: "Text", text: a }] })
    w.expect("assistant", a)
    add("codex/paginated", baseMs + 3_000_000, id, w.lines, {
      surface: w.surface,
      rawOnly: ["PAGINATED-REASONING-MARK"],
    })
  }

  // ---- 0.169-shaped: response items + item_completed, a tool call, a compaction -------------------
  let compressible: string
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 4_000_000)
    w.line(
      "session_meta",
      meta(id, {
        originator: "baton-testkit",
        cli_version: "0.169.0",
        source: "vscode",
        runtime_workspace_roots: [cwd],
        account_scoped: true,
        history_mode: "paginated",
      }),
    )
    const turn = (user: string, answer: string, command?: string): void => {
      w.event("task_started", { turn_id: random.uuid() })
      w.line("turn_context", { turn_id: "x", cwd })
      w.userItem(user)
      w.itemCompleted({
        type: "UserMessage",
        content: [{ type: "text", text: user, text_elements: [] }],
      })
      w.expect("user", user)
      if (command !== undefined) {
        w.line("response_item", {
          type: "function_call",
          name: "exec_command",
          arguments: JSON.stringify({ cmd: command }),
          call_id: "c",
        })
        w.itemCompleted({
          type: "CommandExecution",
          command: ["/bin/bash", "-lc", command],
          aggregated_output: "handlers=7\n",
          exit_code: 0,
        })
        w.line("response_item", {
          type: "function_call_output",
          call_id: "c",
          output: "Process exited with code 0\nOutput:\nhandlers=7\n",
        })
      }
      w.itemCompleted({ type: "AgentMessage", content: [{ type: "Text", text: answer }] })
      w.assistantItem(answer, {}, { metadata: { history_sequence: 4 } })
      w.expect("assistant", answer)
      w.line("token_usage_record", { usage: { input_tokens: 100 } })
      w.event("token_count", { info: { total_token_usage: { input_tokens: 100 } } })
      w.event("task_complete", { last_agent_message: answer })
    }
    w.event("task_started", { turn_id: "t0" })
    w.line("response_item", {
      type: "message",
      role: "developer",
      content: [
        { type: "input_text", text: "<skills_instructions>SKILLS-MARK</skills_instructions>" },
      ],
    })
    w.userItem(envContext(cwd))
    w.line("world_state", { full: true, state: { agents_md: {} } })
    turn("V169-PROMPT-1 retry policy?", "V169-ANSWER-1 exponential backoff.")
    turn("V169-PROMPT-2 count handlers", "V169-ANSWER-2 there are 7.", "echo handlers=7")
    w.event("task_started", { turn_id: "compact" })
    w.assistantItem("COMPACTION-OUTPUT-MARK summary", {}, { metadata: { compaction_output: true } })
    w.line("compacted", {
      message: `${CODEX_BRIDGE_PREFIX}COMPACTION-OUTPUT-MARK summary`,
      replacement_history: [
        {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: `${CODEX_BRIDGE_PREFIX}x` }],
        },
      ],
    })
    w.itemCompleted({ type: "ContextCompaction" })
    w.event("task_complete", { last_agent_message: null })
    w.event("task_started", { turn_id: "t3" })
    w.userItem(`${CODEX_BRIDGE_PREFIX}COMPACTION-OUTPUT-MARK summary`)
    turn("V169-PROMPT-3 write the tests", "V169-ANSWER-3 adding table tests.")
    compressible = add(
      "codex/v0169",
      baseMs + 4_000_000,
      id,
      w.lines,
      {
        surface: w.surface,
        headless: false,
        rawOnly: [
          "handlers=7",
          "SKILLS-MARK",
          "COMPACTION-OUTPUT-MARK",
          "Here is the summary produced by the other language model",
        ],
      },
      { archived: true },
    )
  }

  // ---- codex exec (headless) -------------------------------------------------------------------
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 5_000_000)
    w.line(
      "session_meta",
      meta(id, { originator: "codex_exec", source: "exec", thread_source: "user" }),
    )
    w.event("task_started", { turn_id: "t1" })
    w.userItem("EXEC-PROMPT summarise")
    w.itemCompleted({
      type: "UserMessage",
      content: [{ type: "text", text: "EXEC-PROMPT summarise" }],
    })
    w.expect("user", "EXEC-PROMPT summarise")
    w.itemCompleted({ type: "AgentMessage", content: [{ type: "Text", text: "EXEC-ANSWER done" }] })
    w.assistantItem("EXEC-ANSWER done")
    w.expect("assistant", "EXEC-ANSWER done")
    add("codex/exec-headless", baseMs + 5_000_000, id, w.lines, {
      surface: w.surface,
      headless: true,
      subagent: false,
    })
  }

  // ---- spawned subagent and review thread (skipped by default) -----------------------------------
  const parentId = random.uuid()
  for (const [scenario, source] of [
    [
      "codex/subagent-thread-spawn",
      {
        subagent: {
          thread_spawn: { parent_thread_id: parentId, depth: 1, agent_nickname: "scout" },
        },
      },
    ],
    ["codex/subagent-review", { subagent: "review" }],
  ] as const) {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 6_000_000)
    w.line("session_meta", meta(id, { source, thread_source: "subagent", agent_nickname: "scout" }))
    w.event("task_started", { turn_id: "t1" })
    w.userItem(`${scenario} task`)
    w.itemCompleted({
      type: "AgentMessage",
      content: [{ type: "Text", text: `${scenario} report` }],
    })
    add(scenario, baseMs + 6_000_000 + expectations.length * 1000, id, w.lines, {
      subagent: true,
      surface: [],
      surfaceWithSidechains: [
        { role: "user", text: `${scenario} task` },
        { role: "assistant", text: `${scenario} report` },
      ],
    })
  }

  // ---- fork (own meta, parent meta, replayed history) and resume (second meta) -------------------
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 7_000_000)
    w.line("session_meta", meta(id, { forked_from_id: parentId }))
    w.line("session_meta", meta(parentId))
    w.userItem("REPLAYED-PARENT-PROMPT")
    w.expect("user", "REPLAYED-PARENT-PROMPT")
    w.event("task_started", { turn_id: "t1" })
    w.userItem("FORK-NEW-PROMPT")
    w.expect("user", "FORK-NEW-PROMPT")
    w.line("session_meta", meta(random.uuid(), { cwd: "/elsewhere" }))
    w.assistantItem("FORK-NEW-ANSWER")
    w.expect("assistant", "FORK-NEW-ANSWER")
    add("codex/fork-resume", baseMs + 7_000_000, id, w.lines, {
      surface: w.surface,
      cwd: "/elsewhere",
    })
  }

  // ---- no meta (file-name id), unknown preamble line, malformed lines, live truncated tail -------
  {
    const id = random.uuid()
    const w = rolloutWriter(random, baseMs + 8_000_000)
    w.raw('{"preamble":"unknown"}')
    w.raw("{broken json")
    w.raw("")
    w.userItem("NO-META-PROMPT")
    w.expect("user", "NO-META-PROMPT")
    w.assistantItem("NO-META-ANSWER")
    w.expect("assistant", "NO-META-ANSWER")
    add(
      "codex/no-meta-live",
      baseMs + 8_000_000,
      id,
      w.lines,
      { surface: w.surface, malformedLines: 1, truncatedTail: true },
      {
        tail: '{"timestamp":"2026-01-02T00:00:00Z","type":"response_item","payload":{"type":"mess',
      },
    )
  }

  // ---- empty and meta-only files; a non-UUID rollout name ------------------------------------
  add("codex/empty", baseMs + 9_000_000, random.uuid(), [], { surface: [] })
  {
    const id = random.uuid()
    add(
      "codex/meta-only",
      baseMs + 9_100_000,
      id,
      [
        JSON.stringify({
          timestamp: new Date(baseMs).toISOString(),
          type: "session_meta",
          payload: meta(id),
        }),
      ],
      { surface: [] },
    )
  }

  // ---- files discovery must ignore, and a plain + .zst pair (plain wins) ------------------------
  const { dir } = rolloutName(baseMs, "x")
  files[`${codexHome}/sessions/${dir}/notes.jsonl`] = "{}\n"
  files[`${codexHome}/sessions/${dir}/rollout-compress-1234.tmp`] = "partial"
  files[`${codexHome}/history.jsonl`] = '{"session_id":"x","ts":1,"text":"h"}\n'
  files[`${codexHome}/session_index.jsonl`] = "{}\n"
  files[`${codexHome}/auth.json`] = '{"never":"read"}'
  {
    const id = random.uuid()
    const { name } = rolloutName(baseMs + 9_500_000, id)
    const plain = `${codexHome}/sessions/${dir}/${name}`
    files[plain] = jsonl([
      JSON.stringify({
        timestamp: new Date(baseMs).toISOString(),
        type: "session_meta",
        payload: meta(id),
      }),
    ])
    files[`${plain}.zst`] = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd])
    expectations.push({
      path: plain,
      source: "codex",
      scenario: "codex/plain-wins-over-zst",
      discovered: true,
      role: "session",
      sessionId: id,
      surface: [],
    })
  }
  return { files, expectations, compressible }
}

/**
 * A deterministic bulk corpus for indexer tests and benchmarks: many current-era Claude Code
 * session files made of prompt / reply / tool call / tool result exchanges of seeded prose.
 * Never derived from a real transcript; the same options always produce the same bytes.
 */
import { encodeClaudeProjectDir, longReply, prose } from "./claude-fixtures.js"
import { seededRandom } from "./seeded-random.js"
import type { SeededRandom } from "./seeded-random.js"

/** Options of {@link generateBulkCorpus}. */
export interface BulkCorpusOptions {
  readonly homeDir: string
  readonly files: number
  readonly seed?: number
  /** Exchanges (user + assistant turn pairs) per file; default 20. */
  readonly exchangesPerFile?: number
  /** Approximate characters of each assistant reply; default 600. */
  readonly replyChars?: number
  /**
   * Mean characters of each tool result, as a numbered source listing (the shape of a file read,
   * the bulk of a real coding session's bytes); each result is 0.2–1.8 times it. Default: none,
   * a one-sentence result.
   */
  readonly toolOutputChars?: number
  /** Base time (ms since epoch); default 2026-01-02T03:04:05Z. */
  readonly baseMs?: number
}

/** The generated tree. */
export interface BulkCorpus {
  readonly claudeConfigDir: string
  readonly files: Record<string, string>
  /** Surface messages written (prompts + replies). */
  readonly messages: number
}

/** The session a bulk exchange belongs to. */
export interface BulkSession {
  readonly sessionId: string
  readonly cwd: string
}

const identifiers = ["value", "result", "config", "retry", "upload", "handler", "stream", "cache"]

/** A numbered source listing of about `chars` characters, as a file-read tool prints it. */
export const sourceListing = (random: SeededRandom, chars: number): string => {
  const lines: Array<string> = []
  let size = 0
  for (let n = 1; size < chars; n++) {
    const name = random.pick(identifiers)
    const target = random.pick(identifiers)
    const line = `${String(n).padStart(6)}\u2192  const ${name}${n % 97} = ${target}.${name}(${random.int(0, 999)}, "${target}-${name}")`
    lines.push(line)
    size += line.length + 1
  }
  return lines.join("\n")
}

/**
 * One exchange as JSONL (newline-terminated): a user prompt, an assistant reply with a tool
 * call, the tool result (one sentence, or a source listing of about `toolOutputChars`), and a
 * closing assistant sentence. Four lines, two surface messages.
 */
export const claudeExchange = (
  random: SeededRandom,
  session: BulkSession,
  atMs: number,
  replyChars: number,
  toolOutputChars?: number,
): string => {
  let clock = atMs
  let parent: string | null = null
  const line = (type: string, message: unknown): string => {
    const uuid = random.uuid()
    clock += random.int(200, 3000)
    const record = {
      parentUuid: parent,
      isSidechain: false,
      userType: "external",
      cwd: session.cwd,
      sessionId: session.sessionId,
      version: "2.1.90",
      gitBranch: "main",
      type,
      uuid,
      timestamp: new Date(clock).toISOString(),
      message,
    }
    parent = uuid
    return `${JSON.stringify(record)}\n`
  }
  const toolId = `toolu_${random.hex(20)}`
  const assistant = (content: ReadonlyArray<unknown>) => ({
    id: `msg_${random.hex(20)}`,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content,
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 5 },
  })
  return [
    line("user", { role: "user", content: prose(random, random.int(8, 20)) }),
    line(
      "assistant",
      assistant([
        { type: "text", text: longReply(random, replyChars) },
        toolOutputChars === undefined
          ? { type: "tool_use", id: toolId, name: "Bash", input: { command: "ls -la src" } }
          : {
              type: "tool_use",
              id: toolId,
              name: "Read",
              input: { file_path: `${session.cwd}/src/${random.pick(identifiers)}.ts` },
            },
      ]),
    ),
    line("user", {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: toolId,
          content:
            toolOutputChars === undefined
              ? prose(random, 30)
              : sourceListing(
                  random,
                  Math.round(toolOutputChars * (0.2 + random.int(0, 160) / 100)),
                ),
        },
      ],
    }),
    line("assistant", assistant([{ type: "text", text: prose(random, random.int(6, 16)) }])),
  ].join("")
}

/** Generates `files` Claude session files under `<homeDir>/.claude/projects/`. */
export const generateBulkCorpus = (options: BulkCorpusOptions): BulkCorpus => {
  const random = seededRandom(options.seed ?? 1)
  const claudeConfigDir = `${options.homeDir}/.claude`
  const exchanges = options.exchangesPerFile ?? 20
  const replyChars = options.replyChars ?? 600
  const baseMs = options.baseMs ?? Date.UTC(2026, 0, 2, 3, 4, 5)
  const files: Record<string, string> = {}
  for (let f = 0; f < options.files; f++) {
    const cwd = `${options.homeDir}/code/project-${f % 20}`
    const session = { sessionId: random.uuid(), cwd }
    const parts: Array<string> = []
    for (let e = 0; e < exchanges; e++) {
      parts.push(
        claudeExchange(
          random,
          session,
          baseMs + f * 3_600_000 + e * 60_000,
          replyChars,
          options.toolOutputChars,
        ),
      )
    }
    const path = `${claudeConfigDir}/projects/${encodeClaudeProjectDir(cwd)}/${session.sessionId}.jsonl`
    files[path] = parts.join("")
  }
  return { claudeConfigDir, files, messages: options.files * exchanges * 2 }
}

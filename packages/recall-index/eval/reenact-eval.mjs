// Re-enactment eval: a conversation corpus of `pnpm eval` (EVAL_CORPUS: "dialogue", the default,
// eval/dialogue-corpus.mjs, LoCoMo shaped; or "chat", eval/chat-corpus.mjs, LongMemEval shaped)
// played through the REAL pinned agents against the loopback mocks — each session of the corpus
// one agent session, alternating between Claude Code (stream-json) and Codex (app-server), its
// user turns sent as prompts and its assistant turns as the mock model's replies — then measured
// as a user runs the product: `baton recall index --json`, then `baton recall search --json`
// (k = 10) per gold question, with no key and the default embedder (`auto`). The held-out
// benchmark re-enacts its conversations through the real agents the same way, so this shows what
// the agents' own transcripts (harness text, Codex's double-written messages, instructions,
// timestamps of a replay) do to retrieval, against the synthetic transcripts `pnpm eval` uses.
// Prints markdown: R@1 / R@5 / R@10 / MRR per question kind, for the default and `--lexical-only`.
// Env: EVAL_CORPUS, EVAL_SEED (7), EVAL_SESSIONS (dialogue 24, chat 50), EVAL_AGENTS ("both", or "claude" / "codex" for every
// session), EVAL_KEEP=1 keeps the temp folder (its path is printed). Needs `pnpm build` first.
// About 5 minutes on 2 cores for the dialogue corpus, 10 for chat.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import Database from "better-sqlite3"
import { buildCorpus } from "@baton/testkit"
import { buildChatCorpus } from "./chat-corpus.mjs"
import { CHAT_FACTS } from "./chat-gold.mjs"
import { buildDialogueCorpus } from "./dialogue-corpus.mjs"
import { DIALOGUE_FACTS } from "./dialogue-gold.mjs"

const corpusName = process.env.EVAL_CORPUS ?? "dialogue"
const corpora = {
  dialogue: { build: buildDialogueCorpus, facts: DIALOGUE_FACTS, sessions: 24 },
  chat: { build: buildChatCorpus, facts: CHAT_FACTS, sessions: 50 },
}
if (corpora[corpusName] === undefined)
  throw new Error(`EVAL_CORPUS is "${corpusName}": use dialogue or chat`)
const { build, facts: FACTS, sessions: defaultSessions } = corpora[corpusName]
const seed = Number(process.env.EVAL_SEED ?? 7)
const sessionCount = Number(process.env.EVAL_SESSIONS ?? defaultSessions)
const agents = process.env.EVAL_AGENTS ?? "both"
if (!["both", "claude", "codex"].includes(agents))
  throw new Error(`EVAL_AGENTS is "${agents}": use both, claude or codex`)
const cli = join(dirname(fileURLToPath(import.meta.url)), "../../cli/dist/bin.js")
const root = mkdtempSync(join(tmpdir(), "baton-reenact-eval-"))
const run = promisify(execFile)

/** The sessions of the synthetic corpus, in order: each a list of { role, text }. */
const conversationDays = () => {
  const { files } = build({ homeDir: join(root, "synthetic"), seed, sessions: sessionCount })
  return Object.values(files)
    .map((content) =>
      content
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line))
        .map((r) => ({
          at: r.timestamp,
          role: r.type,
          text:
            typeof r.message.content === "string"
              ? r.message.content
              : r.message.content.map((b) => b.text ?? "").join(""),
        })),
    )
    .sort((a, b) => a[0].at.localeCompare(b[0].at))
}

/** A session as exchanges: a prompt and its reply (one that ends on a prompt gets a short reply). */
const exchanges = (day) => {
  const turns = []
  for (let i = 0; i < day.length; i += 2) {
    const [user, assistant] = [day[i], day[i + 1]]
    if (user.role !== "user" || (assistant !== undefined && assistant.role !== "assistant"))
      throw new Error(`turn ${i} of a session is out of alternation`)
    turns.push({ user: user.text, assistant: assistant?.text ?? "Bye!" })
  }
  return turns
}

const metrics = (ranks) => {
  const at = (k) => ranks.filter((r) => r !== null && r <= k).length / ranks.length
  const mrr = ranks.reduce((s, r) => s + (r === null ? 0 : 1 / r), 0) / ranks.length
  return { r1: at(1), r5: at(5), r10: at(10), mrr }
}
const pct = (x) => (100 * x).toFixed(0)

const started = performance.now()
const days = conversationDays()
const specs = days.map((day, i) => ({
  agent: agents === "both" ? (i % 2 === 0 ? "claude" : "codex") : agents,
  project: "friends",
  turns: exchanges(day),
}))
const corpus = await buildCorpus(specs)
const recorded = ((performance.now() - started) / 1000).toFixed(0)
const env = {
  ...process.env,
  HOME: root,
  BATON_DATA_DIR: join(root, "baton"),
  CLAUDE_CONFIG_DIR: corpus.claudeConfigDir,
  CODEX_HOME: corpus.codexHome,
  NO_COLOR: "1",
}
// The default embedder, whatever this shell sets.
delete env.BATON_EMBEDDER
const baton = async (...args) => {
  const { stdout } = await run(process.execPath, [cli, ...args], {
    env,
    maxBuffer: 64 << 20,
  })
  return JSON.parse(stdout)
}
try {
  const indexStarted = performance.now()
  const report = await baton("recall", "index", "--json")
  const indexSeconds = ((performance.now() - indexStarted) / 1000).toFixed(1)

  // Each fact's evidence turn, found by its text in the index (one turn: Codex writes a message
  // twice, as an event and a response item, and both are the same turn).
  const db = new Database(join(root, "baton", "recall-index.db"), { readonly: true })
  const evidence = FACTS.map((fact) => {
    const rows = db
      .prepare(
        `select distinct s.session_id, t.turn_id from chunks c join turns t on t.id = c.turn_row
         join sessions s on s.id = t.session_row where instr(c.text, ?) > 0`,
      )
      .all(fact.text.slice(0, 40))
    if (rows.length !== 1) throw new Error(`fact ${fact.id}: ${rows.length} evidence turns`)
    return `${rows[0].session_id}/${rows[0].turn_id}`
  })
  const chunks = db.prepare("select count(*) from chunks").pluck().get()
  const fingerprint = db
    .prepare("select value from meta where key = 'embedder_fingerprint'")
    .pluck()
    .get()
  db.close()

  const kinds = [...new Set(FACTS.flatMap((f) => Object.keys(f.queries)))]
  const rows = []
  for (const [label, flags] of [
    ["default (`auto`)", []],
    ["`--lexical-only` (bm25)", ["--lexical-only"]],
  ]) {
    const ranked = []
    for (const [i, fact] of FACTS.entries()) {
      for (const [kind, question] of Object.entries(fact.queries)) {
        const result = await baton("recall", "search", question, "-k", "10", "--json", ...flags)
        const turns = result.hits.map((h) => `${h.sessionId}/${h.turnId}`)
        const at = turns.indexOf(evidence[i])
        ranked.push({ kind, rank: at === -1 ? null : at + 1 })
      }
    }
    const row = (name, list) => {
      const m = metrics(list.map((q) => q.rank))
      return `| ${label} | ${name} | ${pct(m.r1)} | ${pct(m.r5)} | ${pct(m.r10)} | ${m.mrr.toFixed(3)} |`
    }
    rows.push(row("all", ranked))
    for (const kind of kinds)
      rows.push(
        row(
          kind,
          ranked.filter((q) => q.kind === kind),
        ),
      )
  }
  const byAgent = specs.reduce((n, s) => ({ ...n, [s.agent]: (n[s.agent] ?? 0) + 1 }), {})
  console.log(
    `\nRe-enacted: ${specs.length} sessions (${Object.entries(byAgent)
      .map(([a, n]) => `${n} ${a}`)
      .join(
        ", ",
      )}), ${specs.reduce((n, s) => n + s.turns.length, 0)} exchanges, recorded in ${recorded} s; ` +
      `indexed ${report.index.turnsAdded} turns / ${chunks} chunks in ${indexSeconds} s; embedder ${fingerprint}; ${corpusName} corpus, seed ${seed}\n`,
  )
  console.log("| search | questions | R@1 | R@5 | R@10 | MRR |")
  console.log("| --- | --- | --- | --- | --- | --- |")
  for (const row of rows) console.log(row)
} finally {
  await corpus.dispose()
  if (process.env.EVAL_KEEP === "1") console.log(`\nkept ${root}`)
  else rmSync(root, { recursive: true, force: true })
}

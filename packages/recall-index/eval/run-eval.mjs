// Retrieval eval: builds a synthetic corpus (EVAL_CORPUS: the multi-project coding corpus of
// eval/corpus.mjs, the everyday-life chat corpus of eval/chat-corpus.mjs, or the two-friends
// dialogue corpus of eval/dialogue-corpus.mjs), indexes it with the real indexer, embeds it with
// each embedder (embedBacklog), and reports R@1/R@5/R@10 and MRR, and R@5 per query kind (the
// keys of the facts' `queries`), for the lexical arm (matchChunks, bm25), the vector arm
// (searchVectors) and weighted RRF fusions of the two (fuseRanks). Ranking unit: distinct turns
// (a hit is the evidence turn). Prints markdown tables.
// Env: EVAL_CORPUS ("coding", the default: eval/corpus.mjs with the facts of eval/gold.mjs;
//      "chat": eval/chat-corpus.mjs with the facts of eval/chat-gold.mjs; "dialogue":
//      eval/dialogue-corpus.mjs with the facts of eval/dialogue-gold.mjs), EVAL_EMBEDDERS (comma
//      list; default "hash,use-static,use-lite"), EVAL_SEED (7), EVAL_SESSIONS (coding: 10 per
//      project; chat: 50 in all; dialogue: 24 in all), EVAL_EXCHANGES (coding only: 12 per
//      session), EVAL_EXPANSION_SHARE (expansion words in more than this share of chunks are
//      dropped; default the library's), EVAL_REPLY_SCALE (coding only: 1; > 1 lengthens replies
//      so they span several chunks), EVAL_PROSE (coding and chat: "min-max" sentences of real
//      prose added to every reply), EVAL_CHUNK_CHARS /
//      EVAL_CHUNK_OVERLAP (index with other chunk bounds), EVAL_PLANS (comma list of
//      "lexical:vector:rerank[:rrfK[:context]]" plans run through searchRecall; default the embedded plan),
//      EVAL_NO_EXPANSION (searchRecall without the static expansion), EVAL_PER_SESSION
//      (searchRecall's hits per session; default its own, 3), EVAL_MISSES (list the
//      queries searchRecall misses in its top 5).
import { Effect, Layer } from "effect"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import {
  embedBacklog,
  EMBEDDED_FUSION_PLAN,
  fuseRanks,
  indexTranscripts,
  lexicalQuery,
  makeSentenceReranker,
  makeStaticQueryExpander,
  makeStaticTableEmbedder,
  makeUseLiteEmbedder,
  makeVoyageEmbedder,
  matchChunks,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  RecallDatabase,
  recallDatabaseLayer,
  searchRecall,
  searchVectors,
} from "@baton/recall-index"
import { makeDeterministicEmbedder } from "@baton/recall-index/testing"
import { buildChatCorpus } from "./chat-corpus.mjs"
import { CHAT_FACTS } from "./chat-gold.mjs"
import { buildEvalCorpus } from "./corpus.mjs"
import { buildDialogueCorpus } from "./dialogue-corpus.mjs"
import { DIALOGUE_FACTS } from "./dialogue-gold.mjs"
import { FACTS } from "./gold.mjs"

const seed = Number(process.env.EVAL_SEED ?? 7)
const corpusName = process.env.EVAL_CORPUS ?? "coding"
if (corpusName !== "coding" && corpusName !== "chat" && corpusName !== "dialogue")
  throw new Error(`unknown EVAL_CORPUS ${corpusName} (coding, chat or dialogue)`)
const facts =
  corpusName === "chat" ? CHAT_FACTS : corpusName === "dialogue" ? DIALOGUE_FACTS : FACTS
// The query kinds (table columns): the keys of the facts' `queries`, in order of appearance.
const kinds = [...new Set(facts.flatMap((fact) => Object.keys(fact.queries)))]
const which = (process.env.EVAL_EMBEDDERS ?? "hash,use-static,use-lite")
  .split(",")
  .map((s) => s.trim())
const root = mkdtempSync(join(tmpdir(), "baton-recall-eval-"))
const home = join(root, "home")
const dataDir = join(root, "data")
const layers = Layer.mergeAll(
  recallDatabaseLayer({ dataDir }),
  nodeTranscriptFileSystemLayer,
  nodeIndexerProcessLayer,
)
const run = (effect) => Effect.runPromise(effect.pipe(Effect.provide(layers)))

const embedders = {
  hash: () => Effect.succeed(makeDeterministicEmbedder({ dim: 512 })),
  "use-static": () => makeStaticTableEmbedder(),
  "use-static-centered": () => makeStaticTableEmbedder({ removeCommon: true }),
  "use-static-a1e-3": () => makeStaticTableEmbedder({ sifA: 1e-3 }),
  "use-static-a1e-4": () => makeStaticTableEmbedder({ sifA: 1e-4 }),
  "use-lite": () => Effect.succeed(makeUseLiteEmbedder()),
  "use-lite-seg24": () =>
    Effect.succeed(makeUseLiteEmbedder({ segmentWords: 24, maxSegments: 12 })),
  "use-lite-seg96": () => Effect.succeed(makeUseLiteEmbedder({ segmentWords: 96, maxSegments: 4 })),
  voyage: () =>
    Effect.succeed(
      makeVoyageEmbedder({
        apiKey: process.env.VOYAGE_API_KEY ?? "",
        baseUrl: process.env.BATON_VOYAGE_BASE_URL,
      }),
    ),
}

const RERANK_DEPTH = Number(process.env.EVAL_RERANK_DEPTH ?? 30)
// Share of chunks above which an expansion word is dropped (default: the library's).
const EXPANSION_SHARE =
  process.env.EVAL_EXPANSION_SHARE === undefined
    ? undefined
    : Number(process.env.EVAL_EXPANSION_SHARE)
const WEIGHTS = [
  [1, 1],
  [1, 2],
  [1, 3],
  [2, 1],
]

// EVAL_PROSE="min-max": each reply gains that many sentences of real English prose, taken from
// the JSDoc of the pinned @types/node (wide vocabulary, pinned by the lockfile).
const proseOption = () => {
  const range = process.env.EVAL_PROSE
  if (range === undefined || range === "") return {}
  const [min, max] = range.split("-").map(Number)
  const require = createRequire(import.meta.url)
  const dir = dirname(require.resolve("@types/node/package.json"))
  const text = readdirSync(dir)
    .filter((f) => f.endsWith(".d.ts"))
    .sort()
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n")
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("* ") && !l.startsWith("* @"))
    .map((l) => l.slice(2))
  const sentences = lines
    .join(" ")
    .split(/(?<=[.!?])\s+/)
    .filter(
      (s) => s.length >= 40 && s.length <= 220 && !/[{}()=<>`[\]]/.test(s) && /^[A-Z]/.test(s),
    )
  return { prose: [...new Set(sentences)], proseSentences: [min, max ?? min] }
}

const metrics = (ranks) => {
  const n = ranks.length
  const at = (k) => ranks.filter((r) => r !== null && r <= k).length / n
  const mrr = ranks.reduce((s, r) => s + (r === null ? 0 : 1 / r), 0) / n
  return { r1: at(1), r5: at(5), r10: at(10), mrr }
}
const pct = (x) => `${(100 * x).toFixed(0)}`

try {
  const corpus =
    corpusName === "chat"
      ? buildChatCorpus({
          homeDir: home,
          seed,
          sessions: Number(process.env.EVAL_SESSIONS ?? 50),
          ...proseOption(),
        })
      : corpusName === "dialogue"
        ? buildDialogueCorpus({
            homeDir: home,
            seed,
            sessions: Number(process.env.EVAL_SESSIONS ?? 24),
          })
        : buildEvalCorpus({
            homeDir: home,
            seed,
            sessionsPerProject: Number(process.env.EVAL_SESSIONS ?? 10),
            exchangesPerSession: Number(process.env.EVAL_EXCHANGES ?? 12),
            replyScale: Number(process.env.EVAL_REPLY_SCALE ?? 1),
            ...proseOption(),
          })
  for (const [path, content] of Object.entries(corpus.files)) {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
  }
  const report = await run(
    indexTranscripts({
      environment: {
        env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: join(home, ".codex") },
        homeDir: home,
      },
      ...(process.env.EVAL_CHUNK_CHARS === undefined
        ? {}
        : {
            chunkOptions: {
              maxChars: Number(process.env.EVAL_CHUNK_CHARS),
              overlapChars: Number(process.env.EVAL_CHUNK_OVERLAP ?? 100),
            },
          }),
    }),
  )
  const turnChunks = new Map()
  const { turnOf, gold } = await run(
    Effect.gen(function* () {
      const db = yield* RecallDatabase
      const turnOf = new Map(
        db.sqlite
          .prepare("select id, turn_row from chunks")
          .all()
          .map((r) => [r.id, r.turn_row]),
      )
      for (const r of db.sqlite
        .prepare("select turn_row, text from chunks order by turn_row, surface_index, chunk_index")
        .all()) {
        if (!turnChunks.has(r.turn_row)) turnChunks.set(r.turn_row, [])
        turnChunks.get(r.turn_row).push(r.text)
      }
      const gold = facts.map((fact) => {
        const turns = db.sqlite
          .prepare("select distinct turn_row from chunks where instr(text, ?) > 0")
          .pluck()
          .all(fact.text.slice(0, 40))
        if (turns.length !== 1) throw new Error(`fact ${fact.id}: ${turns.length} evidence turns`)
        return turns[0]
      })
      return { turnOf, gold }
    }),
  )
  const queries = facts.flatMap((fact, i) =>
    Object.entries(fact.queries).map(([kind, text]) => ({ kind, text, gold: gold[i] })),
  )
  console.log(
    `\nCorpus: ${Object.keys(corpus.files).length} sessions, ${report.chunksAdded} chunks, ${turnOf.size} chunk rows; ${queries.length} queries (${facts.length} facts × ${kinds.join(" / ")})\n`,
  )
  const turnsOf = (chunkIds) => {
    const seen = new Set()
    const out = []
    for (const id of chunkIds) {
      const t = turnOf.get(id)
      if (t !== undefined && !seen.has(t)) {
        seen.add(t)
        out.push(t)
      }
    }
    return out
  }
  const rankOf = (turns, goldTurn) => {
    const i = turns.indexOf(goldTurn)
    return i === -1 ? null : i + 1
  }
  const rows = []
  const addRow = (embedder, arm, perQuery, extra = "") => {
    const all = metrics(perQuery.map((q) => q.rank))
    const by = (kind) => metrics(perQuery.filter((q) => q.kind === kind).map((q) => q.rank))
    rows.push([
      embedder,
      arm,
      pct(all.r1),
      pct(all.r5),
      pct(all.r10),
      all.mrr.toFixed(3),
      ...kinds.map((kind) => pct(by(kind).r5)),
      extra,
    ])
  }
  // Lexical arm: raw query text (every term OR-ed) and with the query handling of lexicalQuery.
  const lexical = { raw: [], handled: [] }
  for (const q of queries) {
    const raw = await run(matchChunks(q.text, { limit: 100, mode: "any" }))
    const handled = await run(matchChunks(lexicalQuery(q.text), { limit: 100, mode: "any" }))
    lexical.raw.push(raw.map((m) => m.chunkId))
    lexical.handled.push(handled.map((m) => m.chunkId))
  }
  addRow(
    "—",
    "lexical (raw OR)",
    queries.map((q, i) => ({ kind: q.kind, rank: rankOf(turnsOf(lexical.raw[i]), q.gold) })),
  )
  // Query expansion from the static table (lexical arm only).
  const expand = await Effect.runPromise(makeStaticQueryExpander())
  lexical.expanded = []
  for (const q of queries) {
    const hits = await run(
      matchChunks(lexicalQuery(q.text), {
        limit: 100,
        mode: "any",
        expansion: expand(q.text),
        ...(EXPANSION_SHARE === undefined ? {} : { expansionMaxDocShare: EXPANSION_SHARE }),
      }),
    )
    lexical.expanded.push(hits.map((m) => m.chunkId))
  }
  addRow(
    "—",
    "lexical + static expansion",
    queries.map((q, i) => ({ kind: q.kind, rank: rankOf(turnsOf(lexical.expanded[i]), q.gold) })),
  )
  addRow(
    "—",
    "lexical (lexicalQuery)",
    queries.map((q, i) => ({ kind: q.kind, rank: rankOf(turnsOf(lexical.handled[i]), q.gold) })),
  )

  // The local sentence reranker (static table) over the top of a ranked turn list. It sees
  // chunks, as in searchRecall (a whole long turn would be cut at its first 40 sentences): every
  // chunk of the head's turns, each turn placed by its best chunk.
  const reranker = makeSentenceReranker(await Effect.runPromise(makeStaticTableEmbedder()))
  const rerankTurns = async (query, turns) => {
    const head = turns.slice(0, RERANK_DEPTH)
    const pieces = head.flatMap((turn) =>
      (turnChunks.get(turn) ?? [""]).map((text) => ({ turn, text })),
    )
    const order = await Effect.runPromise(
      reranker.rerank(
        query,
        pieces.map((p) => p.text),
        pieces.length,
      ),
    )
    const placed = [...new Set(order.map((r) => pieces[r.index].turn))]
    return [...placed, ...turns.slice(RERANK_DEPTH)]
  }
  {
    const perQuery = []
    for (const [i, q] of queries.entries()) {
      perQuery.push({
        kind: q.kind,
        rank: rankOf(await rerankTurns(q.text, turnsOf(lexical.handled[i])), q.gold),
      })
    }
    addRow("—", `lexical → sentence rerank@${RERANK_DEPTH}`, perQuery)
  }

  for (const name of which) {
    const make = embedders[name]
    if (make === undefined) throw new Error(`unknown embedder ${name}`)
    if (name === "voyage" && !process.env.VOYAGE_API_KEY) {
      console.log("(voyage skipped: VOYAGE_API_KEY is not set)")
      continue
    }
    const embedder = await Effect.runPromise(make())
    const started = performance.now()
    const backlog = await run(embedBacklog(embedder))
    const embedMs = performance.now() - started
    const vectorLists = []
    const queryStarted = performance.now()
    for (const q of queries) {
      const vector = await Effect.runPromise(embedder.embedQuery(q.text))
      const hits = await run(
        searchVectors({ vector, k: 100, fingerprint: embedder.info.fingerprint }),
      )
      vectorLists.push(hits.map((h) => h.chunkId))
    }
    const queryMs = (performance.now() - queryStarted) / queries.length
    const speed = `${backlog.embedded} texts in ${(embedMs / 1000).toFixed(1)} s (${Math.round(backlog.embedded / (embedMs / 1000))}/s); ${queryMs.toFixed(1)} ms/query`
    addRow(
      name,
      "vector",
      queries.map((q, i) => ({ kind: q.kind, rank: rankOf(turnsOf(vectorLists[i]), q.gold) })),
      speed,
    )
    const fusedTurns = (i, wl, wv) =>
      fuseRanks([
        { name: "lexical", weight: wl, ids: turnsOf(lexical.handled[i]) },
        { name: "vector", weight: wv, ids: turnsOf(vectorLists[i]) },
      ]).map((f) => f.id)
    for (const [wl, wv] of WEIGHTS) {
      addRow(
        name,
        `fused ${wl}:${wv}`,
        queries.map((q, i) => ({ kind: q.kind, rank: rankOf(fusedTurns(i, wl, wv), q.gold) })),
      )
    }
    for (const [wl, wv] of [
      [1, 1],
      [2, 1],
    ]) {
      const reranked = []
      const threeWay = []
      for (const [i, q] of queries.entries()) {
        const fused = fusedTurns(i, wl, wv)
        const order = await rerankTurns(q.text, fused)
        reranked.push({ kind: q.kind, rank: rankOf(order, q.gold) })
        const three = fuseRanks([
          { name: "lexical", weight: wl, ids: turnsOf(lexical.handled[i]) },
          { name: "vector", weight: wv, ids: turnsOf(vectorLists[i]) },
          { name: "rerank", weight: wl + wv, ids: order.slice(0, RERANK_DEPTH) },
        ]).map((f) => f.id)
        threeWay.push({ kind: q.kind, rank: rankOf(three, q.gold) })
      }
      addRow(name, `fused ${wl}:${wv} → sentence rerank@${RERANK_DEPTH}`, reranked)
      const pipeline = []
      const pipelineRerank = []
      for (const [i, q] of queries.entries()) {
        const fused = fuseRanks([
          { name: "lexical", weight: wl, ids: turnsOf(lexical.expanded[i]) },
          { name: "vector", weight: wv, ids: turnsOf(vectorLists[i]) },
        ]).map((f) => f.id)
        pipeline.push({ kind: q.kind, rank: rankOf(fused, q.gold) })
        const order = await rerankTurns(q.text, fused)
        const three = fuseRanks([
          { name: "lexical", weight: wl, ids: turnsOf(lexical.expanded[i]) },
          { name: "vector", weight: wv, ids: turnsOf(vectorLists[i]) },
          { name: "rerank", weight: wl + wv, ids: order.slice(0, RERANK_DEPTH) },
        ]).map((f) => f.id)
        pipelineRerank.push({ kind: q.kind, rank: rankOf(three, q.gold) })
      }
      addRow(name, `expanded lexical + vector ${wl}:${wv}`, pipeline)
      addRow(
        name,
        `expanded lexical + vector + rerank arm (${wl}:${wv}:${wl + wv})`,
        pipelineRerank,
      )
      addRow(name, `fused ${wl}:${wv} + rerank arm (${wl}:${wv}:${wl + wv})`, threeWay)
    }
    // The product: searchRecall with this embedder, the local reranker, the static expansion and
    // the embedded plan, k = 10, ranked by the turns of its hits as returned (what a caller sees).
    if (name !== "voyage") {
      const plans =
        process.env.EVAL_PLANS === undefined
          ? [EMBEDDED_FUSION_PLAN]
          : process.env.EVAL_PLANS.split(",").map((p) => {
              const [lexical, vector, rerank, rrfK = 60, context = 0] = p.split(":").map(Number)
              return { lexical, vector, rerank, rerankDepth: RERANK_DEPTH, rrfK, context }
            })
      for (const plan of plans) {
        const perQuery = []
        for (const q of queries) {
          const result = await run(
            searchRecall(
              {
                query: q.text,
                k: 10,
                ...(process.env.EVAL_PER_SESSION === undefined
                  ? {}
                  : { perSession: Number(process.env.EVAL_PER_SESSION) }),
              },
              {
                embedder,
                reranker,
                expandQuery: process.env.EVAL_NO_EXPANSION ? lexicalQuery : expand,
                fusion: plan,
              },
            ),
          )
          const hitTurns = result.hits.map((h) => turnOf.get(h.chunkId))
          const rank = rankOf(hitTurns, q.gold)
          perQuery.push({ kind: q.kind, rank })
          // EVAL_MISSES=1 lists the queries whose evidence turn is not in the top 5.
          if (process.env.EVAL_MISSES && (rank === null || rank > 5))
            console.log(`miss (${rank ?? "-"}) [${q.kind}] ${q.text}`)
        }
        addRow(
          name,
          `searchRecall ${plan.lexical}:${plan.vector}:${plan.rerank} rrf ${plan.rrfK}${plan.context ? ` context ${plan.context}` : ""} (k = 10, hits as returned)`,
          perQuery,
        )
      }
    }
    if (embedder.close) await Effect.runPromise(embedder.close())
  }
  console.log(
    `| embedder | arm | R@1 | R@5 | R@10 | MRR | ${kinds.map((kind) => `${kind} R@5 | `).join("")}cost |`,
  )
  console.log(`|${"---|".repeat(kinds.length + 7)}`)
  for (const r of rows) console.log(`| ${r.join(" | ")} |`)
} finally {
  rmSync(root, { recursive: true, force: true })
}

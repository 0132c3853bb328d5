// Recall pipeline benchmark: end-to-end latency (p50 / p95) of what an agent calls — searchRecall
// (lexical only, hybrid, hybrid + the embedded reranker, hybrid with repository and date
// filters), grepRecords (literal and regex), expandAround and recentSessions — over a
// deterministic synthetic history indexed and embedded with the static table (the `auto`
// default's choice for large histories; the pipeline is the same with USE-lite). Prints markdown.
// Env: BENCH_FILES (default 400), BENCH_EXCHANGES (default 20), BENCH_QUERIES (default 40).
import { Effect, Layer } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import {
  embedBacklog,
  embedderFromEnvironment,
  expandAround,
  grepRecords,
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
  recentSessions,
  searchRecall,
} from "@baton/recall-index"
import { generateBulkCorpus, seededRandom } from "@baton/recall-index/testing"

const files = Number(process.env.BENCH_FILES ?? 400)
const exchanges = Number(process.env.BENCH_EXCHANGES ?? 20)
const queryCount = Number(process.env.BENCH_QUERIES ?? 40)
const root = mkdtempSync(join(tmpdir(), "baton-recall-bench-"))
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const ms = (x) => `${x.toFixed(1)} ms`

try {
  const home = join(root, "home")
  const corpus = generateBulkCorpus({ homeDir: home, files, seed: 5, exchangesPerFile: exchanges })
  for (const [path, content] of Object.entries(corpus.files)) {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
  }
  const layers = Layer.mergeAll(
    recallDatabaseLayer({ dataDir: join(root, "data") }),
    nodeTranscriptFileSystemLayer,
    nodeIndexerProcessLayer,
  )
  const run = (effect) => Effect.runPromise(effect.pipe(Effect.provide(layers)))
  const configured = await Effect.runPromise(
    embedderFromEnvironment({ BATON_EMBEDDER: "use-static" }),
  )
  const started = performance.now()
  await run(
    indexTranscripts({
      environment: {
        env: { CLAUDE_CONFIG_DIR: `${home}/.claude`, CODEX_HOME: `${home}/.codex` },
        homeDir: home,
      },
    }),
  )
  const indexed = performance.now() - started
  const embedded = await run(embedBacklog(configured.embedder))
  const ready = performance.now() - started

  // Queries: 2–5 words drawn from the corpus vocabulary (the bulk generator's prose).
  const random = seededRandom(17)
  const words = [
    "retry",
    "ledger",
    "frost",
    "migration",
    "schema",
    "cache",
    "planner",
    "budget",
    "vector",
    "queue",
    "timeout",
    "replica",
    "webhook",
    "garden",
    "token",
    "index",
    "cursor",
    "shard",
  ]
  const queries = Array.from({ length: queryCount }, () =>
    Array.from({ length: random.int(2, 5) }, () => words[random.int(0, words.length - 1)]).join(
      " ",
    ),
  )
  const providers = {
    embedder: configured.embedder,
    expandQuery: configured.expandQuery,
    fusion: configured.fusion,
  }
  const scope = `${home}/code/project-3`
  const time = async (label, make) => {
    const samples = []
    let hits = 0
    for (const q of queries) {
      const t = performance.now()
      const out = await run(make(q))
      samples.push(performance.now() - t)
      hits += Array.isArray(out) ? out.length : (out.hits?.length ?? out.turns?.length ?? 0)
    }
    return [
      label,
      ms(percentile(samples, 50)),
      ms(percentile(samples, 95)),
      (hits / queries.length).toFixed(1),
    ]
  }
  const first = await run(searchRecall({ query: queries[0] }, providers))
  const anchor = first.hits[0]
  const rows = [
    await time("search, lexical only", (q) =>
      searchRecall({ query: q, arms: ["lexical"] }, providers),
    ),
    await time("search, vector only", (q) =>
      searchRecall({ query: q, arms: ["vector"] }, providers),
    ),
    await time("search, hybrid (no rerank)", (q) => searchRecall({ query: q }, providers)),
    await time("search, hybrid + sentence rerank (default plan)", (q) =>
      searchRecall({ query: q }, { ...providers, reranker: configured.reranker }),
    ),
    await time("search, hybrid, scope + date range", (q) =>
      searchRecall(
        {
          query: q,
          scopeCwd: scope,
          startDate: "2026-01-02",
          endDate: "2026-01-20",
          timezone: "UTC",
        },
        providers,
      ),
    ),
    await time("grep literal (case-insensitive)", (q) =>
      grepRecords({ pattern: q.split(" ")[0], limit: 100 }),
    ),
    await time("grep regex", (q) =>
      grepRecords({ pattern: `${q.split(" ")[0]}\\s+\\w+`, regex: true, limit: 100 }),
    ),
    // Found nowhere: the whole table is scanned. A literal is rejected by SQLite alone; a regex
    // with no literal run (`[qz]\d…`) has every record tested in JavaScript.
    await time("grep found nowhere, literal (whole table)", () =>
      grepRecords({ pattern: "zzqq-found-nowhere", limit: 100 }),
    ),
    await time("grep found nowhere, regex with no literal run (whole table)", () =>
      grepRecords({ pattern: "[qz]\\d[qz]\\d[qz]", regex: true, limit: 100 }),
    ),
    await time("expand_around (2 before, 2 after)", () =>
      expandAround({ sessionId: anchor.sessionId, turnId: anchor.turnId }),
    ),
    await time("recent_sessions (10)", () => recentSessions({ limit: 10 })),
  ]
  console.log(
    `\n### Recall pipeline (${files} files, ${corpus.messages} messages, ${embedded.total} chunks; indexed in ${(indexed / 1000).toFixed(1)} s, embedded in ${((ready - indexed) / 1000).toFixed(1)} s with ${configured.embedder.info.fingerprint})\n`,
  )
  console.log("| call | p50 | p95 | results |")
  console.log("| --- | --- | --- | --- |")
  for (const r of rows) console.log(`| ${r.join(" | ")} |`)
} finally {
  rmSync(root, { recursive: true, force: true })
}

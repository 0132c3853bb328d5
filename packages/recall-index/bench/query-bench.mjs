// Recall query benchmark: indexing with embedding (the static table, which the `auto` default
// picks for histories this size, and USE-lite on a sample), then, for each corpus size, query latency p50 / p95 for lexical (bm25), vector (exact
// int8 KNN, and the sign-bit first pass + int8 rescoring) and hybrid (both + weighted RRF, and
// the default plan through searchRecall: expansion and rerank, in one process with both arms in
// its thread, as the MCP server runs it, and as a fresh process per call like the CLI), plus the
// recall@10 of both against the float top 10 (brute-forced in memory).
// Every chunk is really embedded with the static table. Synthetic text: Zipf-distributed words of the
// static table's vocabulary. Prints markdown.
// Env: BENCH_CHUNKS (comma-separated sizes, default 100000; 1000000 takes ~10 minutes),
// BENCH_FILES (default 300), BENCH_QUERIES (default 60), BENCH_FRESH (fresh-process calls per
// size, default 10).
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  DEFAULT_POOL,
  DEFAULT_STATIC_TABLE_PATH,
  embedBacklog,
  embedderFromEnvironment,
  fuseRanks,
  indexTranscripts,
  lexicalQuery,
  makeRecallDatabasePool,
  makeUseLiteEmbedder,
  makeVectorSearchWorker,
  matchChunks,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  RecallDatabase,
  recallDatabaseLayer,
  searchRecall,
  searchVectors,
} from "@baton/recall-index"
import { generateBulkCorpus, seededRandom } from "@baton/recall-index/testing"
import peakRss from "./peak-rss.cjs"

const sizes = (process.env.BENCH_CHUNKS ?? "100000").split(",").map(Number)
const files = Number(process.env.BENCH_FILES ?? 300)
const queryCount = Number(process.env.BENCH_QUERIES ?? 60)
const freshCount = Number(process.env.BENCH_FRESH ?? 10)
const root = mkdtempSync(join(tmpdir(), "baton-query-bench-"))
const rows = []
const log = (line) => console.error(`[query-bench] ${line}`)
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const layersFor = (dataDir) =>
  Layer.mergeAll(
    recallDatabaseLayer({ dataDir }),
    nodeTranscriptFileSystemLayer,
    nodeIndexerProcessLayer,
  )

// Words of the shipped static table (its header is JSON after a 12-byte preamble).
const tableBytes = readFileSync(DEFAULT_STATIC_TABLE_PATH)
const headerLength = tableBytes.readUInt32LE(8)
const vocabulary = JSON.parse(tableBytes.subarray(12, 12 + headerLength).toString("utf8")).words
const random = seededRandom(5)
const shuffled = [...vocabulary].sort(() => random.next() - 0.5)
const zipfWord = () =>
  shuffled[
    Math.min(
      shuffled.length - 1,
      Math.floor(Math.exp(random.next() * Math.log(shuffled.length))) - 1,
    )
  ]
const sentence = (n) => Array.from({ length: n }, zipfWord).join(" ")

try {
  const { embedder, expandQuery, reranker, fusion } = await Effect.runPromise(
    embedderFromEnvironment({ BATON_EMBEDDER: "use-static" }),
  )
  const name = embedder.info.model

  log("index + embed")
  // 1. Index + embed throughput on transcripts (the real pipeline).
  {
    const home = join(root, "home")
    const corpus = generateBulkCorpus({ homeDir: home, files, seed: 3, exchangesPerFile: 10 })
    for (const [path, content] of Object.entries(corpus.files)) {
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, content)
    }
    const layers = layersFor(join(root, "pipeline"))
    const t0 = performance.now()
    const report = await Effect.runPromise(
      indexTranscripts({
        environment: {
          env: { CLAUDE_CONFIG_DIR: `${home}/.claude`, CODEX_HOME: `${home}/.codex` },
          homeDir: home,
        },
      }).pipe(Effect.provide(layers)),
    )
    const t1 = performance.now()
    const backlog = await Effect.runPromise(embedBacklog(embedder).pipe(Effect.provide(layers)))
    const t2 = performance.now()
    rows.push([
      `index ${files} files, no embedding (${report.chunksAdded} chunks)`,
      seconds(t1 - t0),
      `${Math.round(report.chunksAdded / ((t1 - t0) / 1000))} chunks/s`,
    ])
    rows.push([
      `index + embed with ${name} (auto's choice past AUTO_LIMITS)`,
      seconds(t2 - t0),
      `${Math.round(report.chunksAdded / ((t2 - t0) / 1000))} chunks/s; embedding alone ${Math.round(backlog.embedded / ((t2 - t1) / 1000))} texts/s (${backlog.embedded} distinct)`,
    ])
    // USE-lite on a sample (it is ~2 orders of magnitude slower).
    const use = makeUseLiteEmbedder()
    const sample = Array.from({ length: 200 }, () => sentence(random.int(20, 90)))
    await Effect.runPromise(use.embedDocuments(sample.slice(0, 8)))
    const t3 = performance.now()
    await Effect.runPromise(use.embedDocuments(sample))
    const t4 = performance.now()
    await Effect.runPromise(use.close())
    rows.push([
      "USE-lite, 200 texts of 20–90 words (1 worker, warm)",
      seconds(t4 - t3),
      `${(200 / ((t4 - t3) / 1000)).toFixed(1)} texts/s`,
    ])
  }

  // 2. Query latency over N chunks inserted directly (one synthetic session).
  for (const chunkCount of sizes) {
    log(`query latency over ${chunkCount} chunks`)
    const layers = layersFor(join(root, `query-${chunkCount}`))
    const insertMs = await Effect.runPromise(
      RecallDatabase.use((db) =>
        Effect.sync(() => {
          const t = performance.now()
          const s = db.sqlite
          s.prepare(
            "insert into files (id, path, source, role, compression, size, mtime_ms, inode, head_hash, status) values (1, '/bench.jsonl', 'claude', 'session', 'none', 0, 0, 0, '', 'indexed')",
          ).run()
          s.prepare(
            "insert into sessions (id, source, session_id, file_id) values (1, 'claude', 'bench', 1)",
          ).run()
          const turn = s.prepare(
            "insert into turns (id, session_row, file_id, turn_id, ordinal, role, start_offset, end_offset) values (?, 1, 1, ?, ?, 'assistant', 0, 0)",
          )
          const chunk = s.prepare(
            "insert into chunks (turn_row, surface_index, chunk_index, role, char_start, char_end, text, content_hash, needs_embedding) values (?, 0, 0, 'assistant', 0, ?, ?, ?, 1)",
          )
          for (let at = 1; at <= chunkCount; at += 50_000) {
            s.transaction(() => {
              for (let i = at; i < at + 50_000 && i <= chunkCount; i++) {
                const text = Array.from(
                  { length: random.int(2, 6) },
                  () => `${sentence(random.int(6, 18))}.`,
                ).join(" ")
                turn.run(i, `t${i}`, i)
                chunk.run(i, text.length, text, `h${i}`)
              }
            })()
          }
          return performance.now() - t
        }),
      ).pipe(Effect.provide(layers)),
    )
    const t0 = performance.now()
    const backlog = await Effect.runPromise(
      embedBacklog(embedder, { batchSize: 1024 }).pipe(Effect.provide(layers)),
    )
    const embedMs = performance.now() - t0
    rows.push([`insert ${chunkCount} chunks (FTS triggers)`, seconds(insertMs), ""])
    rows.push([
      `embed ${chunkCount} chunks with ${name}`,
      seconds(embedMs),
      `${Math.round(backlog.embedded / (embedMs / 1000))} texts/s`,
    ])
    const queries = Array.from(
      { length: queryCount },
      () => `how did we handle ${sentence(random.int(2, 5))}`,
    )
    const fingerprint = embedder.info.fingerprint
    const time = async (effect) => {
      const t = performance.now()
      const out = await Effect.runPromise(effect.pipe(Effect.provide(layers)))
      return { ms: performance.now() - t, out }
    }
    const measure = async (label, run) => {
      await run(queries[0]) // warm
      const ms = []
      for (const q of queries) ms.push((await run(q)).ms)
      rows.push([
        `${label}, ${chunkCount} chunks`,
        `p50 ${percentile(ms, 50).toFixed(1)} ms`,
        `p95 ${percentile(ms, 95).toFixed(1)} ms`,
      ])
    }
    const vector = (q, mode) =>
      time(
        embedder
          .embedQuery(q)
          .pipe(Effect.flatMap((v) => searchVectors({ vector: v, k: 100, fingerprint, mode }))),
      )
    const lexical = (q) => time(matchChunks(lexicalQuery(q), { limit: 100, mode: "any" }))
    await measure("lexical (bm25, 100 hits)", lexical)
    await measure("vector, exact int8 KNN (k = 100)", (q) => vector(q, "exact"))
    await measure(
      `vector, sign-bit pass (pool ${DEFAULT_POOL}) + int8 rescoring (k = 100, default)`,
      (q) => vector(q, "auto"),
    )
    await measure("hybrid (lexical + vector + RRF 2:1)", async (q) => {
      const t = performance.now()
      const [l, v] = [await lexical(q), await vector(q, "auto")]
      fuseRanks([
        { name: "lexical", weight: 2, ids: l.out.map((m) => m.chunkId) },
        { name: "vector", weight: 1, ids: v.out.map((h) => h.chunkId) },
      ])
      return { ms: performance.now() - t }
    })
    // The whole pipeline an agent calls: searchRecall in this process with both arms in this
    // thread (a connection opened per call; the library's default without a worker) and as the
    // MCP server runs it (one connection kept per database file, the vector arm in a worker).
    const providers = { embedder, expandQuery, reranker, fusion }
    const search = (q) => searchRecall({ query: q, timezone: "UTC" }, providers)
    await measure(
      `hybrid, searchRecall default plan (expanded lexical + vector + sentence rerank@${fusion.rerankDepth}, ${fusion.lexical}:${fusion.vector}:${fusion.rerank}, RRF k ${fusion.rrfK ?? 60}, context ${fusion.context ?? 0}), in-process, both arms in one thread`,
      (q) => time(search(q)),
    )
    const worker = makeVectorSearchWorker()
    const connections = makeRecallDatabasePool()
    const kept = connections.layer({ dataDir: join(root, `query-${chunkCount}`) })
    await measure(
      "hybrid, searchRecall default plan, MCP server (kept connection, vector arm in a worker)",
      async (q) => {
        const t = performance.now()
        await Effect.runPromise(
          searchRecall({ query: q, timezone: "UTC" }, { ...providers, vectorWorker: worker }).pipe(
            Effect.provide(kept),
          ),
        )
        return { ms: performance.now() - t }
      },
    )
    await Effect.runPromise(worker.close())
    await Effect.runPromise(connections.close())
    // A whole `baton recall search` as a fresh process pays: Node and module loading, the
    // embedder's table, a cold segment read in the worker, and the search.
    {
      const script = fileURLToPath(new URL("./fresh-process.mjs", import.meta.url))
      const dir = join(root, `query-${chunkCount}`)
      const ms = []
      for (const q of queries.slice(0, freshCount)) {
        const t = performance.now()
        execFileSync(process.execPath, [script, "search", dir, q])
        ms.push(performance.now() - t)
      }
      rows.push([
        `hybrid, searchRecall default plan, fresh process per call (as the CLI), ${chunkCount} chunks, ${ms.length} calls`,
        `p50 ${percentile(ms, 50).toFixed(1)} ms`,
        `p95 ${percentile(ms, 95).toFixed(1)} ms`,
      ])
    }
    // The float truth: the index keeps int8 values only, so every chunk is embedded again here
    // and the float top 10 of each query brute-forced in memory.
    const chunkRows = await Effect.runPromise(
      RecallDatabase.use((db) =>
        Effect.sync(() => db.sqlite.prepare("select id, text from chunks order by id").raw().all()),
      ).pipe(Effect.provide(layers)),
    )
    const dim = embedder.info.dim
    const floats = new Float32Array(chunkRows.length * dim)
    for (let at = 0; at < chunkRows.length; at += 1024) {
      const vs = await Effect.runPromise(
        embedder.embedDocuments(chunkRows.slice(at, at + 1024).map((r) => r[1])),
      )
      vs.forEach((v, i) => floats.set(v, (at + i) * dim))
    }
    const floatTop10 = (v) => {
      const best = []
      for (let i = 0; i < chunkRows.length; i++) {
        let dot = 0
        for (let j = 0, o = i * dim; j < dim; j++) dot += v[j] * floats[o + j]
        if (best.length < 10 || dot > best[best.length - 1][1]) {
          best.push([chunkRows[i][0], dot])
          best.sort((a, b) => b[1] - a[1])
          if (best.length > 10) best.pop()
        }
      }
      return best.map(([id]) => id)
    }
    const truths = []
    for (const q of queries)
      truths.push(floatTop10(await Effect.runPromise(embedder.embedQuery(q))))
    const recallOf = (hits, truth) => {
      const got = new Set(hits.map((h) => h.chunkId))
      return truth.filter((id) => got.has(id)).length / Math.max(1, truth.length)
    }
    // Recall@10 of the exact int8 KNN and of the first pass + rescoring (per pool size) against
    // the float top 10.
    {
      let overlap = 0
      for (const [i, q] of queries.entries()) {
        const v = await Effect.runPromise(embedder.embedQuery(q))
        const e = await time(searchVectors({ vector: v, k: 10, fingerprint, mode: "exact" }))
        overlap += recallOf(e.out, truths[i])
      }
      rows.push([
        `exact int8 KNN recall@10 vs float, ${chunkCount} chunks`,
        `${((100 * overlap) / queries.length).toFixed(1)} %`,
        "",
      ])
    }
    for (const pool of [250, 500, DEFAULT_POOL, 2000]) {
      let overlap = 0
      const ms = []
      for (const [i, q] of queries.entries()) {
        const v = await Effect.runPromise(embedder.embedQuery(q))
        const b = await time(searchVectors({ vector: v, k: 10, fingerprint, pool }))
        ms.push(b.ms)
        overlap += recallOf(b.out, truths[i])
      }
      rows.push([
        `first pass recall@10 vs float, pool ${pool}, ${chunkCount} chunks`,
        `${((100 * overlap) / queries.length).toFixed(1)} %`,
        `p50 ${percentile(ms, 50).toFixed(1)} ms`,
      ])
    }
  }

  rows.push(["peak RSS", `${peakRss.peakRssMb()} MB`, ""])
} finally {
  rmSync(root, { recursive: true, force: true })
}

console.log("\n| recall query bench | time | detail |\n|---|---|---|")
for (const r of rows) console.log(`| ${r.join(" | ")} |`)

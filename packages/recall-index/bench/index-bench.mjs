// Recall indexing benchmark: lexical indexing throughput (no embedding), no-change rescan of N
// files, and appending one turn to a large file. Deterministic synthetic corpus; prints markdown.
// Env: BENCH_FILES (default 2000), BENCH_BIG_MB (default 50), BENCH_EXCHANGES (default 10).
import { Effect, Layer } from "effect"
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import {
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
} from "@baton/recall-index"
import { claudeExchange, generateBulkCorpus, seededRandom } from "@baton/recall-index/testing"

const files = Number(process.env.BENCH_FILES ?? 2000)
const bigMb = Number(process.env.BENCH_BIG_MB ?? 50)
const exchanges = Number(process.env.BENCH_EXCHANGES ?? 10)
const root = mkdtempSync(join(tmpdir(), "baton-recall-bench-"))

const run = (dataDir, home) => {
  const started = performance.now()
  return Effect.runPromise(
    indexTranscripts({
      environment: {
        env: { CLAUDE_CONFIG_DIR: `${home}/.claude`, CODEX_HOME: `${home}/.codex` },
        homeDir: home,
      },
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          recallDatabaseLayer({ dataDir }),
          nodeTranscriptFileSystemLayer,
          nodeIndexerProcessLayer,
        ),
      ),
    ),
  ).then((report) => ({ report, ms: performance.now() - started }))
}

const write = (tree) => {
  let bytes = 0
  for (const [path, content] of Object.entries(tree)) {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
    bytes += Buffer.byteLength(content)
  }
  return bytes
}

const rows = []
const mb = (b) => b / (1 << 20)
try {
  // 1. Full lexical index of N files, then a no-change rescan.
  const home = join(root, "home")
  const corpus = generateBulkCorpus({ homeDir: home, files, seed: 1, exchangesPerFile: exchanges })
  const bytes = write(corpus.files)
  const full = await run(join(root, "data"), home)
  rows.push([
    `full index, ${files} files (${mb(bytes).toFixed(1)} MB, ${corpus.messages} messages)`,
    `${(full.ms / 1000).toFixed(2)} s`,
    `${(mb(bytes) / (full.ms / 1000)).toFixed(1)} MB/s, ${Math.round(corpus.messages / (full.ms / 1000))} messages/s`,
  ])
  const rescan = await run(join(root, "data"), home)
  rows.push([
    `no-change rescan, ${files} files`,
    `${rescan.ms.toFixed(0)} ms`,
    `${rescan.report.unchanged} unchanged, ${rescan.report.bytesRead} bytes parsed`,
  ])

  // 2. One large file, then one appended turn.
  const bigHome = join(root, "big-home")
  const random = seededRandom(2)
  const session = { sessionId: "0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c", cwd: "/bench/big" }
  const bigPath = join(bigHome, ".claude", "projects", "-bench-big", `${session.sessionId}.jsonl`)
  mkdirSync(dirname(bigPath), { recursive: true })
  writeFileSync(bigPath, "")
  const parts = []
  let size = 0
  let t = Date.UTC(2026, 0, 1)
  while (size < bigMb * (1 << 20)) {
    const piece = claudeExchange(random, session, (t += 60_000), 1500)
    parts.push(piece)
    size += Buffer.byteLength(piece)
    if (parts.length === 200) appendFileSync(bigPath, parts.splice(0).join(""))
  }
  appendFileSync(bigPath, parts.join(""))
  const bigFull = await run(join(root, "big-data"), bigHome)
  rows.push([
    `index one ${mb(statSync(bigPath).size).toFixed(0)} MB file`,
    `${(bigFull.ms / 1000).toFixed(2)} s`,
    `${(mb(statSync(bigPath).size) / (bigFull.ms / 1000)).toFixed(1)} MB/s`,
  ])
  appendFileSync(bigPath, claudeExchange(random, session, (t += 60_000), 800))
  const append = await run(join(root, "big-data"), bigHome)
  rows.push([
    `append one turn to the ${bigMb} MB file`,
    `${append.ms.toFixed(0)} ms`,
    `${append.report.appended} appended, ${append.report.bytesRead} bytes parsed`,
  ])
  rows.push(["peak RSS", `${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`, ""])
} finally {
  rmSync(root, { recursive: true, force: true })
}

console.log("\n| recall-index bench | time | detail |\n|---|---|---|")
for (const r of rows) console.log(`| ${r.join(" | ")} |`)

// Recall indexing benchmark: lexical indexing throughput (no embedding), then embedding the
// backlog with the static table (what the `auto` default picks at this size), no-change rescan of
// N files, appending one turn to a large file, and peak RSS of a fresh process per call (search,
// rescan, and the real CLI indexing the large file). Deterministic synthetic corpus; prints
// markdown. The size is BENCH_FILES=10000 BENCH_EXCHANGES=50 (10 k sessions, 1 M
// messages, ~1.5 GB, ~10 minutes); the default is a fifth of it.
// Env: BENCH_FILES (default 2000), BENCH_BIG_MB (default 50), BENCH_EXCHANGES (default 50).
// A second corpus has real coding sessions' shape, where tool output (file reads) is most of the
// bytes: BENCH_TOOL_FILES (default 400) files whose tool results are source listings of
// BENCH_TOOL_CHARS (default 8000) characters on average; only its lexical index is timed. A third
// is what the real agents write: the testkit's four transcripts from the pinned codex and claude
// binaries (against the loopback mock), BENCH_REAL_COPIES (default 400; 0 skips it) copies each.
import { Effect, Layer } from "effect"
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import {
  embedBacklog,
  embedderFromEnvironment,
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
} from "@baton/recall-index"
import { claudeExchange, generateBulkCorpus, seededRandom } from "@baton/recall-index/testing"
import peakRss from "./peak-rss.cjs"

const files = Number(process.env.BENCH_FILES ?? 2000)
const bigMb = Number(process.env.BENCH_BIG_MB ?? 50)
const exchanges = Number(process.env.BENCH_EXCHANGES ?? 50)
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
  const { embedder } = await Effect.runPromise(
    embedderFromEnvironment({ BATON_EMBEDDER: "use-static" }),
  )
  const embedStarted = performance.now()
  const embedded = await Effect.runPromise(
    embedBacklog(embedder).pipe(
      Effect.provide(
        Layer.mergeAll(
          recallDatabaseLayer({ dataDir: join(root, "data") }),
          nodeIndexerProcessLayer,
        ),
      ),
    ),
  )
  const embedMs = performance.now() - embedStarted
  rows.push([
    `embed the backlog with use-static (auto's choice at this size; ${embedded.embedded} distinct texts of ${embedded.total} chunks)`,
    `${(embedMs / 1000).toFixed(2)} s`,
    `${Math.round(embedded.embedded / (embedMs / 1000))} texts/s; index + embed ${(mb(bytes) / ((full.ms + embedMs) / 1000)).toFixed(1)} MB/s, ${Math.round(corpus.messages / ((full.ms + embedMs) / 1000))} messages/s`,
  ])
  const rescan = await run(join(root, "data"), home)
  rows.push([
    `no-change rescan, ${files} files`,
    `${rescan.ms.toFixed(0)} ms`,
    `${rescan.report.unchanged} unchanged, ${rescan.report.bytesRead} bytes parsed`,
  ])
  // Fresh processes, as CLI calls run: search and a no-change index + embed.
  const fresh = (...args) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [fileURLToPath(new URL("./fresh-process.mjs", import.meta.url)), ...args],
        {
          encoding: "utf8",
        },
      ),
    )
  for (const [label, args] of [
    [
      "search (hybrid + rerank)",
      ["search", join(root, "data"), "how did we handle the retry policy for flaky uploads"],
    ],
    ["index + embed, nothing changed", ["index", join(root, "data"), home]],
  ]) {
    const r = fresh(...args)
    rows.push([
      `fresh process: ${label}, ${files} files indexed`,
      `${r.ms} ms`,
      `peak RSS ${r.maxRssMb} MB`,
    ])
  }

  // 2. The coding-session shape: the same exchanges, each tool result a source listing.
  const toolFiles = Number(process.env.BENCH_TOOL_FILES ?? 400)
  const toolChars = Number(process.env.BENCH_TOOL_CHARS ?? 8000)
  const toolHome = join(root, "tool-home")
  const toolCorpus = generateBulkCorpus({
    homeDir: toolHome,
    files: toolFiles,
    seed: 4,
    exchangesPerFile: exchanges,
    toolOutputChars: toolChars,
  })
  const toolBytes = write(toolCorpus.files)
  const toolFull = await run(join(root, "tool-data"), toolHome)
  rows.push([
    `full index, ${toolFiles} files with file-read tool output (mean ${toolChars} chars; ${mb(toolBytes).toFixed(1)} MB, ${toolCorpus.messages} messages)`,
    `${(toolFull.ms / 1000).toFixed(2)} s`,
    `${(mb(toolBytes) / (toolFull.ms / 1000)).toFixed(1)} MB/s, ${Math.round(toolCorpus.messages / (toolFull.ms / 1000))} messages/s`,
  ])
  rmSync(join(root, "tool-home"), { recursive: true, force: true })
  rmSync(join(root, "tool-data"), { recursive: true, force: true })

  // 3. The real agents' shape: the four transcripts the pinned codex and claude binaries write
  // for the testkit corpus (harness attachments, request records, session metadata: the
  // conversation is a few percent of the bytes), each copied BENCH_REAL_COPIES times under new
  // session ids.
  const realCopies = Number(process.env.BENCH_REAL_COPIES ?? 400)
  if (realCopies > 0) {
    const { buildCorpus } = await import("@baton/testkit")
    const real = await buildCorpus()
    const realHome = join(root, "real-home")
    const tree = {}
    try {
      for (const [n, session] of real.sessions.entries()) {
        const text = readFileSync(session.path, "utf8")
        for (let i = 0; i < realCopies; i++) {
          const id = `${session.sessionId.slice(0, 24)}${(i * real.sessions.length + n).toString(16).padStart(12, "0")}`
          const copy = text.split(session.sessionId).join(id)
          const path =
            session.spec.agent === "claude"
              ? join(realHome, ".claude", "projects", `-bench-real-${i % 20}`, `${id}.jsonl`)
              : join(
                  realHome,
                  ".codex",
                  "sessions",
                  "2026",
                  "01",
                  String(1 + (i % 28)).padStart(2, "0"),
                  basename(session.path).split(session.sessionId).join(id),
                )
          tree[path] = copy
        }
      }
    } finally {
      await real.dispose()
    }
    const realBytes = write(tree)
    const realFull = await run(join(root, "real-data"), realHome)
    rows.push([
      `full index, ${Object.keys(tree).length} transcripts shaped like the real agents' (${mb(realBytes).toFixed(1)} MB, ${realFull.report.turnsAdded} turns)`,
      `${(realFull.ms / 1000).toFixed(2)} s`,
      `${(mb(realBytes) / (realFull.ms / 1000)).toFixed(1)} MB/s`,
    ])
    rmSync(realHome, { recursive: true, force: true })
    rmSync(join(root, "real-data"), { recursive: true, force: true })
  }

  // 4. One large file, then one appended turn.
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
  // The same file indexed by the real CLI (`baton recall index`, no embedding) in a fresh process:
  // its peak RSS is what a user's first index of a long session costs.
  const rssFile = join(root, "cli-max-rss")
  const cliStarted = performance.now()
  execFileSync(
    process.execPath,
    [
      "-r",
      fileURLToPath(new URL("./print-max-rss.cjs", import.meta.url)),
      fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url)),
      "recall",
      "index",
      "--json",
    ],
    {
      env: {
        ...process.env,
        HOME: bigHome,
        CLAUDE_CONFIG_DIR: join(bigHome, ".claude"),
        CODEX_HOME: join(bigHome, ".codex"),
        BATON_DATA_DIR: join(root, "big-cli-data"),
        BATON_EMBEDDER: "none",
        BENCH_MAX_RSS_FILE: rssFile,
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  )
  rows.push([
    `fresh process: \`baton recall index\` of the ${mb(statSync(bigPath).size).toFixed(0)} MB file, no embedding`,
    `${((performance.now() - cliStarted) / 1000).toFixed(2)} s`,
    `peak RSS ${readFileSync(rssFile, "utf8")} MB`,
  ])
  // Five appends, each indexed by its own run (the median is reported: a run has fixed costs).
  const appends = []
  for (let i = 0; i < 5; i++) {
    appendFileSync(bigPath, claudeExchange(random, session, (t += 60_000), 800))
    appends.push(await run(join(root, "big-data"), bigHome))
  }
  appends.sort((a, b) => a.ms - b.ms)
  const append = appends[2]
  rows.push([
    `append one turn to the ${bigMb} MB file (median of 5 runs)`,
    `${append.ms.toFixed(0)} ms`,
    `${append.report.appended} appended, ${append.report.bytesRead} bytes parsed; min ${appends[0].ms.toFixed(0)} / max ${appends[4].ms.toFixed(0)} ms`,
  ])
  rows.push(["peak RSS", `${peakRss.peakRssMb()} MB`, ""])
} finally {
  rmSync(root, { recursive: true, force: true })
}

console.log("\n| recall-index bench | time | detail |\n|---|---|---|")
for (const r of rows) console.log(`| ${r.join(" | ")} |`)

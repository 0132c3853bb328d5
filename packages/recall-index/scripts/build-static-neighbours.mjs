// Precomputes the nearest words of every word of the static table (query expansion reads them
// instead of scanning 15 000 × 512 int8 values per query word). Writes
// assets/use-lite-static.neighbours.bin next to the table; the runtime checks the table digest
// and falls back to the scan when the file is missing or stale. Two worker threads, ~2 minutes.
//
// Usage (after `npx tsc -b packages/recall-index`):
//   node packages/recall-index/scripts/build-static-neighbours.mjs [--per-word 8] [--min 0.5]
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import { decodeStaticTable, encodeNeighbourTable } from "../dist/embedders/static-word-table.js"

const here = dirname(fileURLToPath(import.meta.url))
const tablePath = join(here, "..", "assets", "use-lite-static.bin")
const outPath = join(here, "..", "assets", "use-lite-static.neighbours.bin")

/** Nearest `perWord` rows of rows [from, to), similarity ≥ min; best first, ties by row. */
const nearestRows = (table, from, to, perWord, min) => {
  const { dim, words } = table.header
  const v = table.vectors
  const s = table.scales
  const out = []
  for (let row = from; row < to; row++) {
    const best = []
    const base = row * dim
    for (let r = 0; r < words.length; r++) {
      if (r === row) continue
      const other = r * dim
      let dot = 0
      for (let i = 0; i < dim; i++) dot += v[base + i] * v[other + i]
      const sim = dot * s[row] * s[r]
      if (sim < min) continue
      best.push([sim, r])
    }
    best.sort((a, b) => b[0] - a[0] || a[1] - b[1])
    out.push(best.slice(0, perWord))
  }
  return out
}

if (isMainThread) {
  const arg = (name, fallback) => {
    const at = process.argv.indexOf(`--${name}`)
    return at === -1 ? fallback : process.argv[at + 1]
  }
  const perWord = Number(arg("per-word", "8"))
  const min = Number(arg("min", "0.5"))
  const table = decodeStaticTable(readFileSync(tablePath))
  if (typeof table === "string") throw new Error(table)
  const count = table.header.words.length
  const workers = 2
  const step = Math.ceil(count / workers)
  const parts = await Promise.all(
    Array.from(
      { length: workers },
      (_, w) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(fileURLToPath(import.meta.url), {
            workerData: { from: w * step, to: Math.min(count, (w + 1) * step), perWord, min },
          })
          worker.once("message", resolve)
          worker.once("error", reject)
        }),
    ),
  )
  const rows = parts.flat()
  const indices = new Uint16Array(count * perWord).fill(0xffff)
  const similarities = new Float32Array(count * perWord)
  rows.forEach((near, row) =>
    near.forEach(([sim, r], j) => {
      indices[row * perWord + j] = r
      similarities[row * perWord + j] = sim
    }),
  )
  writeFileSync(
    outPath,
    encodeNeighbourTable({
      tableDigest: table.digest,
      perWord,
      minSimilarity: min,
      indices,
      similarities,
    }),
  )
  console.log(`wrote ${outPath}: ${count} words × ${perWord} neighbours (similarity ≥ ${min})`)
} else {
  const table = decodeStaticTable(readFileSync(tablePath))
  const { from, to, perWord, min } = workerData
  parentPort.postMessage(nearestRows(table, from, to, perWord, min))
}

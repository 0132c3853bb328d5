// Startup benchmark for the `baton` CLI and its MCP server, printed as a markdown table.
// Each run spawns a fresh `node` process (cold process, warm file cache: one unrecorded
// warm-up run primes it). No assertions: numbers are for reading and comparing.
//   node bench/startup.mjs            (after `npx tsc -b`; also `pnpm bench` at the root)
import { spawn } from "node:child_process"
import { cpus, loadavg } from "node:os"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url))

const run = (args, onStdout) =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] })
    let marked
    child.stdout.setEncoding("utf8")
    if (onStdout) onStdout(child, () => (marked = performance.now() - started))
    else child.stdout.resume()
    child.on("error", reject)
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${args.join(" ")} exited with ${code}`))
      else resolve({ total: performance.now() - started, marked })
    })
    if (!onStdout) child.stdin.end()
  })

const message = (value) => `${JSON.stringify(value)}\n`

// spawn → initialize → initialized → tools/list → close stdin; the mark is the tools/list answer.
const mcpSession = (child, mark) => {
  let buffer = ""
  child.stdin.write(
    message({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "0" },
      },
    }),
  )
  child.stdout.on("data", (chunk) => {
    buffer += chunk
    let newline
    while ((newline = buffer.indexOf("\n")) !== -1) {
      const response = JSON.parse(buffer.slice(0, newline))
      buffer = buffer.slice(newline + 1)
      if (response.id === 1) {
        child.stdin.write(message({ jsonrpc: "2.0", method: "notifications/initialized" }))
        child.stdin.write(message({ jsonrpc: "2.0", id: 2, method: "tools/list" }))
      } else if (response.id === 2) {
        if (!Array.isArray(response.result?.tools)) throw new Error("tools/list returned no tools")
        mark()
        child.stdin.end()
      }
    }
  })
}

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]

const measure = async (label, runs, once) => {
  await once()
  const times = []
  for (let i = 0; i < runs; i += 1) times.push(await once())
  times.sort((a, b) => a - b)
  return {
    label,
    runs,
    min: times[0],
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    max: times.at(-1),
  }
}

const rows = [
  await measure("node -e 0 (baseline)", 20, async () => (await run(["-e", "0"])).total),
  await measure("baton --version", 20, async () => (await run([bin, "--version"])).total),
  await measure("baton --help", 20, async () => (await run([bin, "--help"])).total),
  await measure(
    "baton mcp: spawn → initialize → tools/list",
    10,
    async () => (await run([bin, "mcp"], mcpSession)).marked,
  ),
  await measure(
    "baton mcp: … → close stdin → exit",
    10,
    async () => (await run([bin, "mcp"], mcpSession)).total,
  ),
]

const ms = (value) => value.toFixed(1)
const lines = [
  `baton startup — node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} cores, load average ${loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")} (wall-clock times vary with load)`,
  "",
  "| measurement | runs | min ms | p50 ms | p95 ms | max ms |",
  "|---|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) => `| ${r.label} | ${r.runs} | ${ms(r.min)} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.max)} |`,
  ),
]
process.stdout.write(`${lines.join("\n")}\n`)

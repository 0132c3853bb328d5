#!/usr/bin/env node
// Benchmarks for @baton/wake, printed as markdown tables (run: pnpm --filter @baton/wake bench).
// - capsule projection of a 200 KiB checkpoint (parse + project + clip to ≤ 8 KiB), in process;
// - the real `baton wake watch` while idle: its CPU time and RSS (and those of the private
//   `codex app-server` it keeps for quota reads) over a window, with 10 jobs waiting for quota on
//   a simulated ChatGPT sign-in, at the default cadence and at a 1 s test cadence;
// - allowed → launched: from the mock backend answering `allowed: true` to the watcher's
//   `launched` event and to the continuation's first model request (pinned codex 0.169.0).
// Uses dist/ of wake, cli and testkit (the bench script depends on build). Numbers only.
import { spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { performance } from "node:perf_hooks"
import { Effect } from "effect"
import { parseCheckpoint, projectCapsule, makeJobStore, nodeWakeFileSystem } from "../dist/index.js"
import {
  createCodexHome,
  resolveCodexBinary,
  startMockResponses,
  textReply,
  usageAllowanceAnswer,
} from "@baton/testkit"

const CLI = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))
const PROJECTION_RUNS = Number(process.env.BENCH_PROJECTION_RUNS ?? 200)
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30)
const LAUNCH_RUNS = Number(process.env.BENCH_LAUNCH_RUNS ?? 5)

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
const stats = (samples) => {
  const s = [...samples].sort((a, b) => a - b)
  return { n: s.length, p50: quantile(s, 0.5), p95: quantile(s, 0.95), max: s.at(-1) }
}
const fmt = (v) => (v === undefined || v === null ? "—" : v < 10 ? v.toFixed(2) : v.toFixed(0))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// 1. Projection -------------------------------------------------------------------------------

const bigCheckpoint = () => {
  const facts = []
  const decisions = []
  const render = () =>
    [
      "# Wake checkpoint",
      "",
      "## Objective",
      "Port the parser to the new grammar and keep every existing test green.",
      "",
      "## Current position",
      "- Grammar ported; two failures left in the error-recovery tests.",
      "",
      "## Verified facts",
      ...facts,
      "",
      "## Decisions / do not repeat",
      ...decisions,
      "",
      "## Next actions",
      "1. Fix the two error-recovery failures.",
      "2. Run the whole suite.",
      "",
    ].join("\n")
  // Grow until the checkpoint is 200 KiB: two facts for every decision.
  for (let i = 0; Buffer.byteLength(render()) < 200 * 1024; i++) {
    facts.push(
      `- Verified ${i}: \`pnpm test packages/parser\` passed ${i} cases after the grammar change.`,
    )
    if (i % 2 === 0)
      decisions.push(
        `- Decision ${i}: keep recursive descent; approach ${i} was abandoned (2x allocations).`,
      )
  }
  return render()
}

const projection = () => {
  const text = bigCheckpoint()
  const samples = []
  let capsule
  for (let i = 0; i < PROJECTION_RUNS; i++) {
    const t0 = performance.now()
    const { checkpoint } = parseCheckpoint(text)
    capsule = projectCapsule({
      jobId: "wake-20250131-120000-0123abcd",
      checkpoint,
      checkpointText: text,
    })
    samples.push(performance.now() - t0)
  }
  return { inputBytes: Buffer.byteLength(text), capsuleBytes: capsule.bytes, ...stats(samples) }
}

// Shared rig ----------------------------------------------------------------------------------

const CHECKPOINT = "## Objective\nWrite hello.txt\n\n## Next actions\n1. Write it.\n"
const ACCOUNT = { accountId: "acct-bench", userId: "user-bench" }

const rig = async (allowed) => {
  const mock = await startMockResponses({ whamUsage: usageAllowanceAnswer(allowed, ACCOUNT) })
  const home = await createCodexHome({ mock, chatgptAuth: ACCOUNT })
  const wakeDir = join(home.codexHome, "baton", "wake")
  const env = {
    ...home.env,
    BATON_WAKE_DIR: wakeDir,
    BATON_CODEX_BINARY: resolveCodexBinary().native,
  }
  const baton = (args, input = "") =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { env, cwd: home.workdir })
      let out = ""
      child.stdout.on("data", (d) => (out += d))
      child.on("close", (code) => resolve({ code, out }))
      child.stdin.end(input)
    })
  const jobs = async (n) => {
    const ids = []
    for (let i = 0; i < n; i++) {
      const created = JSON.parse(
        (await baton(["wake", "create", "--objective", "bench", "--json"])).out,
      )
      await baton(["wake", "checkpoint", created.jobId, "--file", "-"], CHECKPOINT)
      await baton(["wake", "arm", created.jobId])
      ids.push(created.jobId)
    }
    return ids
  }
  const watch = (limits) => {
    const args = [
      CLI,
      "wake",
      "watch",
      "--json",
      ...(limits ? ["--limits", JSON.stringify(limits)] : []),
    ]
    const child = spawn(process.execPath, args, { env, cwd: home.workdir, detached: true })
    const events = []
    let partial = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      const lines = (partial + chunk).split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) {
        try {
          events.push({ ...JSON.parse(line), seenAt: Date.now() })
        } catch {}
      }
    })
    return { child, events }
  }
  const store = makeJobStore(wakeDir, nodeWakeFileSystem, process.pid)
  const readJob = async (id) => (await Effect.runPromise(store.read(id))).job
  const dispose = async () => {
    await home.dispose()
    await mock.close()
  }
  return { mock, home, env, baton, jobs, watch, readJob, dispose }
}

const waitUntil = async (check, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const value = await check()
    if (value) return value
    await sleep(50)
  }
  throw new Error("bench: timed out")
}

const procStat = async (pid) => {
  const text = await readFile(`/proc/${pid}/stat`, "utf8")
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { ticks: Number(f[11]) + Number(f[12]) }
}
const rssKiB = async (pid) =>
  Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN)
const childrenOf = async (pid) => {
  try {
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8")
    return text.trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

// 2. Idle watcher -----------------------------------------------------------------------------

const idle = async (label, limits) => {
  const r = await rig(false)
  try {
    const ids = await r.jobs(10)
    const w = r.watch(limits)
    await waitUntil(async () => (await r.readJob(ids[0])).state === "quota_waiting")
    await sleep(2_000)
    const pids = [w.child.pid, ...(await childrenOf(w.child.pid))]
    const before = await Promise.all(pids.map(procStat))
    const readsBefore = r.mock
      .backendRequests()
      .filter((q) => q.path.endsWith("/wham/usage")).length
    const t0 = performance.now()
    await sleep(IDLE_SECONDS * 1000)
    const seconds = (performance.now() - t0) / 1000
    const after = await Promise.all(pids.map(procStat))
    const rss = await Promise.all(pids.map(rssKiB))
    const reads =
      r.mock.backendRequests().filter((q) => q.path.endsWith("/wham/usage")).length - readsBefore
    const models = r.mock.requests().length
    w.child.kill("SIGTERM")
    const hz = 100
    const cpu = (i) => ((after[i].ticks - before[i].ticks) / hz / seconds) * 100
    return {
      label,
      watcherCpu: cpu(0),
      appServerCpu: pids.length > 1 ? cpu(1) : null,
      watcherRss: rss[0] / 1024,
      appServerRss: pids.length > 1 ? rss[1] / 1024 : null,
      reads,
      models,
      seconds,
    }
  } finally {
    await r.dispose()
  }
}

// 3. allowed → launched -------------------------------------------------------------------------

const launchDelay = async () => {
  const launched = []
  const firstRequest = []
  for (let i = 0; i < LAUNCH_RUNS; i++) {
    const r = await rig(false)
    try {
      const [id] = await r.jobs(1)
      const w = r.watch({ waitMinMs: 500, waitMaxMs: 1_000, waitUnknownMs: 1_000, tailMs: 200 })
      await waitUntil(async () => (await r.readJob(id)).state === "quota_waiting")
      r.mock.enqueue(textReply("bench continuation"))
      await sleep(Math.random() * 1_000)
      const t0 = Date.now()
      r.mock.setWhamUsage(usageAllowanceAnswer(true, ACCOUNT))
      const event = await waitUntil(() => w.events.find((e) => e.kind === "launched"))
      const [request] = await r.mock.waitForRequests(1, 30_000)
      launched.push(event.seenAt - t0)
      firstRequest.push(request.receivedAt - t0)
      w.child.kill("SIGTERM")
    } finally {
      await r.dispose()
    }
  }
  return { launched: stats(launched), firstRequest: stats(firstRequest) }
}

// Report --------------------------------------------------------------------------------------

const p = projection()
console.log("\n### Capsule projection (200 KiB checkpoint)\n")
console.log("| input | capsule | runs | p50 ms | p95 ms | max ms |")
console.log("|---|---|---|---|---|---|")
console.log(
  `| ${(p.inputBytes / 1024).toFixed(0)} KiB | ${p.capsuleBytes} B | ${p.n} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${fmt(p.max)} |`,
)

let native
try {
  native = resolveCodexBinary().native
} catch {
  native = undefined
}
if (native === undefined || process.platform !== "linux") {
  console.log("\n(watcher rows skipped: needs Linux and the pinned codex binary)")
} else {
  const rows = [
    await idle("default cadence (reads ≤ every 60 s)", undefined),
    await idle("test cadence (reads every 1 s)", {
      waitMinMs: 500,
      waitMaxMs: 1_000,
      waitUnknownMs: 1_000,
      tailMs: 200,
    }),
  ]
  console.log(`\n### Idle watcher, 10 jobs waiting for quota, ${IDLE_SECONDS} s window\n`)
  console.log(
    "| cadence | watcher CPU % | watcher RSS MiB | app-server CPU % | app-server RSS MiB | usage reads | model requests |",
  )
  console.log("|---|---|---|---|---|---|---|")
  for (const row of rows)
    console.log(
      `| ${row.label} | ${fmt(row.watcherCpu)} | ${fmt(row.watcherRss)} | ${fmt(row.appServerCpu)} | ${fmt(row.appServerRss)} | ${row.reads} | ${row.models} |`,
    )
  const d = await launchDelay()
  console.log("\n### allowed → launched (1 s waiting cadence)\n")
  console.log("| measure | runs | p50 ms | p95 ms | max ms |")
  console.log("|---|---|---|---|---|")
  console.log(
    `| allowed → \`launched\` event | ${d.launched.n} | ${fmt(d.launched.p50)} | ${fmt(d.launched.p95)} | ${fmt(d.launched.max)} |`,
  )
  console.log(
    `| allowed → first model request | ${d.firstRequest.n} | ${fmt(d.firstRequest.p50)} | ${fmt(d.firstRequest.p95)} | ${fmt(d.firstRequest.max)} |`,
  )
}
process.exit(0)

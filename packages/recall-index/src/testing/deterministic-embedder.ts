/**
 * A deterministic embedder for tests: feature-hashed bag of lower-cased word tokens (and their
 * character trigrams, so "retry" and "retries" land close), L2-normalised. Same text, same
 * vector, on every machine; no model, no network. Not a semantic model: use it to test plumbing.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import type { Embedder } from "../embedder.js"
import { normalizeVector } from "../embedder.js"

const bucketOf = (feature: string, dim: number): { index: number; sign: number } => {
  const digest = createHash("sha1").update(feature).digest()
  const n = digest.readUInt32LE(0)
  return { index: n % dim, sign: (digest[4] ?? 0) & 1 ? 1 : -1 }
}

/** Embeds one text deterministically into `dim` dimensions. */
export const deterministicVector = (text: string, dim: number): Float32Array => {
  const v = new Float32Array(dim)
  for (const token of text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) {
    const word = bucketOf(`w:${token}`, dim)
    v[word.index] = (v[word.index] ?? 0) + word.sign
    const padded = `^${token}$`
    for (let i = 0; i + 3 <= padded.length; i++) {
      const tri = bucketOf(`t:${padded.slice(i, i + 3)}`, dim)
      v[tri.index] = (v[tri.index] ?? 0) + tri.sign * 0.25
    }
  }
  return normalizeVector(v)
}

/** A deterministic test embedder of dimension `dim` (default 64); counts the texts it embedded. */
export const makeDeterministicEmbedder = (
  options: { readonly dim?: number; readonly model?: string } = {},
): Embedder & { readonly calls: () => number; readonly embeddedTexts: () => number } => {
  const dim = options.dim ?? 64
  const model = options.model ?? "hash-bow-v1"
  let calls = 0
  let texts = 0
  return {
    info: {
      provider: "deterministic",
      model,
      dim,
      fingerprint: `deterministic:${model}:${dim}`,
      paid: false,
      maxBatch: 128,
      remote: false,
      inProcess: true,
    },
    embedDocuments: (input) =>
      Effect.sync(() => {
        calls++
        texts += input.length
        return input.map((t) => deterministicVector(t, dim))
      }),
    embedQuery: (text) => Effect.sync(() => deterministicVector(text, dim)),
    calls: () => calls,
    embeddedTexts: () => texts,
  }
}

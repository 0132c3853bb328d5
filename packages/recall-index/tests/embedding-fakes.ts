// Loopback fakes of the embedding wire formats: Voyage (`POST /v1/embeddings`,
// `POST /v1/rerank`, snake_case JSON) and OpenAI-compatible (`POST /embeddings`). Each records
// the requests it got and answers from a script (default: deterministic vectors).
import { createServer } from "node:http"
import type { IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { deterministicVector } from "@baton/recall-index/testing"

/** One request the fake received. */
export interface FakeRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Record<string, unknown>
}

/** A scripted answer; `undefined` from a script means "the default answer". */
export interface FakeReply {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body: unknown
}

/** A running fake. */
export interface EmbeddingFake {
  readonly baseUrl: string
  readonly requests: FakeRequest[]
  /** Replies used in order before the default answers. */
  readonly script: FakeReply[]
  readonly close: () => Promise<void>
}

const vectorFor = (text: string, dim: number): number[] =>
  Array.from(deterministicVector(text, dim))

/** Starts a fake on 127.0.0.1 with a random port. `dim` is the vector length it answers. */
export const startEmbeddingFake = async (
  options: { readonly dim?: number; readonly shuffle?: boolean } = {},
): Promise<EmbeddingFake> => {
  const dim = options.dim ?? 16
  const requests: FakeRequest[] = []
  const script: FakeReply[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      let body: Record<string, unknown>
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>
      } catch {
        body = {}
      }
      const path = (req.url ?? "").split("?")[0] ?? ""
      requests.push({ method: req.method ?? "", path, headers: req.headers, body })
      const scripted = script.shift()
      const reply = scripted ?? defaultReply(path, body, dim, options.shuffle === true)
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
      res.end(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const fixedLengthModels: Record<string, number> = { "voyage-code-2": 1536, "voyage-3-lite": 512 }

const defaultReply = (
  path: string,
  body: Record<string, unknown>,
  dim: number,
  shuffle: boolean,
): FakeReply => {
  if (path.endsWith("/embeddings")) {
    const input = Array.isArray(body["input"])
      ? (body["input"] as string[])
      : [String(body["input"])]
    // Voyage's fixed-length models refuse output_dimension (two of them, as Voyage answers).
    const fixed = fixedLengthModels[String(body["model"])]
    if (fixed !== undefined && body["output_dimension"] !== undefined) {
      return {
        status: 400,
        body: { detail: `output_dimension is not supported for model ${String(body["model"])}` },
      }
    }
    const size =
      fixed ?? (typeof body["output_dimension"] === "number" ? body["output_dimension"] : dim)
    // Scaled (not unit) vectors: the client must normalise.
    const data = input.map((text, index) => ({
      object: "embedding",
      index,
      embedding: vectorFor(text, size).map((x) => x * 3),
    }))
    if (shuffle) data.reverse()
    return {
      status: 200,
      body: { object: "list", data, model: body["model"], usage: { total_tokens: input.length } },
    }
  }
  if (path.endsWith("/rerank")) {
    const query = String(body["query"])
    const documents = (body["documents"] as string[] | undefined) ?? []
    const overlap = (d: string) =>
      query
        .toLowerCase()
        .split(/\W+/)
        .filter((w) => w !== "" && d.toLowerCase().includes(w)).length
    const scored = documents
      .map((d, index) => ({ index, relevance_score: overlap(d) / 10 }))
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    const topK = typeof body["top_k"] === "number" ? body["top_k"] : scored.length
    return {
      status: 200,
      body: { object: "list", data: scored.slice(0, topK), model: body["model"] },
    }
  }
  return { status: 404, body: { detail: "not found" } }
}

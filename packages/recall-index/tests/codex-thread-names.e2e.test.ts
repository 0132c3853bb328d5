// A Codex thread renamed through the REAL app-server (codex 0.169.0, `thread/name/set`, against
// the testkit's loopback mock): the name lands in `$CODEX_HOME/session_index.jsonl` only, and an
// index run makes it the session's title.
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildCorpus } from "@baton/testkit"
import type { Corpus } from "@baton/testkit"
import {
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
  recentSessions,
} from "@baton/recall-index"
import { tempDir } from "./index-harness.js"

const NAME = "Sequoia rollout plan"
let corpus: Corpus
let data: { path: string; dispose: () => void }

beforeAll(async () => {
  corpus = await buildCorpus([
    {
      agent: "codex",
      project: "sequoia",
      turns: [{ user: "Plan the sequoia rollout.", assistant: "Three stages, canary first." }],
      threadName: NAME,
    },
  ])
  data = tempDir("thread-names-e2e")
}, 300_000)

afterAll(async () => {
  data?.dispose()
  await corpus?.dispose()
})

describe("a Codex thread renamed through the real app-server", () => {
  it("is titled with its name, which the rollout does not carry", async () => {
    const [session] = corpus.sessions
    expect(readFileSync(session!.path, "utf8")).not.toContain(NAME)
    expect(readFileSync(join(corpus.codexHome, "session_index.jsonl"), "utf8")).toContain(NAME)
    const run = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(effect)
    const layers = Layer.mergeAll(
      recallDatabaseLayer({ dataDir: join(data.path, "baton") }),
      nodeTranscriptFileSystemLayer,
      nodeIndexerProcessLayer,
    )
    const environment = { env: { CODEX_HOME: corpus.codexHome }, homeDir: corpus.root }
    const recent = await run(
      Effect.gen(function* () {
        yield* indexTranscripts({ environment, sources: ["codex"] })
        return yield* recentSessions({})
      }).pipe(Effect.provide(layers)),
    )
    expect(recent).toHaveLength(1)
    expect(recent[0]).toMatchObject({
      sessionId: session!.sessionId,
      title: NAME,
      titleSource: "title",
    })
  })
})

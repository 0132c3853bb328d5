// One recall call in a fresh process, as a `baton recall …` CLI call makes it (the CLI adds
// argument parsing and printing): `search <dataDir> <query>` (embedded default, hybrid + rerank,
// the vector arm in a worker that starts reading the codes first and holds at most
// ONE_SHOT_HOLD_BYTES of them, as the CLI runs it)
// or `index <dataDir> <home>` (index + embed). Prints {"ms", "maxRssMb"} as JSON. Used by the
// benches for "peak RSS per CLI call".
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import {
  embedBacklog,
  embedderFromEnvironment,
  indexTranscripts,
  makeVectorSearchWorker,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  ONE_SHOT_HOLD_BYTES,
  RECALL_DATABASE_FILE,
  recallDatabaseLayer,
  searchRecall,
} from "@baton/recall-index"
import peakRss from "./peak-rss.cjs"

const { peakRssMb } = peakRss

const [mode, dataDir, arg] = process.argv.slice(2)
const started = performance.now()
const layers = Layer.mergeAll(
  recallDatabaseLayer({ dataDir }),
  nodeTranscriptFileSystemLayer,
  nodeIndexerProcessLayer,
)
const vectorWorker =
  mode === "search"
    ? makeVectorSearchWorker({ holding: { holdBytes: ONE_SHOT_HOLD_BYTES } })
    : undefined
if (vectorWorker !== undefined) {
  await Effect.runPromise(vectorWorker.warm(join(dataDir, RECALL_DATABASE_FILE)))
}
const providers = await Effect.runPromise(embedderFromEnvironment({ BATON_EMBEDDER: "use-static" }))
if (vectorWorker !== undefined) {
  await Effect.runPromise(
    searchRecall({ query: arg }, { ...providers, vectorWorker }).pipe(Effect.provide(layers)),
  )
  await Effect.runPromise(vectorWorker.close())
} else {
  await Effect.runPromise(
    Effect.gen(function* () {
      yield* indexTranscripts({
        environment: {
          env: { CLAUDE_CONFIG_DIR: `${arg}/.claude`, CODEX_HOME: `${arg}/.codex` },
          homeDir: arg,
        },
      })
      yield* embedBacklog(providers.embedder)
    }).pipe(Effect.provide(layers)),
  )
}
console.log(
  JSON.stringify({
    ms: Math.round(performance.now() - started),
    maxRssMb: peakRssMb(),
  }),
)

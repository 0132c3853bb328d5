// One recall call in a fresh process, as a `baton recall …` CLI call makes it (the CLI adds
// argument parsing and printing): `search <dataDir> <query>` (embedded default, hybrid + rerank)
// or `index <dataDir> <home>` (index + embed). Prints {"ms", "maxRssMb"} as JSON. Used by the
// benches for "peak RSS per CLI call".
import { Effect, Layer } from "effect"
import {
  embedBacklog,
  embedderFromEnvironment,
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
  searchRecall,
} from "@baton/recall-index"

const [mode, dataDir, arg] = process.argv.slice(2)
const started = performance.now()
const layers = Layer.mergeAll(
  recallDatabaseLayer({ dataDir }),
  nodeTranscriptFileSystemLayer,
  nodeIndexerProcessLayer,
)
const providers = await Effect.runPromise(embedderFromEnvironment({}))
if (mode === "search") {
  await Effect.runPromise(searchRecall({ query: arg }, providers).pipe(Effect.provide(layers)))
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
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
)

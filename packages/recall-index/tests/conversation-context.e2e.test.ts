// Conversation context on transcripts written by the REAL pinned binaries (Claude Code 2.1.328
// over stream-json, codex 0.169.0 over app-server, recorded by the testkit against the loopback
// mocks), the way the held-out benchmark plays conversations through the agents: an answer that
// shares no word with the question asked later is found because it follows the short question it
// answered. Words alone (no context) do not find it; the default plan's context does, in both
// agents' sessions, whatever each agent writes between a prompt and its reply.
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildCorpus } from "@baton/testkit"
import type { Corpus, CorpusTurn } from "@baton/testkit"
import {
  EMBEDDED_FUSION_PLAN,
  indexTranscripts,
  nodeIndexerProcessLayer,
  nodeTranscriptFileSystemLayer,
  recallDatabaseLayer,
  searchRecall,
} from "@baton/recall-index"
import type { RecallSearchProviders } from "@baton/recall-index"
import { tempDir } from "./index-harness.js"

// Each session: small talk, the question and its answer (no word in common with the later
// question but the ones the question holds), a distractor that shares the topic's word, more talk.
const conversation = (topic: string, question: string, answer: string): CorpusTurn[] => [
  { user: "Morning! Did you sleep at all?", assistant: "A little. The neighbours were loud." },
  { user: question, assistant: answer },
  {
    user: `Was the ${topic} at your sister's place any better?`,
    assistant: "She never mentioned it, so probably.",
  },
  { user: "Anyway, lunch later?", assistant: "Sure, the usual place at one." },
]

const CLAUDE_ANSWER = "Yes, a plumber comes on Thursday morning."
const CODEX_ANSWER = "They said the courier drops it off next Tuesday."

let corpus: Corpus
let data: ReturnType<typeof tempDir>
let search: (query: string, providers: RecallSearchProviders) => Promise<string[]>

beforeAll(async () => {
  corpus = await buildCorpus([
    {
      agent: "claude",
      project: "home",
      turns: conversation(
        "boiler",
        "Did the landlord reply about the broken boiler?",
        CLAUDE_ANSWER,
      ),
    },
    {
      agent: "codex",
      project: "home",
      turns: conversation(
        "parcel",
        "Any news on the lost parcel from the bike shop?",
        CODEX_ANSWER,
      ),
    },
  ])
  data = tempDir("context-e2e")
  const layers = Layer.mergeAll(
    recallDatabaseLayer({ dataDir: join(data.path, "baton") }),
    nodeTranscriptFileSystemLayer,
    nodeIndexerProcessLayer,
  )
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof layers>>) =>
    Effect.runPromise(effect.pipe(Effect.provide(layers)))
  const report = await run(
    indexTranscripts({
      environment: {
        env: { CODEX_HOME: corpus.codexHome, CLAUDE_CONFIG_DIR: corpus.claudeConfigDir },
        homeDir: corpus.root,
      },
    }),
  )
  expect(report).toMatchObject({ indexedNew: 2, failed: [] })
  search = async (query, providers) =>
    (
      await run(searchRecall({ query, k: 5, arms: ["lexical"], perSession: 5 }, providers))
    ).hits.map((h) => h.text)
}, 300_000)

afterAll(async () => {
  data?.dispose()
  await corpus?.dispose()
})

describe("conversation context on real agent transcripts", () => {
  it.each([
    ["Claude Code", "When is the broken boiler getting fixed by the landlord?", CLAUDE_ANSWER],
    ["Codex", "When does the lost parcel from the bike shop arrive?", CODEX_ANSWER],
  ])("finds the %s answer after the question it answered", async (_, query, answer) => {
    // Words alone: the question and the distractor, never the answer.
    const words = await search(query, {})
    expect(words.length).toBeGreaterThan(0)
    expect(words).not.toContain(answer)
    // The default plan's context: the answer comes right after its question.
    const withContext = await search(query, { fusion: EMBEDDED_FUSION_PLAN })
    expect(withContext.slice(0, 3)).toContain(answer)
    // Ahead of the reply to the distractor, which only shares the topic's word.
    const distractorReply = withContext.indexOf("She never mentioned it, so probably.")
    if (distractorReply !== -1) expect(withContext.indexOf(answer)).toBeLessThan(distractorReply)
  })
})

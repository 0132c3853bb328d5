// Deterministic synthetic dialogue corpus for the retrieval eval, shaped like the LoCoMo
// long-conversation benchmark: one long conversation between two friends (eval/dialogue-gold.mjs:
// the "user" speaker's lines are user turns, the other's are assistant turns), split into
// sessions, one conversation day each, spread over about six months, one cwd for all. A session
// has 14–30 short turns (more when a few sessions must hold all the facts) in strict alternation:
// a greeting, one or two topics (filler turns of the topic from each speaker), a goodbye. Each
// gold fact is one turn in a session of its topic, right after its context turn (the other
// speaker's question) when it has one, and followed by a short reaction of the other speaker;
// two or three distractor turns in other sessions reuse its keywords in another situation. Same
// seed, same bytes. Never derived from a real transcript or a public dataset.
import { sample } from "./chat-corpus.mjs"
import { claudeSessionWriter } from "./claude-session.mjs"
import { encodeClaudeProjectDir, seededRandom } from "@baton/recall-index/testing"
import { DIALOGUE_FACTS, DIALOGUE_SPEAKERS, DIALOGUE_TOPICS } from "./dialogue-gold.mjs"

// `{name}` is the other speaker's first name. Any answer fits any greeting.
const GREETINGS = {
  user: [
    "Hey {name}!",
    "Hiii, you around?",
    "Morning {name}!",
    "Hey you!",
    "{name}! Got a minute?",
    "Evening! Are you free for a chat?",
    "Hi hi.",
  ],
  assistant: [
    "Hey {name}! What's up?",
    "Hi! Yep, I'm here.",
    "Hey you! What's new?",
    "Hiya {name}, go on.",
    "Hey! Good timing, I just sat down.",
    "Hi {name}!",
  ],
}

const GOODBYES = {
  user: [
    "Okay, I need to sleep. Night {name}!",
    "Gotta run, talk soon!",
    "Right, dinner's ready, speak soon!",
    "Anyway, back to work for me. Bye!",
    "Okay, my battery's dying. Later {name}!",
  ],
  assistant: [
    "Night {name}!",
    "Talk soon!",
    "Speak soon {name}, take care.",
    "Later! Keep me posted.",
    "Sleep well!",
    "Bye! Good luck with everything.",
  ],
}

// The other speaker's answer to a piece of news (neutral: it follows good and bad news alike).
const FACT_REACTIONS = [
  "Oh wow, I had no idea!",
  "Wait, really? Tell me everything.",
  "No way. How are you feeling about it?",
  "Huh, I did not see that coming.",
  "Oh man, okay. I want the full story next time I see you.",
  "Wow, that's a lot. Keep me posted, yeah?",
  "Oh! Okay, that's big news.",
  "Seriously? That's quite something.",
  "Oh wow. Okay, I need details.",
]

// Short answers to a passing remark (after a distractor turn).
const SHORT_REACTIONS = [
  "Ha, sounds about right.",
  "Haha, of course.",
  "Ha! Classic.",
  "Wait, what?",
  "Lol.",
  "Ha, I love that.",
  "Okay, that's random.",
  "Haha, people are strange.",
]

// The first filler turn of a session's second topic starts with one of these.
const TOPIC_SWITCHES = [
  "Anyway, different subject.",
  "Oh, before I forget.",
  "Okay, changing topic completely.",
  "Okay, totally unrelated.",
  "Oh, random thing.",
]

// Distractors: a turn (either speaker) that uses a fact's keywords `{a}` and `{b}` in another
// situation (never the fact's own turn).
const DISTRACTOR_TEMPLATES = [
  "My coworker spent all of lunch talking about {a}. Then {b}, somehow.",
  "I saw a video about {a} today and thought of you. And one about {b}, weirdly.",
  "My cousin keeps asking me about {a} like I'm an expert. And {b}, of all things.",
  "The group chat was all about {a} last night, and then somehow {b}.",
  "I overheard a whole conversation about {a} on the tram this morning. Then {b}. Very intense.",
  "My mum sent me an article on {a} again. And one on {b}, for some reason.",
  "The pub quiz had a round on {a} last night, and then one on {b}. We got zero points.",
  "I listened to a podcast about {a} on the way home, and they got onto {b} too.",
  "My neighbour cornered me in the stairwell to talk about {a}. And then {b}, for twenty minutes.",
  "Someone at work asked if I knew anything about {a}. Or {b}. I do not.",
  "I fell down an internet rabbit hole about {a} last night and ended up reading about {b}.",
  "My brother won't stop talking about {a}. Last month it was {b}.",
]

const OTHER = { user: "assistant", assistant: "user" }

/**
 * Builds the dialogue corpus. Returns `{ claudeConfigDir, files }` like `buildChatCorpus`: find a
 * fact's evidence turn by substring (its first 40 characters) after indexing.
 */
export const buildDialogueCorpus = ({ homeDir, seed = 7, sessions: sessionCount = 24 }) => {
  const random = seededRandom(seed)
  const topicByName = new Map(DIALOGUE_TOPICS.map((t) => [t.name, t]))
  const starts = new Set()
  for (const fact of DIALOGUE_FACTS) {
    if (!topicByName.has(fact.topic)) throw new Error(`fact ${fact.id}: unknown topic`)
    if (OTHER[fact.speaker] === undefined) throw new Error(`fact ${fact.id}: unknown speaker`)
    if (starts.has(fact.text.slice(0, 40))) throw new Error(`fact ${fact.id}: text not unique`)
    starts.add(fact.text.slice(0, 40))
  }
  const nameOf = (speaker) => DIALOGUE_SPEAKERS[speaker]
  // Topics: every topic leads its share of sessions (round robin, in a shuffled order); about
  // half the sessions drift to a second topic. With fewer sessions than topics, the topics left
  // over become second topics.
  const topicOrder = sample(random, DIALOGUE_TOPICS, DIALOGUE_TOPICS.length)
  const sessions = sample(
    random,
    Array.from({ length: sessionCount }, (_, i) => topicOrder[i % topicOrder.length]),
    sessionCount,
  ).map((topic) => {
    const parts = [{ topic, blocks: [] }]
    if (random.next() < 0.5) {
      const second = random.pick(DIALOGUE_TOPICS.filter((t) => t !== topic))
      parts.push({ topic: second, blocks: [] })
    }
    return { parts, load: 0 }
  })
  for (const topic of topicOrder.slice(sessionCount)) {
    const session = sessions.find((s) => s.parts.length === 1)
    if (session === undefined) throw new Error(`no session for topic ${topic.name}`)
    session.parts.push({ topic, blocks: [] })
  }
  // Places a block in a part of a session that `accept`s, choosing among the least loaded ones
  // (sessions stay within about 30 turns). A block's `size`: its turns and the filler before it.
  const place = (accept, block) => {
    const candidates = sessions.flatMap((session) =>
      session.parts.filter((part) => accept(session, part)).map((part) => ({ session, part })),
    )
    if (candidates.length === 0) return undefined
    const least = Math.min(...candidates.map((c) => c.session.load))
    const spot = random.pick(candidates.filter((c) => c.session.load <= least + 1))
    spot.part.blocks.push(block)
    spot.session.load += block.size
    return spot.session
  }
  // The facts first, then their distractors (so these even out the sessions' lengths).
  const homes = DIALOGUE_FACTS.map((fact) => {
    const topic = topicByName.get(fact.topic)
    const home = place((_, part) => part.topic === topic, {
      kind: "fact",
      fact,
      size: fact.context === undefined ? 3.5 : 4.5,
    })
    if (home === undefined) throw new Error(`fact ${fact.id}: no ${topic.name} session`)
    return home
  })
  DIALOGUE_FACTS.forEach((fact, i) => {
    const topic = topicByName.get(fact.topic)
    const count = random.int(2, 3)
    for (let d = 0; d < count; d++) {
      // The first distractor in another session of the same topic (when there is one), the others
      // anywhere else; never in the fact's own session.
      const block = { kind: "distractor", fact, size: 2.5 }
      const other = (s) => s !== homes[i]
      const spot =
        (d === 0 ? place((s, part) => other(s) && part.topic === topic, block) : undefined) ??
        place(other, block)
      if (spot === undefined) throw new Error(`fact ${fact.id}: no session for a distractor`)
    }
  })
  const files = {}
  const claudeConfigDir = `${homeDir}/.claude`
  const cwd = `${homeDir}/friends`
  // About six months: conversation days spaced evenly on average, starting at varied hours.
  const meanGapDays = 180 / Math.max(1, sessionCount)
  let day = Date.UTC(2025, 8, 1)
  for (const session of sessions) {
    // The turns of the day, in strict alternation: user turns at even positions.
    const turns = []
    const next = () => (turns.length % 2 === 0 ? "user" : "assistant")
    const fill = (template, speaker) => template.replaceAll("{name}", nameOf(OTHER[speaker]))
    // Filler turns are drawn without repeats within a session (per topic and speaker).
    const pools = new Map()
    const filler = (topic) => {
      const speaker = next()
      const key = `${topic.name}/${speaker}`
      if (!pools.has(key) || pools.get(key).length === 0) {
        const lines = speaker === "user" ? topic.userTurns : topic.assistantTurns
        pools.set(key, sample(random, lines, lines.length))
      }
      return pools.get(key).pop()
    }
    // 14–30 turns, enough for the session's blocks; block turns still to come (`pending`) shrink
    // the gaps between blocks when the session runs long.
    const target = Math.min(
      30,
      Math.max(2 * random.int(7, 15), 2 * Math.ceil(session.load / 2) + 4),
    )
    let pending = session.load
    const roomy = () => turns.length + pending + 4 <= target
    // Distractor wordings are drawn without repeats within a session.
    let wordings = []
    turns.push(fill(random.pick(GREETINGS.user), "user"))
    turns.push(fill(random.pick(GREETINGS.assistant), "assistant"))
    session.parts.forEach((part, partIndex) => {
      const { topic } = part
      let switched = partIndex === 0
      const say = (text) => {
        turns.push(switched ? text : `${random.pick(TOPIC_SWITCHES)} ${text}`)
        switched = true
      }
      // Filler until `speaker` is next, at least `min` turns.
      const lead = (min, speaker) => {
        for (let i = 0; i < min || (speaker !== undefined && next() !== speaker); i++)
          say(filler(topic))
      }
      for (const block of sample(random, part.blocks, part.blocks.length)) {
        if (block.kind === "distractor") {
          pending -= block.size
          lead(roomy() ? random.int(1, 2) : 1)
          if (wordings.length === 0)
            wordings = sample(random, DISTRACTOR_TEMPLATES, DISTRACTOR_TEMPLATES.length)
          const [a, b] = sample(random, block.fact.keywords, 2)
          say(wordings.pop().replaceAll("{a}", a).replaceAll("{b}", b))
          if (random.next() < 0.5) turns.push(random.pick(SHORT_REACTIONS))
        } else {
          const { fact } = block
          const other = OTHER[fact.speaker]
          pending -= block.size
          lead(roomy() ? random.int(1, 2) : 0, fact.context === undefined ? fact.speaker : other)
          if (fact.context !== undefined) say(fact.context)
          say(fact.text)
          turns.push(random.pick(FACT_REACTIONS))
        }
      }
      // The part's share of the session's length, less the blocks of the next part (a
      // topic without blocks gets two turns at least).
      const until = 2 + Math.round(((target - 4) * (partIndex + 1)) / session.parts.length)
      lead(Math.max(switched ? 0 : 2, until - turns.length - pending))
    })
    if (next() !== "user") turns.push(filler(session.parts.at(-1).topic))
    turns.push(fill(random.pick(GOODBYES.user), "user"))
    turns.push(fill(random.pick(GOODBYES.assistant), "assistant"))
    const sessionId = random.uuid()
    let clock = day + random.int(8 * 60, 21 * 60) * 60_000
    const { lines, user, assistant } = claudeSessionWriter({
      random,
      cwd,
      sessionId,
      tick: () => (clock += random.int(15_000, 180_000)),
    })
    turns.forEach((text, i) => (i % 2 === 0 ? user(text) : assistant(text)))
    files[`${claudeConfigDir}/projects/${encodeClaudeProjectDir(cwd)}/${sessionId}.jsonl`] =
      lines.join("\n") + "\n"
    day += Math.max(1, Math.round(meanGapDays * (0.5 + random.next()))) * 86_400_000
  }
  return { claudeConfigDir, files }
}

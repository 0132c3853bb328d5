// Deterministic synthetic chat corpus for the retrieval eval, shaped like long-term-memory chat
// benchmarks (LongMemEval / LoCoMo style): one person chatting with an assistant about everyday
// life over many sessions spread across about three months, one cwd for all. Each session keeps
// to one topic (eval/chat-gold.mjs) with 4–10 exchanges: short first-person requests and long,
// wordy advice replies. Each gold fact sits in one exchange of a session of its topic (a user
// fact inside an ordinary request, an assistant fact in the middle of a long reply), and three
// distractor turns in other sessions reuse its keywords in another context. Same seed, same
// bytes. Never derived from a real transcript or a public dataset.
import { claudeSessionWriter } from "./claude-session.mjs"
import { encodeClaudeProjectDir, seededRandom } from "@baton/recall-index/testing"
import { CHAT_FACTS, CHAT_TOPICS } from "./chat-gold.mjs"

// Topic-neutral openers of a user turn (a turn stays within 1–4 sentences).
const USER_OPENERS = [
  "Morning!",
  "Quick question.",
  "Hope you're having a good day.",
  "Okay, different question.",
  "Sorry, me again.",
  "Hi there.",
]

// Follow-ups later in a session: they continue the topic without naming it.
const USER_FOLLOW_UPS = [
  "Thanks, that's really helpful. Could you say a bit more about the second point?",
  "Okay, that makes sense. If you were me, what would you do first?",
  "Hmm, I hadn't thought of that. Is there anything I should definitely avoid doing?",
  "That's a lot to take in. Can you boil it down to the three most important things?",
  "Great, thank you. How long does it usually take before I see a difference?",
  "Got it. What's the most common mistake people make with this?",
  "Interesting. Is there a cheaper way to do the same thing?",
  "I tried something like that before and it didn't stick. Any ideas for keeping it going this time?",
]

const REPLY_OPENERS = [
  "That's a really common question, and there are a few things that usually help.",
  "Good question, and you're definitely not the only one wondering about it.",
  "Happy to help with this.",
  "Here are some ideas that tend to work well for most people.",
  "That sounds frustrating, so let's see what we can do about it.",
  "There's no single right answer here, but a few principles apply.",
  "Great that you're thinking about this ahead of time.",
  "Absolutely, let's break it down into a few manageable pieces.",
]

const REPLY_CLOSERS = [
  "Let me know if you'd like me to go into more detail on any of these.",
  "I hope some of that helps, and feel free to tell me more about your situation.",
  "If you share a bit more detail, I can tailor these suggestions to you.",
  "Would you like me to turn this into a simple checklist?",
  "Good luck, and let me know how it goes!",
  "Take it one step at a time and you'll get there.",
]

// Distractors: a user turn, or one assistant sentence, that uses a fact's keywords `{a}` and
// `{b}` in another context (never the fact's own sentence).
const DISTRACTOR_USER_TEMPLATES = [
  "A friend at work keeps going on about {a}. Is that actually something people worry about, or is it mostly hype? She also brought up {b}.",
  "Random question while I think of it: what do most people get wrong about {a}? And is {b} worth reading up on?",
  "I was listening to a podcast about {a} and {b} on the drive home. Can you give me a quick overview so I can follow along next time?",
  "My cousin asked me for advice on {a} and I had no idea what to say. What are the basics? She mentioned {b} too.",
  "Not for me, but for a neighbour: any general tips on {a}? They said {b} was confusing them.",
  "I saw an article about {a} this morning and it made me wonder how common {b} really is.",
  "My colleague's partner is dealing with {a} right now. What would you tell someone in that position about {b}?",
  "Someone in my group chat posted about {a} and it turned into a long argument about {b}. Who's right, do you think?",
]

const DISTRACTOR_REPLY_TEMPLATES = [
  "People often bring up {a} in this context, and while it can matter, {b} is usually a separate question.",
  "As a side note, {a} comes up a lot in questions like this, and so does {b}, but neither changes the basic advice here.",
  "If you ever end up dealing with {a}, the same principle applies, and it's similar for {b}.",
  "Some guides spend a lot of time on {a} and {b}, though for most people that's a detail rather than the main point.",
  "You'll see plenty of strong opinions online about {a}, and about {b}, so take those with a pinch of salt.",
  "It's a bit like {a}: what looks complicated at first gets easier with practice, and {b} is no different.",
]

// Distinct picks from a list, in random order (the dialogue corpus uses it too).
export const sample = (random, items, n) => {
  const pool = [...items]
  const out = []
  while (out.length < n && pool.length > 0)
    out.push(pool.splice(random.int(0, pool.length - 1), 1)[0])
  return out
}

/**
 * Builds the chat corpus. Returns `{ claudeConfigDir, files }` like `buildEvalCorpus`: find a
 * fact's evidence turn by substring (its first 40 characters) after indexing.
 */
export const buildChatCorpus = ({
  homeDir,
  seed = 7,
  sessions: sessionCount = 50,
  prose = [],
  proseSentences = [0, 0],
}) => {
  const random = seededRandom(seed)
  const topicByName = new Map(CHAT_TOPICS.map((t) => [t.name, t]))
  for (const fact of CHAT_FACTS) {
    if (!topicByName.has(fact.topic)) throw new Error(`fact ${fact.id}: unknown topic`)
  }
  // `prose` sentences (real English of wide vocabulary, `proseSentences` [min, max] of them per
  // reply) are mixed into every reply, as in corpus.mjs.
  const proseOf = () =>
    prose.length === 0
      ? []
      : Array.from({ length: random.int(proseSentences[0], proseSentences[1]) }, () =>
          random.pick(prose),
        )
  // A long advice reply: an optional opener, 8–25 sentences in all, an optional closer; `insert`
  // (a fact or distractor sentence) goes at `insertAt` (a share of the body: 0.5 = the middle).
  const reply = (topic, insert, insertAt) => {
    const total = random.int(8, 25)
    const opener = random.next() < 0.6 ? [random.pick(REPLY_OPENERS)] : []
    const closer = random.next() < 0.6 ? [random.pick(REPLY_CLOSERS)] : []
    const bodyCount = Math.max(1, total - opener.length - closer.length - (insert ? 1 : 0))
    const body = sample(random, topic.replySentences, bodyCount)
    const extra = proseOf()
    if (extra.length > 0) {
      const cut = random.int(0, body.length)
      body.splice(cut, 0, ...extra)
    }
    if (insert !== undefined) {
      const at = Math.min(body.length, Math.max(1, Math.round(body.length * insertAt)))
      body.splice(at, 0, insert)
    }
    return [...opener, ...body, ...closer].join(" ")
  }
  // Requests of a session are drawn without repeats (`asks`, refilled when empty).
  let asks = []
  const request = (topic, withOpener) => {
    if (asks.length === 0) asks = sample(random, topic.userRequests, topic.userRequests.length)
    const text = asks.pop()
    return withOpener && random.next() < 0.3 ? `${random.pick(USER_OPENERS)} ${text}` : text
  }
  const claudeConfigDir = `${homeDir}/.claude`
  // Topics: every topic gets its share of sessions (round robin), in a shuffled order.
  const topicOrder = sample(random, CHAT_TOPICS, CHAT_TOPICS.length)
  const sessions = sample(
    random,
    Array.from({ length: sessionCount }, (_, i) => topicOrder[i % topicOrder.length]),
    sessionCount,
  ).map((topic) => ({ topic, slots: Array.from({ length: random.int(4, 10) }, () => null) }))
  const freeSlot = (accept) => {
    const candidates = sessions.filter((s) => accept(s) && s.slots.includes(null))
    if (candidates.length === 0) return undefined
    const session = random.pick(candidates)
    const free = session.slots.flatMap((slot, i) => (slot === null ? [i] : []))
    return { session, at: random.pick(free) }
  }
  for (const fact of CHAT_FACTS) {
    const topic = topicByName.get(fact.topic)
    const place = freeSlot((s) => s.topic === topic)
    if (place === undefined)
      throw new Error(`fact ${fact.id}: no free slot in a ${topic.name} session`)
    place.session.slots[place.at] = { kind: "fact", fact }
    for (let d = 0; d < 3; d++) {
      // Two distractors in other sessions of the same topic (when there are any), one anywhere
      // else; never in the fact's own session.
      const other = (s) => s !== place.session
      const spot =
        (d < 2 ? freeSlot((s) => other(s) && s.topic === topic) : undefined) ??
        freeSlot((s) => other(s) && (d < 2 || s.topic !== topic)) ??
        freeSlot(other)
      if (spot === undefined) throw new Error(`fact ${fact.id}: no free slot for a distractor`)
      spot.session.slots[spot.at] = { kind: "distractor", fact }
    }
  }
  const files = {}
  // About three months: sessions are spaced evenly on average, at varied times of day.
  const meanGap = (90 * 86_400_000) / Math.max(1, sessionCount)
  let clock = Date.UTC(2026, 0, 5, 8, 0, 0)
  for (const session of sessions) {
    const { topic } = session
    asks = []
    const sessionId = random.uuid()
    const cwd = `${homeDir}/chat`
    const { lines, user, assistant } = claudeSessionWriter({
      random,
      cwd,
      sessionId,
      tick: () => (clock += random.int(20_000, 240_000)),
    })
    session.slots.forEach((slot, index) => {
      if (slot === null) {
        user(
          index > 0 && random.next() < 0.3
            ? random.pick(USER_FOLLOW_UPS)
            : request(topic, index === 0),
        )
        assistant(reply(topic))
      } else if (slot.kind === "distractor") {
        const [a, b] = sample(random, slot.fact.keywords, 2)
        const fill = (template) => template.replaceAll("{a}", a).replaceAll("{b}", b)
        if (random.next() < 0.5) {
          user(fill(random.pick(DISTRACTOR_USER_TEMPLATES)))
          assistant(reply(topic))
        } else {
          user(request(topic, index === 0))
          assistant(reply(topic, fill(random.pick(DISTRACTOR_REPLY_TEMPLATES)), random.next()))
        }
      } else if (slot.fact.role === "user") {
        // Said in passing: before or after an ordinary request of the topic.
        const ask = request(topic, false)
        user(random.next() < 0.5 ? `${slot.fact.text} ${ask}` : `${ask} ${slot.fact.text}`)
        assistant(reply(topic))
      } else {
        // The recommendation sits in the middle third of a long reply.
        user(request(topic, index === 0))
        assistant(reply(topic, slot.fact.text, 1 / 3 + random.next() / 3))
      }
    })
    files[`${claudeConfigDir}/projects/${encodeClaudeProjectDir(cwd)}/${sessionId}.jsonl`] =
      lines.join("\n") + "\n"
    clock += Math.round(meanGap * (0.5 + random.next()))
  }
  return { claudeConfigDir, files }
}

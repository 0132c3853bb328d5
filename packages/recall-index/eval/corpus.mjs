// Deterministic synthetic multi-project corpus for the retrieval eval: Claude Code session files
// for several projects, many sessions of ordinary coding exchanges (filler built from each
// project's own vocabulary), one evidence turn per gold fact (the fact sentence inside a longer
// reply or prompt), and distractor turns that reuse each fact's keywords in unrelated requests.
// Same seed, same bytes. Never derived from a real transcript.
import { claudeSessionWriter } from "./claude-session.mjs"
import { encodeClaudeProjectDir, seededRandom } from "@baton/recall-index/testing"
import { FACTS, PROJECTS } from "./gold.mjs"

const USER_TEMPLATES = [
  "Run the tests for {module} and tell me what fails.",
  "Refactor {file} so the {thing} logic lives in one place.",
  "What does {file} do? I haven't touched it in a while.",
  "Bump {lib} to the latest minor version and check the changelog for breaking changes.",
  "Add logging around {thing} in the {module} module.",
  "Can you review my change to {file}? I'm not sure about the naming.",
  "The CI job for {module} is red again, can you take a look?",
  "Write a short summary of how {thing} works for the onboarding doc.",
  "Please split {file} into smaller functions, it's getting long.",
  "Let's add types to the {module} helpers, they are all any right now.",
  "Is {lib} still needed in {module}? I think we stopped using it.",
  "Clean up the warnings in {file} before we merge.",
]

const REPLY_SENTENCES = [
  "I looked at {file} and the {thing} code path.",
  "The tests in {module} pass now, {n} of them in total.",
  "I extracted a helper for {thing} and updated the {n} callers.",
  "There were two unused imports in {file}, which I removed.",
  "The {lib} upgrade only changed a type signature, so nothing else needed to move.",
  "I kept the public interface of {module} the same so nothing downstream breaks.",
  "Let me know if you want me to also update {file2}.",
  "I ran the linter and formatter over {module}; the diff is mostly whitespace.",
  "The {thing} part is covered by the existing tests, so I didn't add new ones.",
  "I renamed a few variables in {file} to make the intent clearer.",
  "Nothing in {module} depends on {lib} any more, so I dropped it from the manifest.",
  "The flaky test in {module} was waiting on a timer; I replaced it with a fake clock.",
  "I added a comment in {file} explaining why {thing} is handled last.",
  "The change is small: {n} lines in {file} and a test next to it.",
]

const DISTRACTOR_TEMPLATES = [
  "Can you add a unit test that covers {a} and {b}? Nothing is broken, I just want coverage.",
  "Let's rename the module that deals with {a}; mentioning {b} in the name is confusing.",
  "Please document how {a} works in the README, and mention {b} briefly.",
  "The dashboard for {a} looks fine today. I also checked {b} and there are no alerts.",
  "I moved the {a} settings next to the {b} ones so they are easier to find.",
  "Remind me later to tidy the {a} code; the {b} bits are fine as they are.",
]

const fill = (random, project, template) =>
  template
    .replaceAll("{module}", random.pick(project.modules))
    .replaceAll("{file2}", random.pick(project.files))
    .replaceAll("{file}", random.pick(project.files))
    .replaceAll("{thing}", random.pick(project.things))
    .replaceAll("{lib}", random.pick(project.libs))
    .replaceAll("{n}", String(random.int(2, 14)))

const replyOf = (random, project, sentences) =>
  Array.from({ length: sentences }, () => fill(random, project, random.pick(REPLY_SENTENCES))).join(
    " ",
  )

/**
 * Builds the corpus. Returns `{ claudeConfigDir, files, facts }` where `facts[i].evidence` is
 * the exact text written for fact i (find its turn by substring after indexing).
 */
export const buildEvalCorpus = ({
  homeDir,
  seed = 7,
  sessionsPerProject = 10,
  exchangesPerSession = 12,
  replyScale = 1,
  prose = [],
  proseSentences = [0, 0],
}) => {
  const random = seededRandom(seed)
  // replyScale > 1 lengthens every reply (more filler sentences); `prose` sentences (real English
  // of wide vocabulary, `proseSentences` [min, max] of them per reply) make long replies that span
  // several chunks as real assistant answers do, without repeating the project's words.
  const proseOf = () =>
    prose.length === 0
      ? []
      : Array.from({ length: random.int(proseSentences[0], proseSentences[1]) }, () =>
          random.pick(prose),
        )
  const reply = (random, project, sentences) => {
    const own = replyOf(random, project, Math.max(1, Math.round(sentences * replyScale)))
    const extra = proseOf()
    if (extra.length === 0) return own
    const cut = random.int(0, extra.length)
    return [...extra.slice(0, cut), own, ...extra.slice(cut)].join(" ")
  }
  const claudeConfigDir = `${homeDir}/.claude`
  // Plan: each session is a list of exchange slots; facts and distractors take some slots.
  const sessions = []
  for (const project of PROJECTS) {
    for (let s = 0; s < sessionsPerProject; s++) {
      sessions.push({ project, slots: Array.from({ length: exchangesPerSession }, () => null) })
    }
  }
  const freeSlot = (projectName) => {
    const candidates = sessions.filter(
      (s) => projectName === undefined || s.project.name === projectName,
    )
    for (;;) {
      const session = random.pick(candidates)
      const at = random.int(0, session.slots.length - 1)
      if (session.slots[at] === null) return { session, at }
    }
  }
  for (const fact of FACTS) {
    const { session, at } = freeSlot(fact.project)
    session.slots[at] = { kind: "fact", fact }
    for (let d = 0; d < 3; d++) {
      // Two distractors in the same project, one anywhere.
      const place = freeSlot(d < 2 ? fact.project : undefined)
      place.session.slots[place.at] = { kind: "distractor", fact }
    }
  }
  const files = {}
  let clock = Date.UTC(2026, 2, 1, 9, 0, 0)
  sessions.forEach((session, index) => {
    const { project } = session
    const sessionId = random.uuid()
    const cwd = `${homeDir}/code/${project.name}`
    const { lines, user, assistant } = claudeSessionWriter({
      random,
      cwd,
      sessionId,
      tick: () => (clock += random.int(20_000, 200_000)),
    })
    for (const slot of session.slots) {
      if (slot === null) {
        user(fill(random, project, random.pick(USER_TEMPLATES)))
        assistant(reply(random, project, random.int(2, 7)))
      } else if (slot.kind === "distractor") {
        const [a, b] = [random.pick(slot.fact.keywords), random.pick(slot.fact.keywords)]
        user(random.pick(DISTRACTOR_TEMPLATES).replaceAll("{a}", a).replaceAll("{b}", b))
        assistant(reply(random, project, random.int(1, 4)))
      } else if (slot.fact.role === "user") {
        user(
          `${fill(random, project, random.pick(USER_TEMPLATES))} Also, for the record: ${slot.fact.text}`,
        )
        assistant(reply(random, project, random.int(1, 3)))
      } else {
        user(fill(random, project, random.pick(USER_TEMPLATES)))
        // The evidence sits inside an ordinary reply, with other sentences before and after.
        assistant(
          [
            reply(random, project, random.int(1, 4)),
            slot.fact.text,
            reply(random, project, random.int(1, 4)),
          ].join(" "),
        )
      }
    }
    files[`${claudeConfigDir}/projects/${encodeClaudeProjectDir(cwd)}/${sessionId}.jsonl`] =
      lines.join("\n") + "\n"
    clock += 3_600_000 * (1 + (index % 5))
  })
  return { claudeConfigDir, files }
}

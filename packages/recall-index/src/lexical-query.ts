/**
 * Query handling for the lexical (bm25) arm: a natural-language question keeps only the words
 * that can discriminate — English function words, question words and filler verbs ("why",
 * "did", "we", "the", "how") are dropped, so `matchChunks(…, { mode: "any" })` ranks by the
 * content words. Pure. Guarantees: never returns an empty query for a text that had a term
 * (all-stopword text is returned unchanged); term order and spelling are kept.
 */

// Function words and conversational filler; measured on the retrieval eval (README).
const STOPWORDS = new Set(
  `a about above after again all also am an and any are as at be been before being below between
  both but by can could did do does doing done down during each few for from further get got had
  has have having he her here hers him his how i if in into is it its itself just me more most my
  no nor not now of off on once only or other our ours out over own same she should so some such
  than that the their them then there these they this those through to too under until up very
  was we were what when where which while who whom why will with would you your yours again ever
  anything something thing things way ways make made let lets us did didnt dont doesnt isnt wasnt
  weren arent cant couldnt wont whats hows whys remember recall earlier last time past previous
  session sessions conversation talked discussed said mentioned`.split(/\s+/),
)

/** `text` without stopwords (or unchanged when nothing else is left). */
export const lexicalQuery = (text: string): string => {
  const terms = text.split(/\s+/).filter((t) => t !== "")
  const kept = terms.filter((t) => {
    const bare = t.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "")
    return bare !== "" && !STOPWORDS.has(bare)
  })
  return kept.length === 0 ? text : kept.join(" ")
}

// Personal pronouns: who said something. "What breed is my dog?" asks about a turn where the user
// wrote "my"; assistants write "you" and "your". Too common to score in most histories, so they
// join the lexical arm as soft terms (`matchChunks` `expansion`): scored only where selective.
const SPEAKER_WORDS = new Set(
  "i me my mine myself we us our ours ourselves you your yours yourself".split(" "),
)

/**
 * The personal pronouns of `text` (lower case, each once, in order): for the lexical arm's soft
 * terms, since {@link lexicalQuery} drops them as function words.
 */
export const speakerWords = (text: string): string => {
  const found = new Set<string>()
  for (const t of text.split(/\s+/)) {
    const bare = t.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "")
    if (SPEAKER_WORDS.has(bare)) found.add(bare)
  }
  return [...found].join(" ")
}

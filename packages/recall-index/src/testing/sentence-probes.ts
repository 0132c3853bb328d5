/**
 * Texts that probe a sentence cut (`sentencesOf`) and the embedders built on it: none, blank,
 * punctuation only, digits, unknown words, many and odd sentences, code identifiers, CRLF and
 * blank lines, accents, one unpunctuated sentence, more sentences than the reranker's default cap.
 * Shared by the static embedder's and the sentence reranker's tests.
 */
export const sentenceCutProbes: ReadonlyArray<string> = [
  "",
  "   \n\t  ",
  "... !!! ???",
  "123 456. 789",
  "zzqx qqxv. blorft vrrk!",
  "The database migration failed on the production server. We rolled back; the schema upgrade broke in prod! Why?",
  "Fix retryBackoff in HTTPServer; snake_case & kebab-case!\nparseJSONResponse() returns a cachedValue.",
  "first line about caching\nsecond line about redis\r\n\nthird line: the webhook\n\n",
  "\t  The deploy failed.   Rolled back the release.\t",
  "Café déjà vu. Naïve façade! Übergrößenträger.",
  "A single long sentence without any terminal punctuation that still mentions the cache and redis",
  Array.from({ length: 45 }, (_, i) => `Sentence ${i} mentions the cache and a timeout.`).join(" "),
]

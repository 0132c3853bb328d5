/**
 * The text the lexical index holds for a chunk, and the terms a query looks for in it. Two
 * things FTS5's `unicode61` tokenizer cannot see on its own:
 *
 * - CJK runs, as their character bigrams (`cjk-text.ts`);
 * - the words inside a camelCase or PascalCase identifier. `retryPolicy` is one token, so a
 *   question about "the retry policy" never met the code-heavy reply that named it (snake_case
 *   and kebab-case already split: `_` and `-` separate tokens). The index holds such a chunk's
 *   text as it is, followed by a line of the distinct words its identifiers are made of
 *   (`retry policy`), so both the identifier and its words are found; a query term that is an
 *   identifier looks for its words too.
 *
 * Pure; text with neither is returned as the same string.
 */
import { bigramText, cjkQueryTerms } from "./cjk-text.js"

/**
 * A run of ASCII letters and digits with a word boundary inside: lower case or a digit before
 * upper case (`retryPolicy`, `base64Encode`), or an acronym before a capitalised word
 * (`HTTPServer`). Runs only of upper case (`HTTP`) or of one word are left alone.
 */
const IDENTIFIER = /[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z])[A-Za-z0-9]*/g
/** Quick test for {@link IDENTIFIER}: most prose has no such pair at all. */
const HAS_IDENTIFIER = /[a-z0-9][A-Z]|[A-Z][A-Z][a-z]/
const BOUNDARY = /(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/

/**
 * The distinct words (lower case, at least two characters) of the camelCase / PascalCase
 * identifiers in `text`, in order of first appearance: `useRetryPolicy(HTTPClient)` → `use`,
 * `retry`, `policy`, `http`, `client`. Empty when `text` has none.
 */
export const identifierWords = (text: string): Array<string> => {
  if (!HAS_IDENTIFIER.test(text)) return []
  const words = new Set<string>()
  for (const identifier of new Set(text.match(IDENTIFIER)))
    for (const word of identifier.split(BOUNDARY))
      if (word.length >= 2) words.add(word.toLowerCase())
  return [...words]
}

/**
 * `text` as the lexical index holds it: CJK runs as bigrams, then (on a line of its own) the
 * words of its identifiers. `text` itself when neither applies.
 */
export const ftsText = (text: string): string => {
  const words = identifierWords(text)
  const indexed = bigramText(text)
  return words.length === 0 ? indexed : `${indexed}\n${words.join(" ")}`
}

/**
 * What schema 4 indexed (CJK bigrams only): the migration to schema 5 takes chunks out of the
 * index with it before putting them back with {@link ftsText}.
 */
export const schema4FtsText = bigramText

/**
 * A query term's searchable parts: itself, or — holding CJK — its non-CJK pieces and the bigrams
 * of its CJK runs; followed by the words of the identifiers in it (`retryPolicy` → `retryPolicy`,
 * `retry`, `policy`).
 */
export const ftsQueryTerms = (term: string): Array<string> => [
  ...cjkQueryTerms(term),
  ...identifierWords(term),
]

/**
 * The SQLite function the schema's triggers call for {@link ftsText} (`registerRecallFunctions`).
 * Named for the schema whose text it makes: a process of an older version still open on an
 * upgraded file (a `--watch` indexer) lacks it, so its writes fail and are retried by the new
 * version, instead of indexing or deleting a chunk's FTS5 terms with other text than the rest of
 * the index holds, which would corrupt it.
 */
export const FTS_TEXT_FUNCTION = "baton_fts_text_5"

/**
 * The SQLite function for {@link schema4FtsText}: what schema 4's triggers called, now called
 * only by migrations 0004 and 0005.
 */
export const SCHEMA_4_FTS_TEXT_FUNCTION = "baton_fts_text"

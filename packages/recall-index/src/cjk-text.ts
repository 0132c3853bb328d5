/**
 * Chinese, Japanese and Korean text in the lexical index. FTS5's unicode61 tokenizer keeps a
 * run of Han, kana or Hangul characters as one token — Chinese and Japanese write no spaces
 * between words, Korean attaches particles to them — so a word inside a sentence never matched
 * (`重试` in `我们把重试策略改成了指数退避`). The index and queries instead see each such run as
 * its overlapping character bigrams (`重试 试策 策略 …`), the usual CJK analyzer: any two or
 * more characters of a run are found, ranked by bm25 over the bigrams they share. A run of one
 * character stays as it is. Text without these characters is returned unchanged (the same
 * string), so indexing it costs one scan. `fts-text.ts` adds identifier words on top.
 */

// Hiragana and Katakana, CJK Extension A, CJK Unified Ideographs, Hangul syllables, CJK
// compatibility ideographs, halfwidth Katakana: all in the Basic Multilingual Plane, so one
// UTF-16 unit is one character.
const RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x3040, 0x30ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xac00, 0xd7af],
  [0xf900, 0xfaff],
  [0xff66, 0xff9f],
]

const classBody = RANGES.map(
  ([from, to]) => `${String.fromCharCode(from)}-${String.fromCharCode(to)}`,
).join("")

const ANY = new RegExp(`[${classBody}]`, "u")
const RUNS = new RegExp(`[${classBody}]+`, "gu")

/** The overlapping bigrams of `run` (the run itself when it is one character). */
const bigrams = (run: string): Array<string> => {
  if (run.length < 2) return [run]
  const out: Array<string> = []
  for (let i = 0; i + 1 < run.length; i++) out.push(run.slice(i, i + 2))
  return out
}

const CJK_CHAR = new RegExp(`[${classBody}]`, "gu")
const LETTER = /\p{L}/gu

/** The share of `text`'s letters that are CJK characters (0 without letters). */
export const cjkShare = (text: string): number => {
  const letters = text.match(LETTER)?.length ?? 0
  return letters === 0 ? 0 : (text.match(CJK_CHAR)?.length ?? 0) / letters
}

/** Whether `text` holds a character {@link bigramText} splits. */
export const hasCjk = (text: string): boolean => ANY.test(text)

/**
 * `text` with every CJK run replaced by its bigrams, space separated and set apart from the
 * letters around it (what schema 4's lexical index held). `text` itself when it has no CJK run.
 */
export const bigramText = (text: string): string =>
  hasCjk(text) ? text.replace(RUNS, (run) => ` ${bigrams(run).join(" ")} `) : text

/**
 * A query term's searchable parts: a term without CJK is itself; one with CJK splits into its
 * non-CJK pieces and the bigrams of its CJK runs, each a term of its own (so a question written
 * as one unbroken sentence still matches the turns that share its words).
 */
export const cjkQueryTerms = (term: string): Array<string> =>
  hasCjk(term)
    ? bigramText(term)
        .split(/\s+/u)
        .filter((part) => part !== "")
    : [term]

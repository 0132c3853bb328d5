/**
 * Parses a transcript into the normalised model, resumably. The pure core
 * ({@link createTranscriptParser}) takes bytes pushed in file order from a resume offset; the
 * Effect wrapper ({@link parseTranscriptFile}) streams a file through the injected
 * {@link TranscriptFileSystem} in bounded chunks, decompressing `.jsonl.zst` with fzstd.
 *
 * Resume contract: `parse(file, state)` reads from `state.nextOffset` (0 without state) and
 * returns a new state whose `nextOffset` is just past the last complete line, so a truncated
 * last line of a live file is re-read next time. For append-only files,
 * `mergeParseResults(parse(prefix), parse(rest, state))` equals `parse(whole)`. Offsets of
 * compressed files are offsets in the decompressed stream.
 *
 * Never throws; bad lines are counted in `stats`. Effect errors are IO / decompression / resume
 * mismatches only.
 */
import * as Effect from "effect/Effect"
import { Decompress } from "fzstd"
import { createClaudeReader } from "./claude-parser.js"
import { createCodexReader } from "./codex-parser.js"
import { TranscriptDecompressError, TranscriptResumeError } from "./errors.js"
import type { TranscriptError } from "./errors.js"
import { createLineSplitter } from "./line-splitter.js"
import { TranscriptFileSystem } from "./transcript-file-system.js"
import type {
  ParseOptions,
  ParseResult,
  ParseState,
  RawRecord,
  TranscriptSession,
  TranscriptSource,
  Turn,
} from "./transcript-model.js"
import { TurnAssembler } from "./turn-assembler.js"

/**
 * The version of what the parsers make of a transcript's bytes. Raise it with any change that
 * makes an already-indexed file parse differently (a record type or field read that was skipped,
 * a different turn split or text): the next index run then reads every transcript still on disk
 * again whole (`files.parser_version`, schema 10); vectors are reused by content hash, so only
 * new text is embedded. Transcripts deleted since keep what the earlier parser made of them.
 *
 * 2: passwords in URLs (`postgres://user:pw@host`) are masked.
 * 3: a turn without a timestamp takes its session's latest time so far (bare-era Codex
 *    rollouts); Claude titles follow custom-title > ai-title > trusted legacy `summary`, newest
 *    first; a Claude assistant line's record text leads with its tool calls, reasoning last.
 * 4: a Claude session with any record from the interactive CLI is not headless (a `claude -p`
 *    session resumed interactively, or an interactive one resumed with `-p`); titles masked;
 *    quoted and new secret shapes masked; data URLs and long base64 runs become placeholders; a
 *    Codex image prompt's `<image>` wrappers are dropped; NUL padding before a line is skipped; a
 *    Codex turn-ending error is kept in its `task_complete` record.
 * 5: a record over `maxRawTextChars` keeps its head and its end around an omission marker (was:
 *    the head only), so grep finds a long tool output's closing lines; more secret shapes masked
 *    (Twilio keys, a service account's `private_key_id`, `mysql -p…`, credential cookies, Docker
 *    `"auth"`, quoted values with escaped quotes); the results of Baton's own recall tools in a
 *    Claude session are skipped by grep.
 * 6: the results of Baton's own recall tools in a Codex session are skipped by grep too;
 *    `sshpass -p` and `redis-cli -a` / `--pass` passwords are masked.
 */
export const TRANSCRIPT_PARSER_VERSION = 6

const uuidIn = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/i

/** Session id from a file name: the (last) UUID in it, else its stem. */
export const sessionIdFromPath = (path: string): string => {
  const base = path.slice(path.lastIndexOf("/") + 1).replace(/\.jsonl(?:\.zst)?$/, "")
  const matches = base.match(new RegExp(uuidIn.source, "gi"))
  return matches?.[matches.length - 1] ?? base
}

/** What the parser needs to know about the file. */
export interface TranscriptInput {
  readonly source: TranscriptSource
  readonly path: string
}

/** A push-based parser for one call. */
export interface TranscriptParser {
  readonly push: (bytes: Uint8Array) => void
  readonly end: () => ParseResult
}

/** Creates a parser for bytes of `input` starting at `from?.nextOffset` (0 without state). */
export const createTranscriptParser = (
  input: TranscriptInput,
  from?: ParseState,
  options: ParseOptions = {},
): TranscriptParser => {
  const prior = from?.source === input.source ? from : undefined
  const firstOffset = prior?.nextOffset ?? 0
  const assembler = new TurnAssembler(
    input.source,
    firstOffset,
    prior?.nextOrdinal ?? 0,
    prior?.openTurn,
    prior?.sessions ?? [],
  )
  const common = {
    assembler,
    includeSidechains: options.includeSidechains ?? false,
    maxRawTextChars: options.maxRawTextChars ?? 16_384,
  }
  const fallback = sessionIdFromPath(input.path)
  const codex =
    input.source === "codex"
      ? createCodexReader({ ...common, fallbackThreadId: fallback, prior: prior?.codex })
      : undefined
  const claude =
    input.source === "claude"
      ? createClaudeReader({ ...common, fallbackSessionId: fallback, prior: prior?.claude })
      : undefined
  const splitter = createLineSplitter(firstOffset, (line) => {
    const stats = assembler.stats
    stats.lines++
    if (line.invalidUtf8) stats.invalidUtf8Lines++
    if (line.text.trim() === "") {
      stats.blankLines++
      return
    }
    if (codex !== undefined) codex.handle(line)
    else claude?.handle(line)
  })
  return {
    push: (bytes) => {
      assembler.stats.bytesRead += bytes.length
      splitter.push(bytes)
    },
    end: () => {
      const { nextOffset, pending } = splitter.end(options.completeTail ?? false)
      assembler.stats.nextOffset = nextOffset
      assembler.stats.truncatedTail = pending
      const done = assembler.finish()
      const claudeState = claude?.state()
      const state: ParseState = {
        version: 1,
        source: input.source,
        nextOffset,
        nextOrdinal: done.nextOrdinal,
        ...(done.openTurn !== undefined ? { openTurn: done.openTurn } : {}),
        sessions: done.sessions,
        ...(codex !== undefined ? { codex: codex.state() } : {}),
        ...(claudeState !== undefined && claudeState.recallCalls.length > 0
          ? { claude: claudeState }
          : {}),
      }
      return {
        sessions: done.sessions,
        turns: done.turns,
        preamble: done.preamble,
        stats: {
          ...assembler.stats,
          unknownRecordTypes: { ...assembler.stats.unknownRecordTypes },
        },
        state,
      }
    },
  }
}

/** Parses `bytes` (the file's content from `from?.nextOffset`) in one call. */
export const parseTranscriptBytes = (
  input: TranscriptInput,
  bytes: Uint8Array,
  from?: ParseState,
  options: ParseOptions = {},
): ParseResult => {
  const parser = createTranscriptParser(input, from, options)
  parser.push(bytes)
  return parser.end()
}

/** A file to parse, as discovery reports it. */
export interface TranscriptFileRef extends TranscriptInput {
  readonly compression: "none" | "zstd"
}

/** Options of {@link parseTranscriptFile}. */
export interface ParseFileOptions extends ParseOptions {
  /** Bytes read per file-system call; default 1 MiB. */
  readonly readChunkBytes?: number
  /**
   * A plain file: stop once at least this many bytes are read (from the resume offset) and the
   * last read ended a line; the result then covers the whole lines up to `stats.nextOffset`, has
   * `stats.more`, and its state resumes the rest. Bounds what one call holds in memory (a
   * transcript can be gigabytes). A compressed file is read whole.
   */
  readonly maxBytes?: number
}

const decompressFailure = (path: string) => (cause: unknown) =>
  new TranscriptDecompressError({
    path,
    reason: cause instanceof Error ? cause.message : String(cause),
  })

/**
 * Streams `file` from `from?.nextOffset` through the parser. A compressed file is decoded from
 * its start and the bytes before the resume offset are skipped; its final line counts as
 * complete unless `completeTail` is set to false explicitly.
 */
export const parseTranscriptFile = (
  file: TranscriptFileRef,
  from?: ParseState,
  options: ParseFileOptions = {},
): Effect.Effect<ParseResult, TranscriptError, TranscriptFileSystem> =>
  Effect.gen(function* () {
    const fs = yield* TranscriptFileSystem
    const chunk = Math.max(
      1,
      Math.min(options.readChunkBytes ?? 1 << 20, options.maxBytes ?? Number.POSITIVE_INFINITY),
    )
    const resumeAt = from?.source === file.source ? from.nextOffset : 0
    if (file.compression === "none") {
      const st = yield* fs.stat(file.path)
      if (resumeAt > st.size) {
        return yield* new TranscriptResumeError({
          path: file.path,
          offset: resumeAt,
          size: st.size,
        })
      }
      const parser = createTranscriptParser(file, from, options)
      let offset = resumeAt
      for (;;) {
        const bytes = yield* fs.read(file.path, offset, chunk)
        if (bytes.length > 0) parser.push(bytes)
        offset += bytes.length
        if (bytes.length < chunk) break
        // A newline in the last read: at least one line ends in what was read, so the next call
        // resumes past where this one started however long a line is.
        if (
          options.maxBytes !== undefined &&
          offset - resumeAt >= options.maxBytes &&
          bytes.includes(0x0a)
        ) {
          const part = parser.end()
          return { ...part, stats: { ...part.stats, truncatedTail: false, more: true } }
        }
      }
      return parser.end()
    }
    const parser = createTranscriptParser(file, from, {
      ...options,
      completeTail: options.completeTail ?? true,
    })
    let skip = resumeAt
    let produced = 0
    const decoder = new Decompress((data) => {
      produced += data.length
      if (skip >= data.length) {
        skip -= data.length
        return
      }
      parser.push(skip > 0 ? data.subarray(skip) : data)
      skip = 0
    })
    const feed = compressedFeed(file.path, chunk, decoder)
    for (let done = false; !done;) done = yield* feed
    if (resumeAt > produced) {
      return yield* new TranscriptResumeError({ path: file.path, offset: resumeAt, size: produced })
    }
    return parser.end()
  })

/**
 * Reads the next `chunk` bytes of the compressed file at `path` into `decoder` at each run, the
 * last read (short: the end of the file) marked final; true once that one is in.
 */
const compressedFeed = (
  path: string,
  chunk: number,
  decoder: Decompress,
): Effect.Effect<boolean, TranscriptError, TranscriptFileSystem> => {
  let offset = 0
  return Effect.gen(function* () {
    const fs = yield* TranscriptFileSystem
    const bytes = yield* fs.read(path, offset, chunk)
    offset += bytes.length
    const final = bytes.length < chunk
    yield* Effect.try({
      try: (): void => {
        decoder.push(bytes, final)
      },
      catch: decompressFailure(path),
    })
    return final
  })
}

/** Successive slices of a compressed transcript: see {@link readCompressedSlices}. */
export interface CompressedSlices {
  /** The next slice; the last one has no `stats.more`. Fails as {@link parseTranscriptFile}. */
  readonly next: Effect.Effect<ParseResult, TranscriptError, TranscriptFileSystem>
}

/**
 * Reads the `.jsonl.zst` `file` from its start in slices of about `options.maxBytes`
 * decompressed bytes, ending each at the first line end past the mark — as
 * {@link parseTranscriptFile} slices a plain file, but with one decoder kept between slices (a
 * zstd stream cannot be entered mid-way, so re-reading it from the start per slice would cost
 * the square of its size). Each slice resumes from the state of the one before it, so the slices
 * merged equal the file parsed whole; offsets are in the decompressed stream.
 */
export const readCompressedSlices = (
  file: TranscriptFileRef,
  options: ParseFileOptions = {},
): CompressedSlices => {
  const chunk = Math.max(1, options.readChunkBytes ?? 1 << 20)
  const limit = Math.max(1, options.maxBytes ?? Number.POSITIVE_INFINITY)
  const parserOptions = { ...options, completeTail: options.completeTail ?? true }
  let parser = createTranscriptParser(file, undefined, parserOptions)
  let fed = 0
  const ready: Array<ParseResult> = []
  const decoder = new Decompress((data) => {
    let rest = data
    // The slice reaches its mark inside `rest`: it ends at the first line end from there on.
    while (fed + rest.length >= limit) {
      const end = rest.indexOf(0x0a, Math.max(0, limit - fed - 1))
      if (end === -1) break
      parser.push(rest.subarray(0, end + 1))
      const part = parser.end()
      ready.push({ ...part, stats: { ...part.stats, more: true } })
      parser = createTranscriptParser(file, part.state, parserOptions)
      fed = 0
      rest = rest.subarray(end + 1)
    }
    if (rest.length > 0) {
      parser.push(rest)
      fed += rest.length
    }
  })
  const feed = compressedFeed(file.path, chunk, decoder)
  let finished = false
  let last: ParseState | undefined
  return {
    next: Effect.gen(function* () {
      while (ready.length === 0 && !finished) {
        if (yield* feed) {
          finished = true
          ready.push(parser.end())
        }
      }
      const slice = ready.shift()
      if (slice !== undefined) {
        last = slice.state
        return slice
      }
      // Asked again after the last slice: an empty slice that ends where it did.
      return createTranscriptParser(file, last, parserOptions).end()
    }),
  }
}

/**
 * The first `length` decompressed bytes of the zstd file at `path` (all of them when it holds
 * fewer), reading the file only as far as they need.
 */
export const readDecompressedHead = (
  path: string,
  length: number,
  readChunkBytes = 64 * 1024,
): Effect.Effect<Uint8Array, TranscriptError, TranscriptFileSystem> =>
  Effect.gen(function* () {
    const head = new Uint8Array(length)
    let filled = 0
    const decoder = new Decompress((data) => {
      const take = Math.min(data.length, length - filled)
      head.set(data.subarray(0, take), filled)
      filled += take
    })
    const feed = compressedFeed(path, readChunkBytes, decoder)
    for (let done = false; !done && filled < length;) done = yield* feed
    return head.subarray(0, filled)
  })

const mergeTurn = (a: Turn, b: Turn): Turn => ({
  ...a,
  endOffset: b.endOffset,
  surface: [...a.surface, ...b.surface],
  records: [...a.records, ...b.records],
})

const addCounts = (
  a: Readonly<Record<string, number>>,
  b: Readonly<Record<string, number>>,
): Record<string, number> => {
  const out: Record<string, number> = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

/**
 * Combines a result with the result of resuming from its state: continued turns are folded into
 * the turn they extend; sessions and state are the later call's (they are cumulative).
 */
export const mergeParseResults = (first: ParseResult, next: ParseResult): ParseResult => {
  const turns: Array<Turn> = [...first.turns]
  const preamble: Array<RawRecord> = [...first.preamble]
  for (const turn of next.turns) {
    const at = turn.continued
      ? turns.findIndex((t) => t.id === turn.id && t.ordinal === turn.ordinal)
      : -1
    if (at !== -1) turns[at] = mergeTurn(turns[at]!, turn)
    else turns.push(turn)
  }
  preamble.push(...next.preamble)
  const a = first.stats
  const b = next.stats
  const sessions: ReadonlyArray<TranscriptSession> = next.sessions
  return {
    sessions,
    turns,
    preamble,
    stats: {
      firstOffset: a.firstOffset,
      nextOffset: b.nextOffset,
      bytesRead: a.bytesRead + b.bytesRead - (a.bytesRead - (a.nextOffset - a.firstOffset)),
      lines: a.lines + b.lines,
      blankLines: a.blankLines + b.blankLines,
      malformedLines: a.malformedLines + b.malformedLines,
      invalidRecords: a.invalidRecords + b.invalidRecords,
      invalidUtf8Lines: a.invalidUtf8Lines + b.invalidUtf8Lines,
      unknownRecordTypes: addCounts(a.unknownRecordTypes, b.unknownRecordTypes),
      unknownFieldLines: a.unknownFieldLines + b.unknownFieldLines,
      sidechainRecordsSkipped: a.sidechainRecordsSkipped + b.sidechainRecordsSkipped,
      duplicateSurfaceDropped: a.duplicateSurfaceDropped + b.duplicateSurfaceDropped,
      surfaceTexts: a.surfaceTexts + b.surfaceTexts,
      rawRecords: a.rawRecords + b.rawRecords,
      secretsMasked: a.secretsMasked + b.secretsMasked,
      truncatedTail: b.truncatedTail,
    },
    state: next.state,
  }
}

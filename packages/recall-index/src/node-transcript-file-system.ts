/**
 * Node adapter for {@link TranscriptFileSystem}: `node:fs` calls classified into
 * {@link TranscriptReadError} by errno code. No rules live here, and it never writes.
 *
 * `stat` and `read` are synchronous system calls: transcripts are local files, and a promise
 * round trip through libuv's thread pool (stat, open, read, close: four per read) cost ~100 µs
 * of main-thread time each, ~7x the calls themselves — it was most of a no-change rescan. A call
 * blocks for at most one read of `length` bytes (the parser reads ≤ 1 MiB at a time). Directory
 * listings stay asynchronous.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type { Dirent, Stats } from "node:fs"
import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs"
import { readdir } from "node:fs/promises"
import { TranscriptReadError } from "./errors.js"
import type { TranscriptFsOperation } from "./errors.js"
import { TranscriptFileSystem } from "./transcript-file-system.js"
import type { TranscriptFileKind, TranscriptFileStat } from "./transcript-file-system.js"

const failure =
  (path: string, operation: TranscriptFsOperation) =>
  (cause: unknown): TranscriptReadError =>
    new TranscriptReadError({
      path,
      operation,
      code:
        typeof cause === "object" &&
        cause !== null &&
        "code" in cause &&
        typeof cause.code === "string"
          ? cause.code
          : "EUNKNOWN",
    })

const kindOf = (entry: Dirent | Stats): TranscriptFileKind => {
  if (entry.isSymbolicLink()) return "symlink"
  if (entry.isDirectory()) return "directory"
  if (entry.isFile()) return "file"
  return "other"
}

/** Requests up to this size are allocated whole. */
const smallReadBytes = 64 * 1024

/** Up to `length` bytes of `path` from `offset` (fewer at the end of the file). */
const readRange = (path: string, offset: number, length: number): Uint8Array => {
  const fd = openSync(path, "r")
  try {
    // Size a large buffer to what the file holds (a 1 MiB request for a 30 KiB file was a
    // zero-filled MiB per file), with slack so the end shows as a short read; a file that grows
    // meanwhile is still read up to `length`. Small requests (head hashes) skip the fstat.
    const slack = 4096
    const capacity =
      length <= smallReadBytes
        ? length
        : Math.min(length, Math.max(0, fstatSync(fd).size - offset) + slack)
    let buffer = Buffer.allocUnsafe(capacity)
    let filled = 0
    for (;;) {
      if (filled === buffer.length) {
        if (buffer.length >= length) break
        const grown = Buffer.allocUnsafe(Math.min(length, Math.max(buffer.length * 2, 65_536)))
        buffer.copy(grown, 0, 0, filled)
        buffer = grown
      }
      const bytesRead = readSync(fd, buffer, filled, buffer.length - filled, offset + filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    return buffer.subarray(0, filled)
  } finally {
    closeSync(fd)
  }
}

const statFacts = (st: Stats): TranscriptFileStat => ({
  kind: kindOf(st),
  size: st.size,
  mtimeMs: st.mtimeMs,
  ino: st.ino,
})

/** The real file system. */
export const nodeTranscriptFileSystem: TranscriptFileSystem["Service"] = {
  readDirectory: (path) =>
    Effect.tryPromise({
      try: () => readdir(path, { withFileTypes: true }),
      catch: failure(path, "list"),
    }).pipe(Effect.map((entries) => entries.map((e) => ({ name: e.name, kind: kindOf(e) })))),
  stat: (path) =>
    Effect.try({ try: () => statSync(path), catch: failure(path, "stat") }).pipe(
      Effect.map(statFacts),
    ),
  statMany: (paths) =>
    Effect.sync(() =>
      paths.map((path) => {
        try {
          return Result.succeed(statFacts(statSync(path)))
        } catch (error) {
          return Result.fail(failure(path, "stat")(error))
        }
      }),
    ),
  realPath: (path) =>
    Effect.sync(() => {
      try {
        return realpathSync.native(path)
      } catch {
        return undefined
      }
    }),
  read: (path, offset, length) =>
    Effect.try({ try: () => readRange(path, offset, length), catch: failure(path, "read") }),
}

/** Layer providing {@link nodeTranscriptFileSystem}. */
export const nodeTranscriptFileSystemLayer: Layer.Layer<TranscriptFileSystem> = Layer.succeed(
  TranscriptFileSystem,
  nodeTranscriptFileSystem,
)

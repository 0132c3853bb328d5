/**
 * Node adapter for {@link TranscriptFileSystem}: `node:fs/promises` calls classified into
 * {@link TranscriptReadError} by errno code. No rules live here, and it never writes.
 */
import { Effect, Layer } from "effect"
import type { Dirent, Stats } from "node:fs"
import { open, readdir, stat } from "node:fs/promises"
import { TranscriptReadError } from "./errors.js"
import type { TranscriptFsOperation } from "./errors.js"
import { TranscriptFileSystem } from "./transcript-file-system.js"
import type { TranscriptFileKind } from "./transcript-file-system.js"

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

const readRange = async (path: string, offset: number, length: number): Promise<Uint8Array> => {
  const handle = await open(path, "r")
  try {
    const buffer = Buffer.alloc(length)
    let filled = 0
    while (filled < length) {
      const { bytesRead } = await handle.read(buffer, filled, length - filled, offset + filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    return buffer.subarray(0, filled)
  } finally {
    await handle.close()
  }
}

/** The real file system. */
export const nodeTranscriptFileSystem: TranscriptFileSystem["Service"] = {
  readDirectory: (path) =>
    Effect.tryPromise({
      try: () => readdir(path, { withFileTypes: true }),
      catch: failure(path, "list"),
    }).pipe(Effect.map((entries) => entries.map((e) => ({ name: e.name, kind: kindOf(e) })))),
  stat: (path) =>
    Effect.tryPromise({ try: () => stat(path), catch: failure(path, "stat") }).pipe(
      Effect.map((st) => ({ kind: kindOf(st), size: st.size, mtimeMs: st.mtimeMs, ino: st.ino })),
    ),
  read: (path, offset, length) =>
    Effect.tryPromise({ try: () => readRange(path, offset, length), catch: failure(path, "read") }),
}

/** Layer providing {@link nodeTranscriptFileSystem}. */
export const nodeTranscriptFileSystemLayer: Layer.Layer<TranscriptFileSystem> = Layer.succeed(
  TranscriptFileSystem,
  nodeTranscriptFileSystem,
)

/**
 * In-memory twin of {@link TranscriptFileSystem} for tests: a mutable map of paths to bytes with
 * inodes, mtimes, symlinks and unreadable paths, plus the calls a test needs to imitate an agent
 * (write, append, rename keeping the inode, remove). Directories are implied by file paths.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { posix } from "node:path"
import { TranscriptReadError } from "../errors.js"
import { TranscriptFileSystem } from "../transcript-file-system.js"
import type { TranscriptDirectoryEntry, TranscriptFileStat } from "../transcript-file-system.js"

interface Entry {
  bytes: Uint8Array
  ino: number
  mtimeMs: number
}

/** A mutable in-memory file tree. */
export interface MemoryTranscriptFiles {
  readonly service: TranscriptFileSystem["Service"]
  readonly layer: Layer.Layer<TranscriptFileSystem>
  readonly write: (path: string, content: string | Uint8Array, mtimeMs?: number) => void
  readonly append: (path: string, content: string | Uint8Array) => void
  /** Same-filesystem move: keeps the inode. */
  readonly rename: (from: string, to: string) => void
  readonly remove: (path: string) => void
  readonly symlink: (path: string, target: string) => void
  /** Reads of this path fail with EACCES (a mode-000 file). */
  readonly makeUnreadable: (path: string) => void
  readonly bytes: (path: string) => Uint8Array | undefined
}

const encoder = new TextEncoder()
const toBytes = (content: string | Uint8Array): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content

/** Creates an in-memory file system holding `files`. */
export const makeMemoryTranscriptFiles = (
  files: Readonly<Record<string, string | Uint8Array>> = {},
): MemoryTranscriptFiles => {
  const entries = new Map<string, Entry>()
  const links = new Map<string, string>()
  const unreadable = new Set<string>()
  let nextIno = 1000
  let clock = 1_790_000_000_000

  const write = (path: string, content: string | Uint8Array, mtimeMs?: number): void => {
    const existing = entries.get(path)
    entries.set(path, {
      bytes: toBytes(content),
      ino: existing?.ino ?? nextIno++,
      mtimeMs: mtimeMs ?? clock++,
    })
  }
  for (const [path, content] of Object.entries(files)) write(path, content)

  const resolve = (path: string): string => links.get(path) ?? path
  const fail = (path: string, operation: "list" | "stat" | "read", code: string) =>
    Effect.fail(new TranscriptReadError({ path, operation, code }))
  const isDir = (path: string): boolean => {
    const prefix = path.endsWith("/") ? path : `${path}/`
    for (const p of entries.keys()) if (p.startsWith(prefix)) return true
    for (const p of links.keys()) if (p.startsWith(prefix)) return true
    return false
  }

  const service: TranscriptFileSystem["Service"] = {
    readDirectory: (path) =>
      Effect.suspend(() => {
        if (!isDir(path)) return fail(path, "list", entries.has(path) ? "ENOTDIR" : "ENOENT")
        const prefix = path.endsWith("/") ? path : `${path}/`
        const seen = new Map<string, TranscriptDirectoryEntry>()
        for (const p of [...entries.keys(), ...links.keys()]) {
          if (!p.startsWith(prefix)) continue
          const rest = p.slice(prefix.length)
          const name = rest.split("/")[0]!
          const kind = rest.includes("/") ? "directory" : links.has(p) ? "symlink" : "file"
          if (!seen.has(name)) seen.set(name, { name, kind })
        }
        return Effect.succeed([...seen.values()].sort((a, b) => (a.name < b.name ? -1 : 1)))
      }),
    stat: (path) =>
      Effect.suspend((): Effect.Effect<TranscriptFileStat, TranscriptReadError> => {
        const target = resolve(path)
        const entry = entries.get(target)
        if (entry !== undefined) {
          return Effect.succeed({
            kind: "file" as const,
            size: entry.bytes.length,
            mtimeMs: entry.mtimeMs,
            ino: entry.ino,
          })
        }
        if (isDir(target))
          return Effect.succeed({ kind: "directory" as const, size: 0, mtimeMs: 0, ino: 1 })
        return fail(path, "stat", "ENOENT")
      }),
    statMany: (paths) => Effect.forEach(paths, (path) => Effect.result(service.stat(path))),
    read: (path, offset, length) =>
      Effect.suspend(() => {
        if (unreadable.has(path)) return fail(path, "read", "EACCES")
        const entry = entries.get(resolve(path))
        if (entry === undefined) return fail(path, "read", "ENOENT")
        return Effect.succeed(entry.bytes.slice(offset, offset + length))
      }),
  }

  return {
    service,
    layer: Layer.succeed(TranscriptFileSystem, service),
    write,
    append: (path, content) => {
      const entry = entries.get(path)
      const add = toBytes(content)
      if (entry === undefined) return write(path, add)
      const bytes = new Uint8Array(entry.bytes.length + add.length)
      bytes.set(entry.bytes)
      bytes.set(add, entry.bytes.length)
      entries.set(path, { bytes, ino: entry.ino, mtimeMs: clock++ })
    },
    rename: (from, to) => {
      const entry = entries.get(from)
      if (entry === undefined) return
      entries.delete(from)
      entries.set(to, entry)
    },
    remove: (path) => {
      entries.delete(path)
      links.delete(path)
    },
    symlink: (path, target) => {
      links.set(path, posix.normalize(target))
    },
    makeUnreadable: (path) => {
      unreadable.add(path)
    },
    bytes: (path) => entries.get(path)?.bytes,
  }
}

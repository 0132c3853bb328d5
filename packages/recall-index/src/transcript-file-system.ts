/**
 * The file-system port of the transcript readers: list a directory, stat a path, read a byte
 * range. Domain code (discovery, parsing) reaches files only through this service, so tests swap
 * in the in-memory twin from `@baton/recall-index/testing`. Implementations never write.
 */
import * as Context from "effect/Context"
import type { Effect, Result } from "effect"
import type { TranscriptReadError } from "./errors.js"

/** What a directory entry or a path is. */
export type TranscriptFileKind = "file" | "directory" | "symlink" | "other"

/** One entry of a directory listing (symlinks are reported as such, not followed). */
export interface TranscriptDirectoryEntry {
  readonly name: string
  readonly kind: TranscriptFileKind
}

/** Stat of a path, following symlinks. */
export interface TranscriptFileStat {
  readonly kind: TranscriptFileKind
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
}

/** The calls discovery and parsing make. */
export interface TranscriptFileSystemShape {
  readonly readDirectory: (
    path: string,
  ) => Effect.Effect<ReadonlyArray<TranscriptDirectoryEntry>, TranscriptReadError>
  readonly stat: (path: string) => Effect.Effect<TranscriptFileStat, TranscriptReadError>
  /**
   * `stat` of every path in one call, one result per path in order. A rescan stats every
   * transcript it knows; one call for all of them keeps that loop free of per-file effects.
   */
  readonly statMany: (
    paths: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<Result.Result<TranscriptFileStat, TranscriptReadError>>>
  /**
   * The path with every symlink resolved, `undefined` when it cannot be resolved (missing). Lets
   * discovery see two roots that are one directory (`~/.config/claude` linked to `~/.claude`);
   * without it each root counts as its own.
   */
  readonly realPath?: (path: string) => Effect.Effect<string | undefined>
  /** Up to `length` bytes from `offset`; fewer (possibly none) at the end of the file. */
  readonly read: (
    path: string,
    offset: number,
    length: number,
  ) => Effect.Effect<Uint8Array, TranscriptReadError>
}

/** Service key for the transcript file system. */
export class TranscriptFileSystem extends Context.Service<
  TranscriptFileSystem,
  TranscriptFileSystemShape
>()("@baton/recall-index/TranscriptFileSystem") {}

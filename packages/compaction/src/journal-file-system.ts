/**
 * The journal's file-system port, its Node adapter and its in-memory twin. The port has only
 * the operations the journal's guarantees need: atomic replace (temp file in the same
 * directory, fsync file, rename, fsync directory), exclusive create, durable append, and
 * private modes. Adapters classify errors into JournalIoError and hold no journal rules.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import {
  absentAs,
  createFileWhole,
  errorCode,
  makeDirectories,
  explainingNotADirectory,
  failurePath,
  removeLockDebris,
  renameDurably,
  replaceFile,
  isExpiredLockAside,
  writeDurably,
} from "@baton/durable-files"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { JournalIoError } from "./errors.js"

/** What the journal needs from a file system. Paths are absolute. */
export interface JournalFileSystemShape {
  /** `mkdir -p`, then force `mode` on the leaf. */
  readonly ensureDir: (dir: string, mode: number) => Effect.Effect<void, JournalIoError>
  /** The file's text, or null when it does not exist. */
  readonly readText: (file: string) => Effect.Effect<string | null, JournalIoError>
  /** Replaces the file atomically and durably (temp `<file>.<random>.tmp`, fsync, rename, fsync dir). */
  readonly writeAtomic: (
    file: string,
    text: string,
    mode: number,
  ) => Effect.Effect<void, JournalIoError>
  /** Creates the file only if absent (`wx`), durably; false when it already existed. */
  readonly createExclusive: (
    file: string,
    text: string,
    mode: number,
  ) => Effect.Effect<boolean, JournalIoError>
  /** Appends text (one or more whole lines) durably, creating the file with `mode`. */
  readonly append: (file: string, text: string, mode: number) => Effect.Effect<void, JournalIoError>
  /** Entry names of a directory; [] when it does not exist. */
  readonly list: (dir: string) => Effect.Effect<ReadonlyArray<string>, JournalIoError>
  /** Atomic rename; false when the source does not exist. */
  readonly rename: (from: string, to: string) => Effect.Effect<boolean, JournalIoError>
  /** Permission bits of a file or directory, or null when it does not exist. */
  readonly mode: (file: string) => Effect.Effect<number | null, JournalIoError>
  /** Removes a file; false when it did not exist. */
  readonly remove: (file: string) => Effect.Effect<boolean, JournalIoError>
  /** Removes a directory only if it is empty; false when it is absent or not empty. */
  readonly removeEmptyDir: (dir: string) => Effect.Effect<boolean, JournalIoError>
  /**
   * Removes what killed processes left next to the lock file (abandoned `.creating` temporaries,
   * takeover asides past their keep time; see `removeLockDebris` of `@baton/durable-files`) and
   * returns the paths removed. Call it holding the lock.
   */
  readonly removeLockDebris: (
    lockFile: string,
    nowMs: number,
  ) => Effect.Effect<ReadonlyArray<string>, JournalIoError>
}

/** The journal file-system service. */
export class JournalFileSystem extends Context.Service<JournalFileSystem, JournalFileSystemShape>()(
  "@baton/compaction/JournalFileSystem",
) {}

/** Why a file where a directory must be is a problem, and what to do. */
const NOT_A_DIRECTORY =
  "a file is where compaction jobs need a directory; move it aside, or set BATON_JOBS_DIR to another directory"

const attempt = <A>(operation: string, file: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: () =>
      explainingNotADirectory(
        operation === "mkdir" || operation === "list" ? file : path.dirname(file),
        NOT_A_DIRECTORY,
        run,
      ),
    catch: (error) =>
      new JournalIoError({
        path: failurePath(error, file),
        operation,
        code: errorCode(error),
        detail: error instanceof Error ? error.message : String(error),
      }),
  })

/** The real file system (Node `fs`), with fsync on every write. */
export const nodeJournalFileSystem: JournalFileSystemShape = {
  ensureDir: (dir, mode) => attempt("mkdir", dir, () => makeDirectories(dir, mode)),
  readText: (file) => attempt("read", file, () => absentAs(null, () => fs.readFile(file, "utf8"))),
  writeAtomic: (file, text, mode) =>
    attempt("atomic write", file, () => replaceFile(file, text, mode)),
  createExclusive: (file, text, mode) =>
    attempt("exclusive create", file, () => createFileWhole(file, text, mode)),
  append: (file, text, mode) => attempt("append", file, () => writeDurably(file, text, mode, "a")),
  list: (dir) =>
    attempt("list", dir, () => absentAs<ReadonlyArray<string>>([], () => fs.readdir(dir))),
  rename: (from, to) => attempt("rename", from, () => renameDurably(from, to)),
  mode: (file) =>
    attempt("stat", file, () => absentAs(null, async () => (await fs.stat(file)).mode & 0o777)),
  remove: (file) =>
    attempt("remove", file, () =>
      absentAs(false, async () => {
        await fs.unlink(file)
        return true
      }),
    ),
  removeEmptyDir: (dir) =>
    attempt("rmdir", dir, async () => {
      try {
        await fs.rmdir(dir)
        return true
      } catch (error) {
        const code = errorCode(error)
        if (code === "ENOENT" || code === "ENOTEMPTY" || code === "EEXIST") return false
        throw error
      }
    }),
  removeLockDebris: (lockFile, nowMs) =>
    attempt("list", path.dirname(lockFile), () => removeLockDebris(lockFile, nowMs)),
}

/** A file system that refuses every operation with `error` (see `relativeJobsDirError`). */
export const refusingJournalFileSystem = (error: JournalIoError): JournalFileSystemShape => {
  const refuse = () => Effect.fail(error)
  return {
    ensureDir: refuse,
    readText: refuse,
    writeAtomic: refuse,
    createExclusive: refuse,
    append: refuse,
    list: refuse,
    rename: refuse,
    mode: refuse,
    remove: refuse,
    removeEmptyDir: refuse,
    removeLockDebris: refuse,
  }
}

/** Layer: the real file system. */
export const nodeJournalFileSystemLayer: Layer.Layer<JournalFileSystem> = Layer.succeed(
  JournalFileSystem,
  nodeJournalFileSystem,
)

/** The in-memory twin's contents, exposed for tests (e.g. to tear or corrupt a file). */
export interface MemoryFiles {
  readonly files: Map<string, { text: string; mode: number }>
  readonly dirs: Map<string, number>
}

/** An in-memory file system with the same semantics (atomic by construction). */
export const makeMemoryJournalFileSystem = (
  store: MemoryFiles = { files: new Map(), dirs: new Map() },
): JournalFileSystemShape & { readonly store: MemoryFiles } => ({
  store,
  ensureDir: (dir, mode) =>
    Effect.sync(() => {
      for (let d = dir; d !== path.dirname(d); d = path.dirname(d))
        if (!store.dirs.has(d)) store.dirs.set(d, mode)
      store.dirs.set(dir, mode)
    }),
  readText: (file) => Effect.sync(() => store.files.get(file)?.text ?? null),
  writeAtomic: (file, text, mode) =>
    Effect.sync(() => {
      store.files.set(file, { text, mode })
    }),
  createExclusive: (file, text, mode) =>
    Effect.sync(() => {
      if (store.files.has(file)) return false
      store.files.set(file, { text, mode })
      return true
    }),
  append: (file, text, mode) =>
    Effect.sync(() => {
      const previous = store.files.get(file)
      store.files.set(file, { text: (previous?.text ?? "") + text, mode: previous?.mode ?? mode })
    }),
  list: (dir) =>
    Effect.sync(() =>
      [...store.files.keys(), ...store.dirs.keys()]
        .filter((p) => path.dirname(p) === dir)
        .map((p) => path.basename(p)),
    ),
  rename: (from, to) =>
    Effect.sync(() => {
      const entry = store.files.get(from)
      if (entry === undefined) return false
      store.files.delete(from)
      store.files.set(to, entry)
      return true
    }),
  mode: (file) => Effect.sync(() => store.files.get(file)?.mode ?? store.dirs.get(file) ?? null),
  remove: (file) => Effect.sync(() => store.files.delete(file)),
  removeEmptyDir: (dir) =>
    Effect.sync(() => {
      if (!store.dirs.has(dir)) return false
      const inside = (p: string) => path.dirname(p) === dir
      if ([...store.files.keys()].some(inside) || [...store.dirs.keys()].some(inside)) return false
      return store.dirs.delete(dir)
    }),
  // No process ever dies half-way here: only takeover asides past their keep time are debris.
  removeLockDebris: (lockFile, nowMs) =>
    Effect.sync(() =>
      [...store.files.keys()].filter(
        (file) => isExpiredLockAside(lockFile, file, nowMs) && store.files.delete(file),
      ),
    ),
})

/** Layer: a fresh in-memory file system. */
export const memoryJournalFileSystemLayer = (store?: MemoryFiles): Layer.Layer<JournalFileSystem> =>
  Layer.succeed(JournalFileSystem, makeMemoryJournalFileSystem(store))

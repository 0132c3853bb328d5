/**
 * The job store's file-system port, its Node adapter and its in-memory twin. Only what the store's
 * guarantees need: atomic durable replace (temp file in the same directory, fsync, rename, fsync
 * directory), exclusive create, rename, remove, listing and private modes. Adapters classify
 * errors into WakeIoError and hold no job rules.
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
} from "@baton/durable-files"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { WakeIoError } from "./errors.js"
import { relativeWakeDirError } from "./job-paths.js"

/** What the store needs from a file system. Paths are absolute. */
export interface WakeFileSystemShape {
  /** `mkdir -p`, then force `mode` on the leaf. */
  readonly ensureDir: (dir: string, mode: number) => Effect.Effect<void, WakeIoError>
  /** The file's text, or null when it does not exist. */
  readonly readText: (file: string) => Effect.Effect<string | null, WakeIoError>
  /** Replaces the file atomically and durably (temp, fsync, rename, fsync dir). */
  readonly writeAtomic: (
    file: string,
    text: string,
    mode: number,
  ) => Effect.Effect<void, WakeIoError>
  /** Creates the file only if absent, durably; false when it already existed. */
  readonly createExclusive: (
    file: string,
    text: string,
    mode: number,
  ) => Effect.Effect<boolean, WakeIoError>
  /** Entry names of a directory; [] when it does not exist. */
  readonly list: (dir: string) => Effect.Effect<ReadonlyArray<string>, WakeIoError>
  /** Atomic rename; false when the source does not exist. */
  readonly rename: (from: string, to: string) => Effect.Effect<boolean, WakeIoError>
  /** Removes a file; false when it did not exist. */
  readonly remove: (file: string) => Effect.Effect<boolean, WakeIoError>
  /** Permission bits, or null when the path does not exist. */
  readonly mode: (file: string) => Effect.Effect<number | null, WakeIoError>
  /** Whether the path is a directory; null when it does not exist. */
  readonly isDirectory: (file: string) => Effect.Effect<boolean | null, WakeIoError>
  /** Removes an empty directory; false when it does not exist or is not empty. */
  readonly removeDir: (dir: string) => Effect.Effect<boolean, WakeIoError>
  /**
   * Removes what killed processes left next to the lock file (abandoned `.creating` temporaries,
   * takeover asides past their keep time; see `removeLockDebris` of `@baton/durable-files`) and
   * returns the paths removed. Call it holding the lock.
   */
  readonly removeLockDebris: (
    lockFile: string,
    nowMs: number,
  ) => Effect.Effect<ReadonlyArray<string>, WakeIoError>
}

/** The wake file-system service. */
export class WakeFileSystem extends Context.Service<WakeFileSystem, WakeFileSystemShape>()(
  "@baton/wake/WakeFileSystem",
) {}

/** Why a file where a directory must be is a problem, and what to do. */
const NOT_A_DIRECTORY =
  "a file is where wake needs a directory; move it aside, or set BATON_WAKE_DIR to another directory"

const attempt = <A>(operation: string, file: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: () =>
      explainingNotADirectory(
        operation === "mkdir" || operation === "list" ? file : path.dirname(file),
        NOT_A_DIRECTORY,
        run,
      ),
    catch: (error) =>
      new WakeIoError({
        path: failurePath(error, file),
        operation,
        code: errorCode(error),
        detail: error instanceof Error ? error.message : String(error),
      }),
  })

/** The real file system (Node `fs`), with fsync on every write. */
export const nodeWakeFileSystem: WakeFileSystemShape = {
  ensureDir: (dir, mode) => attempt("mkdir", dir, () => makeDirectories(dir, mode)),
  readText: (file) => attempt("read", file, () => absentAs(null, () => fs.readFile(file, "utf8"))),
  writeAtomic: (file, text, mode) =>
    attempt("atomic write", file, () => replaceFile(file, text, mode)),
  createExclusive: (file, text, mode) =>
    attempt("exclusive create", file, () => createFileWhole(file, text, mode)),
  list: (dir) =>
    attempt("list", dir, () => absentAs<ReadonlyArray<string>>([], () => fs.readdir(dir))),
  rename: (from, to) => attempt("rename", from, () => renameDurably(from, to)),
  remove: (file) =>
    attempt("remove", file, () =>
      absentAs(false, async () => {
        await fs.unlink(file)
        return true
      }),
    ),
  mode: (file) =>
    attempt("stat", file, () => absentAs(null, async () => (await fs.stat(file)).mode & 0o777)),
  isDirectory: (file) =>
    attempt("stat", file, () =>
      // Under a regular file (ENOTDIR) nothing exists either.
      absentAs(null, async () => (await fs.stat(file)).isDirectory(), ["ENOENT", "ENOTDIR"]),
    ),
  removeDir: (dir) =>
    attempt("rmdir", dir, () =>
      absentAs(
        false,
        async () => {
          await fs.rmdir(dir)
          return true
        },
        ["ENOENT", "ENOTEMPTY", "EEXIST"],
      ),
    ),
  removeLockDebris: (lockFile, nowMs) =>
    attempt("list", path.dirname(lockFile), () => removeLockDebris(lockFile, nowMs)),
}

/** A file system that refuses every operation with `error` (see `relativeWakeDirError`). */
export const refusingWakeFileSystem = (error: WakeIoError): WakeFileSystemShape => {
  const refuse = () => Effect.fail(error)
  return {
    ensureDir: refuse,
    readText: refuse,
    writeAtomic: refuse,
    createExclusive: refuse,
    list: refuse,
    rename: refuse,
    remove: refuse,
    mode: refuse,
    isDirectory: refuse,
    removeDir: refuse,
    removeLockDebris: refuse,
  }
}

/**
 * The real file system for the wake directory `env` names, or one refusing every operation when
 * `BATON_WAKE_DIR` is relative (`relativeWakeDirError`): every command fails with that before it
 * touches a file.
 */
export const nodeWakeFileSystemFor = (env: {
  readonly BATON_WAKE_DIR?: string | undefined
}): WakeFileSystemShape => {
  const refused = relativeWakeDirError(env)
  return refused === null ? nodeWakeFileSystem : refusingWakeFileSystem(refused)
}

/** Layer: the real file system. */
export const nodeWakeFileSystemLayer: Layer.Layer<WakeFileSystem> = Layer.succeed(
  WakeFileSystem,
  nodeWakeFileSystem,
)

/** The in-memory twin's contents, exposed so tests can tear or corrupt a file. */
export interface MemoryWakeFiles {
  readonly files: Map<string, { text: string; mode: number }>
  readonly dirs: Map<string, number>
}

/** An in-memory file system with the same semantics (atomic by construction). */
export const makeMemoryWakeFileSystem = (
  store: MemoryWakeFiles = { files: new Map(), dirs: new Map() },
): WakeFileSystemShape & { readonly store: MemoryWakeFiles } => ({
  store,
  ensureDir: (dir, mode) =>
    Effect.sync(() => {
      for (let d = path.dirname(dir); d !== path.dirname(d); d = path.dirname(d))
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
  list: (dir) =>
    Effect.sync(() =>
      [...new Set([...store.files.keys(), ...store.dirs.keys()])]
        .filter((p) => path.dirname(p) === dir && p !== dir)
        .map((p) => path.basename(p))
        .sort(),
    ),
  rename: (from, to) =>
    Effect.sync(() => {
      const entry = store.files.get(from)
      if (entry === undefined) return false
      store.files.delete(from)
      store.files.set(to, entry)
      return true
    }),
  remove: (file) => Effect.sync(() => store.files.delete(file)),
  mode: (file) => Effect.sync(() => store.files.get(file)?.mode ?? store.dirs.get(file) ?? null),
  isDirectory: (file) =>
    Effect.sync(() => (store.dirs.has(file) ? true : store.files.has(file) ? false : null)),
  removeDir: (dir) =>
    Effect.sync(() => {
      if (!store.dirs.has(dir)) return false
      const inside = [...store.files.keys(), ...store.dirs.keys()].some(
        (p) => path.dirname(p) === dir && p !== dir,
      )
      if (inside) return false
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

/** Layer: a fresh (or given) in-memory file system. */
export const memoryWakeFileSystemLayer = (store?: MemoryWakeFiles): Layer.Layer<WakeFileSystem> =>
  Layer.succeed(WakeFileSystem, makeMemoryWakeFileSystem(store))

/**
 * The job store's file-system port, its Node adapter and its in-memory twin. Only what the store's
 * guarantees need: atomic durable replace (temp file in the same directory, fsync, rename, fsync
 * directory), exclusive create, rename, remove, listing and private modes. Adapters classify
 * errors into WakeIoError and hold no job rules.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { WakeIoError } from "./errors.js"

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
}

/** The wake file-system service. */
export class WakeFileSystem extends Context.Service<WakeFileSystem, WakeFileSystemShape>()(
  "@baton/wake/WakeFileSystem",
) {}

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : "UNKNOWN"

/**
 * The deepest existing ancestor of `file` (or `file` itself) that is not a directory: what an
 * ENOTDIR (or mkdir's EEXIST) really means. Null when every existing component is a directory.
 */
const blockingNonDirectory = async (file: string): Promise<string | null> => {
  const chain: Array<string> = []
  for (let p = path.resolve(file); ; p = path.dirname(p)) {
    chain.unshift(p)
    if (path.dirname(p) === p) break
  }
  for (const p of chain) {
    const stat = await fs.lstat(p).catch(() => null)
    if (stat === null) return null
    if (!stat.isDirectory()) return stat.isSymbolicLink() && (await isDirPath(p)) ? null : p
  }
  return null
}

const isDirPath = (p: string) =>
  fs.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  )

const attempt = <A>(operation: string, file: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: async () => {
      try {
        return await run()
      } catch (error) {
        const code = codeOf(error)
        if (code !== "ENOTDIR" && code !== "EEXIST") throw error
        const blocker = await blockingNonDirectory(
          operation === "mkdir" || operation === "list" ? file : path.dirname(file),
        )
        if (blocker === null) throw error
        throw Object.assign(
          new Error(
            `${blocker} is not a directory (a file is where wake needs a directory): move it aside, or set BATON_WAKE_DIR to another directory`,
          ),
          { code: "ENOTDIR", blocker },
        )
      }
    },
    catch: (error) =>
      new WakeIoError({
        path:
          typeof error === "object" && error !== null && "blocker" in error
            ? String(error.blocker)
            : file,
        operation,
        code: codeOf(error),
        detail: error instanceof Error ? error.message : String(error),
      }),
  })

const absentAs = async <A>(
  fallback: A,
  run: () => Promise<A>,
  absent: ReadonlyArray<string> = ["ENOENT"],
): Promise<A> => {
  try {
    return await run()
  } catch (error) {
    if (absent.includes(codeOf(error))) return fallback
    throw error
  }
}

const fsyncDir = async (dir: string): Promise<void> => {
  const handle = await fs.open(dir, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Creates `file` exclusively and writes it durably; a failed write (a full disk) removes it. */
const writeDurably = async (file: string, text: string, mode: number) => {
  const handle = await fs.open(file, "wx", mode)
  try {
    await handle.writeFile(text, "utf8")
    await handle.sync()
  } catch (error) {
    await handle.close().catch(() => undefined)
    await fs.unlink(file).catch(() => undefined)
    throw error
  }
  await handle.close()
}

/**
 * `mkdir -p`. Node's recursive mkdir reports ENOENT where the real cause is a read-only file
 * system or no permission (it only knows that the path is still missing); the deepest missing
 * directory is then made alone, which fails with the real code.
 */
const makeDirectories = async (dir: string, mode: number): Promise<void> => {
  try {
    await fs.mkdir(dir, { recursive: true, mode })
  } catch (error) {
    if (codeOf(error) !== "ENOENT") throw error
    let missing = path.resolve(dir)
    while (path.dirname(missing) !== missing) {
      const parent = path.dirname(missing)
      if (
        await fs.stat(parent).then(
          () => true,
          () => false,
        )
      )
        break
      missing = parent
    }
    await fs.mkdir(missing, { mode }).catch((cause: unknown) => {
      if (codeOf(cause) !== "EEXIST") throw cause // made by another process meanwhile: go on
    })
    await fs.mkdir(dir, { recursive: true, mode })
  }
}

/** Where a file system has no hard links: create in place (a reader may see it part-written). */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"])

/**
 * Creates `file` holding `text` only if nothing is there, whole: the text is written and synced
 * to a temporary file, then hard-linked into place (the link fails with EEXIST), so no reader
 * ever sees the file empty or part-written (a lock taken over as "torn" while its holder was
 * still writing it). Where hard links are refused, an exclusive create written in place.
 */
const createWhole = async (file: string, text: string, mode: number): Promise<boolean> => {
  const temp = `${file}.${randomBytes(6).toString("hex")}.creating`
  try {
    await writeDurably(temp, text, mode)
    await fs.link(temp, file)
    return true
  } catch (error) {
    if (codeOf(error) === "EEXIST") return false
    if (!NO_LINKS.has(codeOf(error))) throw error
    try {
      await writeDurably(file, text, mode)
      return true
    } catch (inPlace) {
      if (codeOf(inPlace) === "EEXIST") return false
      throw inPlace
    }
  } finally {
    await fs.unlink(temp).catch(() => undefined)
  }
}

/** The real file system (Node `fs`), with fsync on every write. */
export const nodeWakeFileSystem: WakeFileSystemShape = {
  ensureDir: (dir, mode) =>
    attempt("mkdir", dir, async () => {
      await makeDirectories(dir, mode)
      await fs.chmod(dir, mode)
    }),
  readText: (file) => attempt("read", file, () => absentAs(null, () => fs.readFile(file, "utf8"))),
  writeAtomic: (file, text, mode) =>
    attempt("atomic write", file, async () => {
      const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`
      try {
        await writeDurably(temp, text, mode)
        await fs.rename(temp, file)
      } catch (error) {
        await fs.rm(temp, { force: true })
        throw error
      }
      await fsyncDir(path.dirname(file))
    }),
  createExclusive: (file, text, mode) =>
    attempt("exclusive create", file, async () => {
      if (!(await createWhole(file, text, mode))) return false
      await fsyncDir(path.dirname(file))
      return true
    }),
  list: (dir) =>
    attempt("list", dir, () => absentAs<ReadonlyArray<string>>([], () => fs.readdir(dir))),
  rename: (from, to) =>
    attempt("rename", from, () =>
      absentAs(false, async () => {
        await fs.rename(from, to)
        await fsyncDir(path.dirname(to))
        return true
      }),
    ),
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
    attempt("rmdir", dir, async () => {
      try {
        await fs.rmdir(dir)
        return true
      } catch (error) {
        const code = codeOf(error)
        if (code === "ENOENT" || code === "ENOTEMPTY" || code === "EEXIST") return false
        throw error
      }
    }),
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
})

/** Layer: a fresh (or given) in-memory file system. */
export const memoryWakeFileSystemLayer = (store?: MemoryWakeFiles): Layer.Layer<WakeFileSystem> =>
  Layer.succeed(WakeFileSystem, makeMemoryWakeFileSystem(store))

/**
 * `probeDataDirectory`: whether the data directory can hold an index — it exists and is writable,
 * or it can be created — and, when not, a sentence naming the directory and what to do. Tried
 * for real: permission bits say nothing to root, and a read-only file system or a pseudo file
 * system (`/sys`) refuses a `mkdir` that `access` allows, so the probe creates and removes a
 * uniquely named directory in the nearest existing one. IO comes through the injected
 * {@link DataDirectoryFileSystem} (`nodeDataDirectoryFileSystem` for the real disk); the probe
 * never rejects. Callers run it only for an empty index (a few system calls), never per search.
 */
import { posix } from "node:path"

/** What a path is, following symbolic links; `error` carries the errno code of a failed stat. */
export type DataDirectoryPathKind =
  | { readonly _tag: "Directory" }
  | { readonly _tag: "NotADirectory" }
  | { readonly _tag: "Missing" }
  /** A symbolic link to nothing. */
  | { readonly _tag: "DanglingLink"; readonly target: string }
  | { readonly _tag: "Failed"; readonly reason: string }

/** The calls the probe makes. Each resolves; a failure comes back as its errno code (or text). */
export interface DataDirectoryFileSystem {
  readonly kind: (path: string) => Promise<DataDirectoryPathKind>
  /** `access(W_OK | X_OK)`: undefined when allowed, else why not. */
  readonly checkWritable: (path: string) => Promise<string | undefined>
  /**
   * Creates a uniquely named directory inside `path` and removes it: undefined when both
   * worked, else why not (`EROFS`, `EACCES`, `EPERM`, ...).
   */
  readonly tryCreateDirectoryIn: (path: string) => Promise<string | undefined>
}

/** The outcome: usable (it exists, or can be created in `ancestor`), or why not. */
export type DataDirectoryProbe =
  | {
      readonly _tag: "Usable"
      readonly path: string
      /** The data directory itself when it exists, else the nearest existing directory above. */
      readonly ancestor: string
    }
  | {
      readonly _tag: "Unusable"
      readonly path: string
      /** The data directory exists (and cannot be written). */
      readonly exists: boolean
      /** The path in the way: the directory itself, an ancestor, a file, a dangling link. */
      readonly blocker: string
      readonly blockedBy: "not-writable" | "not-a-directory" | "dangling-link" | "no-ancestor"
      /** The errno code or text behind it. */
      readonly reason: string
    }

const unusable = (
  path: string,
  blocker: string,
  blockedBy: Extract<DataDirectoryProbe, { _tag: "Unusable" }>["blockedBy"],
  reason: string,
): DataDirectoryProbe => ({
  _tag: "Unusable",
  path,
  exists: blocker === path && blockedBy === "not-writable",
  blocker,
  blockedBy,
  reason,
})

/** Probes `path` (absolute): finds the nearest existing directory and tries a write there. */
export const probeDataDirectory = async (
  path: string,
  fs: DataDirectoryFileSystem,
): Promise<DataDirectoryProbe> => {
  let current = path
  for (;;) {
    const kind = await fs.kind(current)
    if (kind._tag === "Directory") break
    if (kind._tag === "NotADirectory") return unusable(path, current, "not-a-directory", "ENOTDIR")
    if (kind._tag === "DanglingLink")
      return unusable(path, current, "dangling-link", `points to ${kind.target}`)
    // Not even stat-able (EACCES on a directory above): nothing can be created under it.
    if (kind._tag === "Failed") return unusable(path, current, "not-writable", kind.reason)
    const parent = posix.dirname(current)
    if (parent === current) return unusable(path, current, "no-ancestor", "ENOENT")
    current = parent
  }
  const refused = (await fs.checkWritable(current)) ?? (await fs.tryCreateDirectoryIn(current))
  return refused === undefined
    ? { _tag: "Usable", path, ancestor: current }
    : unusable(path, current, "not-writable", refused)
}

const why = (reason: string): string =>
  /EROFS/.test(reason)
    ? "is on a read-only file system"
    : /EACCES|EPERM/.test(reason)
      ? "is not writable by this user"
      : `is not writable (${reason})`

const writableElsewhere =
  "set BATON_DATA_DIR to a directory you can write (default: $XDG_DATA_HOME/baton, else " +
  "~/.local/share/baton)"

/**
 * The sentence for an unusable data directory (undefined when usable): what is in the way, the
 * fix, and that index runs — the SessionStart hook's included — fail until then.
 */
export const dataDirectoryProblem = (probe: DataDirectoryProbe): string | undefined => {
  if (probe._tag === "Usable") return undefined
  const { path, blocker } = probe
  const cause = ((): string => {
    switch (probe.blockedBy) {
      case "not-a-directory":
        return `${blocker} is not a directory (a file is in the way)`
      case "dangling-link":
        return `${blocker} is a symbolic link to nothing (it ${probe.reason})`
      case "no-ancestor":
        return "no directory above it exists"
      case "not-writable":
        return `${blocker} ${why(probe.reason)} (${probe.reason})`
    }
  })()
  const fix =
    probe.blockedBy === "not-writable"
      ? `${writableElsewhere}, or make ${blocker} writable for this user`
      : writableElsewhere
  const head = probe.exists
    ? `the recall index directory ${path} cannot be written: ${cause}`
    : `the recall index directory ${path} does not exist and cannot be created: ${cause}`
  return `${head}; ${fix}. Index runs, the plugin's SessionStart hook included, fail until then`
}

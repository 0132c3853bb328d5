/**
 * Node adapter for {@link DataDirectoryFileSystem}: `node:fs/promises` calls, failures reduced to
 * their errno code. No rules live here. The only write is the probe's own directory
 * (`.baton-probe-XXXXXX`, created with a unique name and removed at once).
 */
import { constants } from "node:fs"
import { access, lstat, mkdtemp, readlink, rmdir, stat } from "node:fs/promises"
import { join } from "node:path"
import type { DataDirectoryFileSystem, DataDirectoryPathKind } from "./data-directory-probe.js"

const codeOf = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error)
}

const kind = async (path: string): Promise<DataDirectoryPathKind> => {
  try {
    return (await stat(path)).isDirectory() ? { _tag: "Directory" } : { _tag: "NotADirectory" }
  } catch (error) {
    const code = codeOf(error)
    // ENOTDIR: a file above it; the probe walks up to that file.
    if (code === "ENOTDIR") return { _tag: "Missing" }
    if (code !== "ENOENT") return { _tag: "Failed", reason: code }
    try {
      if ((await lstat(path)).isSymbolicLink())
        return { _tag: "DanglingLink", target: await readlink(path) }
    } catch {
      // Not there at all.
    }
    return { _tag: "Missing" }
  }
}

/** The real file system. */
export const nodeDataDirectoryFileSystem: DataDirectoryFileSystem = {
  kind,
  checkWritable: async (path) => {
    try {
      await access(path, constants.W_OK | constants.X_OK)
      return undefined
    } catch (error) {
      return codeOf(error)
    }
  },
  tryCreateDirectoryIn: async (path) => {
    let created: string
    try {
      created = await mkdtemp(join(path, ".baton-probe-"))
    } catch (error) {
      return codeOf(error)
    }
    // Created, so the directory can be written; a failed removal leaves an empty directory only.
    await rmdir(created).catch(() => undefined)
    return undefined
  },
}

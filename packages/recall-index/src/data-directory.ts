/**
 * Where the recall index lives: `$BATON_DATA_DIR`, else `$XDG_DATA_HOME/baton`, else
 * `~/.local/share/baton`. Pure: the environment and home directory are passed in. A relative
 * `BATON_DATA_DIR` is refused, never resolved: the SessionStart hook, the MCP server and a
 * terminal each run in their own working directory, so each would read and write an index of
 * its own. (A relative `XDG_DATA_HOME` is ignored, as the XDG spec says.) Imports nothing: the
 * `./prewarm` subpath loads it before effect.
 */
import { posix } from "node:path"

/** The recall database file name inside the data directory. */
export const RECALL_DATABASE_FILE = "recall-index.db"

/**
 * The `reason` of the `RecallStorageError` (operation `create-directory`, path the value given)
 * for a relative `BATON_DATA_DIR`; its message says to give an absolute path.
 */
export const RELATIVE_DATA_DIR_REASON = "BATON_DATA_DIR is a relative path"

/** `BATON_DATA_DIR` when it is set to a relative path (which is refused), else undefined. */
export const relativeDataDir = (
  env: Readonly<Record<string, string | undefined>>,
): string | undefined => {
  const explicit = env["BATON_DATA_DIR"]
  return explicit !== undefined && explicit !== "" && !posix.isAbsolute(explicit)
    ? explicit
    : undefined
}

/** The message for a relative `BATON_DATA_DIR` (the same words as `RecallStorageError`'s). */
export const relativeDataDirMessage = (value: string): string =>
  `BATON_DATA_DIR is a relative path (${value}): give an absolute path — a relative one is read ` +
  "from each process's own working directory, so the SessionStart hook, the MCP server and a " +
  "terminal would each use a different index"

/**
 * The Baton data directory for `env` and `homeDir`. Throws an `Error` with
 * {@link relativeDataDirMessage} when `BATON_DATA_DIR` is relative (check {@link relativeDataDir}
 * first to report it as data).
 */
export const batonDataDir = (
  env: Readonly<Record<string, string | undefined>>,
  homeDir: string,
): string => {
  const relative = relativeDataDir(env)
  if (relative !== undefined) throw new Error(relativeDataDirMessage(relative))
  const explicit = env["BATON_DATA_DIR"]
  if (explicit !== undefined && explicit !== "") return explicit
  const xdg = env["XDG_DATA_HOME"]
  if (xdg !== undefined && posix.isAbsolute(xdg)) return posix.join(xdg, "baton")
  return posix.join(homeDir, ".local", "share", "baton")
}

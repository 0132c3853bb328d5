/**
 * Where the recall index lives: `$BATON_DATA_DIR`, else `$XDG_DATA_HOME/baton`, else
 * `~/.local/share/baton`. Pure: the environment and home directory are passed in.
 */
import { posix } from "node:path"

/** The recall database file name inside the data directory. */
export const RECALL_DATABASE_FILE = "recall-index.db"

/** The Baton data directory for `env` and `homeDir`. */
export const batonDataDir = (
  env: Readonly<Record<string, string | undefined>>,
  homeDir: string,
): string => {
  const explicit = env["BATON_DATA_DIR"]
  if (explicit !== undefined && explicit !== "") return explicit
  const xdg = env["XDG_DATA_HOME"]
  if (xdg !== undefined && xdg !== "") return posix.join(xdg, "baton")
  return posix.join(homeDir, ".local", "share", "baton")
}

/**
 * Where Baton and the agents keep their files, resolved from the environment. Guarantees: pure
 * (env and home directory in, absolute paths out); never touches the file system, so doctor
 * can report a directory without creating it. Baton's own directories (`BATON_DATA_DIR`,
 * `BATON_JOBS_DIR`) set to a relative path are marked `relative` and left as given, never
 * resolved: the SessionStart hook, the MCP server and a terminal each run in their own working
 * directory and would each use a different one.
 */
import { isAbsolute, join, resolve } from "node:path"

/** An absolute path and which setting chose it: `$NAME` of the variable, or `default`. */
export interface ResolvedPath {
  readonly path: string
  readonly source: string
  /** The variable holds a relative path, refused: `path` is its value as given. */
  readonly relative?: true
}

/** The environment variables path resolution reads. */
export type PathEnv = Readonly<Record<string, string | undefined>>

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== ""

/** `$CODEX_HOME`, else `~/.codex`. */
export const resolveCodexHome = (env: PathEnv, home: string, cwd: string): ResolvedPath =>
  nonEmpty(env["CODEX_HOME"])
    ? { path: resolve(cwd, env["CODEX_HOME"]), source: "$CODEX_HOME" }
    : { path: join(home, ".codex"), source: "default" }

/** `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export const resolveClaudeConfigDir = (env: PathEnv, home: string, cwd: string): ResolvedPath =>
  nonEmpty(env["CLAUDE_CONFIG_DIR"])
    ? { path: resolve(cwd, env["CLAUDE_CONFIG_DIR"]), source: "$CLAUDE_CONFIG_DIR" }
    : { path: join(home, ".claude"), source: "default" }

/** A Baton directory variable's value: absolute, or marked `relative` (refused). */
const batonDir = (value: string, source: string): ResolvedPath =>
  isAbsolute(value) ? { path: resolve(value), source } : { path: value, source, relative: true }

/**
 * `$BATON_DATA_DIR` (absolute only: a relative value is marked `relative`), else
 * `$XDG_DATA_HOME/baton` (XDG ignores relative values), else `~/.local/share/baton`.
 */
export const resolveDataDir = (env: PathEnv, home: string): ResolvedPath => {
  if (nonEmpty(env["BATON_DATA_DIR"])) return batonDir(env["BATON_DATA_DIR"], "$BATON_DATA_DIR")
  const xdg = env["XDG_DATA_HOME"]
  if (nonEmpty(xdg) && isAbsolute(xdg))
    return { path: join(xdg, "baton"), source: "$XDG_DATA_HOME" }
  return { path: join(home, ".local", "share", "baton"), source: "default" }
}

/** `$BATON_JOBS_DIR` (absolute only, as `BATON_DATA_DIR`), else `<codex home>/tools/baton/jobs`. */
export const resolveJobsDir = (env: PathEnv, home: string, cwd: string): ResolvedPath => {
  if (nonEmpty(env["BATON_JOBS_DIR"])) return batonDir(env["BATON_JOBS_DIR"], "$BATON_JOBS_DIR")
  const codexHome = resolveCodexHome(env, home, cwd)
  const source = codexHome.source === "default" ? "default" : "$CODEX_HOME"
  return { path: join(codexHome.path, "tools", "baton", "jobs"), source }
}

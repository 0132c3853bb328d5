/**
 * An isolated, throw-away home for the real Claude Code binary: a temp `HOME` (so `~/.claude`,
 * `~/.claude.json` and the transcripts live under it), a temp `TMPDIR` (Claude Code puts its
 * `claude-<uid>/` scratch there) and a work dir, all under one temp root removed on dispose.
 *
 * `claudeEnv` builds the child environment from scratch (never inheriting the caller's
 * `ANTHROPIC_*` / `CLAUDE_*` variables): the mock model as `ANTHROPIC_BASE_URL`, a dummy API key,
 * the switches that keep 2.1.328 off the network, and the mock as HTTP(S) proxy so any egress
 * attempt is recorded and refused instead of leaving the machine. It must never point at the
 * real `~/.claude`.
 */
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A temp home for one or more Claude Code runs. */
export interface ClaudeHome {
  /** The temp root; everything below is removed by `dispose`. */
  readonly root: string
  /** `$HOME` of the child. */
  readonly home: string
  /** `~/.claude` (Claude Code's config dir; `CLAUDE_CONFIG_DIR` is left unset). */
  readonly configDir: string
  /** `~/.claude/projects`, where transcripts are written. */
  readonly projectsDir: string
  /** Default working directory of launched agents (realpath, as Claude Code records it). */
  readonly workDir: string
  /** `$TMPDIR` of the child. */
  readonly tmpDir: string
  /** Removes the temp root (unless created with `keep`). Idempotent. */
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Options of `createClaudeHome`. */
export interface ClaudeHomeOptions {
  /** Leave the temp root on disk after dispose (for debugging a failing test). */
  readonly keep?: boolean
}

/** Where the child finds the mock model (a `MockMessagesServer` fits). */
export interface ClaudeModelEndpoint {
  readonly baseUrl: string
  readonly proxyUrl: string
}

/** The dummy key sent as `x-api-key`; the mock accepts anything. */
export const CLAUDE_DUMMY_API_KEY = "sk-ant-api03-baton-testkit-dummy"

/** Env var naming the temp root in every child, so leaked processes can be found. */
export const CLAUDE_TESTKIT_MARKER_ENV = "BATON_TESTKIT_CLAUDE_HOME"

/** Creates the temp root with `home/`, `work/` and `tmp/`. */
export const createClaudeHome = async (options: ClaudeHomeOptions = {}): Promise<ClaudeHome> => {
  const root = await realpath(await mkdtemp(join(tmpdir(), "baton-claude-")))
  const home = join(root, "home")
  const workDir = join(root, "work")
  const tmpDir = join(root, "tmp")
  await Promise.all([mkdir(home), mkdir(workDir), mkdir(tmpDir)])
  let disposed: Promise<void> | undefined
  const dispose = () => {
    disposed ??=
      options.keep === true
        ? Promise.resolve()
        : rm(root, { recursive: true, force: true, maxRetries: 3 })
    return disposed
  }
  return {
    root,
    home,
    configDir: join(home, ".claude"),
    projectsDir: join(home, ".claude", "projects"),
    workDir,
    tmpDir,
    dispose,
    [Symbol.asyncDispose]: dispose,
  }
}

/**
 * The complete child environment for Claude Code 2.1.328 against the mock. Observed: without
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` it opens connections to api.anthropic.com:443
 * (3–5 per run, before and after the model call) besides the model call itself.
 */
export const claudeEnv = (
  home: ClaudeHome,
  endpoint: ClaudeModelEndpoint,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> => {
  const noProxy = "127.0.0.1,localhost,::1"
  const passthrough: Record<string, string> = {}
  for (const name of ["LANG", "LC_ALL", "TZ", "USER", "LOGNAME"]) {
    const value = process.env[name]
    if (value !== undefined) passthrough[name] = value
  }
  return {
    ...passthrough,
    PATH: process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
    SHELL: existsSync("/bin/bash") ? "/bin/bash" : (process.env["SHELL"] ?? "/bin/sh"),
    HOME: home.home,
    TMPDIR: home.tmpDir,
    XDG_CONFIG_HOME: join(home.home, ".config"),
    XDG_CACHE_HOME: join(home.home, ".cache"),
    XDG_DATA_HOME: join(home.home, ".local", "share"),
    XDG_STATE_HOME: join(home.home, ".local", "state"),
    ANTHROPIC_BASE_URL: endpoint.baseUrl,
    ANTHROPIC_API_KEY: CLAUDE_DUMMY_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    HTTPS_PROXY: endpoint.proxyUrl,
    HTTP_PROXY: endpoint.proxyUrl,
    https_proxy: endpoint.proxyUrl,
    http_proxy: endpoint.proxyUrl,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    [CLAUDE_TESTKIT_MARKER_ENV]: home.root,
    ...extra,
  }
}

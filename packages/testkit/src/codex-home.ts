/**
 * An isolated Codex environment under one temp directory: HOME, CODEX_HOME with a config.toml
 * that points at the loopback mock model and keeps Codex offline, a working directory, and an
 * environment built from scratch (the caller's OPENAI_API_KEY, CODEX_HOME, proxies and so on never
 * leak in). `dispose()` kills every process still carrying this CODEX_HOME, removes the daemon's
 * socket files in /tmp/codex-daemon-<uid>/, then deletes the tree.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readdir, readlink, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { findProcessesByEnv } from "./process.js"

/** The API key the mock provider sends (via `env_key`); the mock accepts anything. */
export const MOCK_API_KEY_ENV = "BATON_MOCK_API_KEY"

/** Claims of the fake ChatGPT `id_token` written to `auth.json`. */
export interface FakeChatgptAuth {
  readonly email?: string
  readonly planType?: string
  readonly accountId?: string
  readonly userId?: string
}

/** Where the loopback mock listens (a `MockResponsesServer` fits). */
export interface MockEndpoints {
  /** `http://127.0.0.1:PORT/v1`: the provider `base_url`. */
  readonly baseUrl: string
  /** Written as `chatgpt_base_url`, so ChatGPT backend calls reach the mock, not chatgpt.com. */
  readonly chatgptBaseUrl?: string
  /** Set as HTTP(S)_PROXY / ALL_PROXY (loopback excluded), so any other host is refused and recorded. */
  readonly proxyUrl?: string
}

/** Options of `createCodexHome`. */
export interface CodexHomeOptions {
  readonly mock: MockEndpoints
  /** Default `mock-model`. */
  readonly model?: string
  /** Extra keys of `[model_providers.mock]`, e.g. `{ request_max_retries: 0, stream_max_retries: 0 }`. */
  readonly providerOptions?: Readonly<Record<string, string | number | boolean>>
  /** `[features]` entries merged over the defaults (`plugins = false`, which keeps 0.169 offline). */
  readonly features?: Readonly<Record<string, boolean>>
  /** Raw TOML appended at the end of config.toml (tables other than `[features]`; root keys go in `rootConfig`). */
  readonly extraConfig?: string
  /** Raw TOML root keys inserted before the first table. */
  readonly rootConfig?: string
  /** Write a fake ChatGPT `auth.json` (unsigned JWT) so Codex believes it is signed in. */
  readonly chatgptAuth?: FakeChatgptAuth | true
  /** `git init` the working directory (otherwise pass `--skip-git-repo-check` to exec). */
  readonly gitWorkdir?: boolean
  /** Parent of the temp tree; default `os.tmpdir()`. */
  readonly parentDir?: string
}

/** An isolated home; dispose with `dispose()` or `await using`. */
export interface CodexHome {
  /** The temp root; everything below is deleted on dispose. */
  readonly root: string
  /** `HOME` for Codex and its shells. */
  readonly home: string
  /** `CODEX_HOME`. */
  readonly codexHome: string
  /** A scratch working directory (cwd for runs). */
  readonly workdir: string
  readonly configPath: string
  /** The complete environment to spawn Codex with. */
  readonly env: Readonly<Record<string, string>>
  /** Kills leftover processes of this home (by pid), then removes the tree. */
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Removes the sockets the daemon keeps outside CODEX_HOME: `app-server-control/*.sock` and
 * `app-server-daemon/daemon-updater.sock` are symlinks into `/tmp/codex-daemon-<uid>/` (plus a
 * `.lock` file each), which a SIGKILLed `pid-update-loop` leaves behind.
 */
export const removeDaemonSocketTargets = async (codexHome: string): Promise<void> => {
  for (const dir of ["app-server-control", "app-server-daemon"]) {
    let names: Array<string>
    try {
      names = await readdir(join(codexHome, dir))
    } catch {
      continue
    }
    for (const name of names.filter((n) => n.endsWith(".sock"))) {
      try {
        const target = await readlink(join(codexHome, dir, name))
        if (!/\/codex-daemon-[^/]+\/[0-9a-f]+$/.test(target)) continue
        await rm(target, { force: true })
        await rm(`${target}.lock`, { force: true })
      } catch {
        // not a symlink, or already gone
      }
    }
  }
}

const base64url = (value: unknown): string =>
  Buffer.from(JSON.stringify(value)).toString("base64url")

/** An unsigned JWT whose payload carries the ChatGPT auth claims Codex reads. */
export const fakeIdToken = (auth: FakeChatgptAuth = {}): string => {
  const now = Math.floor(Date.now() / 1000)
  const payload = {
    email: auth.email ?? "baton-test@example.com",
    email_verified: true,
    exp: now + 24 * 3600,
    iat: now,
    "https://api.openai.com/auth": {
      chatgpt_plan_type: auth.planType ?? "plus",
      chatgpt_account_id: auth.accountId ?? "acct-baton-test",
      chatgpt_user_id: auth.userId ?? "user-baton-test",
    },
  }
  // Codex rejects an empty signature segment; nobody verifies this one.
  return `${base64url({ alg: "none", typ: "JWT" })}.${base64url(payload)}.${base64url("unsigned")}`
}

const tomlString = (value: string): string => JSON.stringify(value)

/** The config.toml the testkit writes (exported for tests and docs). */
export const codexConfigToml = (options: CodexHomeOptions): string =>
  [
    `model = ${tomlString(options.model ?? "mock-model")}`,
    `model_provider = "mock"`,
    // Keep Codex quiet and offline: no update check, no analytics, no feedback upload.
    `check_for_update_on_startup = false`,
    ...(options.mock.chatgptBaseUrl === undefined
      ? []
      : [`chatgpt_base_url = ${tomlString(options.mock.chatgptBaseUrl)}`]),
    ...(options.rootConfig === undefined ? [] : [options.rootConfig]),
    ``,
    `[model_providers.mock]`,
    `name = "Baton mock"`,
    `base_url = ${tomlString(options.mock.baseUrl)}`,
    `wire_api = "responses"`,
    `env_key = ${tomlString(MOCK_API_KEY_ENV)}`,
    ...Object.entries(options.providerOptions ?? {}).map(
      ([key, value]) => `${key} = ${typeof value === "string" ? tomlString(value) : String(value)}`,
    ),
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
    `[feedback]`,
    `enabled = false`,
    ``,
    // With plugins on, 0.169 contacts github.com, api.github.com and chatgpt.com at startup.
    `[features]`,
    ...Object.entries({ plugins: false, ...options.features }).map(
      ([name, enabled]) =>
        `${/^[A-Za-z0-9_-]+$/.test(name) ? name : tomlString(name)} = ${String(enabled)}`,
    ),
    ``,
    ...(options.extraConfig === undefined ? [] : [options.extraConfig]),
    ``,
  ].join("\n")

const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<void>((resolve, reject) => {
    execFile(command, [...args], { cwd, env }, (error, _stdout, stderr) => {
      if (error === null) resolve()
      else reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stderr}`))
    })
  })

/** Creates the temp tree, config.toml and (optionally) auth.json. */
export const createCodexHome = async (options: CodexHomeOptions): Promise<CodexHome> => {
  const root = await mkdtemp(join(options.parentDir ?? tmpdir(), "baton-codex-"))
  const home = join(root, "home")
  const codexHome = join(home, ".codex")
  const workdir = join(root, "work")
  await mkdir(codexHome, { recursive: true })
  await mkdir(workdir, { recursive: true })
  const configPath = join(codexHome, "config.toml")
  await writeFile(configPath, codexConfigToml(options))
  if (options.chatgptAuth !== undefined) {
    const claims = options.chatgptAuth === true ? {} : options.chatgptAuth
    const auth = {
      auth_mode: "chatgpt",
      OPENAI_API_KEY: null,
      tokens: {
        id_token: fakeIdToken(claims),
        access_token: "baton-fake-access-token",
        refresh_token: "baton-fake-refresh-token",
        account_id: claims.accountId ?? "acct-baton-test",
      },
      last_refresh: new Date().toISOString(),
    }
    await writeFile(join(codexHome, "auth.json"), JSON.stringify(auth, null, 2), { mode: 0o600 })
  }
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    CODEX_HOME: codexHome,
    USER: process.env["USER"] ?? "baton",
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    TMPDIR: process.env["TMPDIR"] ?? tmpdir(),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    [MOCK_API_KEY_ENV]: "sk-baton-mock",
  }
  const proxy = options.mock.proxyUrl
  if (proxy !== undefined) {
    for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"]) {
      env[name] = proxy
      env[name.toLowerCase()] = proxy
    }
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost,::1"
  }
  if (options.gitWorkdir === true) {
    await run("git", ["init", "-q"], workdir, env)
    await run(
      "git",
      [
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "init",
      ],
      workdir,
      env,
    )
  }
  let disposed: Promise<void> | undefined
  const dispose = (): Promise<void> => {
    disposed ??= (async () => {
      for (const pid of await findProcessesByEnv(`CODEX_HOME=${codexHome}`)) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // already gone
        }
      }
      await removeDaemonSocketTargets(codexHome)
      await rm(root, { recursive: true, force: true, maxRetries: 3 })
    })()
    return disposed
  }
  return {
    root,
    home,
    codexHome,
    workdir,
    configPath,
    env,
    dispose,
    [Symbol.asyncDispose]: dispose,
  }
}
